"""The running configuration as a tree that configuration commands edit.

Parsed from the platform's ``show running-config`` transcript: a top-level line starts in column 0,
its children are indented one space more. Setting a line replaces a sibling with the same key
(``hostname``, ``description``, ``ip address`` ... are single-valued) or appends it; ``no <line>``
removes it. Rendering gives back the text, so changes show up in ``show running-config``.

Also the configuration's own vocabulary, for whatever reads or changes it (the CLI, outputs that
follow the configuration): ``show running-config``'s header (:func:`body`: the text a file and
NVRAM hold) and the platform's interface names (:func:`interface_types`, :func:`interface_name`:
``gi0/1`` is ``GigabitEthernet0/1``).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TypeVar

from mgmtbench.emulator.device.banner import group_lines
from mgmtbench.emulator.device.transcripts import Platform, default_root

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
    ("banner", "login"): 2,
    ("banner", "exec"): 2,
    ("clock", "timezone"): 2,
    ("logging", "buffered"): 2,
    ("snmp-server", "location"): 2,
    ("snmp-server", "contact"): 2,
    ("exec-timeout",): 1,
    ("router-id",): 1,
    ("bgp", "router-id"): 2,
    ("rd",): 1,
}
# Settings of a BGP neighbour that take one value (``neighbor X remote-as N``).
_NEIGHBOR_KEYED = frozenset({"remote-as", "description", "password", "update-source",
                             "peer-group", "ebgp-multihop", "timers"})
# Top-level keywords that open a block (a configuration sub-mode) and the prompt of that mode.
BLOCK_MODES: dict[str, str] = {
    "interface": "config-if",
    "router": "config-router",
    "vrf definition": "config-vrf",
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
#: Interface types, where the platform's ``config.toml`` lists none (``interface_types``).
DEFAULT_IFTYPES = ("GigabitEthernet", "TenGigabitEthernet", "FastEthernet", "Ethernet",
                   "Loopback", "Vlan", "Port-channel", "Tunnel", "Management", "Serial")
_IFNAME = re.compile(r"^([A-Za-z-]+)\s*([0-9].*)$")
_K = TypeVar("_K")


class ConfigFull(Exception):
    """A line would add to a running configuration at its capacity."""

    def __init__(self, capacity: int) -> None:
        super().__init__(f"% Configuration full: the running configuration holds {capacity} "
                         "bytes at most (--max-config-size); remove lines before adding more")
        self.capacity = capacity


@dataclass(eq=False, slots=True)
class ConfigLine:
    """One configuration line and the lines indented under it (compared by identity: two lines
    with the same text are still two lines)."""

    text: str
    children: list[ConfigLine] = field(default_factory=list)
    # Set when ``no ...`` removed the line; it leaves its list at the next compaction.
    removed: bool = field(default=False, repr=False)
    _index: _Index | None = field(default=None, repr=False)

    def live_children(self) -> list[ConfigLine]:
        """The lines under this one, without removed ones."""
        return [line for line in self.children if not line.removed]


def line_key(text: str) -> str:
    """The key that decides which sibling a line replaces: a single-valued setting's name, else the line."""
    words = text.split()
    if len(words) == 3 and words[0] == "mtu":  # ASA's global `mtu <nameif> <bytes>`
        return f"mtu {words[1].lower()}"
    if len(words) > 2 and words[:2] == ["message-length", "maximum"]:  # ASA DNS inspection
        return " ".join(words[:3] if words[2] in ("client", "server") else words[:2])
    if len(words) > 3 and words[0] == "neighbor" and words[2] in _NEIGHBOR_KEYED:
        return " ".join(words[:3]).lower()  # IOS BGP's `neighbor X remote-as N`: one per peer
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
            types = [t for t in DEFAULT_IFTYPES if t.lower().startswith(found.group(1).lower())]
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


def _name_key(text: str) -> tuple[str, str] | None:
    """What :func:`_same_interface` compares: the first word and the number after the second
    word's letters (``interface gi0/1`` and ``interface GigabitEthernet0/1`` share one), or the
    lowered rest when the rest has no such number; None for one-word lines."""
    words = text.split(None, 1)
    if len(words) != 2:
        return None
    found = _IFNAME.match(words[1])
    return (words[0].lower(), found.group(2) if found else "\0" + words[1].lower())


def _words(text: str) -> str:
    """A line's words, lowered, one space apart: what makes two lines the same line."""
    return " ".join(text.lower().split())


