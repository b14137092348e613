"""NX-OS's routing-table, BGP summary, ping and traceroute commands, made from the device's
interfaces, its configuration and the ``show ip route`` transcript: what NAPALM's nxos_ssh
``get_route_to``, ``get_bgp_neighbors``, ``ping`` and ``traceroute`` ask for.

- ``show ip route vrf V|all [PREFIX|ADDRESS]``, ``show ip route PREFIX|ADDRESS``: the default
  VRF's table is the transcript's; another VRF's (``management``) is made from its interfaces'
  subnets (``direct`` and ``local`` routes) and the ``ip route`` lines of its ``vrf context``;
  with a prefix or address only the route that holds it with the longest mask (``Route not
  found`` when none does);
- ``show bgp all summary vrf all`` (and ``show bgp ipv4 unicast summary vrf all``, ``show ip bgp
  summary vrf all``): from ``router bgp ASN`` (``router-id``, ``neighbor A`` with ``remote-as
  N``, ``description``, ``shutdown`` under it): a neighbour inside the subnet of an interface
  that is up is Established with a small number of prefixes the same on every run, one with
  ``shutdown`` is ``Shut (Admin)``, the others ``Idle``; without ``feature bgp`` the command is
  invalid (as on NX-OS: NAPALM then finds no BGP), with it but no ``router bgp`` it prints
  nothing;
- ``ping ADDRESS [count N] [packet-size N] [timeout N] [source X] [vrf V]`` and ``traceroute
  ADDRESS [source X] [vrf V]``: :mod:`mgmtbench.emulator.cli.reach` with NX-OS's words
  (:data:`~mgmtbench.emulator.cli.reach.NXOS`), the hops walked through the same tables (the
  connected subnets from the interfaces that are up, not the transcript's ``attached`` routes).

Worded from memory of NX-OS 9.3/10.x and of what NAPALM's nxos_ssh parses, not captures: the
route table's legend and ``Route not found``, the BGP summary's header lines, the ping and
traceroute lines.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mgmtbench.emulator.cli import reach, reachcommands
from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.config import ConfigLine

IPv4Net = ipaddress.IPv4Network

_LEGEND = ("'*' denotes best ucast next-hop\n'**' denotes best mcast next-hop\n"
           "'[x/y]' denotes [preference/metric]\n'%<string>' in via output denotes VRF "
           "<string>\n")
_PREFIX = re.compile(r"^(\d+\.\d+\.\d+\.\d+/\d+), ubest/mbest: \S+")
_VIA = re.compile(r"^\s+\*?via (\d+\.\d+\.\d+\.\d+)?")
_VRF_HEAD = re.compile(r'^IP Interface Status for VRF "(\S+)"')
_IF_HEAD = re.compile(r"^(\S+), Interface status: protocol-(\w+)/link-(\w+)/admin-(\w+)")
_IF_ADDRESS = re.compile(r"^\s+IP address: (\S+), IP subnet: \d+\.\d+\.\d+\.\d+/(\d+)")


def _top(session: Session) -> Iterator[ConfigLine]:
    config = session.device.config
    if config is not None:
        yield from (line for line in config.root if not line.removed)


@dataclass(frozen=True)
class Address:
    """An interface's address, in its VRF, and whether the interface is up."""

    vrf: str
    interface: str
    address: ipaddress.IPv4Interface
    up: bool


def addresses(session: Session) -> list[Address]:
    """Every interface address, from ``show ip interface vrf all`` (which follows the
    configuration)."""
    found: list[Address] = []
    vrf, name, up = "default", "", False
    for line in session.execute("show ip interface vrf all").text().splitlines():
        head = _VRF_HEAD.match(line)
        if head:
            vrf = head.group(1)
            continue
        interface = _IF_HEAD.match(line)
        if interface:
            name, up = interface.group(1), interface.group(2, 3, 4) == ("up", "up", "up")
            continue
        address = _IF_ADDRESS.match(line)
        if address and name:
            found.append(Address(vrf, name, ipaddress.IPv4Interface(
                f"{address.group(1)}/{address.group(2)}"), up))
    return found


def vrf_names(session: Session) -> list[str]:
    """``default``, ``management`` and every ``vrf context`` of the configuration."""
    names = ["default", "management"]
    for line in _top(session):
        words = line.text.split()
        if words[:2] == ["vrf", "context"] and len(words) == 3 and words[2] not in names:
            names.append(words[2])
    return names


