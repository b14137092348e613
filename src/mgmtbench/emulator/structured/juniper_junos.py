"""Junos's XML and JSON (``| display xml``, ``| display json``, and its XML API's RPCs over
NETCONF), parsed from the text the device prints, so the CLI, ``| display xml`` and NETCONF show
one state.

Each command of :data:`RPCS` has the RPC Junos answers it with (``show version`` is
``<get-software-information/>``) and a maker that turns the command's text into the RPC's
element (``<software-information>``). :func:`display_xml` wraps it as the CLI prints it::

    <rpc-reply xmlns:junos="http://xml.juniper.net/junos/22.4R3/junos">
        <software-information>
        ...
        </software-information>
        <cli>
            <banner></banner>
        </cli>
    </rpc-reply>

and :func:`display_json` writes it by Junos's JSON rules: every element is a list of objects, a
leaf's text is ``{"data": ...}``, an empty leaf ``{"data": [null]}``, attributes under
``"attributes"``.

Element names are those PyEZ's facts and tables and NAPALM's ``junos_views.yml`` read
(``software-information/host-name``, ``product-model``, ``junos-version``;
``physical-interface/name``, ``admin-status``, ``oper-status``, ``description``, ``mtu``,
``speed``, ``current-physical-address``, ``interface-flapped/@junos:seconds``,
``logical-interface``, ``address-family/interface-address/ifa-local``;
``chassis/serial-number``; ``lldp-neighbor-information/lldp-local-port-id``,
``lldp-remote-system-name``, ``lldp-remote-port-id``; ``arp-table-entry/mac-address``,
``ip-address``, ``interface-name``; ``route-table/rt/rt-entry/nh/to``;
``system-booted-time/time-length/@junos:seconds``; ``route-engine``). FROM MEMORY, not a
capture: the rest of the layout (the order of elements, the namespaces Junos puts on each
RPC's element, ``junos:style`` values, the ``xmlns:junos`` URI's release form ``22.4R3``,
``package-information/name`` (made from the package's comment here), the names of the
``show route`` and ``show system uptime`` children beyond those listed, and the JSON's
indentation, and the configuration's XML and JSON forms: a named level is an element with a
``<name>``, ``family inet`` is ``<family><inet>``, ``address X;`` is ``<address><name>X</name>``;
the ``junos:commit-*`` attributes). Byte counters that the text does not print
(``input-bytes``) are left out; ``extensive``'s error counts are 0 (the text prints none).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from lxml import etree

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.structured import JsonObject, ShapeInput


class Statement(Protocol):
    """A configuration statement as the Junos dialect keeps it
    (:class:`mgmtbench.emulator.cli.dialects.junos.Statement`): its words, and the statements
    under it (None: a leaf). A protocol, so that the dialect may use this module."""

    @property
    def words(self) -> list[str]:
        """The statement's words."""

    @property
    def children(self) -> Sequence[Statement] | None:
        """The statements under it; None for a leaf."""

#: The ``junos:`` attributes' namespace is ``JUNOS_NS.format(release=...)``.
JUNOS_NS = "http://xml.juniper.net/junos/{release}/junos"
_MODULE_NS = "http://xml.juniper.net/junos/{release}/junos-{module}"
Maker = Callable[[ShapeInput], etree._Element]


@dataclass(frozen=True)
class Rpc:
    """A command's RPC: its name, the module its element's namespace names ("": none) and
    the maker of its element from the command's text."""

    name: str
    make: Maker
    module: str = ""


def release(device: Device) -> str:
    """``22.4R3`` for Junos 22.4R3.25 (the ``show version`` transcript's)."""
    found = re.search(r"^Junos: (\d+\.\d+[A-Z]\d+)", device.transcript(("show", "version")),
                      re.M)
    return found.group(1) if found else "22.4R3"


def junos_ns(device: Device) -> str:
    """The URI of the ``junos:`` prefix on ``device``."""
    return JUNOS_NS.format(release=release(device))


class _Builder:
    """Elements with ``junos:`` attributes in the device's namespace."""

    def __init__(self, device: Device) -> None:
        self.ns = junos_ns(device)

    def root(self, tag: str, **junos: str) -> etree._Element:
        element = etree.Element(tag, nsmap={"junos": self.ns})
        self.mark(element, **junos)
        return element

    def mark(self, element: etree._Element, **junos: str) -> etree._Element:
        for key, value in junos.items():
            element.set(f"{{{self.ns}}}{key.replace('_', '-')}", value)
        return element


def sub(parent: etree._Element, tag: str, text: str | None = None) -> etree._Element:
    """A child ``tag`` of ``parent`` with ``text`` (None: an empty element)."""
    child = etree.SubElement(parent, tag)
    if text is not None:
        child.text = text
    return child


def _epoch(stamp: str) -> int:
    """``2026-10-09 01:34:12 UTC`` as seconds since the epoch (the zone taken as UTC)."""
    found = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)", stamp)
    if found is None:
        return 0
    moment = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return int(moment.timestamp())


