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

from mgmtbench.emulator.device import iproute
from mgmtbench.emulator.device.config import (
    GRAMMAR_FILE,
    ConfigLine,
    RunningConfig,
    interface_name,
    interface_types,
)
from mgmtbench.emulator.device.ifconfig import IfConfig
from mgmtbench.emulator.device.transcripts import CommandWords, Platform, default_root


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
    if words[:2] == ["ip", "address"] and len(words) >= 3 and "/" in words[2]:
        return _cidr_setting(state, words[2], secondary=words[-1] == "secondary")
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


def _cidr_setting(state: IfConfig, text: str, *, secondary: bool) -> IfConfig:
    """``ip address 198.19.1.1/30`` (EOS, NX-OS): the address and its mask."""
    try:
        parsed = ipaddress.IPv4Interface(text)
    except ValueError:
        return state
    pair = (str(parsed.ip), str(parsed.netmask))
    if secondary:
        return replace(state, secondaries=(*state.secondaries, pair))
    return replace(state, address=pair)


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
    return _zeroed(_like(blocks, name))


def _like(blocks: list[tuple[str, list[str]]], name: str) -> list[str]:
    """The block of an interface of ``name``'s type (a sub-interface's of a sub-interface),
    else the first block."""
    kind = re.match(r"^[A-Za-z-]+", name)
    sub = "." in name
    same = [lines for other, lines in blocks
            if kind and other.startswith(kind.group()) and ("." in other) == sub]
    same = same or [lines for other, lines in blocks if kind and other.startswith(kind.group())]
    return same[0] if same else blocks[0][1]


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
    where its configuration differs from the default one, its counters ``view.seconds`` on; a
    configured interface the transcript lacks gets a block made from one of its kind."""
    blocks = _split_blocks(view.transcript, head)
    known = dict(blocks)
    out: list[str] = []
    for name in _ordered(list(known), view.current):
        lines = known.get(name)
        base = view.base.get(name)
        if lines is None:
            lines, base = _template(blocks, name), None
        out += advance_counters(block(lines, base, view.current.get(name), name), view.seconds)
    return "\n".join(out) + "\n"


# --- counters at the block's rates: EOS, NX-OS, Junos ------------------------------------------

_UNITS = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9}


@dataclass(frozen=True)
class CounterForm:
    """How a platform's interface block shows its rates and counters.

    ``rates`` match a rate line: named groups ``pps``, ``bits`` (and ``unit``: ``k``, ``M``,
    ``G`` before ``bps``). ``counters`` match a line of counters: named groups ``packets``,
    ``octets``, ``ucast``, ``mcast`` and ``bcast``. A group is the input's or the output's by
    its prefix (``in_pps``), else by the line's ``way`` group (``input``, ``Output``), else by
    the section the line is in: ``sections`` match the line that starts one (``RX``, ``TX``),
    its ``way`` group saying which. A block's first rate of each way is its rate."""

    rates: tuple[re.Pattern[str], ...]
    counters: tuple[re.Pattern[str], ...]
    sections: re.Pattern[str] | None = None


@dataclass(frozen=True)
class _Flow:
    """A way's traffic per second."""

    packets: float
    octets: float


def _way(word: str) -> str:
    """``in`` or ``out``, as ``word`` says (``input``, ``Output``, ``RX``, ``Received``, ``Sent``)."""
    return "in" if word[:1].lower() in ("i", "r") else "out"


def _fields(found: re.Match[str], way: str | None) -> list[tuple[str, str, str]]:
    """(group, way, what it counts) of each number ``found`` matched (``way``: the section's)."""
    if "way" in found.re.groupindex and found.group("way"):
        way = _way(found.group("way"))
    out = []
    for group in found.re.groupindex:
        if group == "way" or found.group(group) is None:
            continue
        prefix, _, what = group.partition("_")
        side, what = (prefix, what) if what else (way, group)
        if side is not None:
            out.append((group, side, what))
    return out


def _flows(lines: list[str], form: CounterForm) -> dict[str, _Flow]:
    """The block's rates, by way."""
    flows: dict[str, _Flow] = {}
    for line in lines:
        for pattern in form.rates:
            found = pattern.search(line)
            if found is None:
                continue
            values = {(side, what): found.group(group) for group, side, what in _fields(found, None)}
            for side in ("in", "out"):
                if side in flows or (side, "pps") not in values:
                    continue
                bits = float(values.get((side, "bits")) or 0) * \
                    _UNITS.get(values.get((side, "unit")) or "", 1.0)
                flows[side] = _Flow(float(values[(side, "pps")]), bits / 8)
    return flows