def _short(name: str) -> str:
    for long, short in (("Ethernet", "Eth"), ("loopback", "Lo"), ("port-channel", "Po")):
        if name.startswith(long):
            return short + name[len(long):]
    return name


def _blocks(text: str) -> list[tuple[IPv4Net, list[str]]]:
    """``(prefix, its lines)`` of each route of ``show ip route``'s text."""
    found: list[tuple[IPv4Net, list[str]]] = []
    for line in text.splitlines():
        head = _PREFIX.match(line)
        if head:
            found.append((IPv4Net(head.group(1), strict=False), [line]))
        elif found and line.startswith("    ") and line.strip():
            found[-1][1].append(line)
    return found


def _statics(session: Session, vrf: str) -> list[tuple[IPv4Net, str]]:
    """``(prefix, next hop)`` of the ``ip route`` lines of ``vrf context VRF``."""
    found: list[tuple[IPv4Net, str]] = []
    for line in _top(session):
        if line.text.split() != ["vrf", "context", vrf]:
            continue
        for child in line.live_children():
            words = child.text.split()
            if words[:2] == ["ip", "route"] and len(words) >= 4:
                try:
                    found.append((IPv4Net(words[2], strict=False), words[3]))
                except ValueError:
                    continue
    return found


def table(session: Session, vrf: str) -> list[tuple[IPv4Net, list[str]]]:
    """The VRF's routes as ``show ip route vrf VRF`` prints them."""
    if vrf == "default":
        return _blocks(session.device.transcript(("show", "ip", "route")))
    routes: list[tuple[IPv4Net, list[str]]] = []
    for entry in addresses(session):
        if entry.vrf != vrf or not entry.up:
            continue
        short, ip = _short(entry.interface), entry.address.ip
        routes.append((entry.address.network, [
            f"{entry.address.network}, ubest/mbest: 1/0, attached",
            f"    *via {ip}, {short}, [0/0], 6w2d, direct"]))
        routes.append((IPv4Net(f"{ip}/32"), [f"{ip}/32, ubest/mbest: 1/0, attached",
                                             f"    *via {ip}, {short}, [0/0], 6w2d, local"]))
    for prefix, via in _statics(session, vrf):
        routes.append((prefix, [f"{prefix}, ubest/mbest: 1/0",
                                f"    *via {via}, [1/0], 6w2d, static"]))
    routes.sort(key=lambda route: (int(route[0].network_address), route[0].prefixlen))
    return routes


def _holding(routes: list[tuple[IPv4Net, list[str]]],
             prefix: IPv4Net) -> list[tuple[IPv4Net, list[str]]]:
    holding = [r for r in routes if prefix.subnet_of(r[0])]
    best = max((r[0].prefixlen for r in holding), default=-1)
    return [r for r in holding if r[0].prefixlen == best]


def _route(session: Session, found: Match[Action]) -> Reply:
    """``show ip route [vrf V|all] [PREFIX|ADDRESS]``."""
    args = list(found.args)
    vrf = args.pop(0) if "vrf" in found.words else "default"
    line = " ".join(("show ip route", *(("vrf", vrf) if "vrf" in found.words else ()), *args))
    prefix: IPv4Net | None = None
    if args:
        try:
            prefix = IPv4Net(args[0], strict=False)
        except ValueError:
            return session._error(ParseError(ParseErrorKind.INVALID, line.rindex(args[0])),
                                  line)
    if vrf == "default" and prefix is None:
        return Reply(session.execute("show ip route").text())
    known = vrf_names(session)
    if vrf != "all" and vrf not in known:
        return Reply(f"% VRF {vrf} not found\n", ok=False)
    text = ""
    for name in (known if vrf == "all" else [vrf]):
        routes = table(session, name)
        chosen = routes if prefix is None else _holding(routes, prefix)
        text += f'IP Route Table for VRF "{name}"\n{_LEGEND}\n'
        if not chosen:
            text += "Route not found\n\n" if prefix is not None else "\n"
            continue
        text += "".join(f"{row}\n" for _, lines in chosen for row in lines) + "\n"
    return Reply(text)


# --- ping and traceroute ----------------------------------------------------------------------


def _routes(session: Session, vrf: str) -> list[reach.Route]:
    own = [a for a in addresses(session) if a.vrf == vrf and a.up]
    routes = [reach.Route(a.address.network, (None,)) for a in own]
    for prefix, lines in table(session, vrf):
        if "attached" in lines[0]:
            continue
        vias = tuple(m.group(1) for m in map(_VIA.match, lines[1:]) if m and m.group(1))
        routes.append(reach.Route(prefix, vias, discard="Null0" in " ".join(lines)))
    return routes