def duration(text: str) -> int:
    """Seconds of a Junos length of time (``6w2d 04:08:11``, ``2d 20:29``, ``04:13``)."""
    seconds = 0
    for count, unit in re.findall(r"(\d+)([wd])", text):
        seconds += int(count) * (604800 if unit == "w" else 86400)
    clock = re.search(r"(\d+):(\d\d)(?::(\d\d))?", text)
    if clock:
        seconds += int(clock.group(1)) * 3600 + int(clock.group(2)) * 60 + int(clock.group(3)
                                                                               or 0)
    return seconds


def _columns(header: str) -> list[int]:
    """Where each column of a table starts, from its header (names of one or two words)."""
    return [m.start() for m in re.finditer(r"(?:(?<=^)|(?<=\s\s))\S", header)]


def _cut(line: str, starts: list[int]) -> list[str]:
    ends = [*starts[1:], None]
    return [line[a:b].strip() if b is not None else line[a:].strip()
            for a, b in zip(starts, ends, strict=True)]


# --- show version -------------------------------------------------------------------------------


def software_information(source: ShapeInput) -> etree._Element:
    """``show version``: ``<software-information>``."""
    build = _Builder(source.device)
    root = build.root("software-information")
    fields: dict[str, str] = {}
    packages: list[str] = []
    for line in source.text.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in ("Hostname", "Model", "Junos"):
            fields[key] = value.strip()
        elif line.strip():
            packages.append(line.strip())
    sub(root, "host-name", fields.get("Hostname", source.device.hostname))
    sub(root, "product-model", fields.get("Model", ""))
    sub(root, "product-name", fields.get("Model", ""))
    sub(root, "junos-version", fields.get("Junos", ""))
    for comment in packages:
        package = sub(root, "package-information")
        name = re.sub(r"[^a-z0-9]+", "-", comment.split("[")[0].lower()).strip("-")
        sub(package, "name", name)
        sub(package, "comment", comment)
    return root


# --- show interfaces ----------------------------------------------------------------------------

_PHYSICAL = re.compile(r"^Physical interface: (\S+), (.+?), Physical link is (\w+)")
_LOGICAL = re.compile(r"^  Logical interface (\S+) \(Index (\d+)\) \(SNMP ifIndex (\d+)\)")
_FLAGS = {"Up": "iff-up", "SNMP-Traps": "iff-snmp-traps", "Down": "iff-down"}


def _blocks(text: str, pattern: re.Pattern[str]) -> Iterator[list[str]]:
    block: list[str] = []
    for line in text.splitlines():
        if pattern.match(line) and block:
            yield block
            block = []
        if block or pattern.match(line):
            block.append(line)
    if block:
        yield block


def _value(lines: list[str], label: str) -> str | None:
    """What follows ``label:`` (up to the next comma) on the first line that has it."""
    pattern = re.compile(rf"(?:^|, |\s){re.escape(label)}\s*: *([^,]+)")
    for line in lines:
        found = pattern.search(line)
        if found:
            return found.group(1).strip()
    return None


def interface_information(source: ShapeInput, extensive: bool = False) -> etree._Element:
    """``show interfaces [NAME]``: ``<interface-information>`` of physical interfaces with their
    logical ones (``extensive``: the logical units' packet counts summed on the physical
    interface too, as NAPALM's counters read them)."""
    build = _Builder(source.device)
    root = build.root("interface-information", style="extensive" if extensive else "normal")
    for block in _blocks(source.text, _PHYSICAL):
        head = _PHYSICAL.match(block[0])
        assert head is not None
        name, admin, link = head.groups()
        units = [i for i, line in enumerate(block) if _LOGICAL.match(line)]
        own = block[:units[0]] if units else block
        ifd = sub(root, "physical-interface")
        sub(ifd, "name", name)
        build.mark(sub(ifd, "admin-status", "up" if admin == "Enabled" else "down"),
                   format=admin)
        sub(ifd, "oper-status", "up" if link == "Up" else "down")
        index = re.search(r"Interface index: (\d+), SNMP ifIndex: (\d+)", "\n".join(own))
        if index:
            sub(ifd, "local-index", index.group(1))
            sub(ifd, "snmp-index", index.group(2))
        description = _value(own, "Description")
        if description is not None:
            sub(ifd, "description", description)
        for label, tag in (("Link-level type", "link-level-type"), ("MTU", "mtu"),
                           ("Speed", "speed")):
            value = _value(own, label)
            if value is not None:
                sub(ifd, tag, value)
        flags = _value(own, "Device flags")
        if flags is not None:
            device_flags = sub(ifd, "if-device-flags")
            for flag in flags.split():
                sub(device_flags, "ifdf-" + flag.lower())
        current = re.search(r"Current address: (\S+), Hardware address: (\S+)", "\n".join(own))
        if current:
            sub(ifd, "current-physical-address", current.group(1))
            sub(ifd, "hardware-physical-address", current.group(2))
        flapped = _value(own, "Last flapped")
        if flapped is not None:
            build.mark(sub(ifd, "interface-flapped", flapped), seconds=str(_epoch(flapped)))
        stats = sub(ifd, "traffic-statistics")
        build.mark(stats, style="brief")
        packets = [0, 0]
        for direction in ("Input", "Output"):
            rate = re.search(rf"{direction} rate\s*: (\d+) bps \((\d+) pps\)", "\n".join(own))
            if rate:
                sub(stats, f"{direction.lower()}-bps", rate.group(1))
                sub(stats, f"{direction.lower()}-pps", rate.group(2))
        own_packets = [_value(own, "Input packets"), _value(own, "Output packets")]
        for at, unit_start in enumerate(units):
            end = units[at + 1] if at + 1 < len(units) else len(block)
            counts = _logical(build, ifd, block[unit_start:end])
            packets = [packets[0] + counts[0], packets[1] + counts[1]]
        if own_packets[0] is not None or extensive:
            sub(stats, "input-packets", own_packets[0] or str(packets[0]))
            sub(stats, "output-packets", own_packets[1] or str(packets[1]))
        if extensive:
            errors_in = sub(ifd, "input-error-list")
            sub(errors_in, "input-errors", "0")
            sub(errors_in, "input-drops", "0")
            sub(errors_in, "input-discards", "0")
            errors_out = sub(ifd, "output-error-list")
            sub(errors_out, "output-errors", "0")
            sub(errors_out, "output-drops", "0")
        # The logical interfaces go after the physical interface's own elements.
        for logical in ifd.findall("logical-interface"):
            ifd.append(logical)
    return root


