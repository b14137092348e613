"""EOS's BGP and routing-table show commands, made from the device's configuration and the
``show ip route`` transcript: what NAPALM's eos ``get_bgp_neighbors``,
``get_bgp_neighbors_detail`` and ``get_route_to`` ask for.

BGP comes from the ``router bgp ASN`` block of the running configuration (``router-id``,
``neighbor A remote-as N``, ``neighbor A description ...``, ``neighbor A shutdown``,
``network P``, ``maximum-paths N``), in the default VRF:

- a neighbour whose address is in the subnet of an interface that is up and has an address
  (not one of another VRF) is Established, up since the device clock started, and has sent a
  small number of prefixes that is the same on every run (its address picks it); a neighbour
  with ``shutdown`` is Idle (``Administratively shut down``); the others are Active (no route to
  them);
- the router ID is ``router-id``, else the highest loopback address, else the highest address;
- ``show ip bgp summary [vrf all]``, ``show ipv6 bgp summary [vrf all]`` (the VRF, no IPv6
  neighbours), ``show ip bgp neighbors [A] [vrf all]`` and ``show ipv6 bgp peers [vrf all]``
  (nothing: no IPv6 neighbours); without ``router bgp`` they print nothing (JSON
  ``{"vrfs": {}}``).

``show ip route [vrf V|all] [PREFIX [longer-prefixes]] [PROTOCOL] [detail]``: the transcript's
table (its ``VRF: default`` section; another VRF of ``show vrf`` has an empty table, ``! IP
routing not enabled`` under ``no ip routing vrf V``), with a prefix only the route that holds it
with the longest mask (``longer-prefixes``: the routes inside it), with a protocol only that
protocol's routes. ``detail`` prints the same lines.

``ping [vrf V] ADDRESS [repeat N] [size N] [timeout N] [source X]``, ``traceroute [vrf V]
ADDRESS [-m MAX] [-w WAIT] ...`` and ``bash [timeout N] traceroute ...`` (what NAPALM's eos
driver runs; other shell commands are refused): :mod:`mgmtbench.emulator.cli.reach` with EOS's
words (Linux iputils ping and traceroute, from memory, not captures), the hops walked through
the connected subnets of the interfaces that are up and the table's other routes.

Worded after captures of EOS 4.2x in ntc-templates' tests (``show ip bgp summary``) and NAPALM's
eos tests (``show ip bgp neighbors``), trimmed to what a lab's neighbours show; the idle and
active neighbours' lines, the route selection and the error lines are from memory, not a
capture. Their JSON is :mod:`mgmtbench.emulator.structured.arista_eos`'.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass

from mgmtbench.emulator.cli import reach, reachcommands
from mgmtbench.emulator.cli.dialects.eos_show import short, vrf_members
from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.bgp import Bgp, Peer, peer_order

IPv4Net = ipaddress.IPv4Network

_HEAD = re.compile(r"^(\S+) is (up|down|administratively down), line protocol is (\w+)")
_ADDRESS = re.compile(r"^\s+Internet address is (\d+\.\d+\.\d+\.\d+)/(\d+)")


def _connected(session: Session) -> list[tuple[str, ipaddress.IPv4Interface]]:
    """``(interface, address)`` of each default-VRF interface that is up with an address,
    from ``show interfaces`` (which follows the configuration)."""
    other = {name for vrf, names in vrf_members(session).items() if vrf != "default"
             for name in names}
    found: list[tuple[str, ipaddress.IPv4Interface]] = []
    name, up = "", False
    for line in session.execute("show interfaces").text().splitlines():
        head = _HEAD.match(line)
        if head:
            name, up = head.group(1), head.group(2) == "up" and head.group(3) == "up"
            continue
        address = _ADDRESS.match(line)
        if address and up and name not in other:
            found.append((name, ipaddress.IPv4Interface(f"{address.group(1)}/"
                                                        f"{address.group(2)}")))
    return found


def bgp(session: Session) -> Bgp | None:
    """The device's BGP (None without ``router bgp``)."""
    config = session.device.config
    block = None
    if config is not None:
        block = next((line for line in config.root if not line.removed
                      and line.text.split()[:2] == ["router", "bgp"]
                      and len(line.text.split()) > 2), None)
    if block is None:
        return None
    children = [child.text.split() for child in block.live_children()]
    neighbors: dict[str, dict[str, str]] = {}
    networks: list[str] = []
    router_id = ""
    for words in children:
        if words[:1] == ["router-id"] and len(words) > 1:
            router_id = words[1]
        elif words[:1] == ["network"] and len(words) > 1:
            networks.append(words[1])
        elif words[:1] == ["neighbor"] and len(words) > 2:
            settings = neighbors.setdefault(words[1], {})
            if words[2] == "remote-as" and len(words) > 3:
                settings["asn"] = words[3]
            elif words[2] == "description":
                settings["description"] = " ".join(words[3:])
            elif words[2] == "shutdown":
                settings["shutdown"] = "yes"
    connected = _connected(session)
    if not router_id:
        loopbacks = [a.ip for n, a in connected if n.startswith("Loopback")]
        addresses = loopbacks or [a.ip for _, a in connected]
        router_id = str(max(addresses)) if addresses else "0.0.0.0"
    peers: list[Peer] = []
    for address, settings in sorted(neighbors.items(), key=lambda item: peer_order(item[0])):
        if "asn" not in settings:
            continue
        local = interface = None
        try:
            target = ipaddress.IPv4Address(address)
        except ValueError:
            target = None
        for name, ours in connected:
            if target is not None and target in ours.network and target != ours.ip:
                local, interface = str(ours.ip), name
                break
        peers.append(Peer(address, settings["asn"], settings.get("description", ""),
                          "shutdown" in settings, local, interface))
    return Bgp(block.text.split()[2], router_id, peers, networks)


