"""Outputs that follow the configuration: interface state, ``show running-config``'s byte count.

The transcripts show the device as its default configuration leaves it. What an interface's
configuration decides (description, address, shutdown, nameif, MTU) is read from the running
configuration and compared with what the default configuration said: a transcript line changes
only where the two differ, so the default configuration gives the transcripts byte for byte. An
interface the transcripts do not have (a new ``Loopback9``, a new sub-interface) gets the block
of one of its type, its counters at zero. Packet and byte counters move with time at the rates
the block shows (:class:`~mgmtbench.emulator.device.clock.DeviceClock`).

Which transcript is which view is data: ``[views]`` in the platform's ``config.toml`` names the
commands (``"show interfaces" = "interfaces"``); the view kinds are the functions of :data:`VIEWS`.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from mgmtbench.emulator.device.config import (
    GRAMMAR_FILE,
    ConfigLine,
    RunningConfig,
    interface_name,
    interface_types,
)
from mgmtbench.emulator.device.transcripts import CommandWords, Platform, default_root


@dataclass(frozen=True)
class IfConfig:
    """What an interface's configuration says, as far as the show commands tell it."""

    name: str
    description: str | None = None
    address: tuple[str, str] | None = None  # (address, mask)
    secondaries: tuple[tuple[str, str], ...] = ()
    shutdown: bool = False
    nameif: str | None = None
    mtu: int | None = None
    standby: str | None = None
    speed: str | None = None  # "10", "100", "1000" (Mb/s); None: auto
    duplex: str | None = None  # "full", "half"; None: auto
    bandwidth: int | None = None  # Kbit/s (`bandwidth`), None: the speed's


def interfaces(config: RunningConfig) -> dict[str, IfConfig]:
    """The configured interfaces by name, in configuration order."""
    mtus: dict[str, int] = {}
    blocks: list[ConfigLine] = []
    for line in config.root:
        if line.removed:
            continue
        words = line.text.split()
        if words[:1] == ["interface"] and len(words) == 2:
            blocks.append(line)
        elif words[:1] == ["mtu"] and len(words) == 3 and words[2].isdigit():
            mtus[words[1]] = int(words[2])
    found: dict[str, IfConfig] = {}
    for block in blocks:
        state = IfConfig(block.text.split()[1])
        for child in block.live_children():
            state = _setting(state, child.text)
        if state.nameif is not None and state.nameif in mtus:
            state = replace(state, mtu=mtus[state.nameif])
        found[state.name] = state
    return found


def _setting(state: IfConfig, text: str) -> IfConfig:
    words = text.split()
    if words[0] == "description":
        return replace(state, description=text.split(None, 1)[1] if len(words) > 1 else "")
    if words[:2] == ["ip", "address"] and len(words) >= 4:
        if words[-1] == "secondary":
            return replace(state, secondaries=(*state.secondaries, (words[2], words[3])))
        standby = words[5] if len(words) >= 6 and words[4] == "standby" else None
        return replace(state, address=(words[2], words[3]), standby=standby)
    if words == ["shutdown"]:
        return replace(state, shutdown=True)
    if words[0] == "nameif" and len(words) == 2:
        return replace(state, nameif=words[1])
    if words[0] == "mtu" and len(words) == 2 and words[1].isdigit():
        return replace(state, mtu=int(words[1]))
    if len(words) == 2 and words[0] in ("speed", "duplex", "bandwidth"):
        value = None if words[1] == "auto" else words[1]
        if words[0] == "bandwidth":
            return replace(state, bandwidth=int(value) if value and value.isdigit() else None)
        return replace(state, speed=value) if words[0] == "speed" else \
            replace(state, duplex=value)
    return state


def prefix_length(mask: str) -> int:
    """``255.255.255.0`` -> 24."""
    try:
        return ipaddress.IPv4Network(f"0.0.0.0/{mask}").prefixlen
    except ValueError:
        return 32


# --- blocks of a show-interfaces transcript ----------------------------------------------------