_Change = Callable[[str, str, int], int]


def _rewrite(lines: list[str], form: CounterForm, change: _Change) -> list[str]:
    """``lines`` with each counter ``n`` (way, what it counts) made ``change(way, what, n)``."""
    out: list[str] = []
    way: str | None = None
    for line in lines:
        section = form.sections.match(line) if form.sections is not None else None
        if section is not None:
            way = _way(section.group("way"))
        for pattern in form.counters:
            found = pattern.match(line)
            if found is not None:
                texts = {group: str(change(side, what, int(found.group(group))))
                         for group, side, what in _fields(found, way)}
                line = _substituted(line, found, texts)
                break
        out.append(line)
    return out


def _substituted(line: str, found: re.Match[str], texts: Mapping[str, str]) -> str:
    """``line`` with the groups of ``found`` named in ``texts`` replaced by their text."""
    for group in sorted(texts, key=found.start, reverse=True):
        line = line[:found.start(group)] + texts[group] + line[found.end(group):]
    return line


def move_counters(lines: list[str], seconds: float, form: CounterForm) -> list[str]:
    """``lines`` (one interface's block) with its counters ``seconds`` on at its rates: packets
    and bytes, broadcasts and multicasts in the share of the packets they had, unicasts the
    rest (a block that shows no rate keeps its counters)."""
    flows = _flows(lines, form)
    if seconds <= 0 or not any(flow.packets or flow.octets for flow in flows.values()):
        return lines
    totals: dict[tuple[str, str], int] = {}

    def note(side: str, what: str, value: int) -> int:
        totals.setdefault((side, what), value)
        return value

    _rewrite(lines, form, note)
    delta: dict[tuple[str, str], int] = {}
    for side, flow in flows.items():
        packets = int(flow.packets * seconds)
        total = totals.get((side, "packets"), 0)
        for what in ("bcast", "mcast"):
            share = totals.get((side, what), 0) / total if total else 0.0
            delta[(side, what)] = int(flow.packets * seconds * share)
        delta[(side, "packets")] = packets
        delta[(side, "octets")] = int(flow.octets * seconds)
        delta[(side, "ucast")] = packets - delta[(side, "bcast")] - delta[(side, "mcast")]
    return _rewrite(lines, form, lambda side, what, value: value + delta.get((side, what), 0))


def zero_counters(lines: list[str], form: CounterForm) -> list[str]:
    """``lines`` with their rates and counters at zero (the block of a new interface)."""
    out = []
    for line in _rewrite(lines, form, lambda side, what, value: 0):
        for pattern in form.rates:
            found = pattern.search(line)
            if found is not None:
                line = _substituted(line, found, {
                    group: "" if what == "unit" else "0" for group, _, what in
                    _fields(found, "in")})
        out.append(line)
    return out


@dataclass(frozen=True)
class Layout:
    """A platform's ``show interfaces``: where a block starts, its counters, and whether an
    empty line parts the blocks."""

    head: re.Pattern[str]
    counters: CounterForm
    separated: bool = False


def _trimmed(lines: list[str]) -> list[str]:
    """``lines`` without the empty lines at their end."""
    end = len(lines)
    while end and not lines[end - 1]:
        end -= 1
    return lines[:end]


def _laid_out(view: ViewInput, layout: Layout, block: _Block) -> str:
    """As :func:`_interfaces`, for blocks of ``layout``: a configured interface the transcript
    lacks gets a block only if the default configuration lacks it too (the transcripts show
    what they show of the default one)."""
    blocks = [(name, _trimmed(lines)) for name, lines in _split_blocks(view.transcript,
                                                                       layout.head)]
    known = dict(blocks)
    new = {name: cur for name, cur in view.current.items()
           if name in known or name not in view.base}
    out: list[list[str]] = []
    for name in _ordered(list(known), new):
        lines = known.get(name)
        base = view.base.get(name)
        if lines is None:
            lines, base = zero_counters(_like(blocks, name), layout.counters), None
        lines = block(lines, base, view.current.get(name), name)
        out.append(move_counters(lines, view.seconds, layout.counters))
    glue = "\n\n" if layout.separated else "\n"
    return glue.join("\n".join(lines) for lines in out) + "\n"


# --- EOS ---------------------------------------------------------------------------------------