def up_down(seconds: float) -> str:
    """EOS's Up/Down column: ``00:06:10`` under a day, ``34d20h`` from then on."""
    whole = int(max(seconds, 0))
    if whole < 86400:
        return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    return f"{whole // 86400}d{whole // 3600 % 24:02d}h"


def _messages(session: Session, peer: Peer, networks: int) -> tuple[int, int, int, int]:
    """``(updates sent, updates received, keepalives sent, keepalives received)``."""
    if peer.state != "Established":
        return 0, 0, 0, 0
    keepalives = 1 + int(session.device.clock.elapsed() // 60)
    return 1 + networks, 1 + peer.received, keepalives, keepalives


def _summary_rows(session: Session, found: Match[Action], ipv6: bool) -> Reply:
    config = bgp(session)
    if config is None:
        return Reply()
    peers = [] if ipv6 else config.peers
    width = max([len(p.address) for p in peers] + [8])
    elapsed = session.device.clock.elapsed()
    rows = ["BGP summary information for VRF default",
            f"Router identifier {config.router_id}, local AS number {config.asn}",
            "Neighbor Status Codes: m - Under maintenance",
            f"  {'Description':<24} {'Neighbor':<{width}} V {'AS':<12} {'MsgRcvd':>7} "
            f"{'MsgSent':>9} {'InQ':>4} {'OutQ':>4} {'Up/Down':>8} {'State':<7} "
            f"{'PfxRcd':<6} PfxAcc"]
    for peer in peers:
        sent_updates, received_updates, sent_keep, received_keep = _messages(
            session, peer, len(config.networks))
        sent = sent_updates + sent_keep + (peer.state == "Established")
        received = received_updates + received_keep + (peer.state == "Established")
        state = {"Established": "Estab", "Idle": "Idle(Admin)"}.get(peer.state, peer.state)
        prefixes = (f" {peer.received:<6} {peer.received}" if peer.state == "Established"
                    else "")
        rows.append(f"  {peer.description[:24]:<24} {peer.address:<{width}} 4 {peer.asn:<12} "
                    f"{received:>7} {sent:>9} {0:>4} {0:>4} {up_down(elapsed):>8} "
                    f"{state:<7}{prefixes}".rstrip())
    return Reply("".join(f"{row}\n" for row in rows))


def _ip_summary(session: Session, found: Match[Action]) -> Reply:
    """``show ip bgp summary [vrf all]``."""
    return _summary_rows(session, found, ipv6=False)


def _ipv6_summary(session: Session, found: Match[Action]) -> Reply:
    """``show ipv6 bgp summary [vrf all]``: the VRF, no IPv6 neighbours."""
    return _summary_rows(session, found, ipv6=True)


def _ipv6_peers(session: Session, found: Match[Action]) -> Reply:
    """``show ipv6 bgp peers [vrf all]``: no IPv6 neighbours."""
    return Reply()


def _peer_lines(session: Session, config: Bgp, peer: Peer) -> list[str]:
    """One neighbour of ``show ip bgp neighbors``."""
    established = peer.state == "Established"
    elapsed = session.device.clock.elapsed()
    link = "internal" if peer.asn == config.asn else "external"
    sent_updates, received_updates, sent_keep, received_keep = _messages(
        session, peer, len(config.networks))
    opens = int(established)
    rows = [f"BGP neighbor is {peer.address}, remote AS {peer.asn}, {link} link"]
    if peer.description:
        rows.append(f"  Description: {peer.description}")
    rows += [f"  BGP version 4, remote router ID {peer.address if established else '0.0.0.0'}"
             ", VRF default"]
    if established:
        last = int(elapsed) % 60
        rows += [f"  Last read {up_down(last)}, last write {up_down((last + 17) % 60)}",
                 "  Hold time is 180, keepalive interval is 60 seconds",
                 "  Configured hold time is 180, keepalive interval is 60 seconds",
                 f"  Hold timer is active, time left: {up_down(180 - last)}",
                 f"  Keepalive timer is active, time left: {up_down(60 - last)}",
                 "  Connect timer is inactive",
                 "  Idle-restart timer is inactive",
                 f"  BGP state is Established, up for {up_down(elapsed)}",
                 "  Number of transitions to established: 1",
                 "  Last state was OpenConfirm",
                 "  Last event was RecvKeepAlive",
                 "  Neighbor Capabilities:",
                 "    Multiprotocol IPv4 Unicast: advertised and received and negotiated",
                 "    Four Octet ASN: advertised and received and negotiated",
                 "    Route Refresh: advertised and received and negotiated",
                 "    Send End-of-RIB messages: advertised and received and negotiated",
                 "  Restart timer is inactive",
                 "  End of rib timer is inactive",
                 "    IPv4 Unicast End-of-RIB received: Yes"]
    else:
        shut = peer.state == "Idle"
        rows += ["  Last read never, last write never",
                 "  Hold time is 0, keepalive interval is 0 seconds",
                 "  Configured hold time is 180, keepalive interval is 60 seconds",
                 "  Hold timer is inactive",
                 "  Keepalive timer is inactive",
                 "  Connect timer is inactive" if shut else
                 f"  Connect timer is active, time left: {up_down(30 - int(elapsed) % 30)}",
                 "  Idle-restart timer is inactive",
                 "  BGP state is Idle, Administratively shut down" if shut else
                 "  BGP state is Active",
                 "  Number of transitions to established: 0",
                 "  Last state was Idle" if shut else "  Last state was Connect",
                 "  Last event was Stop" if shut else "  Last event was TransportError",
                 "  Neighbor Capabilities:",
                 "  Restart timer is inactive",
                 "  End of rib timer is inactive"]
    rows += ["  Message Statistics:",
             "                         Sent      Rcvd",
             f"    Opens:          {opens:>9} {opens:>9}",
             f"    Notifications:  {0:>9} {0:>9}",
             f"    Updates:        {sent_updates:>9} {received_updates:>9}",
             f"    Keepalives:     {sent_keep:>9} {received_keep:>9}",
             f"    Route-Refresh:  {0:>9} {0:>9}",
             f"    Total messages: {opens + sent_updates + sent_keep:>9} "
             f"{opens + received_updates + received_keep:>9}",
             "  Prefix Statistics:",
             "                                   Sent      Rcvd",
             f"    IPv4 Unicast:{len(config.networks) if established else 0:>22} "
             f"{peer.received:>9}",
             f"    IPv6 Unicast:{0:>22} {0:>9}",
             "  Configured maximum total number of routes is 256000, warning limit is 204800",
             f"Local AS is {config.asn}, local router ID {config.router_id}",
             "TTL is 1"]
    if established:
        port = 32768 + peer.seed % 28000
        rows += [f"Local TCP address is {peer.local}, local port is 179",
                 f"Remote TCP address is {peer.address}, remote port is {port}",
                 "TCP Socket Information:",
                 "  TCP state is ESTABLISHED",
                 "  Recv-Q: 0/32768",
                 "  Send-Q: 0/46080",
                 "  Outgoing Maximum Segment Size (MSS): 9162",
                 "  Total Number of TCP retransmissions: 0"]
    elif peer.state == "Active":
        rows.append(f"Remote TCP address is {peer.address}, remote port is 179")
    return [*rows, ""]


def _ip_neighbors(session: Session, found: Match[Action]) -> Reply:
    """``show ip bgp neighbors [ADDRESS] [vrf all]``."""
    config = bgp(session)
    if config is None:
        return Reply()
    rows: list[str] = []
    for peer in config.peers:
        if not found.args or peer.address == found.args[0]:
            rows += _peer_lines(session, config, peer)
    return Reply("".join(f"{row}\n" for row in rows))


# --- show ip route --------------------------------------------------------------------------

_ROUTE = re.compile(r"^ (\S+(?: \S+)?)\s+(\d+\.\d+\.\d+\.\d+/\d+)\s")
#: ``show ip route``'s protocol words and the codes of their routes.
PROTOCOLS = {"connected": "C", "static": "S", "ospf": "O", "bgp": "B", "kernel": "K",
             "isis": "I", "rip": "R", "aggregate": "A"}


@dataclass
class Section:
    """One VRF's part of ``show ip route``: its header (the ``VRF:`` line and the codes), and
    its routes, each with its lines (a route's next hops after the first are lines of their
    own)."""

    vrf: str
    header: list[str]
    routes: list[tuple[IPv4Net, str, list[str]]]


def sections(text: str) -> Iterator[Section]:
    """The VRF sections of ``show ip route``'s text."""
    for part in re.split(r"^(?=VRF: )", text, flags=re.M):
        if not part.startswith("VRF: "):
            continue
        lines = part.splitlines()
        header: list[str] = []
        index = 0
        while index < len(lines) and not lines[index].startswith("Gateway of last resort") \
                and not _ROUTE.match(lines[index]):
            header.append(lines[index])
            index += 1
        routes: list[tuple[IPv4Net, str, list[str]]] = []
        for line in lines[index:]:
            route = _ROUTE.match(line)
            if route:
                routes.append((ipaddress.IPv4Network(route.group(2), strict=False),
                               route.group(1), [line]))
            elif line.startswith("    ") and routes:
                routes[-1][2].append(line)
        while header and not header[-1].strip():
            header.pop()
        yield Section(lines[0].removeprefix("VRF: ").strip(), header, routes)


def _select(routes: list[tuple[IPv4Net, str, list[str]]], prefix: IPv4Net | None,
            longer: bool, protocol: str | None) -> list[tuple[IPv4Net, str, list[str]]]:
    chosen = [r for r in routes if protocol is None or r[1].split()[0] == PROTOCOLS[protocol]]
    if prefix is None:
        return chosen
    if longer:
        return [r for r in chosen if r[0].subnet_of(prefix)]
    holding = [r for r in chosen if prefix.subnet_of(r[0])]
    best = max((r[0].prefixlen for r in holding), default=-1)
    return [r for r in holding if r[0].prefixlen == best]


def _route(session: Session, found: Match[Action]) -> Reply:
    """``show ip route [vrf V|all] [PREFIX [longer-prefixes]] [PROTOCOL] [detail]``."""
    args = list(found.args)
    vrf = args.pop(0) if "vrf" in found.words else "default"
    prefix: IPv4Net | None = None
    protocol: str | None = None
    line = " ".join(("show ip route", *(("vrf", vrf) if "vrf" in found.words else ()),
                     *args))
    for arg in args:
        if arg.lower() in PROTOCOLS and protocol is None:
            protocol = arg.lower()
            continue
        try:
            if prefix is not None:
                raise ValueError(arg)
            prefix = ipaddress.IPv4Network(arg, strict=False)
        except ValueError:
            return session._error(ParseError(ParseErrorKind.INVALID, line.rindex(arg)), line)
    longer = "longer-prefixes" in found.words
    text = session.execute("show ip route").text()
    known = list(vrf_members(session))
    if vrf != "all" and vrf not in known:
        return Reply(f"% IP Routing table for VRF {vrf} does not exist.\n", ok=False)
    tables = {section.vrf: section for section in sections(text)}
    if vrf == "default" and prefix is None and protocol is None and not longer:
        return Reply(text)
    template = next(iter(tables.values()), None)
    rows: list[str] = []
    for name in (known if vrf == "all" else [vrf]):
        section = tables.get(name)
        if section is None:
            header = [f"VRF: {name}", *(template.header[1:] if template else [])]
            if _routing_off(session, name):
                header.append("! IP routing not enabled")
            rows += ["", *header, "", "Gateway of last resort is not set", ""]
            continue
        rows += ["", *section.header, ""]
        for _, _, lines in _select(section.routes, prefix, longer, protocol):
            rows += lines
        rows.append("")
    return Reply("".join(f"{row}\n" for row in rows))


def _routing_off(session: Session, vrf: str) -> bool:
    config = session.device.config
    return config is not None and any(
        not line.removed and line.text.split() == ["no", "ip", "routing", "vrf", vrf]
        for line in config.root)


def _route_patterns() -> list[str]:
    """Every form of ``show ip route`` with arguments (the tree takes one argument per
    place: a prefix, a protocol, or both, before ``detail``)."""
    patterns: list[str] = []
    for vrf in ("", " vrf <word>"):
        for tail in ("", " <word>", " <word> <word>", " <word> longer-prefixes",
                     " <word> longer-prefixes <word>"):
            for detail in ("", " detail"):
                pattern = f"show ip route{vrf}{tail}{detail}"
                if pattern != "show ip route":
                    patterns.append(pattern)
    return patterns


# --- ping and traceroute ----------------------------------------------------------------------

_VIA = re.compile(r"via (\d+\.\d+\.\d+\.\d+)")


def _routes(session: Session, vrf: str) -> list[reach.Route]:
    """The VRF's routes for :func:`mgmtbench.emulator.cli.reach.walk`: connected subnets from
    the interfaces that are up (default VRF), the others from ``show ip route``'s text."""
    routes = [reach.Route(address.network, (None,))
              for _, address in (_connected(session) if vrf == "default" else [])]
    text = session.execute("show ip route").text()
    for section in sections(text):
        if section.vrf != vrf:
            continue
        for prefix, code, lines in section.routes:
            if code.split()[0] == "C":
                continue
            vias = tuple(v for line in lines for v in _VIA.findall(line))
            routes.append(reach.Route(prefix, vias, discard="Null0" in " ".join(lines)))
    return routes


def _own(session: Session, vrf: str) -> set[str]:
    return {str(address.ip) for _, address in _connected(session)} if vrf == "default" \
        else set()


def _probe(session: Session, wording: reach.Wording) -> reach.Probe:
    def hops(vrf: str | None, target: str) -> list[str] | None:
        name = vrf or "default"
        own = _own(session, name)
        return reach.walk(lambda a: a in own, lambda: _routes(session, name), target)

    def source(vrf: str | None, word: str) -> str | None:
        if (vrf or "default") != "default":
            return None
        for name, address in _connected(session):
            if word in (str(address.ip), name) or word.lower() == short(name).lower():
                return str(address.ip)
        return None

    return reach.Probe(wording, hops, lambda name: name in vrf_members(session), source)


def _reach(session: Session, line: str, words: list[str], trace: bool) -> Reply:
    return reachcommands.answer(session, line, words, _probe(session, reach.EOS), trace)


def _ping(session: Session, found: Match[Action]) -> Reply:
    """``ping [vrf V] ADDRESS [repeat N] [size N] [timeout N] [source X] [interface X]``."""
    return _reach(session, "ping", found.args[0].split(), trace=False)


def _traceroute(session: Session, found: Match[Action]) -> Reply:
    """``traceroute [vrf V] ADDRESS [-m MAX] [-w WAIT] [-s SOURCE] [-q PROBES] [-n]``."""
    return _reach(session, "traceroute", found.args[0].split(), trace=True)


def _bash(session: Session, found: Match[Action]) -> Reply:
    """``bash [timeout N] traceroute ...`` (what NAPALM's eos driver runs); other shell
    commands are not emulated and refused."""
    words = found.args[0].split()
    if words[:1] == ["timeout"] and len(words) > 1 and words[1].isdigit():
        words = words[2:]
    if words[:1] == ["traceroute"]:
        return _reach(session, "bash traceroute", words[1:], trace=True)
    name = words[0] if words else ""
    return Reply(f"bash: {name}: command not found\n", ok=False)


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show ip bgp summary": _ip_summary,
    "show ip bgp summary vrf all": _ip_summary,
    "show ipv6 bgp summary": _ipv6_summary,
    "show ipv6 bgp summary vrf all": _ipv6_summary,
    "show ip bgp neighbors": _ip_neighbors,
    "show ip bgp neighbors vrf all": _ip_neighbors,
    "show ip bgp neighbors <word>": _ip_neighbors,
    "show ip bgp neighbors <word> vrf all": _ip_neighbors,
    "show ipv6 bgp peers": _ipv6_peers,
    "show ipv6 bgp peers vrf all": _ipv6_peers,
    **dict.fromkeys(_route_patterns(), _route),
    "ping <line>": _ping,
    "traceroute <line>": _traceroute,
    "bash <line>": _bash,
}