_IOS_HEAD = re.compile(r"^(\S+) is (.+?), line protocol is (\S+)(.*)$")
_ASA_HEAD = re.compile(r'^Interface (\S+) "([^"]*)", is (.+?), line protocol is (\S+)(.*)$')
_COUNTER = re.compile(r"^(\s+)(\d+) packets (input|output), (\d+) bytes(.*)$")
_IOS_RATE = re.compile(r"minute (input|output) rate (\d+) bits/sec, (\d+) packets/sec")
_ASA_RATE = re.compile(r"minute (input|output) rate (\d+) pkts/sec,\s+(\d+) bytes/sec")


def _split_blocks(text: str, head: re.Pattern[str]) -> list[tuple[str, list[str]]]:
    blocks: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        found = head.match(line)
        if found:
            blocks.append((found.group(1), [line]))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


@dataclass(frozen=True)
class _Rates:
    """A block's per-second rates: packets and bytes, in and out."""

    packets: Mapping[str, float]
    octets: Mapping[str, float]


def _rates(lines: list[str]) -> _Rates:
    packets: dict[str, float] = {}
    octets: dict[str, float] = {}
    for line in lines:
        found = _IOS_RATE.search(line)
        if found and found.group(1) not in packets:
            packets[found.group(1)] = float(found.group(3))
            octets[found.group(1)] = int(found.group(2)) / 8
            continue
        found = _ASA_RATE.search(line)
        if found and found.group(1) not in packets:
            packets[found.group(1)] = float(found.group(2))
            octets[found.group(1)] = float(found.group(3))
    return _Rates(packets, octets)


def advance_counters(lines: list[str], seconds: float) -> list[str]:
    """``lines`` with their packet and byte counters ``seconds`` further on at the block's rates."""
    if seconds <= 0:
        return lines
    rates = _rates(lines)
    if not rates.packets:
        return lines
    out = []
    for line in lines:
        found = _COUNTER.match(line)
        if found:
            way = found.group(3)
            count = int(found.group(2)) + int(rates.packets.get(way, 0) * seconds)
            size = int(found.group(4)) + int(rates.octets.get(way, 0) * seconds)
            line = f"{found.group(1)}{count} packets {way}, {size} bytes{found.group(5)}"
        out.append(line)
    return out


def _zeroed(lines: list[str]) -> list[str]:
    """A template block with its rates and counters at zero (a new interface)."""
    out = []
    for line in lines:
        if _COUNTER.match(line) or _IOS_RATE.search(line) or _ASA_RATE.search(line) or \
                re.search(r"\b(broadcasts|errors|drops|resets)\b", line):
            line = re.sub(r"\d+(?! minute)", "0", line) if not re.search(r"\d+/\d+", line) \
                else line
        out.append(line)
    return out


def _template(blocks: list[tuple[str, list[str]]], name: str) -> list[str]:
    kind = re.match(r"^[A-Za-z-]+", name)
    sub = "." in name
    same = [lines for other, lines in blocks
            if kind and other.startswith(kind.group()) and ("." in other) == sub]
    same = same or [lines for other, lines in blocks if kind and other.startswith(kind.group())]
    return _zeroed(same[0] if same else blocks[0][1])


def _kind(name: str) -> str:
    """An interface name's type: ``Loopback`` of ``Loopback9``."""
    found = re.match(r"^[A-Za-z-]+", name)
    return found.group() if found else name


def _place_new(names: list[str], name: str) -> int:
    """Where a new interface goes: after the last one of its type, else at the end."""
    at = len(names)
    for index, other in enumerate(names):
        if _kind(other) == _kind(name):
            at = index + 1
    return at


def _ordered(blocks: list[str], current: Mapping[str, IfConfig]) -> list[str]:
    names = list(blocks)
    for name in current:
        if name not in names:
            names.insert(_place_new(names, name), name)
    return names


# --- IOS ---------------------------------------------------------------------------------------