def _probe(session: Session) -> reach.Probe:
    def hops(vrf: str | None, target: str) -> list[str] | None:
        name = vrf or "default"
        own = {str(a.address.ip) for a in addresses(session) if a.vrf == name}
        return reach.walk(lambda a: a in own, lambda: _routes(session, name), target)

    def source(vrf: str | None, word: str) -> str | None:
        for entry in addresses(session):
            if entry.vrf == (vrf or "default") and entry.up and (
                    word == str(entry.address.ip) or word.lower() in (
                        entry.interface.lower(), _short(entry.interface).lower())):
                return str(entry.address.ip)
        return None

    return reach.Probe(reach.NXOS, hops, lambda name: name in vrf_names(session), source)


# --- BGP --------------------------------------------------------------------------------------


@dataclass
class Peer:
    """A configured neighbour."""

    address: str
    remote_as: str
    shutdown: bool


def _bgp(session: Session) -> tuple[str, str, list[Peer]] | None:
    """``(ASN, router ID, neighbours)`` of ``router bgp`` (None: none)."""
    for line in _top(session):
        words = line.text.split()
        if words[:2] != ["router", "bgp"] or len(words) != 3:
            continue
        router_id, peers = "", []
        for child in line.live_children():
            parts = child.text.split()
            if parts[:1] == ["router-id"] and len(parts) == 2:
                router_id = parts[1]
            if parts[:1] == ["neighbor"] and len(parts) >= 2:
                settings = [c.text.split() for c in child.live_children()]
                remote = next((s[1] for s in settings if s[:1] == ["remote-as"] and
                               len(s) == 2), parts[3] if parts[2:3] == ["remote-as"] and
                              len(parts) > 3 else "0")
                peers.append(Peer(parts[1], remote, ["shutdown"] in settings))
        if not router_id:
            own = [a.address.ip for a in addresses(session) if a.vrf == "default"]
            loopbacks = [a.address.ip for a in addresses(session)
                         if a.interface.lower().startswith("loopback")]
            chosen = max(loopbacks or own, default=None)
            router_id = str(chosen) if chosen else "0.0.0.0"
        return words[2], router_id, peers
    return None


def _bgp_summary(session: Session, found: Match[Action]) -> Reply:
    """``show bgp all summary vrf all``."""
    features = {line.text for line in _top(session)}
    if "feature bgp" not in features:
        line = " ".join(found.words)
        return session._error(ParseError(ParseErrorKind.INVALID, line.index("bgp")), line)
    config = _bgp(session)
    if config is None:
        return Reply("")
    asn, router_id, peers = config
    up = [a.address.network for a in addresses(session) if a.vrf == "default" and a.up]
    rows = []
    for peer in peers:
        seed = int.from_bytes(hashlib.sha256(f"bgp:{peer.address}".encode()).digest()[:4], "big")
        try:
            near = any(ipaddress.IPv4Address(peer.address) in net for net in up)
        except ValueError:
            near = False
        state = "Shut (Admin)" if peer.shutdown else (str(1 + seed % 20) if near else "Idle")
        uptime = "6w2d" if near and not peer.shutdown else "never"
        sent, received = (100 + seed % 900, 100 + seed % 877) if near else (0, 0)
        rows.append(f"{peer.address:<16}4 {peer.remote_as:>10} {received:>7} {sent:>7} "
                    f"{(seed % 50) if near else 0:>8}    0    0 {uptime:>8} {state}")
    text = (f"BGP summary information for VRF default, address family IPv4 Unicast\n"
            f"BGP router identifier {router_id}, local AS number {asn}\n"
            f"BGP table version is {len(peers) * 7 + 1}, IPv4 Unicast config peers "
            f"{len(peers)}, capable peers "
            f"{sum(1 for r in rows if r.split()[-1].isdigit())}\n\n"
            "Neighbor        V    AS MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd\n"
            + "".join(f"{row}\n" for row in rows))
    return Reply(text)


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show ip route <word>": _route,
    "show ip route vrf <word>": _route,
    "show ip route vrf <word> <word>": _route,
    "show bgp all summary vrf all": _bgp_summary,
    "show bgp ipv4 unicast summary vrf all": _bgp_summary,
    "show ip bgp summary vrf all": _bgp_summary,
    **reachcommands.commands(_probe),
}
