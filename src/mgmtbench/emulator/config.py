"""The running configuration as a tree that configuration commands edit.

Parsed from the platform's ``show running-config`` transcript: a top-level line starts in column 0,
its children are indented one space more. Setting a line replaces a sibling with the same key
(``hostname``, ``description``, ``ip address`` ... are single-valued) or appends it; ``no <line>``
removes it. Rendering gives back the text, so changes show up in ``show running-config``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Lines whose first words name a single-valued setting: a new value replaces the old line.
_KEYED: dict[tuple[str, ...], int] = {
    ("hostname",): 1,
    ("description",): 1,
    ("ip", "address"): 2,
    ("ip", "domain-name"): 2,
    ("ip", "domain", "name"): 3,
    ("domain-name",): 1,
    ("nameif",): 1,
    ("security-level",): 1,
    ("speed",): 1,
    ("duplex",): 1,
    ("mtu",): 1,
    ("enable", "secret"): 2,
    ("enable", "password"): 2,
    ("banner", "motd"): 2,
    ("clock", "timezone"): 2,
    ("logging", "buffered"): 2,
    ("exec-timeout",): 1,
}
# Top-level keywords that open a block (a configuration sub-mode) and the prompt of that mode.
BLOCK_MODES: dict[str, str] = {
    "interface": "config-if",
    "router": "config-router",
    "line": "config-line",
    "vlan": "config-vlan",
    "object": "config-network-object",
    "object-group": "config-network-object-group",
    "class-map": "config-cmap",
    "policy-map": "config-pmap",
    "ip access-list": "config-ext-nacl",
}
_TRAILERS = ("end", ": end")
# Configuration keywords a user may abbreviate (``int lo9``, ``desc uplink``).
_KEYWORDS = (*{k.split()[0] for k in BLOCK_MODES}, "hostname", "description", "shutdown")
_IFTYPES = ("GigabitEthernet", "TenGigabitEthernet", "FastEthernet", "Ethernet", "Loopback",
            "Vlan", "Port-channel", "Tunnel", "Management", "Serial")
_IFNAME = re.compile(r"^([A-Za-z-]+)\s*([0-9].*)$")


@dataclass
class ConfigLine:
    """One configuration line and the lines indented under it."""

    text: str
    children: list[ConfigLine] = field(default_factory=list)


def line_key(text: str) -> str:
    """The key that decides which sibling a line replaces: a single-valued setting's name, else the line."""
    words = text.split()
    for length in (3, 2, 1):
        if tuple(words[:length]) in _KEYED:
            return " ".join(words[:length]).lower()
    return " ".join(words).lower()


def expand(text: str) -> str:
    """Expand an abbreviated first keyword, and an interface type (``int lo9``)."""
    words = text.split()
    if not words:
        return text
    hits = [k for k in _KEYWORDS if k.startswith(words[0].lower())]
    if len(words[0]) >= 2 and len(hits) == 1:
        words[0] = hits[0]
    if words[0] == "interface" and len(words) >= 2:
        found = _IFNAME.match(" ".join(words[1:]))
        if found:
            types = [t for t in _IFTYPES if t.lower().startswith(found.group(1).lower())]
            if len(types) == 1 or found.group(1) in types:
                name = found.group(1) if found.group(1) in types else types[0]
                return f"interface {name}{found.group(2)}"
    return " ".join(words)


def block_mode(text: str) -> str | None:
    """The sub-mode prompt a line such as ``interface Gi0/1`` enters, or None."""
    lowered = text.lower()
    for keyword, mode in BLOCK_MODES.items():
        if lowered == keyword or lowered.startswith(keyword + " "):
            return mode
    return None


def _same_interface(typed: str, existing: str) -> bool:
    """``interface gi0/1`` names the existing ``interface GigabitEthernet0/1``."""
    a, b = typed.split(None, 1), existing.split(None, 1)
    if len(a) != 2 or len(b) != 2 or a[0].lower() != b[0].lower():
        return False
    ma, mb = _IFNAME.match(a[1]), _IFNAME.match(b[1])
    if not ma or not mb:
        return a[1].lower() == b[1].lower()
    return mb.group(1).lower().startswith(ma.group(1).lower()) and ma.group(2) == mb.group(2)


class RunningConfig:
    """A device's running configuration."""

    def __init__(self, text: str) -> None:
        self.root: list[ConfigLine] = []
        stack: list[tuple[int, list[ConfigLine]]] = [(-1, self.root)]
        for raw in text.splitlines():
            depth = len(raw) - len(raw.lstrip(" "))
            while len(stack) > 1 and stack[-1][0] >= depth:
                stack.pop()
            line = ConfigLine(raw.strip() if raw.strip() else raw)
            stack[-1][1].append(line)
            stack.append((depth, line.children))

    def render(self) -> str:
        """The configuration as text, as ``show running-config`` prints it."""
        out: list[str] = []

        def walk(lines: list[ConfigLine], depth: int) -> None:
            for line in lines:
                out.append(" " * depth + line.text)
                walk(line.children, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"

    def open_block(self, text: str) -> ConfigLine:
        """Find or create the top-level block ``text`` (e.g. ``interface Loopback9``)."""
        for line in self.root:
            if line.text.lower() == text.lower() or _same_interface(text, line.text):
                return line
        block = ConfigLine(text)
        self._insert_top(block)
        return block

    def set(self, text: str, block: ConfigLine | None = None) -> None:
        """Set ``text`` in ``block`` (None: global), replacing a line with the same key."""
        siblings = block.children if block else self.root
        key = line_key(text)
        for i, line in enumerate(siblings):
            if line_key(line.text) == key:
                siblings[i] = ConfigLine(text, line.children)
                return
        if block is None:
            self._insert_top(ConfigLine(text))
        else:
            siblings.append(ConfigLine(text))

    def remove(self, text: str, block: ConfigLine | None = None) -> None:
        """``no <text>``: drop lines with the same key, or whole blocks it names."""
        siblings = block.children if block else self.root
        key = line_key(text)
        siblings[:] = [
            line
            for line in siblings
            if line_key(line.text) != key and not _same_interface(text, line.text)
        ]

    def _insert_top(self, line: ConfigLine) -> None:
        """Insert after the last line of the same kind (a new interface after the others)."""
        kind = line.text.split()[0].lower()
        same = [i for i, old in enumerate(self.root) if old.text.lower().split()[:1] == [kind]]
        if same:
            at = same[-1] + 1
            if at < len(self.root) and self.root[at].text == "!" and block_mode(line.text):
                self.root[at + 1 : at + 1] = [line, ConfigLine("!")]
            else:
                self.root[at:at] = [line]
            return
        at = len(self.root)
        if self.root and self.root[-1].text in _TRAILERS:
            at -= 1
        self.root[at:at] = [line, ConfigLine("!")]