def _kind(text: str) -> str:
    """The first word, lowered: a new top-level line goes after the last one of its kind."""
    words = text.split(None, 1)
    return words[0].lower() if words else ""


#: A bucket of an :class:`_Index`: its one line, or its lines by identity in the order they
#: were added (most keys name one line: a dict each cost ~200 bytes a line).
_Bucket = ConfigLine | dict[int, ConfigLine]


class _Index:
    """The live lines of one list of siblings by :func:`line_key`, by :func:`_name_key` and by
    first word, so that setting, opening and removing a line costs the same however long the
    list is (8,001 ``ip address ... secondary`` under one interface took minutes when each
    removal searched a list). Each bucket is ordered as the lines were added."""

    __slots__ = ("_by_first", "_by_key", "_by_name", "_by_text", "_highest")

    def __init__(self, lines: list[ConfigLine]) -> None:
        self._by_key: dict[str, _Bucket] = {}
        self._by_name: dict[tuple[str, str], _Bucket] = {}
        self._by_first: dict[str, _Bucket] = {}
        self._by_text: dict[str, _Bucket] = {}
        # The highest number a live line starts with (an ACL entry's sequence number); None
        # once the line that had it is gone, until :meth:`highest_number` looks again.
        self._highest: int | None = 0
        for line in lines:
            if not line.removed:
                self.add(line)

    def add(self, line: ConfigLine) -> None:
        words = _words(line.text)
        key = line_key(line.text)
        _put(self._by_key, words if key == words else key, line)  # one string when the same
        _put(self._by_first, _kind(line.text), line)
        _put(self._by_text, words, line)
        name = _name_key(line.text)
        if name is not None:
            _put(self._by_name, name, line)
        number = _number(line.text)
        if number is not None and self._highest is not None and number > self._highest:
            self._highest = number

    def discard(self, line: ConfigLine) -> None:
        _drop(self._by_key, line_key(line.text), line)
        _drop(self._by_first, _kind(line.text), line)
        _drop(self._by_text, _words(line.text), line)
        name = _name_key(line.text)
        if name is not None:
            _drop(self._by_name, name, line)
        if _number(line.text) == self._highest:
            self._highest = None

    def highest_number(self) -> int:
        """The highest number a live line starts with (0: none does): kept as lines come, and
        looked for again (over the first words) only after the line that had it went."""
        if self._highest is None:
            self._highest = max((int(word) for word in self._by_first if word.isdecimal()),
                                default=0)
        return self._highest

    def shrink(self) -> None:
        """Copy each table, and each bucket of several lines, at the size of what it holds
        (after many lines went)."""
        self._by_key, self._by_name = _copied(self._by_key), _copied(self._by_name)
        self._by_first, self._by_text = _copied(self._by_first), _copied(self._by_text)

    def keyed(self, text: str) -> list[ConfigLine]:
        """Live lines whose :func:`line_key` is ``text``'s."""
        return _lines(self._by_key.get(line_key(text)))

    def exact(self, text: str) -> list[ConfigLine]:
        """Live lines that are ``text``, case and spacing aside."""
        return _lines(self._by_text.get(_words(text)))

    def first_keyed(self, text: str) -> ConfigLine | None:
        """The first live line whose :func:`line_key` is ``text``'s."""
        bucket = self._by_key.get(line_key(text))
        if bucket is None or isinstance(bucket, ConfigLine):
            return bucket
        return next(iter(bucket.values()), None)

    def starting(self, word: str) -> list[ConfigLine]:
        """Live lines whose first word, lowered, is ``word``."""
        return _lines(self._by_first.get(word))

    def named(self, text: str) -> list[ConfigLine]:
        """Lines that ``text`` names as :func:`_same_interface` decides, in list order."""
        name = _name_key(text)
        if name is None:
            return []
        return [line for line in _lines(self._by_name.get(name))
                if _same_interface(text, line.text)]


def _copied(table: dict[_K, _Bucket]) -> dict[_K, _Bucket]:
    return {key: dict(bucket) if isinstance(bucket, dict) else bucket
            for key, bucket in table.items()}


def _number(text: str) -> int | None:
    """The number ``text`` starts with (``10 permit ip any any``), if it does."""
    word = text.split(None, 1)[0] if text.strip() else ""
    return int(word) if word.isdecimal() else None  # isdigit() takes "²", which int() refuses