_BPS = r"(?P<bits>[\d.]+) (?P<unit>[kMG]?)bps"
EOS = Layout(_IOS_HEAD, CounterForm(
    rates=(re.compile(rf"(?P<way>input|output) rate {_BPS} .*, (?P<pps>\d+) packets/sec$"),),
    counters=(re.compile(r"^\s+(?P<packets>\d+) packets (?P<way>input|output), "
                         r"(?P<octets>\d+) bytes$"),
              re.compile(r"^\s+Received (?P<in_bcast>\d+) broadcasts, "
                         r"(?P<in_mcast>\d+) multicast$"),
              re.compile(r"^\s+Sent (?P<out_bcast>\d+) broadcasts, "
                         r"(?P<out_mcast>\d+) multicast$"))))
_EOS_ADDRESS = ("  Description: ", "  Internet address is ", "  Broadcast address is ",
                "  No Internet protocol address assigned")


def _eos_block(lines: list[str], base: IfConfig | None, cur: IfConfig | None,
               name: str) -> list[str]:
    if cur is None or cur == base:
        return lines
    head = _IOS_HEAD.match(lines[0])
    status, protocol, tail = (head.group(2), head.group(3), head.group(4)) if head else (
        "up", "up", " (connected)")
    if cur.shutdown:
        status, protocol, tail = "administratively down", "down", " (disabled)"
    elif status == "administratively down":
        status, protocol, tail = "up", "up", " (connected)"
    body = [line for line in lines[1:] if not line.startswith(_EOS_ADDRESS)]
    extra = [f"  Description: {cur.description}"] if cur.description is not None else []
    if cur.address is not None:
        extra += [f"  Internet address is {cur.address[0]}/{prefix_length(cur.address[1])}",
                  "  Broadcast address is 255.255.255.255"]
    elif any(line.startswith("  IP MTU ") for line in body):  # routed, without an address
        extra.append("  No Internet protocol address assigned")
    at = 1 if body and body[0].startswith("  Hardware is") else 0
    body[at:at] = extra
    if cur.mtu is not None and cur.mtu != (base.mtu if base else None):
        body = [re.sub(r"^  IP MTU \d+ bytes.*$", f"  IP MTU {cur.mtu} bytes", line)
                for line in body]
    return [f"{name} is {status}, line protocol is {protocol}{tail}", *body]


def eos_interfaces(view: ViewInput) -> str:
    """EOS ``show interfaces``."""
    return _laid_out(view, EOS, _eos_block)


# --- NX-OS -------------------------------------------------------------------------------------

_NXOS_HEAD = re.compile(r"^(\S+) is (up|down)(?: \(([^)]*)\))?"
                        r"(, line protocol is [^,\s]+)?(.*)$")
_NXOS_RATE = r"(?P<{0}_bits>[\d.]+) (?P<{0}_unit>[kMG]?)bps, (?P<{0}_pps>\d+) pps"
NXOS = Layout(_NXOS_HEAD, CounterForm(
    rates=(re.compile(r"(?P<way>input|output) rate (?P<bits>\d+) bits/sec, "
                      r"(?P<pps>\d+) packets/sec$"),
           re.compile(rf"^\s+input rate {_NXOS_RATE.format('in')}; "
                      rf"output rate {_NXOS_RATE.format('out')}$")),
    counters=(re.compile(r"^\s+(?P<ucast>\d+) unicast packets  (?P<mcast>\d+) multicast "
                         r"packets  (?P<bcast>\d+) broadcast packets$"),
              re.compile(r"^\s+(?P<packets>\d+) (?:input|output) packets  "
                         r"(?P<octets>\d+) bytes$"),
              re.compile(r"^\s+(?P<packets>\d+) (?:input|output) packets (?P<ucast>\d+) "
                         r"unicast packets (?P<mcast>\d+) multicast packets$"),
              re.compile(r"^\s+(?P<bcast>\d+) broadcast packets (?P<octets>\d+) bytes$"),
              re.compile(r"^\s+(?P<packets>\d+) packets (?P<way>input|output) "
                         r"(?P<octets>\d+) bytes"),
              re.compile(r"^\s+ucast: (?P<packets>\d+) pkts, (?P<octets>\d+) bytes$")),
    sections=re.compile(r"^  (?:L3 )?(?P<way>RX|TX|Rx|Tx|in|out)(?: Switched:)?$")),
    separated=True)
_NXOS_DOWN = "Administratively down"