def _logical(build: _Builder, ifd: etree._Element, lines: list[str]) -> tuple[int, int]:
    """One logical interface's block into ``ifd``; its input and output packets."""
    head = _LOGICAL.match(lines[0])
    assert head is not None
    ifl = sub(ifd, "logical-interface")
    sub(ifl, "name", head.group(1))
    sub(ifl, "local-index", head.group(2))
    sub(ifl, "snmp-index", head.group(3))
    description = _value(lines, "Description")
    if description is not None:
        sub(ifl, "description", description)
    flags = re.search(r"^\s+Flags: (.*?)(?: Encapsulation: (\S+))?$", lines[1]) \
        if len(lines) > 1 else None
    if flags:
        config_flags = sub(ifl, "if-config-flags")
        for flag in flags.group(1).split():
            if flag in _FLAGS:
                sub(config_flags, _FLAGS[flag])
        if flags.group(2):
            sub(ifl, "encapsulation", flags.group(2))
    counts = [int(_value(lines, "Input packets") or 0), int(_value(lines, "Output packets") or 0)]
    stats = sub(ifl, "traffic-statistics")
    build.mark(stats, style="brief")
    sub(stats, "input-packets", str(counts[0]))
    sub(stats, "output-packets", str(counts[1]))
    family: etree._Element | None = None
    for line in lines[2:]:
        proto = re.match(r"^\s+Protocol (\S+?), MTU: (\S+)", line)
        if proto:
            family = sub(ifl, "address-family")
            sub(family, "address-family-name", proto.group(1))
            sub(family, "mtu", proto.group(2))
            continue
        where = re.search(r"Destination: (\S+?), Local: (\S+?)(?:, Broadcast: (\S+))?$", line)
        if where and family is not None:
            address = sub(family, "interface-address")
            sub(address, "ifa-destination", where.group(1))
            sub(address, "ifa-local", where.group(2))
            if where.group(3):
                sub(address, "ifa-broadcast", where.group(3))
    return counts[0], counts[1]


_PROTOCOLS = frozenset({"inet", "inet6", "iso", "mpls", "multiservice", "tnp", "eth-switch",
                        "vpls", "bridge", "aenet", "ccc", "ethernet-switching"})


def interface_terse(source: ShapeInput) -> etree._Element:
    """``show interfaces terse``: physical interfaces with their logical ones, each with its
    address families and addresses."""
    build = _Builder(source.device)
    root = build.root("interface-information", style="terse")
    ifd: etree._Element | None = None
    current: etree._Element | None = None  # the interface the family lines belong to
    family: etree._Element | None = None
    for line in source.text.splitlines()[1:]:
        words = line.split()
        if not words:
            continue
        if not line[0].isspace():
            name, admin, link, rest = words[0], words[1], words[2], words[3:]
            logical = "." in name
            parent = ifd if logical and ifd is not None else root
            current = sub(parent, "logical-interface" if logical else "physical-interface")
            if not logical:
                ifd = current
            sub(current, "name", name)
            sub(current, "admin-status", admin)
            sub(current, "oper-status", link)
            if logical:
                sub(current, "filter-information")
            family = None
            words = rest
        if current is None or not words:
            continue
        if words[0] in _PROTOCOLS:
            family = sub(current, "address-family")
            sub(family, "address-family-name", words[0])
            words = words[1:]
        if family is not None and words:
            address = sub(family, "interface-address")
            build.mark(sub(address, "ifa-local", words[0]), emit="emit")
            if len(words) >= 3 and words[1] == "-->":
                sub(address, "ifa-destination", words[2])
    return root


# --- show chassis hardware ----------------------------------------------------------------------

_LEVELS = ("chassis-module", "chassis-sub-module", "chassis-sub-sub-module",
           "chassis-sub-sub-sub-module")