def _lines(bucket: _Bucket | None) -> list[ConfigLine]:
    if bucket is None:
        return []
    return [bucket] if isinstance(bucket, ConfigLine) else list(bucket.values())


def _put(table: dict[_K, _Bucket], key: _K, line: ConfigLine) -> None:
    bucket = table.get(key)
    if bucket is None:
        table[key] = line
    elif isinstance(bucket, ConfigLine):
        table[key] = {id(bucket): bucket, id(line): line}
    else:
        bucket[id(line)] = line


def _drop(table: dict[_K, _Bucket], key: _K, line: ConfigLine) -> None:
    bucket = table.get(key)
    if bucket is line:
        del table[key]
    elif isinstance(bucket, dict) and bucket.pop(id(line), None) is not None:
        if len(bucket) == 1:
            table[key] = next(iter(bucket.values()))
        elif not bucket:
            del table[key]


class RunningConfig:
    """A device's running configuration.

    Every change costs about the same however large the configuration is: lines are found
    through an index per list of siblings, removed lines are marked and dropped in bulk, and a
    new top-level line goes after the last one of its kind, whose position is kept per kind.
    :attr:`version` counts changes (for caching the rendered text), :attr:`size` the bytes of
    its live lines (indentation aside), which ``capacity`` bounds (:attr:`full`).
    """

    def __init__(self, text: str, indent: int = 1, capacity: int | None = None) -> None:
        self.root: list[ConfigLine] = []
        self.indent = indent  # spaces per level when rendered (NX-OS 2, EOS 3)
        self.version = 0
        #: Bytes of the live lines' text and line ends; None: no bound.
        self.capacity = capacity
        self.size = 0
        stack: list[tuple[int, list[ConfigLine]]] = [(-1, self.root)]
        for raw in group_lines(text.splitlines()):  # a banner of several lines is one line
            depth = len(raw) - len(raw.lstrip(" "))
            while len(stack) > 1 and stack[-1][0] >= depth:
                stack.pop()
            line = ConfigLine(raw.strip() if raw.strip() else raw)
            self.size += len(line.text) + 1
            stack[-1][1].append(line)
            stack.append((depth, line.children))
        self._root_index: _Index | None = None
        # kind -> its last line in root and where that line was
        self._last_of_kind: dict[str, tuple[ConfigLine, int]] | None = None
        self._removed = 0  # removed lines still in their lists
        # removal_hops(): the top level's layout they hold for, and the hops
        self._hops: tuple[tuple[int, int], dict[int, int]] | None = None

    @property
    def full(self) -> bool:
        """Whether the configuration has reached its ``capacity``: a line that adds to it is
        refused (lines that remove, and those that enter an existing block, still go)."""
        return self.capacity is not None and self.size >= self.capacity

    def check_room(self, more: int = 0) -> None:
        """Raise :class:`ConfigFull` if the configuration is full, or would be past its
        capacity with ``more`` bytes."""
        if self.capacity is not None and (self.full or self.size + more > self.capacity):
            raise ConfigFull(self.capacity)

    def grown(self, lines: list[ConfigLine]) -> None:
        """``lines`` were put into a block's children directly (a sub-block's ``!`` and closing
        line): count them in :attr:`size`."""
        self.size += sum(len(line.text) + 1 for line in lines)

    def render(self) -> str:
        """The configuration as text, as ``show running-config`` prints it."""
        out: list[str] = []

        def walk(lines: list[ConfigLine], depth: int) -> None:
            for line in lines:
                if not line.removed:
                    out.append(" " * (depth * self.indent) + line.text)
                    walk(line.children, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"

    def find_top(self, text: str) -> ConfigLine | None:
        """The first top-level line ``text`` names (``interface gi0/1``), if any."""
        return self.find(text, None)

    def find(self, text: str, block: ConfigLine | None) -> ConfigLine | None:
        """The first line of ``block`` (None: the top level) that ``text`` names, if any."""
        index = self._index(block)
        found = index.exact(text) or index.named(text)
        return found[0] if found else None

    def open_block(self, text: str) -> ConfigLine:
        """Find or create the top-level block ``text`` (e.g. ``interface Loopback9``)."""
        found = self.find_top(text)
        if found is not None:
            return found
        block = ConfigLine(text)
        self._insert_top(block)
        return block

    def open_child(self, text: str, parent: ConfigLine) -> tuple[ConfigLine, bool]:
        """Find the block ``text`` under ``parent`` (``address-family ipv4`` in ``router bgp``),
        else add it at the end of ``parent``; the block, and whether it is new."""
        found = self.find(text, parent)
        if found is not None:
            return found, False
        return self.append(text, parent), True

    def insert_top(self, line: ConfigLine, at: int) -> None:
        """Put ``line`` at position ``at`` of the top level (ASA's NAT section)."""
        self.root.insert(at, line)
        self.version += 1
        self.size += _bytes(line)
        if self._root_index is not None:
            self._root_index.add(line)

    def set(self, text: str, block: ConfigLine | None = None) -> None:
        """Set ``text`` in ``block`` (None: global), replacing a line with the same key."""
        index = self._index(block)
        line = index.first_keyed(text)
        self.version += 1
        if line is not None:
            index.discard(line)
            self.size += len(text) - len(line.text)
            line.text = text
            index.add(line)
            return
        if block is None:
            self._insert_top(ConfigLine(text))
        else:
            line = ConfigLine(text)
            block.children.append(line)
            index.add(line)
            self.size += len(text) + 1

    def remove(self, text: str, block: ConfigLine | None = None) -> None:
        """``no <text>``: drop lines with the same key, or whole blocks it names."""
        index = self._index(block)
        doomed = {id(line): line for line in (*index.keyed(text), *index.named(text))}
        if not doomed:
            return
        self.version += 1
        for line in doomed.values():
            index.discard(line)
            line.removed = True
            self.size -= _bytes(line)
        self._removed += len(doomed)
        self._compact_if_due()

    def append(self, text: str, block: ConfigLine) -> ConfigLine:
        """Add ``text`` at the end of ``block`` even if a line with its key is there
        (IOS's ``ip address ... secondary``)."""
        line = ConfigLine(text)
        block.children.append(line)
        self._index(block).add(line)
        self.version += 1
        self.size += len(text) + 1
        return line

    def remove_lines(self, lines: list[ConfigLine], block: ConfigLine | None = None) -> None:
        """Remove exactly ``lines`` (live lines of ``block``, None: global)."""
        if not lines:
            return
        index = self._index(block)
        lines = [line for line in {id(line): line for line in lines}.values() if not line.removed]
        for line in lines:
            index.discard(line)
            line.removed = True
            self.size -= _bytes(line)
        self.version += 1
        self._removed += len(lines)
        self._compact_if_due()

    def highest_number(self, block: ConfigLine) -> int:
        """The highest number a live line of ``block`` starts with (0: none does)."""
        return self._index(block).highest_number()

    def removal_hops(self) -> dict[int, int]:
        """For removed top-level lines (by identity), a position at or before them from which a
        search back for a kept line may go on: every line between is removed. Lines removed
        one at a time, in order, each searched back over all the ones removed before it
        (8,000 removals: a second of the emulator's time); with these hops each line is passed
        once. Valid while the top level's positions hold: until a line is added or the removed
        ones are dropped (both change its length), when a new, empty table starts."""
        layout = (id(self.root), len(self.root))
        if self._hops is None or self._hops[0] != layout:
            self._hops = (layout, {})
        return self._hops[1]

    def _index(self, block: ConfigLine | None) -> _Index:
        if block is None:
            if self._root_index is None:
                self._root_index = _Index(self.root)
            return self._root_index
        if block._index is None:
            block._index = _Index(block.children)
        return block._index

    def _compact_if_due(self) -> None:
        """Compact once removed lines are over 64 and a quarter of the top level: each
        compaction (a pass over every line) follows as many removals as a quarter of the lines
        it passes, so removals stay linear, and a flood of lines added then removed leaves at
        most 64 or a third of what is left behind, not 1,024 (each of which kept its line, its
        text and the small-object arena they sat in)."""
        if self._removed > 64 and self._removed * 4 > len(self.root):
            self._compact()

    def _compact(self) -> None:
        """Drop removed lines from every list (the positions kept per kind go with them)."""
        def keep(lines: list[ConfigLine]) -> list[ConfigLine]:
            kept = [line for line in lines if not line.removed]
            for line in kept:
                if line.children:
                    line.children[:] = keep(line.children)
            return kept

        self.root[:] = keep(self.root)
        self._last_of_kind = None
        self._removed = 0
        # A dict keeps the table it grew to when its keys go (8,000 lines added and removed
        # held four such tables): the index's tables are copied at the size of what is left,
        # with the same keys (new key strings made now would pin the small-object arenas of
        # whatever made the lines, which are freed otherwise).
        if self._root_index is not None:
            self._root_index.shrink()
        self._hops = None

    def _last_position(self, kind: str) -> int | None:
        """The position in :attr:`root` of the last live line of ``kind``.

        Kept per kind as the line and where it was: lines inserted since can only have moved it
        down, so the search starts there (removed lines stay in place until compaction)."""
        if self._last_of_kind is None:
            self._last_of_kind = {}
            for at, line in enumerate(self.root):
                if not line.removed:
                    self._last_of_kind[_kind(line.text)] = (line, at)
        kept = self._last_of_kind.get(kind)
        if kept is None:
            return None
        line, at = kept
        at = at if self.root[at] is line else self.root.index(line, at)
        # That line may have been removed since: look back for the previous live one.
        while at >= 0:
            line = self.root[at]
            if not line.removed and _kind(line.text) == kind:
                self._last_of_kind[kind] = (line, at)
                return at
            at -= 1
        del self._last_of_kind[kind]
        return None

    def _insert_top(self, line: ConfigLine) -> None:
        """Insert after the last line of the same kind (a new interface after the others)."""
        self.version += 1
        kind = _kind(line.text)
        last = self._last_position(kind)
        last_separator = self._last_position("!")
        new = [line]
        if last is not None:
            at = last + 1
            if at < len(self.root) and self.root[at].text == "!" and block_mode(line.text):
                at += 1
                new = [line, ConfigLine("!")]
        else:
            at = len(self.root)
            if self.root and self.root[-1].text in _TRAILERS:
                at -= 1
            new = [line, ConfigLine("!")]
        self.root[at:at] = new
        self.size += sum(_bytes(added) for added in new)
        assert self._last_of_kind is not None
        self._last_of_kind[kind] = (line, at)
        if len(new) == 2 and (last_separator is None or last_separator < at):
            self._last_of_kind["!"] = (new[1], at + 1)  # the new "!" is the last one
        if self._root_index is not None:
            self._root_index.add(line)


def _bytes(line: ConfigLine) -> int:
    """What ``line`` and its live lines take of :attr:`RunningConfig.size`."""
    return len(line.text) + 1 + sum(_bytes(child) for child in line.children if not child.removed)


# --- the configuration's text and the platform's interface names -------------------------------

#: What ``show running-config`` prints before the configuration (``Building configuration...``,
#: ``Current configuration : N bytes``): no configuration lines.
HEADERS = ("Building configuration", "Current configuration :")
#: The platform's configuration file (``transcripts/<platform>/config.toml``): its configuration
#: grammar (:mod:`mgmtbench.emulator.cli.configgrammar`), its views (:mod:`.derived`) and its
#: interface types (``interface_types``, :func:`interface_types`).
GRAMMAR_FILE = "config.toml"
_TYPED_IFNAME = re.compile(r"^([A-Za-z][A-Za-z-]*)\s*([0-9][0-9/.:]*)$")


def body(running: str) -> str:
    """``show running-config``'s text without its header (``Building configuration...``, the
    blank line and ``Current configuration : N bytes``): what ``copy running-config`` writes to
    a file and what NVRAM holds."""
    lines = running.splitlines(keepends=True)
    start = 0
    while start < len(lines) and (not lines[start].strip()
                                  or lines[start].startswith(HEADERS)):
        start += 1
    return "".join(lines[start:])


def interface_types(platform: Platform) -> tuple[str, ...]:
    """The platform's interface type names (``interface_types`` in its ``config.toml``,
    :data:`DEFAULT_IFTYPES` where it lists none)."""
    folder = getattr(platform, "folder", None)
    return interface_types_in(Path(folder) if folder else default_root() / platform.name)


@cache
def interface_types_in(folder: Path) -> tuple[str, ...]:
    """The interface type names of the platform in ``folder`` (read once per folder)."""
    path = folder / GRAMMAR_FILE
    raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return tuple(str(t) for t in raw.get("interface_types", DEFAULT_IFTYPES))


def interface_name(word: str, iftypes: tuple[str, ...]) -> str | None:
    """The full name of interface ``word`` (``gi0/1`` -> ``GigabitEthernet0/1``), or None."""
    found = _TYPED_IFNAME.match(word)
    if not found:
        return None
    typed, number = found.group(1).lower(), found.group(2)
    exact = [t for t in iftypes if t.lower() == typed]
    types = exact or [t for t in iftypes if t.lower().startswith(typed)]
    if len(types) != 1:
        return None
    return types[0] + number
