"""IPv4 routing tables that follow the configuration, and IOS's ``show ip route`` of them.

A table is the routes of one VRF (None: the global table):

- connected (``C``) and local (``L``) routes of every interface of the VRF that has an address
  and no ``shutdown`` (an interface is in a VRF by ``vrf forwarding V`` / ``ip vrf forwarding
  V``); a /32 address has its ``C`` route only, as IOS shows a loopback's;
- static routes (``S``) of the ``ip route [vrf V] PREFIX MASK {NEXT-HOP | INTERFACE
  [NEXT-HOP]} [DISTANCE] [name N]`` lines, installed while they resolve: a next hop inside a
  connected subnet or another route, an interface that is up (``Null0`` always is);
- in the global table, the transcript's routes of other protocols (OSPF, BGP ...), each path
  kept while its interface is up with an address, or its next hop (no interface) resolves.

For each prefix the routes of the lowest administrative distance win (connected 0, static its
distance, the transcript's the ``[distance/metric]`` they print). The transcript's own ``C``,
``L`` and ``S`` lines are replaced by those of the configuration; the default configuration
makes the same ones, so the table (and the text, :func:`ios_table`) is then the transcript's.

:func:`ios_table` words a table as IOS-XE 17 prints ``show ip route`` (the transcript's codes
legend; classful groups under ``N is [variably] subnetted`` headers, as in the transcript), and
:func:`ios_entry` as ``show ip route ADDRESS`` prints one route (``Routing entry for ...``), the
form NAPALM's ``get_route_to`` reads. The entry's wording is from memory of IOS-XE 17, not a
capture (``Known via``, ``Routing Descriptor Blocks``, ``Route metric is``).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mgmtbench.emulator.device.ifconfig import IfConfig

IPv4Net = ipaddress.IPv4Network
IPv4Addr = ipaddress.IPv4Address

#: What a route's code says it came from (``Known via``), and the protocol word NAPALM maps.
PROTOCOLS = {"C": "connected", "L": "connected", "S": "static", "O": "ospf", "B": "bgp",
             "D": "eigrp", "R": "rip", "i": "isis", "M": "mobile", "o": "odr", "l": "lisp"}


@dataclass(frozen=True)
class Path:
    """One way to a route's prefix: the text ``show ip route`` prints after the prefix
    (``[110/20] via 198.19.1.6, 3w1d, TenGigabitEthernet0/0/4``), its next hop, interface and
    age (None where it prints none)."""

    text: str
    via: str | None = None
    interface: str | None = None
    age: str | None = None


@dataclass(frozen=True)
class Route:
    """A route: prefix, code (``C``, ``O E2`` ..., without the candidate-default ``*``),
    administrative distance, metric and paths; ``own``: made from the configuration."""

    prefix: IPv4Net
    code: str
    distance: int
    metric: int
    paths: tuple[Path, ...]
    own: bool = False

    @property
    def protocol(self) -> str:
        """``connected``, ``static``, ``ospf``, ``bgp`` ... (from the code's first letter)."""
        return PROTOCOLS.get(self.code.split()[0], "unknown")

    def key(self) -> tuple[str, str, tuple[str, ...]]:
        """What the table prints of the route (two tables print the same route the same)."""
        return self.code, str(self.prefix), tuple(p.text for p in self.paths)


@dataclass
class Group:
    """A classful network's header in the transcript (``198.19.0.0/16 is variably subnetted,
    36 subnets, 4 masks``) and the prefixes under it."""

    network: IPv4Net
    header: str
    members: set[IPv4Net] = field(default_factory=set)


@dataclass
class Parsed:
    """A ``show ip route`` transcript: the lines before ``Gateway of last resort`` (the codes
    legend and the blank line after it), its routes and its groups."""

    header: list[str]
    routes: list[Route]
    groups: list[Group]


_ROUTE = re.compile(r"^(?P<code>[A-Za-z][A-Za-z0-9]*\*?(?: [A-Za-z0-9]{1,2})?)\s+"
                    r"(?P<prefix>\d+\.\d+\.\d+\.\d+/\d+) (?P<path>\S.*)$")
_MORE = re.compile(r"^\s+(?P<path>\[\d+/\d+\] via .*)$")
_GROUP = re.compile(r"^\s+(\d+\.\d+\.\d+\.\d+/\d+) is (?:variably )?subnetted")
_DISTANCE = re.compile(r"^\[(\d+)/(\d+)\] via (\S+?)(?:, (\S+?))?(?:, (\S+))?$")
_CONNECTED = re.compile(r"^is directly connected, (\S+)$")
_AGE = re.compile(r"^(?:\d+[ywdh]\d+[ywdh]?|\d{1,2}:\d{2}:\d{2})$")


def parse_path(text: str) -> tuple[Path, int, int] | None:
    """A path's text -> the path, its distance and metric (None: not a form known here)."""
    found = _CONNECTED.match(text)
    if found:
        return Path(text, None, found.group(1)), 0, 0
    found = _DISTANCE.match(text)
    if found is None:
        return None
    via, second, third = found.group(3), found.group(4), found.group(5)
    age = interface = None
    for part in (second, third):
        if part is None:
            continue
        if _AGE.match(part):
            age = part
        else:
            interface = part
    return Path(text, via, interface, age), int(found.group(1)), int(found.group(2))


def parse(text: str) -> Parsed:
    """The routes, groups and legend of a ``show ip route`` text."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Gateway of last")),
                 len(lines))
    parsed = Parsed(lines[:start], [], [])
    group: Group | None = None
    for line in lines[start + 1:]:
        head = _GROUP.match(line)
        if head:
            group = Group(IPv4Net(head.group(1), strict=False), line)
            parsed.groups.append(group)
            continue
        found = _ROUTE.match(line)
        if found:
            path = parse_path(found.group("path"))
            if path is None:
                continue
            code = found.group("code").replace("*", " ").replace("  ", " ").strip()
            prefix = IPv4Net(found.group("prefix"), strict=False)
            distance = 1 if code == "S" and path[1] == 0 and path[0].via is None else path[1]
            parsed.routes.append(Route(prefix, code, distance, path[2], (path[0],)))
            if not _indent(line):
                group = None  # a route of its own ends the group above it
            elif group is not None and prefix.subnet_of(group.network):
                group.members.add(prefix)
            continue
        more = _MORE.match(line)
        if more and parsed.routes:
            path = parse_path(more.group("path"))
            if path is not None:
                last = parsed.routes[-1]
                parsed.routes[-1] = Route(last.prefix, last.code, last.distance, last.metric,
                                          (*last.paths, path[0]))
    return parsed


def _indent(line: str) -> bool:
    """Whether a route line is one under a group header (its prefix at column 9)."""
    found = _ROUTE.match(line)
    return found is not None and found.start("prefix") == 9


# --- the table from the configuration ---------------------------------------------------------


@dataclass(frozen=True)
class Static:
    """One ``ip route`` line."""

    vrf: str | None
    prefix: IPv4Net
    via: str | None
    interface: str | None
    distance: int


def statics(lines: Iterable[str]) -> list[Static]:
    """The ``ip route`` lines among top-level configuration ``lines``."""
    found: list[Static] = []
    for line in lines:
        words = line.split()
        if words[:2] != ["ip", "route"]:
            continue
        words = words[2:]
        vrf = None
        if words[:1] == ["vrf"] and len(words) > 1:
            vrf, words = words[1], words[2:]
        if len(words) < 3:
            continue
        try:
            prefix = IPv4Net(f"{words[0]}/{words[1]}", strict=False)
        except ValueError:
            continue
        via = interface = None
        rest = words[2:]
        if _is_address(rest[0]):
            via = rest.pop(0)
        else:
            interface = rest.pop(0)
            if rest and _is_address(rest[0]):
                via = rest.pop(0)
        distance = int(rest[0]) if rest and rest[0].isdigit() else 1
        found.append(Static(vrf, prefix, via, interface, distance))
    return found


def _is_address(text: str) -> bool:
    try:
        IPv4Addr(text)
    except ValueError:
        return False
    return True


def interface_vrfs(children: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Interface name -> the VRF its ``vrf forwarding`` (``ip vrf forwarding``) line puts it in."""
    found: dict[str, str] = {}
    for name, lines in children.items():
        for line in lines:
            words = line.split()
            if words[:2] == ["vrf", "forwarding"] and len(words) > 2:
                found[name] = words[2]
            elif words[:3] == ["ip", "vrf", "forwarding"] and len(words) > 3:
                found[name] = words[3]
    return found


@dataclass(frozen=True)
class Table:
    """One VRF's routes (None: the global table), in ``show ip route``'s order."""

    vrf: str | None
    routes: tuple[Route, ...]

    def lookup(self, address: str, *, default: bool = True) -> Route | None:
        """The route ``address`` goes by: the longest prefix that holds it (``default``
        False: not the default route)."""
        target = IPv4Addr(address)
        best: Route | None = None
        for route in self.routes:
            if target in route.prefix and (default or route.prefix.prefixlen) and \
                    (best is None or route.prefix.prefixlen > best.prefix.prefixlen):
                best = route
        return best

    def exact(self, prefix: IPv4Net) -> Route | None:
        """The route of exactly ``prefix``."""
        return next((r for r in self.routes if r.prefix == prefix), None)

    def local(self, address: str) -> bool:
        """Whether ``address`` is one of the table's own (a local or /32 connected route)."""
        route = self.lookup(address, default=False)
        return route is not None and route.code in ("L", "C") and \
            route.prefix.prefixlen == 32 and route.prefix.network_address == IPv4Addr(address)

    def connected(self, address: str) -> Route | None:
        """The connected route whose subnet holds ``address``, if any."""
        target = IPv4Addr(address)
        return next((r for r in self.routes if r.code == "C" and target in r.prefix), None)

    @property
    def default_route(self) -> Route | None:
        """The route to 0.0.0.0/0, if any."""
        return next((r for r in self.routes if r.prefix.prefixlen == 0), None)


def build(vrf: str | None, interfaces: Mapping[str, IfConfig],
          children: Mapping[str, tuple[str, ...]], config_lines: Iterable[str],
          learned: Iterable[Route] = ()) -> Table:
    """The table of ``vrf`` from the current interfaces (and their lines), the top-level
    configuration lines (``ip route``) and the routes ``learned`` from other protocols (the
    transcript's, for the global table)."""
    vrfs = interface_vrfs(children)
    up: dict[str, list[ipaddress.IPv4Interface]] = {}
    for name, conf in interfaces.items():
        if vrfs.get(name) != vrf or conf.shutdown:
            continue
        pairs = ([conf.address] if conf.address else []) + list(conf.secondaries)
        addresses = []
        for address, mask in pairs:
            try:
                addresses.append(ipaddress.IPv4Interface(f"{address}/{mask}"))
            except ValueError:
                continue
        up[name] = addresses
    routes: list[Route] = []
    for name, addresses in up.items():
        for ours in addresses:
            text = f"is directly connected, {name}"
            routes.append(Route(ours.network, "C", 0, 0, (Path(text, None, name),), own=True))
            if ours.network.prefixlen < 32:
                routes.append(Route(IPv4Net(f"{ours.ip}/32"), "L", 0, 0,
                                    (Path(text, None, name),), own=True))
    networks = [r.prefix for r in routes if r.code == "C"]

    def resolves(via: str, among: Iterable[Route]) -> bool:
        target = IPv4Addr(via)
        return any(target in n for n in networks) or any(
            target in r.prefix and r.prefix.prefixlen > 0 and r.protocol != "bgp"
            for r in among)

    kept: list[Route] = []
    for route in learned:
        if route.code in ("C", "L", "S"):
            continue  # the configuration's own, made above
        paths = tuple(p for p in route.paths if _path_up(p, up, networks))
        if paths:
            kept.append(Route(route.prefix, route.code, route.distance, route.metric, paths))
    pending = [s for s in statics(config_lines) if s.vrf == vrf]
    static_routes: list[Route] = []
    for _ in range(3):  # a static may resolve through another: a few rounds settle them
        still: list[Static] = []
        for entry in pending:
            if entry.interface is not None and entry.interface != "Null0" and \
                    entry.interface not in up:
                still.append(entry)
                continue
            if entry.interface is None and entry.via is not None and \
                    not resolves(entry.via, [*kept, *static_routes]):
                still.append(entry)
                continue
            static_routes.append(_static_route(entry))
        if len(still) == len(pending):
            break
        pending = still
    return Table(vrf, tuple(_select([*routes, *kept, *static_routes])))


def _path_up(path: Path, up: Mapping[str, list[ipaddress.IPv4Interface]],
             networks: list[IPv4Net]) -> bool:
    if path.interface is not None:
        return path.interface == "Null0" or bool(up.get(path.interface))
    if path.via is None:
        return True
    try:
        target = IPv4Addr(path.via)
    except ValueError:
        return True
    return any(target in n for n in networks)


def _static_route(entry: Static) -> Route:
    if entry.via is None:
        path = Path(f"is directly connected, {entry.interface}", None, entry.interface)
    elif entry.interface is None:
        path = Path(f"[{entry.distance}/0] via {entry.via}", entry.via)
    else:
        path = Path(f"[{entry.distance}/0] via {entry.via}, {entry.interface}", entry.via,
                    entry.interface)
    return Route(entry.prefix, "S", entry.distance, 0, (path,), own=True)


def _select(routes: list[Route]) -> list[Route]:
    """Per prefix, the routes of the lowest distance (statics of one distance share a prefix
    as paths of one route), in ``show ip route``'s order."""
    best: dict[IPv4Net, list[Route]] = {}
    for route in routes:
        held = best.get(route.prefix)
        if held is None or route.distance < held[0].distance:
            best[route.prefix] = [route]
        elif route.distance == held[0].distance and route.code == held[0].code == "S":
            first = held[0]
            best[route.prefix] = [Route(first.prefix, "S", first.distance, 0,
                                        (*first.paths, *route.paths), own=True)]
        elif route.distance == held[0].distance and route.code != held[0].code:
            continue
    chosen = [held[0] for held in best.values()]
    order = {"C": 0, "L": 1}
    return sorted(chosen, key=lambda r: (int(r.prefix.network_address), r.prefix.prefixlen,
                                         order.get(r.code, 2)))


# --- IOS's words ------------------------------------------------------------------------------


def classful(prefix: IPv4Net) -> IPv4Net:
    """The classful network that holds ``prefix`` (class A /8, B /16, C /24)."""
    first = int(prefix.network_address) >> 24
    length = 8 if first < 128 else 16 if first < 192 else 24
    return IPv4Net(f"{prefix.network_address}/{length}", strict=False)


def _code(route: Route) -> str:
    if route.prefix.prefixlen:
        return route.code
    return route.code.replace(" ", "*", 1) if " " in route.code else f"{route.code}*"


def gateway_line(table: Table) -> str:
    """``Gateway of last resort is ...``."""
    default = table.default_route
    if default is None:
        return "Gateway of last resort is not set"
    via = default.paths[0].via or "0.0.0.0"
    return f"Gateway of last resort is {via} to network 0.0.0.0"


def _route_lines(route: Route, width: int) -> list[str]:
    code = _code(route)
    first = f"{code:<{width}}{route.prefix} "
    return [first + route.paths[0].text,
            *(" " * len(first) + path.text for path in route.paths[1:])]


def ios_routes(table: Table, groups: Iterable[Group] = ()) -> list[str]:
    """The route lines of ``show ip route`` (after the gateway line and its blank line)."""
    known = list(groups)
    blocks: dict[IPv4Net, list[Route]] = {}
    top: list[Route] = []
    supernets: list[IPv4Net] = []  # a connected supernet heads the routes inside it
    for route in table.routes:
        group = next((g.network for g in known if route.prefix.subnet_of(g.network)
                      and route.prefix.prefixlen >= g.network.prefixlen), None)
        if group is None:
            group = next((n for n in supernets if route.prefix.subnet_of(n)), None)
        if group is None:
            major = classful(route.prefix)
            if route.prefix.prefixlen < major.prefixlen:
                if route.prefix.prefixlen == 0 or route.code != "C":
                    top.append(route)
                    continue
                supernets.append(route.prefix)
                major = route.prefix
            group = major
        blocks.setdefault(group, []).append(route)
    items: list[tuple[int, int, list[str]]] = []
    for route in top:
        items.append((int(route.prefix.network_address), route.prefix.prefixlen,
                      _route_lines(route, 6)))
    for network, members in blocks.items():
        if len(members) == 1 and members[0].prefix == network:
            items.append((int(network.network_address), network.prefixlen,
                          _route_lines(members[0], 6)))
            continue
        lines = [_group_header(network, members, known)]
        for route in members:
            lines += _route_lines(route, 9)
        items.append((int(network.network_address), network.prefixlen, lines))
    items.sort(key=lambda item: (item[0], item[1]))
    return [line for _, _, lines in items for line in lines]


def _group_header(network: IPv4Net, members: list[Route], known: list[Group]) -> str:
    same = next((g for g in known if g.network == network), None)
    prefixes = {r.prefix for r in members}
    if same is not None and same.members == prefixes:
        return same.header
    masks = sorted({p.prefixlen for p in prefixes})
    if len(masks) == 1:
        return (f"      {network.network_address}/{masks[0]} is subnetted, "
                f"{len(prefixes)} subnets")
    return (f"      {network} is variably subnetted, {len(prefixes)} subnets, "
            f"{len(masks)} masks")


def ios_table(table: Table, transcript: Parsed | None, text: str | None,
              legend: Iterable[str] = ()) -> str:
    """``show ip route`` of ``table``: the transcript's ``text`` itself when it has the same
    routes (the default configuration), else the legend, the gateway line and the routes."""
    if transcript is not None and text is not None and \
            [r.key() for r in transcript.routes] == [r.key() for r in table.routes]:
        return text
    header = list(transcript.header) if transcript is not None else list(legend)
    if table.vrf is not None:
        header = ["", f"Routing Table: {table.vrf}", *header]
    groups = transcript.groups if transcript is not None else []
    lines = [*header, gateway_line(table), "", *ios_routes(table, groups)]
    return "\n".join(lines) + "\n"


def ios_entry(route: Route, names: Mapping[str, str], tags: Mapping[str, str]) -> str:
    """``show ip route ADDRESS``'s entry for ``route``; ``names`` gives the ``Known via``
    words of a protocol (``ospf`` -> ``ospf 1``, ``bgp`` -> ``bgp 64500``), ``tags`` a BGP
    next hop's AS (the route's tag)."""
    protocol = route.protocol
    supernet = ", supernet" if route.prefix.prefixlen < classful(route.prefix).prefixlen \
        else ""
    rows = [f"Routing entry for {route.prefix}{supernet}"]
    known = names.get(protocol, protocol)
    default = ", candidate default path" if route.prefix.prefixlen == 0 else ""
    if route.code == "C":
        rows.append(f'  Known via "{known}", distance 0, metric 0 (connected, via interface)')
    elif route.code == "L":
        rows.append(f'  Known via "{known}", distance 0, metric 0 (connected)')
    elif protocol == "ospf":
        kind = {"O": "intra area", "O IA": "inter area", "O E1": "extern 1",
                "O E2": "extern 2, forward metric 1", "O N1": "NSSA extern 1",
                "O N2": "NSSA extern 2"}.get(route.code, "intra area")
        rows.append(f'  Known via "{known}", distance {route.distance}, metric '
                    f"{route.metric}{default}, type {kind}")
    else:
        rows.append(f'  Known via "{known}", distance {route.distance}, metric '
                    f"{route.metric}{default}")
    first = route.paths[0]
    if protocol == "bgp" and first.via is not None:
        tag = tags.get(first.via)
        if tag:
            rows.append(f"  Tag {tag}, type external")
    if first.age is not None and first.via is not None:
        where = f" on {first.interface}" if first.interface else ""
        rows.append(f"  Last update from {first.via}{where}, {first.age} ago")
    rows.append("  Routing Descriptor Blocks:")
    for index, path in enumerate(route.paths):
        mark = "*" if index == 0 else " "
        if path.via is None:
            rows.append(f"  {mark} directly connected, via {path.interface}")
        else:
            text = f"  {mark} {path.via}"
            if path.age is not None:
                text += f", from {path.via}, {path.age} ago"
            if path.interface is not None:
                text += f", via {path.interface}"
            rows.append(text)
        rows.append(f"      Route metric is {route.metric}, traffic share count is 1")
        if protocol == "bgp" and path.via is not None and tags.get(path.via):
            rows += ["      AS Hops 1", f"      Route tag {tags[path.via]}",
                     "      MPLS label: none"]
    return "\n".join(rows) + "\n\n"