def chassis_inventory(source: ShapeInput) -> etree._Element:
    """``show chassis hardware``: the chassis and its modules, nested as indented."""
    build = _Builder(source.device)
    root = build.root("chassis-inventory")
    lines = source.text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("Item")), None)
    if header is None:
        return root
    starts = _columns(lines[header])
    chassis: etree._Element | None = None
    stack: list[etree._Element] = []
    for line in lines[header + 1:]:
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip())) // 2
        item, version, part, serial, description = _cut(line, starts)
        if chassis is None:
            chassis = build.mark(sub(root, "chassis"), style="inventory")
            sub(chassis, "name", item)
            sub(chassis, "serial-number", serial)
            sub(chassis, "description", description)
            continue
        del stack[depth:]
        parent = stack[-1] if stack else chassis
        module = sub(parent, _LEVELS[min(depth, len(_LEVELS) - 1)])
        sub(module, "name", item)
        if version:
            sub(module, "version", version)
        if part:
            sub(module, "part-number", part)
        if serial:
            sub(module, "serial-number", serial)
        sub(module, "description", description)
        stack.append(module)
    return root


# --- show lldp neighbors ------------------------------------------------------------------------


def lldp_neighbors(source: ShapeInput) -> etree._Element:
    """``show lldp neighbors``: one ``<lldp-neighbor-information>`` per row."""
    build = _Builder(source.device)
    root = build.root("lldp-neighbors-information", style="brief")
    lines = source.text.splitlines()
    if not lines:
        return root
    starts = _columns(lines[0])
    for line in lines[1:]:
        if not line.strip():
            continue
        local, parent, chassis, port, system = _cut(line, starts)
        entry = sub(root, "lldp-neighbor-information")
        sub(entry, "lldp-local-port-id", local)
        sub(entry, "lldp-local-parent-interface-name", parent)
        sub(entry, "lldp-remote-chassis-id-subtype", "Mac address")
        sub(entry, "lldp-remote-chassis-id", chassis)
        sub(entry, "lldp-remote-port-id-subtype", "Interface name")
        sub(entry, "lldp-remote-port-id", port)
        sub(entry, "lldp-remote-system-name", system)
    return root


# --- show arp -----------------------------------------------------------------------------------


def arp_table(source: ShapeInput) -> etree._Element:
    """``show arp [no-resolve]``: one ``<arp-table-entry>`` per row, and the count."""
    build = _Builder(source.device)
    root = build.root("arp-table-information", style="normal")
    lines = source.text.splitlines()
    named = bool(lines) and " Name " in lines[0]
    count = 0
    for line in lines[1:]:
        total = re.match(r"Total entries: (\d+)", line)
        if total:
            count = int(total.group(1))
            continue
        words = line.split()
        if len(words) < (5 if named else 4):
            continue
        entry = sub(root, "arp-table-entry")
        sub(entry, "mac-address", words[0])
        sub(entry, "ip-address", words[1])
        if named:
            sub(entry, "hostname", words[2])
        sub(entry, "interface-name", words[-2])
        flags = sub(entry, "arp-table-entry-flags")
        for flag in words[-1].split(","):
            sub(flags, flag)
    sub(root, "arp-entry-count", str(count))
    return root


# --- show route ---------------------------------------------------------------------------------

_TABLE = re.compile(r"^(\S+): (\d+) destinations, (\d+) routes \((\d+) active, (\d+) holddown, "
                    r"(\d+) hidden\)")
_ROUTE = re.compile(r"^(\S+)?\s+([*+\- ])\[(\w+)/(\d+)\] ([^,]+)(?:, metric (\d+))?"
                    r"(?:, tag (\d+))?")
_HOP = re.compile(r"^\s+(>)?\s*(?:to (\S+) )?via (\S+)")


def route_information(source: ShapeInput) -> etree._Element:
    """``show route``: each table's counts and routes, each route's entries and next hops."""
    build = _Builder(source.device)
    root = build.root("route-information")
    table: etree._Element | None = None
    route: etree._Element | None = None
    entry: etree._Element | None = None
    for line in source.text.splitlines():
        head = _TABLE.match(line)
        if head:
            table = sub(root, "route-table")
            for tag, value in zip(("table-name", "destination-count", "total-route-count",
                                   "active-route-count", "holddown-route-count",
                                   "hidden-route-count"), head.groups(), strict=True):
                sub(table, tag, value)
            continue
        if table is None or not line.strip() or line.startswith("+ ="):
            continue
        found = _ROUTE.match(line)
        if found:
            destination, tag, protocol, preference, age, metric, rt_tag = found.groups()
            if destination:
                route = build.mark(sub(table, "rt"), style="brief")
                sub(route, "rt-destination", destination)
            if route is None:
                continue
            entry = sub(route, "rt-entry")
            sub(entry, "active-tag", tag.strip() or " ")
            if tag == "*":
                sub(entry, "current-active")
                sub(entry, "last-active")
            sub(entry, "protocol-name", protocol)
            sub(entry, "preference", preference)
            build.mark(sub(entry, "age", age.strip()), seconds=str(duration(age)))
            if metric is not None:
                sub(entry, "metric", metric)
            if rt_tag is not None:
                sub(entry, "rt-tag", rt_tag)
            continue
        if entry is None:
            continue
        hop = _HOP.match(line)
        local = re.match(r"^\s+Local via (\S+)", line)
        if local:
            nh = sub(entry, "nh")
            sub(nh, "nh-local-interface", local.group(1))
        elif hop:
            nh = sub(entry, "nh")
            if hop.group(1):
                sub(nh, "selected-next-hop")
            if hop.group(2):
                sub(nh, "to", hop.group(2))
            sub(nh, "via", hop.group(3))
        elif line.strip():
            sub(entry, "nh-type", line.strip())
    return root