def _ios_block(lines: list[str], base: IfConfig | None, cur: IfConfig | None,
               name: str) -> list[str]:
    if cur is None or cur == base:
        return lines
    base = base or IfConfig(name, description=_ios_description(lines),
                            address=_ios_address(lines), shutdown="administratively" in lines[0])
    head = _IOS_HEAD.match(lines[0])
    status, protocol, tail = (head.group(2), head.group(3), head.group(4)) if head else (
        "up", "up", "")
    if cur.shutdown:
        status, protocol, tail = "administratively down", "down", ""
    elif status == "administratively down":
        status, protocol = "up", "up"
    out = [f"{name} is {status}, line protocol is {protocol}{tail}"]
    body = [line for line in lines[1:] if not line.startswith(
        ("  Description: ", "  Internet address is ", "  Secondary address "))]
    extra = []
    if cur.description is not None:
        extra.append(f"  Description: {cur.description}")
    if cur.address is not None:
        extra.append(f"  Internet address is {cur.address[0]}/{prefix_length(cur.address[1])}")
    extra += [f"  Secondary address {a}/{prefix_length(m)}" for a, m in cur.secondaries]
    at = 1 if body and body[0].startswith("  Hardware is") else 0
    body[at:at] = extra
    if cur.mtu is not None and cur.mtu != base.mtu:
        body = [re.sub(r"^  MTU \d+ bytes", f"  MTU {cur.mtu} bytes", line) for line in body]
    if (cur.speed, cur.duplex, cur.bandwidth) != (base.speed, base.duplex, base.bandwidth):
        body = [_ios_media(line, cur) for line in body]
    return out + body


# The line of `show interfaces` with the duplex and speed: a router port's (ISR/C8000 built-in
# ports) and a switch port's (NIM-ES2, Catalyst), and the BW of the MTU line.
_ROUTER_MEDIA = re.compile(r"^  (Full|Half|Auto) Duplex, (Auto Speed|\d+[MG]bps), "
                           r"link type is (\S+), (.*)$")
_SWITCH_MEDIA = re.compile(r"^  (Full|Half|Auto)-duplex, (Auto-speed|\d+[MG]b/s), (.*)$")
_BW = re.compile(r"^(  MTU \d+ bytes, BW )\d+( Kbit/sec.*)$")


def _ios_media(line: str, cur: IfConfig) -> str:
    """``line`` of an interface's ``show interfaces`` block as ``speed``, ``duplex`` and
    ``bandwidth`` set it (auto: the line of the transcript, what was negotiated)."""
    duplex = cur.duplex.capitalize() if cur.duplex else None
    found = _ROUTER_MEDIA.match(line)
    if found:
        link = "force-up" if cur.speed else found.group(3)
        speed = f"{cur.speed}Mbps" if cur.speed else found.group(2)
        return f"  {duplex or found.group(1)} Duplex, {speed}, link type is {link}, " \
               f"{found.group(4)}"
    found = _SWITCH_MEDIA.match(line)
    if found:
        speed = f"{cur.speed}Mb/s" if cur.speed else found.group(2)
        return f"  {duplex or found.group(1)}-duplex, {speed}, {found.group(3)}"
    found = _BW.match(line)
    if found and (cur.bandwidth or (cur.speed and cur.speed.isdigit())):
        kbits = cur.bandwidth or int(cur.speed or 0) * 1000
        return f"{found.group(1)}{kbits}{found.group(2)}"
    return line


def _ios_description(lines: list[str]) -> str | None:
    for line in lines:
        if line.startswith("  Description: "):
            return line[len("  Description: "):]
    return None


def _ios_address(lines: list[str]) -> tuple[str, str] | None:
    for line in lines:
        if line.startswith("  Internet address is "):
            address, length = line.split()[-1].split("/")
            mask = str(ipaddress.IPv4Network(f"0.0.0.0/{length}").netmask)
            return address, mask
    return None


def ios_interfaces(view: ViewInput) -> str:
    """IOS ``show interfaces``."""
    return _interfaces(view, _IOS_HEAD, _ios_block)