def _nxos_block(lines: list[str], base: IfConfig | None, cur: IfConfig | None,
                name: str) -> list[str]:
    if cur is None or cur == base:
        return lines
    head = _NXOS_HEAD.match(lines[0])
    state, reason, protocol, tail = (head.group(2), head.group(3), head.group(4) or "",
                                     head.group(5)) if head else ("up", None, "", "")
    if cur.shutdown:
        state, reason = "down", _NXOS_DOWN
    elif reason == _NXOS_DOWN:
        state, reason = "up", None
    if protocol:
        protocol = f", line protocol is {state}"
    out = [f"{name} is {state}{f' ({reason})' if reason else ''}{protocol}{tail}"]
    admin = "down" if cur.shutdown else "up"
    body = [re.sub(r"^admin state is \w+", f"admin state is {admin}", line)
            for line in lines[1:]
            if not line.startswith(("  Description: ", "  Internet Address is "))]
    extra = [f"  Description: {cur.description}"] if cur.description is not None else []
    if cur.address is not None:
        extra.append(f"  Internet Address is {cur.address[0]}/{prefix_length(cur.address[1])}")
    at = next((i + 1 for i, line in enumerate(body) if line.startswith("  Hardware")), 0)
    body[at:at] = extra
    if cur.mtu != (base.mtu if base else None):
        mtu = cur.mtu or 1500
        body = [re.sub(r"^  MTU \d+ bytes", f"  MTU {mtu} bytes", line) for line in body]
    return out + body


def nxos_interfaces(view: ViewInput) -> str:
    """NX-OS ``show interface``."""
    return _laid_out(view, NXOS, _nxos_block)


# --- Junos -------------------------------------------------------------------------------------

_JUNOS_HEAD = re.compile(r"^Physical interface: ([^,\s]+), (.+?), Physical link is (\S+)$")
_JUNOS_UNIT = re.compile(r"^  Logical interface (\S+) ")
_JUNOS_ADDRESS = re.compile(r"^(\s+)(?:Destination: \S+, )?Local: \S+(?:, Broadcast: \S+)?$")
JUNOS = Layout(_JUNOS_HEAD, CounterForm(
    rates=(re.compile(r"^  (?P<way>Input|Output) rate\s+: (?P<bits>\d+) bps "
                      r"\((?P<pps>\d+) pps\)$"),),
    counters=(re.compile(r"^\s+(?P<way>Input|Output) packets\s*: (?P<packets>\d+)$"),)),
    separated=True)


def _junos_physical(lines: list[str], base: IfConfig | None, cur: IfConfig,
                    name: str) -> list[str]:
    """A physical interface's lines as its description, ``disable`` and MTU say."""
    head = _JUNOS_HEAD.match(lines[0])
    state, link = (head.group(2), head.group(3)) if head else ("Enabled", "Up")
    if cur.shutdown:
        state, link = "Administratively down", "Down"
    elif state == "Administratively down":
        state, link = "Enabled", "Up"
    out = [f"Physical interface: {name}, {state}, Physical link is {link}"]
    for line in lines[1:]:
        if line.startswith("  Description: "):
            continue
        if cur.mtu is not None and cur.mtu != (base.mtu if base else None):
            line = re.sub(r"(Link-level type: \S+, MTU: )\d+", rf"\g<1>{cur.mtu}", line)
            line = re.sub(r"^(    Protocol inet, MTU: )\d+", rf"\g<1>{cur.mtu - 14}", line)
        out.append(line)
        if line.startswith("  Interface index: ") and cur.description is not None:
            out.append(f"  Description: {cur.description}")
    return out