# --- show system uptime -------------------------------------------------------------------------

_STAMP = re.compile(r"^(?P<label>[A-Za-z ]+): (?P<when>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+)"
                    r"(?: \((?P<ago>[^)]*) ago\))?(?: by (?P<user>\S+))?")
_UPTIME_TAGS = {"Current time": "current-time", "System booted": "system-booted-time",
                "Protocols started": "protocols-started-time",
                "Last configured": "last-configured-time"}


def system_uptime(source: ShapeInput) -> etree._Element:
    """``show system uptime``: its times (each as a date and, for the past ones, a length of
    time), the time source and the BSD uptime line."""
    build = _Builder(source.device)
    root = build.root("system-uptime-information")
    now = 0
    for line in source.text.splitlines():
        found = _STAMP.match(line)
        if found and found.group("label") in _UPTIME_TAGS:
            holder = sub(root, _UPTIME_TAGS[found.group("label")])
            when = _epoch(found.group("when"))
            now = now or when
            build.mark(sub(holder, "date-time", found.group("when")), seconds=str(when))
            if found.group("ago") is not None:
                build.mark(sub(holder, "time-length", found.group("ago")),
                           seconds=str(max(0, now - when)))
            if found.group("user"):
                sub(holder, "user", found.group("user"))
            continue
        source_line = re.match(r"^Time Source:\s+(.*)$", line)
        if source_line:
            sub(root, "time-source", f" {source_line.group(1).strip()} ")
            continue
        bsd = re.match(r"^\s*(\d{1,2}:\d\d[AP]M)\s+up (.+?),\s+(\d+) users?, load averages: "
                       r"([\d.]+), ([\d.]+), ([\d.]+)", line)
        if bsd:
            info = sub(root, "uptime-information")
            build.mark(sub(info, "date-time", bsd.group(1)), seconds=str(now))
            booted = root.find("system-booted-time/time-length")
            seconds = booted.get(f"{{{build.ns}}}seconds", "0") if booted is not None else "0"
            build.mark(sub(info, "up-time", bsd.group(2).strip()), seconds=seconds)
            users = bsd.group(3)
            build.mark(sub(info, "active-user-count", users),
                       format=f"{users} user{'s' if users != '1' else ''}")
            for at, tag in enumerate(("load-average-1", "load-average-5", "load-average-15")):
                sub(info, tag, bsd.group(4 + at))
    return root


def route_engine(device: Device, uptime: etree._Element) -> etree._Element:
    """``<route-engine-information>`` of the device's one routing engine (``show chassis
    routing-engine``, which has no transcript: made from ``show chassis hardware`` and ``show
    system uptime``'s element, ``uptime``)."""
    build = _Builder(device)
    root = build.root("route-engine-information")
    engine = sub(root, "route-engine")
    sub(engine, "slot", "0")
    sub(engine, "mastership-state", "master")
    sub(engine, "mastership-priority", "master (default)")
    sub(engine, "status", "OK")
    hardware = device.transcript(("show", "chassis", "hardware"))
    model = re.search(r"^Routing Engine 0\s+.*?\s{2,}(\S+)\s*$", hardware, re.M)
    sub(engine, "model", model.group(1) if model else "RE")
    booted = uptime.find("system-booted-time")
    if booted is not None:
        start = booted.find("date-time")
        length = booted.find("time-length")
        if start is not None:
            build.mark(sub(engine, "start-time", start.text),
                       seconds=start.get(f"{{{build.ns}}}seconds", "0"))
        if length is not None:
            build.mark(sub(engine, "up-time", length.text),
                       seconds=length.get(f"{{{build.ns}}}seconds", "0"))
    sub(engine, "last-reboot-reason", "Router rebooted after a normal shutdown.")
    return root


#: The MX204's routing engine: 32 GiB of DRAM (in KiB, as ``show system memory`` counts it),
#: about a third in use, and its file systems (``show system storage``). From memory of the
#: RE's data sheet and Junos 22's output, not a capture.
MEMORY_KB = 32_768_000
MEMORY_USED_KB = 10_649_600
FILE_SYSTEMS = (("/dev/gpt/junos", "20G", "1.2G", "17G", "7%", "/.mount"),
                ("/dev/gpt/config", "3.3G", "396K", "3.0G", "0%", "/.mount/config"),
                ("/dev/gpt/var", "25G", "2.1G", "21G", "9%", "/.mount/var"),
                ("tmpfs", "12G", "18M", "12G", "0%", "/.mount/tmp"))