# --- ASA ---------------------------------------------------------------------------------------

_ASA_INDENT = "        "


def _asa_block(lines: list[str], base: IfConfig | None, cur: IfConfig | None,
               name: str) -> list[str]:
    if cur is None or cur == base:
        return lines
    head = _ASA_HEAD.match(lines[0])
    nameif = head.group(2) if head else ""
    status, protocol = (head.group(3), head.group(4)) if head else ("up", "up")
    if base is None or cur.nameif != base.nameif:
        nameif = cur.nameif or ""
    if cur.shutdown:
        status, protocol = "administratively down", "down"
    elif status == "administratively down":
        status, protocol = "up", "up"
    out = [f'Interface {name} "{nameif}", is {status}, line protocol is {protocol}']
    rest = lines[1:]
    for at, line in enumerate(rest):
        stripped = line.strip()
        if line.startswith("  Traffic Statistics for "):
            if nameif:  # the statistics of an interface with a name, under its new name
                out += [f'  Traffic Statistics for "{nameif}":', *rest[at + 1:]]
            break
        if stripped.startswith(("Description: ", "Available but not configured via nameif",
                                "IP address ")):
            continue
        if stripped.startswith("MAC address "):
            mac = stripped.split()[2].rstrip(",")
            mtu = str(cur.mtu or 1500) if cur.nameif else "not set"
            if not cur.nameif:
                out.append(f"{_ASA_INDENT}Available but not configured via nameif")
            out.append(f"{_ASA_INDENT}MAC address {mac}, MTU {mtu}")
            out.append(f"{_ASA_INDENT}IP address {cur.address[0]}, subnet mask {cur.address[1]}"
                       if cur.address else f"{_ASA_INDENT}IP address unassigned")
            continue
        out.append(line)
        if stripped.startswith("Input flow control") and cur.description is not None:
            out.append(f"{_ASA_INDENT}Description: {cur.description}")
    return out


def asa_interfaces(view: ViewInput) -> str:
    """ASA ``show interface``."""
    return _interfaces(view, _ASA_HEAD, _asa_block)


_Block = Callable[[list[str], IfConfig | None, IfConfig | None, str], list[str]]


def _interfaces(view: ViewInput, head: re.Pattern[str], block: _Block) -> str:
    """Every interface's block of the transcript (split at ``head``), each rewritten by ``block``
    where its configuration differs from the default one; a configured interface the
    transcript lacks gets a block made from one of its kind."""
    blocks = _split_blocks(view.transcript, head)
    known = dict(blocks)
    out: list[str] = []
    for name in _ordered(list(known), view.current):
        lines = known.get(name)
        base = view.base.get(name)
        if lines is None:
            lines, base = _template(blocks, name), None
        out += block(lines, base, view.current.get(name), name)
    return "\n".join(out) + "\n"


# --- brief -------------------------------------------------------------------------------------

_BRIEF_ROW = re.compile(r"^(\S+)\s+(\S+)\s+(YES|NO)\s+(\S+)\s+(administratively down|\S+)\s+(\S+)$")


def brief(view: ViewInput) -> str:
    """``show ip interface brief`` (IOS) and ``show interface ip brief`` (ASA): a row per
    interface, the columns as wide as the transcript's."""
    lines = view.transcript.splitlines()
    header, rows = lines[0], lines[1:]
    width = header.index("IP-Address") - 1
    parsed = {}
    for row in rows:
        found = _BRIEF_ROW.match(row)
        if found:
            parsed[found.group(1)] = (row, found.groups())
    new_method = "manual"
    out = [header]
    for name in _ordered(list(parsed), view.current):
        cur, base = view.current.get(name), view.base.get(name)
        if name in parsed and (cur is None or cur == base):
            out.append(parsed[name][0])
            continue
        if name in parsed:
            _, address, ok, method, status, protocol = parsed[name][1]
        else:
            address, ok, method, status, protocol = "unassigned", "YES", "unset", "up", "up"
        assert cur is not None
        if base is None or cur.address != base.address:
            address = cur.address[0] if cur.address else "unassigned"
            method = new_method if cur.address else method
        if cur.shutdown:
            status, protocol = "administratively down", "down"
        elif status == "administratively down":
            status, protocol = "up", "up"
        out.append(f"{name:<{width}} {address:<15} {ok} {method:<6} {status:<21} {protocol}")
    return "\n".join(out) + "\n"