def _junos_address(address: tuple[str, str]) -> str:
    """A unit's address line as Junos words it (its network cut to the octets its prefix
    needs: ``198.18/16``)."""
    parsed = ipaddress.IPv4Interface(f"{address[0]}/{address[1]}")
    length = parsed.network.prefixlen
    if length == 32:
        return f"Local: {parsed.ip}"
    octets = str(parsed.network.network_address).split(".")[:max(1, -(-length // 8))]
    return (f"Destination: {'.'.join(octets)}/{length}, Local: {parsed.ip}, "
            f"Broadcast: {parsed.network.broadcast_address}")


def _junos_unit(lines: list[str], cur: IfConfig) -> list[str]:
    """A logical interface's lines as its description and address say."""
    out = [lines[0]]
    if cur.description is not None:
        out.append(f"    Description: {cur.description}")
    for line in lines[1:]:
        if line.startswith("    Description: "):
            continue
        found = _JUNOS_ADDRESS.match(line)
        if found and cur.address is not None:
            line = found.group(1) + _junos_address(cur.address)
        out.append(line)
    return out


def _junos_block(view: ViewInput, name: str, lines: list[str]) -> list[str]:
    cur, base = view.current.get(name), view.base.get(name)
    out = lines if cur is None or cur == base else _junos_physical(lines, base, cur, name)
    starts = [at for at, line in enumerate(out) if _JUNOS_UNIT.match(line)]
    ends = [*starts[1:], len(out)][:len(starts)]
    for start, end in reversed(list(zip(starts, ends, strict=True))):
        unit = out[start].split()[2]
        ucur = view.current.get(unit)
        if ucur is not None and ucur != view.base.get(unit):
            body = _trimmed(out[start:end])
            out = [*out[:start], *_junos_unit(body, ucur), *out[start + len(body):]]
    return out


def junos_interfaces(view: ViewInput) -> str:
    """Junos ``show interfaces``: each physical interface's block (its units in it) as its
    configuration says, its counters moved; only the interfaces of the transcript (a
    configuration names no hardware that is not there)."""
    blocks = _split_blocks(view.transcript, _JUNOS_HEAD)
    out = [move_counters(_junos_block(view, name, _trimmed(lines)), view.seconds,
                         JUNOS.counters) for name, lines in blocks]
    return "\n\n".join("\n".join(lines) for lines in out) + "\n"


_TERSE_ROW = re.compile(r"^(\S+\s+)(up|down)(\s+)(up|down)(\s*)(.*)$")


def _terse_row(found: re.Match[str], view: ViewInput) -> str:
    name = found.group(1).rstrip()
    physical = name.split(".")[0]
    admin, link = found.group(2), found.group(4)
    cur, base = view.current.get(physical), view.base.get(physical)
    if cur is not None and cur != base:
        if cur.shutdown:
            admin, link = ("up", "down") if "." in name else ("down", "down")
        elif base is not None and base.shutdown:
            admin, link = "up", "up"
    rest = found.group(6)
    unit, ubase = view.current.get(name), view.base.get(name)
    if "." in name and unit is not None and unit != ubase:
        if unit.shutdown:
            admin, link = "down", "down"
        if unit.address is not None and rest:
            address = f"{unit.address[0]}/{prefix_length(unit.address[1])}"
            rest = re.sub(r"\d+\.\d+\.\d+\.\d+(/\d+)?", address, rest, count=1)
    if (admin, link, rest) == (found.group(2), found.group(4), found.group(6)):
        return found.group(0)
    return f"{found.group(1)}{admin:<6}{link:<5}{rest}".rstrip() if rest else \
        f"{found.group(1)}{admin:<6}{link}"


def junos_terse(view: ViewInput) -> str:
    """Junos ``show interfaces terse``: admin and link status as ``disable`` says, a unit's
    address as its configuration says."""
    out = []
    for line in view.transcript.splitlines():
        found = _TERSE_ROW.match(line)
        out.append(_terse_row(found, view) if found else line)
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
    #: Whole seconds the device has run: how far its counters have moved.
    seconds: int = 0
    #: The running configuration (views that read more than interfaces: ``show ip route``).
    config: RunningConfig | None = None


def ios_route(view: ViewInput) -> str:
    """IOS ``show ip route``: the transcript's table with its connected, local and static
    routes following the configuration (:mod:`.iproute`)."""
    parsed = iproute.parse(view.transcript)
    lines = [] if view.config is None else [line.text for line in view.config.root
                                            if not line.removed]
    table = iproute.build(None, view.current, view.children, lines, parsed.routes)
    return iproute.ios_table(table, parsed, view.transcript)


VIEWS: dict[str, Callable[[ViewInput], str]] = {
    "ios_interfaces": ios_interfaces,
    "asa_interfaces": asa_interfaces,
    "brief": brief,
    "ios_ip_interface": ios_ip_interface,
    "eos_interfaces": eos_interfaces,
    "nxos_interfaces": nxos_interfaces,
    "junos_interfaces": junos_interfaces,
    "junos_terse": junos_terse,
    "ios_route": ios_route,
}
#: Where each view's blocks start (the first line of an interface's part; IOS's if not named).
HEADS: dict[str, re.Pattern[str]] = {
    "asa_interfaces": _ASA_HEAD,
    "nxos_interfaces": _NXOS_HEAD,
    "junos_interfaces": _JUNOS_HEAD,
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
    if kind == "brief":
        lines = text.splitlines()
        rows = [row for row in lines[1:] if row.split()[:1] == [name]]
        return "\n".join([lines[0], *rows]) + "\n" if rows else None
    for found, lines in _split_blocks(text, HEADS.get(kind, _IOS_HEAD)):
        if found == name:
            return "\n".join(_trimmed(lines)) + "\n"
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
        text = VIEWS[kind](ViewInput(self._rendered(source), self.base, current, children,
                                     second, self.config))
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