def system_memory(device: Device) -> etree._Element:
    """``<system-memory-information>`` (``show system memory``'s summary)."""
    build = _Builder(device)
    root = build.root("system-memory-information")
    summary = sub(root, "system-memory-summary-information")
    sub(summary, "system-memory-total", str(MEMORY_KB))
    sub(summary, "system-memory-used", str(MEMORY_USED_KB))
    sub(summary, "system-memory-free", str(MEMORY_KB - MEMORY_USED_KB))
    sub(summary, "system-memory-total-percent", "100")
    sub(summary, "system-memory-used-percent", str(MEMORY_USED_KB * 100 // MEMORY_KB))
    return root


def system_storage(device: Device) -> etree._Element:
    """``<system-storage-information>`` (``show system storage``)."""
    build = _Builder(device)
    root = build.root("system-storage-information")
    for name, total, used, available, percent, mount in FILE_SYSTEMS:
        system = sub(root, "filesystem")
        sub(system, "filesystem-name", name)
        sub(system, "total-blocks", total)
        sub(system, "used-blocks", used)
        sub(system, "available-blocks", available)
        sub(system, "used-percent", percent.rstrip("%"))
        sub(system, "mounted-on", mount)
    return root


_PING_HEAD = re.compile(r"^PING (\S+) \((\S+)\): (\d+) data bytes")
_PING_REPLY = re.compile(r"^(\d+) bytes from (\S+): icmp_seq=(\d+) ttl=(\d+) time=([\d.]+) ms")
_PING_SENT = re.compile(r"^(\d+) packets transmitted, (\d+) packets received, (\d+)% packet loss")
_PING_RTT = re.compile(r"^round-trip min/avg/max/stddev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+)")


def _micro(ms: str) -> str:
    return str(round(float(ms) * 1000))


def ping_results(source: ShapeInput) -> etree._Element:
    """``ping``'s ``<ping-results>`` (times in microseconds), from its text; FROM MEMORY, not
    a capture: the element names beyond those NAPALM's junos driver reads."""
    root = etree.Element("ping-results")
    lines = source.text.splitlines()
    head = next((m for m in map(_PING_HEAD.match, lines) if m), None)
    if head:
        sub(root, "target-host", head.group(1))
        sub(root, "target-ip", head.group(2))
        sub(root, "packet-size", head.group(3))
    index = 0
    for line in lines:
        reply = _PING_REPLY.match(line)
        if reply:
            index += 1
            probe = sub(root, "probe-result")
            sub(probe, "probe-index", str(index))
            sub(probe, "probe-success")
            sub(probe, "sequence-number", reply.group(3))
            sub(probe, "ip-address", reply.group(2))
            sub(probe, "time-to-live", reply.group(4))
            sub(probe, "response-size", reply.group(1))
            sub(probe, "rtt", _micro(reply.group(5)))
    sent = next((m for m in map(_PING_SENT.match, lines) if m), None)
    rtt = next((m for m in map(_PING_RTT.match, lines) if m), None)
    if sent:
        summary = sub(root, "probe-results-summary")
        sub(summary, "probes-sent", sent.group(1))
        sub(summary, "responses-received", sent.group(2))
        sub(summary, "packet-loss", sent.group(3))
        if rtt:
            for tag, value in zip(("rtt-minimum", "rtt-average", "rtt-maximum", "rtt-stddev"),
                                  rtt.groups(), strict=True):
                sub(summary, tag, _micro(value))
        if int(sent.group(2)):
            sub(root, "ping-success")
    return root


_TRACE_HEAD = re.compile(r"^traceroute to (\S+) \((\S+)\), (\d+) hops max, (\d+) byte packets")
_TRACE_HOP = re.compile(r"^\s*(\d+)\s+(.*)$")
_TRACE_PROBE = re.compile(r"(?:(\S+) \((\S+)\)\s+)?([\d.]+) ms|\*")


def traceroute_results(source: ShapeInput) -> etree._Element:
    """``traceroute``'s ``<traceroute-results>`` (times in microseconds), from its text; FROM
    MEMORY, not a capture: the element names beyond those NAPALM's junos driver reads."""
    root = etree.Element("traceroute-results")
    lines = source.text.splitlines()
    head = next((m for m in map(_TRACE_HEAD.match, lines) if m), None)
    if head:
        sub(root, "target-host", head.group(1))
        sub(root, "target-ip", head.group(2))
        sub(root, "max-hops", head.group(3))
        sub(root, "packet-size", head.group(4))
    for line in lines[1:]:
        hop_line = _TRACE_HOP.match(line)
        if not hop_line:
            continue
        hop = sub(root, "hop")
        sub(hop, "ttl-value", hop_line.group(1))
        name = address = ""
        for index, probe_text in enumerate(_TRACE_PROBE.finditer(hop_line.group(2)), 1):
            probe = sub(hop, "probe-result")
            sub(probe, "probe-index", str(index))
            if probe_text.group(0) == "*":
                sub(probe, "probe-failure")
                continue
            name = probe_text.group(1) or name
            address = probe_text.group(2) or address
            sub(probe, "probe-success")
            sub(probe, "host-name", name)
            sub(probe, "ip-address", address)
            sub(probe, "rtt", _micro(probe_text.group(3)))
    return root


# --- the commands, and how they are printed -----------------------------------------------------

#: Each command's RPC, by the command's words (arguments not included).
RPCS: dict[str, Rpc] = {
    "show version": Rpc("get-software-information", software_information),
    "show interfaces": Rpc("get-interface-information", interface_information, "interface"),
    "show interfaces terse": Rpc("get-interface-information", interface_terse, "interface"),
    "show chassis hardware": Rpc("get-chassis-inventory", chassis_inventory, "chassis"),
    "show lldp neighbors": Rpc("get-lldp-neighbors-information", lldp_neighbors),
    "show arp": Rpc("get-arp-table-information", arp_table, "arp"),
    "show arp no-resolve": Rpc("get-arp-table-information", arp_table, "arp"),
    "show route": Rpc("get-route-information", route_information, "routing"),
    "show system uptime": Rpc("get-system-uptime-information", system_uptime),
    "ping": Rpc("ping", ping_results),
    "traceroute": Rpc("traceroute", traceroute_results),
}


def in_namespace(element: etree._Element, device: Device, module: str) -> etree._Element:
    """``element`` (and everything under it) in the namespace Junos gives its module's RPC
    replies (``junos-interface``); ``""``: as it is."""
    if not module:
        return element
    uri = _MODULE_NS.format(release=release(device), module=module)
    namespaces: Any = {None: uri, "junos": junos_ns(device)}  # None: the default (untyped)
    out = etree.Element(f"{{{uri}}}{element.tag}", nsmap=namespaces)
    for key, value in element.attrib.items():
        out.set(key, value)
    out.text = element.text
    for child in list(element):
        out.append(child)
    for node in out.iterdescendants():
        if isinstance(node.tag, str) and not node.tag.startswith("{"):
            node.tag = f"{{{uri}}}{node.tag}"
    return out


def make(words: tuple[str, ...], source: ShapeInput) -> tuple[Rpc, etree._Element] | None:
    """The RPC and element of command ``words`` whose text is ``source``'s (None: none)."""
    rpc = RPCS.get(" ".join(words))
    if rpc is None:
        return None
    return rpc, rpc.make(source)


def _reply(device: Device, body: list[etree._Element]) -> str:
    """``body`` in an ``<rpc-reply>`` as the CLI prints it, with its ``<cli>`` element."""
    root = etree.Element("rpc-reply", nsmap={"junos": junos_ns(device)})
    for element in body:
        root.append(element)
    cli = sub(root, "cli")
    sub(cli, "banner", "")
    etree.indent(root, space="    ")
    return etree.tostring(root, encoding="unicode") + "\n"


def display_xml(words: tuple[str, ...], source: ShapeInput) -> str:
    """``| display xml``: the command's RPC element in an ``<rpc-reply>``; a command without
    one, its text in ``<output>``, as Junos prints a command without XML."""
    made = make(words, source)
    if made is None:
        output = etree.Element("output")
        output.text = "\n" + source.text
        return _reply(source.device, [output])
    rpc, element = made
    return _reply(source.device, [in_namespace(element, source.device, rpc.module)])


def display_xml_rpc(words: tuple[str, ...], source: ShapeInput) -> str:
    """``| display xml rpc``: the RPC a command stands for (``<get-software-information/>``)."""
    rpc = RPCS.get(" ".join(words))
    if rpc is None:
        return _reply(source.device, [])
    holder = etree.Element("rpc")
    call = sub(holder, rpc.name)
    if words[-1] == "terse":
        sub(call, "terse")
    if words[-1] == "no-resolve":
        sub(call, "no-resolve")
    if source.args and words == ("show", "interfaces"):
        sub(call, "interface-name", source.args[0])
    return _reply(source.device, [holder])


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _attributes(element: etree._Element, junos: str) -> dict[str, str]:
    found: dict[str, str] = {}
    if element.getparent() is None and isinstance(element.tag, str) and element.tag.startswith(
            "{"):
        found["xmlns"] = element.tag[1:].split("}")[0]
    for key, value in element.attrib.items():
        name = str(key)
        if name.startswith(f"{{{junos}}}"):
            name = "junos:" + _local(name)
        found[name] = str(value)
    return found


def _object(element: etree._Element, junos: str) -> JsonObject:
    out: JsonObject = {}
    attributes = _attributes(element, junos)
    children = [c for c in element if isinstance(c.tag, str)]
    if not children:
        text = element.text
        out["data"] = text if text else [None]
    if attributes:
        out["attributes"] = attributes
    for child in children:
        out.setdefault(_local(child.tag), []).append(_object(child, junos))
    return out


def as_json(element: etree._Element, device: Device) -> JsonObject:
    """``element`` by Junos's JSON rules (see the module docstring)."""
    return {_local(element.tag): [_object(element, junos_ns(device))]}


def render_json(value: object, depth: int = 0) -> str:
    """JSON as Junos indents it: four spaces a level, a list's objects at its key's level."""
    pad = "    " * depth
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f'{pad}    {json.dumps(key)} : {render_json(item, depth + 1)}'
                 for key, item in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    if isinstance(value, list):
        if all(not isinstance(item, dict) for item in value):
            return json.dumps(value)
        items = [f"{pad}{render_json(item, depth)}" for item in value]
        return "[\n" + ",\n".join(items) + f"\n{pad}]"
    return json.dumps(value)


def display_json(words: tuple[str, ...], source: ShapeInput) -> str:
    """``| display json``: the command's RPC element as Junos's JSON (a command without one:
    its text as ``output``)."""
    made = make(words, source)
    if made is None:
        return render_json({"output": [{"data": source.text}]}) + "\n"
    rpc, element = made
    return render_json(as_json(in_namespace(element, source.device, rpc.module),
                               source.device)) + "\n"


def _shape(rpc: Rpc) -> Callable[[ShapeInput], JsonObject]:
    def shape(source: ShapeInput) -> JsonObject:
        return as_json(rpc.make(source), source.device)
    return shape


#: The JSON object of each command (what ``| display json`` prints), for
#: :func:`mgmtbench.emulator.structured.structured`.
SHAPES = {words: _shape(rpc) for words, rpc in RPCS.items()}

#: What each of Junos's ``| display`` pipes prints (:func:`mgmtbench.emulator.structured.render`).
RENDERERS: dict[str, Callable[[tuple[str, ...], ShapeInput], str]] = {
    "junos:display-xml": display_xml,
    "junos:display-json": display_json,
    "junos:display-xml-rpc": display_xml_rpc,
}


# --- the configuration --------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_][\w.-]*")
#: Levels whose unnamed levels are entries of a list of this element (``interfaces { et-0/0/0
#: {`` is ``<interfaces><interface><name>et-0/0/0</name>``).
_ENTRIES = {"interfaces": "interface", "groups": "group", "vlans": "vlan",
            "routing-instances": "instance", "policy-statement": "term"}
#: Two-word leaves that are list entries (``address 198.19.1.1/30;``).
_KEYED = frozenset({"address", "server", "host", "member", "community", "name-server",
                    "domain-search", "route", "interface", "neighbor"})


def _level_element(parent: etree._Element, words: list[str], above: str) -> etree._Element:
    if len(words) == 1 and above in _ENTRIES:
        entry = sub(parent, _ENTRIES[above])
        sub(entry, "name", words[0])
        return entry
    if len(words) == 2 and words[0] == "family" and _NAME.fullmatch(words[1]):
        family = parent.find("family")
        return sub(family if family is not None else sub(parent, "family"), words[1])
    if _NAME.fullmatch(words[0]):
        element = sub(parent, words[0])
        if len(words) > 1:
            sub(element, "name", " ".join(words[1:]))
        return element
    entry = sub(parent, "name")
    entry.text = " ".join(words)
    return entry


def _leaf_element(parent: etree._Element, words: list[str]) -> None:
    key, rest = words[0], words[1:]
    if not _NAME.fullmatch(key):
        sub(parent, "name", " ".join(words))
        return
    if not rest:
        sub(parent, key)
        return
    if len(rest) == 1 and key not in _KEYED:
        sub(parent, key, rest[0])
        return
    element = sub(parent, key)
    sub(element, "name", rest[0])
    more = rest[1:]
    if len(more) == 2 and _NAME.fullmatch(more[0]):
        sub(element, more[0], more[1])
        return
    for word in more:
        if _NAME.fullmatch(word):
            sub(element, word)


def _fill(parent: etree._Element, statements: Sequence[Statement], above: str) -> None:
    for statement in statements:
        if not statement.words:
            continue
        if statement.children is None:
            _leaf_element(parent, statement.words)
        else:
            _fill(_level_element(parent, statement.words, above), statement.children,
                  statement.words[0])


def configuration(device: Device, statements: Sequence[Statement], header: str) -> etree._Element:
    """``<configuration>`` of ``statements``; ``header`` is the brace form's first line
    (``## Last commit: 2026-11-20 09:12:44 UTC by admin``, or ``## Last changed: ...``)."""
    build = _Builder(device)
    found = re.match(r"^## Last (commit|changed): (\S+ \S+ \S+)(?: by (\S+))?", header)
    root = build.root("configuration")
    if found:
        kind = "commit" if found.group(1) == "commit" else "changed"
        build.mark(root, **{f"{kind}_seconds": str(_epoch(found.group(2))),
                            f"{kind}_localtime": found.group(2)})
        if found.group(3):
            build.mark(root, **{f"{kind}_user": found.group(3)})
    _fill(root, statements, "")
    return root


def configuration_xml(device: Device, statements: Sequence[Statement], header: str) -> str:
    """``show configuration | display xml``."""
    return _reply(device, [configuration(device, statements, header)])


def _config_value(element: etree._Element, junos: str) -> object:
    children = [c for c in element if isinstance(c.tag, str)]
    attributes = {("junos:" + _local(str(k)) if str(k).startswith(f"{{{junos}}}") else str(k)):
                  str(v) for k, v in element.attrib.items()}
    if not children and not attributes:
        return element.text if element.text else [None]
    out: JsonObject = {}
    if attributes:
        out["@"] = attributes
    for child in children:
        key = _local(child.tag)
        value = _config_value(child, junos)
        if key in out:
            if not isinstance(out[key], list) or out[key] == [None]:
                out[key] = [out[key]]
            out[key].append(value)
        else:
            out[key] = [value] if _local(child.tag) in _ENTRIES.values() else value
    return out


def configuration_json(device: Device, statements: Sequence[Statement], header: str) -> str:
    """``show configuration | display json``: Junos's JSON of a configuration (an object per
    level, lists for list entries, attributes under ``"@"``)."""
    element = configuration(device, statements, header)
    value = {"configuration": _config_value(element, junos_ns(device))}
    return render_json(value) + "\n"