# --- IOS show ip interface -------------------------------------------------------------------


def ios_ip_interface(view: ViewInput) -> str:
    """IOS ``show ip interface``: the transcript's block for an interface whose configuration is
    the default one, else a block made from its configuration (the layout of IOS-XE 17)."""
    blocks = _split_blocks(view.transcript, _IOS_HEAD)
    known = dict(blocks)
    out: list[str] = []
    for name in _ordered(list(known), view.current):
        lines, base = known.get(name), view.base.get(name)
        cur = view.current.get(name)
        if lines is not None and (cur is None or cur == base):
            out += lines
            continue
        head = _ios_block(lines[:1] if lines else [f"{name} is up, line protocol is up"],
                          base if lines else None, cur, name)[0]
        out.append(head)
        if cur is None or cur.address is None:
            out.append("  Internet protocol processing disabled")
            continue
        children = view.children.get(name, ())
        address, mask = cur.address
        out.append(f"  Internet address is {address}/{prefix_length(mask)}")
        out.append("  Broadcast address is 255.255.255.255")
        out.append("  Address determined by non-volatile memory")
        out.append(f"  MTU is {cur.mtu or 1500} bytes")
        out += [f"  Secondary address {a}/{prefix_length(m)}" for a, m in cur.secondaries]
        helpers = [c.split()[-1] for c in children if c.startswith("ip helper-address ")]
        out.append(f"  Helper address is {', '.join(helpers)}" if helpers
                   else "  Helper address is not set")
        out.append("  Directed broadcast forwarding is disabled")
        acl_out = _acl(children, "out")
        acl_in = _acl(children, "in")
        out.append("  Outgoing Common access list is not set ")
        out.append(f"  Outgoing access list is {acl_out}")
        out.append("  Inbound Common access list is not set ")
        out.append(f"  Inbound  access list is {acl_in}")
        proxy = "disabled" if "no ip proxy-arp" in children else "enabled"
        out.append(f"  Proxy ARP is {proxy}")
        out.append("  Local Proxy ARP is disabled")
        out.append("  Security level is default")
        out.append("  Split horizon is enabled")
        redirects = "never sent" if "no ip redirects" in children else "always sent"
        out.append(f"  ICMP redirects are {redirects}")
        out.append("  ICMP unreachables are always sent")
        out.append("  ICMP mask replies are never sent")
        out.append("  IP fast switching is enabled")
        out.append("  IP Flow switching is disabled")
        out.append("  IP CEF switching is enabled")
        out.append("  IP CEF switching turbo vector")
        out.append("  IP Null turbo vector")
        out.append("  Associated unicast routing topologies:")
        out.append('        Topology "base", operation state is UP')
        out.append("  IP multicast fast switching is enabled")
        out.append("  IP multicast distributed fast switching is disabled")
        out.append("  IP route-cache flags are Fast, CEF")
        out.append("  Router Discovery is disabled")
        out.append("  IP output packet accounting is disabled")
        out.append("  IP access violation accounting is disabled")
        out.append("  TCP/IP header compression is disabled")
        out.append("  RTP/IP header compression is disabled")
        out.append("  Probe proxy name replies are disabled")
        out.append("  Policy routing is disabled")
        nat = next((c.split()[-1] for c in children if c.startswith("ip nat ")), None)
        out.append(f"  Network address translation is enabled, interface in domain {nat}"
                   if nat else "  Network address translation is disabled")
        out.append("  BGP Policy Mapping is disabled")
        out.append("  Input features: MCI Check")
        out.append("  IPv4 WCCP Redirect outbound is disabled")
        out.append("  IPv4 WCCP Redirect inbound is disabled")
        out.append("  IPv4 WCCP Redirect exclude is disabled")
    return "\n".join(out) + "\n"


def _acl(children: tuple[str, ...], way: str) -> str:
    for child in children:
        words = child.split()
        if words[:2] == ["ip", "access-group"] and len(words) == 4 and words[3] == way:
            return words[2]
    return "not set"


# --- running-config ----------------------------------------------------------------------------

_COUNT = re.compile(r"^Current configuration : (\d+) bytes$", re.M)


def running_interface(config: RunningConfig, name: str, header: str,
                      iftypes: tuple[str, ...]) -> str | None:
    """``show running-config interface NAME``: the block, under the platform's header (IOS:
    ``Building configuration...`` and the byte count), None if there is no such interface."""
    full = interface_name(name, iftypes) or name
    for line in config.root:
        words = line.text.split()
        if not line.removed and words[:1] == ["interface"] and len(words) == 2 and \
                words[1].lower() == full.lower():
            body = "\n".join([line.text, *(" " + c.text for c in line.live_children())]) + "\n"
            if header:
                body = f"!\n{body}end\n"
                return f"{header.format(size=len(body))}{body}\n"
            return f"!\n{body}"
    return None


# --- views -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ViewInput:
    """What a view is made from: the transcript (rendered), the default configuration's
    interfaces and the current ones, and each interface's lines (for ``show ip interface``)."""

    transcript: str
    base: Mapping[str, IfConfig]
    current: Mapping[str, IfConfig]
    children: Mapping[str, tuple[str, ...]]


VIEWS: dict[str, Callable[[ViewInput], str]] = {
    "ios_interfaces": ios_interfaces,
    "asa_interfaces": asa_interfaces,
    "brief": brief,
    "ios_ip_interface": ios_ip_interface,
}


@dataclass(frozen=True)
class ViewSpec:
    """A platform's derived views: the command whose transcript each view rewrites, the
    commands that take an interface name, and the header of ``show running-config interface``."""

    views: Mapping[CommandWords, str]
    sources: Mapping[str, CommandWords]
    single: Mapping[str, str]  # "show interfaces <word>" -> view kind
    running_header: str


def view_spec(platform: Platform) -> ViewSpec:
    """``[views]`` of the platform's ``config.toml``."""
    folder = getattr(platform, "folder", None)
    return _view_spec(Path(folder) if folder else default_root() / platform.name)


@cache
def _view_spec(folder: Path) -> ViewSpec:
    path = folder / GRAMMAR_FILE
    raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    spec = raw.get("views", {})
    views = {tuple(str(k).split()): str(v) for k, v in spec.get("commands", {}).items()}
    sources = {str(k): tuple(str(v).split()) for k, v in spec.get("sources", {}).items()}
    single = {str(k): str(v) for k, v in spec.get("with_interface", {}).items()}
    for kind in [*views.values(), *single.values()]:
        if kind not in VIEWS and kind != "running_interface":
            raise ValueError(f"{path}: unknown view {kind!r} (known: {sorted(VIEWS)})")
    return ViewSpec(views, sources, single, str(spec.get("running_header", "")))


def select(text: str, name: str, kind: str) -> str | None:
    """The part of a per-interface output (``kind`` is its view) about interface ``name``."""
    head = _ASA_HEAD if kind == "asa_interfaces" else _IOS_HEAD
    if kind == "brief":
        lines = text.splitlines()
        rows = [row for row in lines[1:] if row.split()[:1] == [name]]
        return "\n".join([lines[0], *rows]) + "\n" if rows else None
    for found, lines in _split_blocks(text, head):
        if found == name:
            return "\n".join(lines) + "\n"
    return None


class DerivedState:
    """A device's outputs that follow its configuration and its clock (see the module doc).

    ``rendered(words)`` gives a transcript filled with the device's facts; ``elapsed()`` the
    seconds the device has run; ``default()`` the default configuration's text. Outputs are made
    once per configuration change and second; nothing is made before the first of them (a fleet
    of devices starts as fast as without)."""

    def __init__(self, platform: Platform, config: RunningConfig,
                 rendered: Callable[[CommandWords], str], elapsed: Callable[[], float],
                 default: Callable[[], str]) -> None:
        self.spec = view_spec(platform)
        self.iftypes = interface_types(platform) if self.spec.views or self.spec.single else ()
        self.config = config
        self._rendered = rendered
        self._elapsed = elapsed
        self._default = default
        self._baseline: tuple[dict[str, IfConfig], tuple[int, int] | None] | None = None
        self._current: tuple[int, dict[str, IfConfig], dict[str, tuple[str, ...]]] | None = None
        self._made: dict[CommandWords, tuple[int, int, str]] = {}

    def baseline(self) -> tuple[dict[str, IfConfig], tuple[int, int] | None]:
        """The default configuration's interfaces and byte count (the count and the size it
        counts), read once."""
        if self._baseline is None:
            default = self.config if self.config.version == 0 else RunningConfig(
                self._default(), indent=self.config.indent)
            text = default.render()
            found = _COUNT.search(text)
            self._baseline = (interfaces(default),
                              (int(found.group(1)), len(text) - found.end()) if found else None)
        return self._baseline

    @property
    def base(self) -> dict[str, IfConfig]:
        """The default configuration's interfaces."""
        return self.baseline()[0]

    def has(self, words: CommandWords) -> bool:
        """Whether ``words`` is one of the platform's derived views."""
        return words in self.spec.views

    def current(self) -> tuple[dict[str, IfConfig], dict[str, tuple[str, ...]]]:
        """The configured interfaces and their lines, as of the configuration's last change."""
        version = self.config.version
        if self._current is None or self._current[0] != version:
            children = {line.text.split()[1]: tuple(c.text for c in line.live_children())
                        for line in self.config.root
                        if not line.removed and line.text.startswith("interface ")
                        and len(line.text.split()) == 2}
            self._current = (version, interfaces(self.config), children)
        return self._current[1], self._current[2]

    def output(self, words: CommandWords) -> str:
        """The view ``words`` names (:meth:`has`), as of now."""
        second = int(self._elapsed())
        version = self.config.version
        made = self._made.get(words)
        if made is not None and made[0] == version and made[1] == second:
            return made[2]
        kind = self.spec.views[words]
        source = self.spec.sources.get(kind, words)
        current, children = self.current()
        text = VIEWS[kind](ViewInput(self._rendered(source), self.base, current, children))
        if kind.endswith("interfaces") and second:
            head = _ASA_HEAD if kind == "asa_interfaces" else _IOS_HEAD
            text = "".join("\n".join(advance_counters(lines, second)) + "\n"
                           for _, lines in _split_blocks(text, head))
        self._made[words] = (version, second, text)
        return text

    def running_config(self, text: str) -> str:
        """``show running-config``'s text with its byte count following the configuration."""
        default_count = self.baseline()[1]
        found = _COUNT.search(text) if default_count else None
        if found is None or default_count is None:
            return text
        count, size = default_count
        count += len(text) - found.end() - size
        return f"{text[:found.start(1)]}{count}{text[found.end(1):]}"

    def one_interface(self, words: CommandWords, name: str) -> str | None:
        """What ``words`` and an interface ``name`` show (``show interfaces Gi0/1``, in
        ``[views.with_interface]``): that interface's part of the view, None if there is none."""
        kind = self.spec.single.get(" ".join((*words, "<word>")))
        if kind is None:
            return None
        full = interface_name(name, self.iftypes) or name
        if kind == "running_interface":
            return running_interface(self.config, full, self.spec.running_header, self.iftypes)
        view = next((w for w, k in self.spec.views.items() if k == kind), None)
        return None if view is None else select(self.output(view), full, kind)
