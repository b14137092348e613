"""IOS / IOS-XE's own exec commands: state that follows the running configuration and what
happens on the device, where a transcript would stand still. What NAPALM's ios driver
(``get_bgp_neighbors``, ``get_bgp_neighbors_detail``, ``get_network_instances``,
``get_route_to``, ``ping``, ``traceroute``), Netmiko's and ntc-templates' parsers ask for.

BGP, from the ``router bgp ASN`` block (``bgp router-id``, ``neighbor A remote-as N``,
``neighbor A description ...``, ``neighbor A shutdown``, ``no bgp default ipv4-unicast`` and the
``address-family ipv4`` block's ``neighbor A activate`` / ``route-map`` / ``network`` lines):

- a neighbour whose address is inside a connected subnet of an interface that is up (the global
  table's ``C`` routes) is Established, up since the device clock started, and has sent a small
  number of prefixes that is the same on every run (its address picks it); a neighbour with
  ``shutdown`` is ``Idle (Admin)``; the others are ``Active``;
- the router ID is ``bgp router-id``, else the highest loopback address, else the highest
  address;
- ``show ip bgp summary``, ``show bgp ipv4 unicast summary``, ``show ip bgp all summary`` /
  ``show bgp all summary`` (under ``For address family: IPv4 Unicast``), ``show ip bgp
  neighbors [A]`` (and the ``bgp ipv4 unicast`` / ``ip bgp ipv4 unicast`` / ``bgp all``
  forms); without ``router bgp``: ``% BGP not active``. Neighbours of ``address-family ipv4
  vrf V`` are not shown.

VRFs, from ``vrf definition V`` blocks (their ``rd``, ``description`` and address families, with
``route-target`` lines) and interfaces' ``vrf forwarding V`` (``ip vrf forwarding V``): ``show
vrf``, ``show ip vrf`` (the VRFs with IPv4), ``show vrf detail [V]``.

``show ip route vrf V``, ``show ip route ADDRESS``, ``show ip route PREFIX MASK`` (``% Network
not in table`` / ``% Subnet not in table``), ``show ip route {connected|static|ospf|bgp}``: from
the tables of :mod:`mgmtbench.emulator.device.iproute` (the global one is ``show ip route``,
a view that follows the configuration).

``show logging``: the transcript's buffer, then what the device logged since it started
(:mod:`mgmtbench.emulator.device.activity`): ``%SYS-5-CONFIG_I`` when a session leaves
configuration mode, ``%SEC_LOGIN-5-LOGIN_SUCCESS`` / ``-4-LOGIN_FAILED`` at an SSH login,
``%SYS-6-LOGOUT`` when a shell ends; numbered on from the transcript's last line, stamped with
the device clock as the configuration's ``service timestamps log datetime ...`` and ``service
sequence-numbers`` say (the transcript's form: ``000349: Nov 22 14:05:00.123 UTC:``; a clock
that NTP set has no ``*``), the buffer kept to ``logging buffered SIZE`` bytes (oldest lines
out first) and to its level, the counters on.

``show users``: every CLI session open on the device (SSH shells and execs), the caller marked
``*``; ``ping`` and ``traceroute``: :mod:`mgmtbench.emulator.cli.reach` with IOS's words.

Worded as IOS-XE 17 prints these, from memory and the forms NAPALM and ntc-templates parse, not
captures: the summary's memory lines, the neighbour block's lines, ``show vrf detail``'s flags
and table IDs, the log messages' fields.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from mgmtbench.emulator.cli import reach, reachcommands
from mgmtbench.emulator.cli.engine import Action, Dialect, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device import iproute
from mgmtbench.emulator.device.activity import Event
from mgmtbench.emulator.device.bgp import Bgp, Peer, peer_order
from mgmtbench.emulator.device.config import ConfigLine

_ROUTE_WORDS = ("show", "ip", "route")


def _top(session: Session) -> Iterator[ConfigLine]:
    config = session.device.config
    if config is not None:
        yield from (line for line in config.root if not line.removed)


# --- routing tables ---------------------------------------------------------------------------


def global_table(session: Session) -> iproute.Table:
    """The global routing table, as ``show ip route`` prints it now."""
    text = session.device.transcript(_ROUTE_WORDS)
    return iproute.Table(None, tuple(iproute.parse(text).routes))


def vrf_table(session: Session, vrf: str) -> iproute.Table:
    """VRF ``vrf``'s routing table (its interfaces and ``ip route vrf`` lines)."""
    derived = session.device.derived
    if derived is None:
        return iproute.Table(vrf, ())
    current, children = derived.current()
    return iproute.build(vrf, current, children, (line.text for line in _top(session)))


def table(session: Session, vrf: str | None) -> iproute.Table:
    """The table of ``vrf`` (None: the global one)."""
    return global_table(session) if vrf is None else vrf_table(session, vrf)


def _legend(session: Session) -> list[str]:
    return iproute.parse(session.device.transcript(_ROUTE_WORDS)).header


def _entry_names(session: Session) -> tuple[dict[str, str], dict[str, str]]:
    """``Known via`` words per protocol, and BGP neighbours' AS by address."""
    names: dict[str, str] = {}
    for line in _top(session):
        words = line.text.split()
        if words[:2] == ["router", "ospf"] and len(words) > 2:
            names.setdefault("ospf", f"ospf {words[2]}")
        elif words[:2] == ["router", "bgp"] and len(words) > 2:
            names.setdefault("bgp", f"bgp {words[2]}")
    config = bgp(session)
    tags = {peer.address: peer.asn for peer in config.peers} if config else {}
    return names, tags


def _show_route(session: Session, found: Match[Action]) -> Reply:
    """``show ip route [vrf V] [ADDRESS [MASK] | PROTOCOL]``."""
    args = list(found.args)
    vrf = args.pop(0) if "vrf" in found.words else None
    line = " ".join((*found.words, *found.args))
    if vrf is not None and vrf not in vrfs(session):
        return Reply(f"% IP routing table {vrf} does not exist\n", ok=False)
    routes = table(session, vrf)
    if not args:
        if vrf is None:
            return Reply(session.device.transcript(_ROUTE_WORDS))
        return Reply(iproute.ios_table(routes, None, None, _legend(session)))
    protocol = args[0].lower()
    if len(args) == 1 and protocol in ("connected", "static", "ospf", "bgp"):
        chosen = iproute.Table(vrf, tuple(r for r in routes.routes
                                          if r.protocol == protocol))
        head = (["", f"Routing Table: {vrf}"] if vrf else []) + _legend(session)
        text = "\n".join([*head, iproute.gateway_line(routes), "",
                          *iproute.ios_routes(chosen)])
        return Reply(text + "\n")
    try:
        address = ipaddress.IPv4Address(args[0])
    except ValueError:
        return session._error(ParseError(ParseErrorKind.INVALID, line.rindex(args[0])), line)
    names, tags = _entry_names(session)
    if len(args) == 2:
        try:
            prefix = ipaddress.IPv4Network(f"{address}/{args[1]}", strict=False)
        except ValueError:
            return session._error(ParseError(ParseErrorKind.INVALID, line.rindex(args[1])),
                                  line)
        route = routes.exact(prefix)
        if route is None:
            return Reply("% Subnet not in table\n", ok=False)
    else:
        route = routes.lookup(str(address), default=False)
        if route is None:
            return Reply("% Network not in table\n", ok=False)
    if vrf is not None:
        return Reply(f"\nRouting Table: {vrf}\n" + iproute.ios_entry(route, names, tags))
    return Reply(iproute.ios_entry(route, names, tags))


# --- BGP --------------------------------------------------------------------------------------


def bgp(session: Session) -> Bgp | None:
    """The device's BGP (None without ``router bgp``)."""
    block = next((line for line in _top(session) if line.text.split()[:2] == ["router", "bgp"]
                  and len(line.text.split()) > 2), None)
    if block is None:
        return None
    settings: dict[str, dict[str, str]] = {}
    activated: set[str] = set()
    networks: list[str] = []
    router_id = ""
    default_ipv4 = True
    for child in block.live_children():
        words = child.text.split()
        if words[:2] == ["bgp", "router-id"] and len(words) > 2:
            router_id = words[2]
        elif words == ["no", "bgp", "default", "ipv4-unicast"]:
            default_ipv4 = False
        elif words[:1] == ["neighbor"] and len(words) > 2:
            entry = settings.setdefault(words[1], {})
            if words[2] == "remote-as" and len(words) > 3:
                entry["asn"] = words[3]
            elif words[2] == "description":
                entry["description"] = child.text.split(None, 3)[3] if len(words) > 3 else ""
            elif words[2] == "shutdown":
                entry["shutdown"] = "yes"
        elif words[:2] == ["address-family", "ipv4"] and "vrf" not in words and \
                words[2:3] in ([], ["unicast"]):
            for inner in child.live_children():
                more = inner.text.split()
                if more[:1] == ["network"] and len(more) > 1:
                    networks.append(more[1])
                elif more[:1] == ["neighbor"] and len(more) > 2:
                    entry = settings.setdefault(more[1], {})
                    if more[2] == "activate":
                        activated.add(more[1])
                    elif more[2] == "route-map" and len(more) > 4:
                        entry["in" if more[4] == "in" else "out"] = more[3]
    connected = global_table(session)
    derived = session.device.derived
    current = derived.current()[0] if derived is not None else {}
    if not router_id:
        loopbacks = [c.address[0] for n, c in current.items()
                     if n.startswith("Loopback") and c.address and not c.shutdown]
        every = [c.address[0] for c in current.values() if c.address and not c.shutdown]
        chosen = loopbacks or every
        router_id = str(max(ipaddress.IPv4Address(a) for a in chosen)) if chosen \
            else "0.0.0.0"
    peers: list[Peer] = []
    for address, entry in sorted(settings.items(), key=lambda item: peer_order(item[0])):
        if "asn" not in entry or (not default_ipv4 and address not in activated):
            continue
        local = interface = None
        try:
            route = connected.connected(address)
        except ValueError:
            route = None
        if route is not None and not connected.local(address):
            interface = route.paths[0].interface
            conf = current.get(interface or "")
            if conf is not None and conf.address:
                local = conf.address[0]
        peers.append(Peer(address, entry["asn"], entry.get("description", ""),
                          "shutdown" in entry, local, interface, entry.get("in", ""),
                          entry.get("out", "")))
    return Bgp(block.text.split()[2], router_id, peers, networks)


def up_down(seconds: float) -> str:
    """IOS's Up/Down column: ``00:06:10`` under a day, ``1d02h`` under a week, ``2w3d`` on."""
    whole = int(max(seconds, 0))
    if whole < 86400:
        return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"
    if whole < 7 * 86400:
        return f"{whole // 86400}d{whole // 3600 % 24:02d}h"
    return f"{whole // (7 * 86400)}w{whole // 86400 % 7}d"


def _messages(session: Session, peer: Peer, networks: int) -> tuple[int, int, int, int]:
    """``(updates sent, updates received, keepalives sent, keepalives received)``."""
    if peer.state != "Established":
        return 0, 0, 0, 0
    keepalives = 1 + int(session.device.clock.elapsed() // 60)
    return 1 + networks, 1 + peer.received, keepalives, keepalives


def _not_active() -> Reply:
    return Reply("% BGP not active\n\n", ok=False)


def summary_lines(session: Session, config: Bgp) -> list[str]:
    """``show ip bgp summary``'s lines."""
    total = len(config.networks) + sum(p.received for p in config.peers)
    version = 1 + total
    paths = total
    attributes = 1 + sum(1 for p in config.peers if p.received)
    memory = total * 248 + paths * 136 + attributes * 296 + attributes * 32
    rows = [f"BGP router identifier {config.router_id}, local AS number {config.asn}",
            f"BGP table version is {version}, main routing table version {version}"]
    if total:
        rows += [f"{total} network entries using {total * 248} bytes of memory",
                 f"{paths} path entries using {paths * 136} bytes of memory",
                 f"{attributes}/{attributes} BGP path/bestpath attribute entries using "
                 f"{attributes * 296} bytes of memory",
                 f"{attributes} BGP AS-PATH entries using {attributes * 32} bytes of memory",
                 "0 BGP route-map cache entries using 0 bytes of memory",
                 "0 BGP filter-list cache entries using 0 bytes of memory",
                 f"BGP using {memory} total bytes of memory",
                 f"BGP activity {total}/0 prefixes, {paths}/0 paths, scan interval 60 secs"]
    rows += ["", "Neighbor        V           AS MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  "
             "State/PfxRcd"]
    elapsed = session.device.clock.elapsed()
    for peer in config.peers:
        sent_u, rcvd_u, sent_k, rcvd_k = _messages(session, peer, len(config.networks))
        up = peer.state == "Established"
        sent, received = sent_u + sent_k + up, rcvd_u + rcvd_k + up
        when = up_down(elapsed) if up else "never"
        state = (f"{peer.received:>8}" if up else
                 "Idle (Admin)" if peer.state == "Idle" else "Active")
        rows.append(f"{peer.address:<16}4 {peer.asn:>12} {received:>7} {sent:>7} "
                    f"{version if up else 1:>8} {0:>4} {0:>4} {when:<8} {state}")
    return rows


def _summary(session: Session, found: Match[Action]) -> Reply:
    """``show ip bgp summary`` (``show bgp ipv4 unicast summary``)."""
    config = bgp(session)
    if config is None:
        return _not_active()
    return Reply("".join(f"{row}\n" for row in summary_lines(session, config)))


def _all_summary(session: Session, found: Match[Action]) -> Reply:
    """``show bgp all summary``, ``show ip bgp all summary``: per address family."""
    config = bgp(session)
    if config is None:
        return _not_active()
    rows = ["For address family: IPv4 Unicast", *summary_lines(session, config), ""]
    return Reply("".join(f"{row}\n" for row in rows))


def _peer_lines(session: Session, config: Bgp, peer: Peer) -> list[str]:
    """One neighbour of ``show ip bgp neighbors``."""
    up = peer.state == "Established"
    elapsed = session.device.clock.elapsed()
    link = "internal" if peer.asn == config.asn else "external"
    sent_u, rcvd_u, sent_k, rcvd_k = _messages(session, peer, len(config.networks))
    opens = int(up)
    rows = [f"BGP neighbor is {peer.address},  remote AS {peer.asn}, {link} link"]
    if peer.description:
        rows.append(f" Description: {peer.description}")
    if peer.state == "Idle":
        rows.append("  Administratively shut down")
    rows.append(f"  BGP version 4, remote router ID {peer.address if up else '0.0.0.0'}")
    if up:
        last = int(elapsed) % 60
        rows += [f"  BGP state = Established, up for {up_down(elapsed)}",
                 f"  Last read {up_down(last)}, last write {up_down((last + 17) % 60)}, "
                 "hold time is 180, keepalive interval is 60 seconds",
                 "  Neighbor sessions:",
                 "    1 active, is not multisession capable (disabled)",
                 "  Neighbor capabilities:",
                 "    Route refresh: advertised and received(new)",
                 "    Four-octets ASN Capability: advertised and received",
                 "    Address family IPv4 Unicast: advertised and received",
                 "    Enhanced Refresh Capability: advertised and received",
                 "    Multisession Capability: ",
                 "    Stateful switchover support enabled: NO for session 1"]
    else:
        rows += [f"  BGP state = {peer.state}",
                 "  Neighbor sessions:",
                 "    0 active, is not multisession capable (disabled)",
                 "    Stateful switchover support enabled: NO"]
    rows += ["  Message statistics:",
             "    InQ depth is 0",
             "    OutQ depth is 0",
             "    ",
             "                         Sent       Rcvd",
             f"    Opens:         {opens:>10} {opens:>10}",
             f"    Notifications: {0:>10} {0:>10}",
             f"    Updates:       {sent_u:>10} {rcvd_u:>10}",
             f"    Keepalives:    {sent_k:>10} {rcvd_k:>10}",
             f"    Route Refresh: {0:>10} {0:>10}",
             f"    Total:         {opens + sent_u + sent_k:>10} {opens + rcvd_u + rcvd_k:>10}",
             "  Do log neighbor state changes (via global configuration)",
             "  Default minimum time between advertisement runs is 30 seconds",
             "",
             " For address family: IPv4 Unicast",
             f"  Session: {peer.address}",
             f"  BGP table version {1 + len(config.networks) + peer.received}, neighbor "
             f"version {1 + len(config.networks) + peer.received if up else 0}/0",
             "  Output queue size : 0",
             "  Index 1, Advertise bit 0",
             "  1 update-group member"]
    if peer.route_in:
        rows.append("  Inbound path policy configured")
    if peer.route_out:
        rows.append("  Outbound path policy configured")
    if peer.route_in:
        rows.append(f"  Route map for incoming advertisements is {peer.route_in}")
    if peer.route_out:
        rows.append(f"  Route map for outgoing advertisements is {peer.route_out}")
    sent = len(config.networks) if up else 0
    rows += ["  Slow-peer detection is disabled",
             "  Slow-peer split-update-group dynamic is disabled",
             "                                 Sent       Rcvd",
             "  Prefix activity:               ----       ----",
             f"    Prefixes Current:     {sent:>10} {peer.received:>10}"
             f"{f' (Consumes {peer.received * 136} bytes)' if peer.received else ''}",
             f"    Prefixes Total:       {sent:>10} {peer.received:>10}",
             f"    Implicit Withdraw:    {0:>10} {0:>10}",
             f"    Explicit Withdraw:    {0:>10} {0:>10}",
             f"    Used as bestpath:     {'n/a':>10} {peer.received:>10}",
             f"    Used as multipath:    {'n/a':>10} {0:>10}",
             f"    Used as secondary:    {'n/a':>10} {0:>10}",
             "",
             "                                   Outbound    Inbound",
             "  Local Policy Denied Prefixes:    --------    -------",
             f"    Total:                        {0:>10} {0:>10}",
             f"  Number of NLRIs in the update sent: max {sent}, min 0",
             "  Last detected as dynamic slow peer: never",
             "  Dynamic slow peer recovered: never",
             f"  Refresh Epoch: {1 if up else 0}",
             "  Last Sent Refresh Start-of-rib: never",
             "  Last Sent Refresh End-of-rib: never",
             "  Last Received Refresh Start-of-rib: never",
             "  Last Received Refresh End-of-rib: never",
             "",
             f"  Address tracking is enabled, the RIB does {'' if up else 'not '}have a route "
             f"to {peer.address}",
             f"  Route to peer address reachability Up: {int(up)}; Down: 0",
             f"  Connections established {int(up)}; dropped 0",
             "  Last reset never"]
    if link == "external":
        rows.append("  External BGP neighbor configured for connected checks (single-hop "
                    "no-disable-connected-check)")
    if up and peer.interface:
        rows.append(f"  Interface associated: {peer.interface} (peering address in same "
                    "link)")
    rows += ["  Transport(tcp) path-mtu-discovery is enabled",
             "  Graceful-Restart is disabled",
             "  SSO is disabled"]
    if up:
        port = 32768 + peer.seed % 28000
        rows += ["Connection state is ESTAB, I/O status: 1, unread input bytes: 0",
                 "Connection is ECN Disabled, Mininum incoming TTL 0, Outgoing TTL 1",
                 f"Local host: {peer.local}, Local port: 179",
                 f"Foreign host: {peer.address}, Foreign port: {port}",
                 "Connection tableid (VRF): 0",
                 "Maximum output segment queue size: 50",
                 "",
                 "Enqueued packets for retransmit: 0, input: 0  mis-ordered: 0 (0 bytes)"]
    else:
        rows.append("  No active TCP connection")
    return [*rows, ""]


def _neighbors(session: Session, found: Match[Action]) -> Reply:
    """``show ip bgp neighbors [ADDRESS]`` (and the other words for it)."""
    config = bgp(session)
    if config is None:
        return _not_active()
    chosen = [p for p in config.peers if not found.args or p.address == found.args[0]]
    if found.args and not chosen:
        return Reply("% No such neighbor or address family\n", ok=False)
    rows: list[str] = []
    for peer in chosen:
        rows += _peer_lines(session, config, peer)
    return Reply("".join(f"{row}\n" for row in rows))


# --- VRFs -------------------------------------------------------------------------------------


@dataclass
class Vrf:
    """A configured VRF: its RD, description, address families (``ipv4``, ``ipv6``) with their
    route targets, whether it is an old-style ``ip vrf``, and its interfaces."""

    name: str
    rd: str = "<not set>"
    description: str = ""
    families: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    old: bool = False
    interfaces: list[str] = field(default_factory=list)


def vrfs(session: Session) -> dict[str, Vrf]:
    """The configured VRFs by name, in configuration order, with their interfaces."""
    found: dict[str, Vrf] = {}
    for line in _top(session):
        words = line.text.split()
        old = words[:2] == ["ip", "vrf"] and len(words) == 3
        if not (old or (words[:2] == ["vrf", "definition"] and len(words) == 3)):
            continue
        vrf = found.setdefault(words[2], Vrf(words[2], old=old))
        if old:
            vrf.families.setdefault("ipv4", [])
        for child in line.live_children():
            more = child.text.split()
            if more[:1] == ["rd"] and len(more) > 1:
                vrf.rd = more[1]
            elif more[:1] == ["description"]:
                vrf.description = child.text.split(None, 1)[1] if len(more) > 1 else ""
            elif more[:1] == ["route-target"] and len(more) > 2:
                vrf.families.setdefault("ipv4", []).append((more[1], more[2]))
            elif more[:1] == ["address-family"] and len(more) > 1 and \
                    more[1] in ("ipv4", "ipv6"):
                targets = vrf.families.setdefault(more[1], [])
                for inner in child.live_children():
                    rt = inner.text.split()
                    if rt[:1] == ["route-target"] and len(rt) > 2:
                        targets.append((rt[1], rt[2]))
    derived = session.device.derived
    if derived is not None:
        for name, vrf_name in iproute.interface_vrfs(derived.current()[1]).items():
            if vrf_name in found:
                found[vrf_name].interfaces.append(name)
    return found


_SHORT = (("TenGigabitEthernet", "Te"), ("GigabitEthernet", "Gi"), ("FastEthernet", "Fa"),
          ("Port-channel", "Po"), ("Loopback", "Lo"), ("Tunnel", "Tu"), ("Vlan", "Vl"),
          ("Ethernet", "Et"), ("Serial", "Se"))


def short_name(name: str) -> str:
    """An interface's short name, as ``show vrf`` prints it (``GigabitEthernet0`` -> ``Gi0``)."""
    for full, short in _SHORT:
        if name.startswith(full):
            return short + name[len(full):]
    return name


def _protocols(vrf: Vrf) -> str:
    return ",".join(f for f in ("ipv4", "ipv6") if f in vrf.families) or "<none>"


def _show_vrf(session: Session, found: Match[Action]) -> Reply:
    """``show vrf``."""
    rows = ["  Name                             Default RD            Protocols   Interfaces"]
    for vrf in vrfs(session).values():
        names = [short_name(n) for n in vrf.interfaces]
        rows.append(f"  {vrf.name:<32} {vrf.rd:<21} {_protocols(vrf):<11} "
                    f"{names[0] if names else ''}".rstrip())
        rows += [" " * 69 + name for name in names[1:]]
    return Reply("".join(f"{row}\n" for row in rows))


def _show_ip_vrf(session: Session, found: Match[Action]) -> Reply:
    """``show ip vrf``: the VRFs with IPv4."""
    rows = ["  Name                             Default RD            Interfaces"]
    for vrf in vrfs(session).values():
        if "ipv4" not in vrf.families:
            continue
        names = [short_name(n) for n in vrf.interfaces]
        rows.append(f"  {vrf.name:<32} {vrf.rd:<21} {names[0] if names else ''}".rstrip())
        rows += [" " * 57 + name for name in names[1:]]
    return Reply("".join(f"{row}\n" for row in rows))


def _family_lines(vrf: Vrf, family: str, index: int) -> list[str]:
    if family not in vrf.families:
        return [f"Address family {family} unicast not active"]
    table_id = f"0x{index}" if family == "ipv4" else f"0x1E{index:06X}"
    rows = [f"Address family {family} unicast (Table ID = {table_id}):", "  Flags: 0x0"]
    targets = vrf.families[family]
    for way, title in (("export", "Export"), ("import", "Import")):
        chosen = [rt for kind, rt in targets if kind in (way, "both")]
        if chosen:
            rows.append(f"  {title} VPN route-target communities")
            rows += [f"    RT:{rt:<21}" for rt in chosen]
        else:
            rows.append(f"  No {title} VPN route-target communities")
    rows += ["  No import route-map", "  No global export route-map", "  No export route-map",
             "  VRF label distribution protocol: not configured",
             "  VRF label allocation mode: per-prefix"]
    return rows


def _show_vrf_detail(session: Session, found: Match[Action]) -> Reply:
    """``show vrf detail [V]``."""
    known = vrfs(session)
    if found.args and found.args[0] not in known:
        return Reply(f"% No VRF named {found.args[0]}\n", ok=False)
    blocks: list[str] = []
    for index, vrf in enumerate(known.values(), start=1):
        if found.args and vrf.name != found.args[0]:
            continue
        rows = [f"VRF {vrf.name} (VRF Id = {index}); default RD {vrf.rd}; default VPNID "
                "<not set>"]
        if vrf.description:
            rows.append(f"  Description: {vrf.description}")
        rows.append("  Old CLI format, supports IPv4 only" if vrf.old else
                    "  New CLI format, supports multiple address-families")
        rows.append("  Flags: 0x1808")
        if vrf.interfaces:
            rows.append("  Interfaces:")
            names = [short_name(n) for n in vrf.interfaces]
            rows += [f"    {' '.join(f'{n:<24}' for n in names[i:i + 3]).rstrip()}"
                     for i in range(0, len(names), 3)]
        else:
            rows.append("  No interfaces")
        for family in ("ipv4", "ipv6"):
            rows += _family_lines(vrf, family, index)
        rows += ["Address family ipv4 multicast not active",
                 "Address family ipv6 multicast not active"]
        blocks.append("".join(f"{row}\n" for row in rows))
    return Reply("\n".join(blocks) + ("\n" if blocks else ""))


# --- show logging -----------------------------------------------------------------------------

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: Severity of each event's message (a buffer's level keeps those at or under it).
_SEVERITY = {"config": 5, "login": 5, "login_failed": 4, "logout": 6}
_LEVELS = {"emergencies": 0, "alerts": 1, "critical": 2, "errors": 3, "warnings": 4,
           "notifications": 5, "informational": 6, "debugging": 7}
_SEQUENCE = re.compile(r"^(\d+): ")
_BUFFER = re.compile(r"^Log Buffer \((\d+) bytes\):$", re.M)


def _stamp_words(session: Session) -> tuple[bool, bool, bool, bool]:
    """``(sequence numbers, msec, time zone, year)`` from the configuration."""
    sequence = msec = zone = year = False
    for line in _top(session):
        words = line.text.split()
        if words == ["service", "sequence-numbers"]:
            sequence = True
        elif words[:4] == ["service", "timestamps", "log", "datetime"]:
            msec, zone, year = "msec" in words, "show-timezone" in words, "year" in words
    return sequence, msec, zone, year


def _time_words(moment: datetime, zone: str) -> str:
    """``09:04:17 UTC Fri Nov 20 2026`` (the ``at ...`` of a login message)."""
    return (f"{moment:%H:%M:%S} {zone} {_DAYS[moment.weekday()]} "
            f"{_MONTHS[moment.month - 1]} {moment.day} {moment.year}")


def log_message(event: Event, zone: str) -> str:
    """An event as IOS words it (after the time stamp)."""
    f = event.fields
    user, peer = f.get("user", ""), f.get("peer", "")
    if event.kind == "config":
        where = f"vty{f.get('line', '0')} ({peer})" if peer else "console"
        return f"%SYS-5-CONFIG_I: Configured from console by {user or 'console'} on {where}"
    if event.kind == "login":
        return (f"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: {user}] [Source: {peer}] "
                f"[localport: {f.get('port', '22')}] at {_time_words(event.time, zone)}")
    if event.kind == "login_failed":
        return (f"%SEC_LOGIN-4-LOGIN_FAILED: Login failed [user: {user}] [Source: {peer}] "
                f"[localport: {f.get('port', '22')}] [Reason: Login Authentication Failed] "
                f"at {_time_words(event.time, zone)}")
    if event.kind == "logout":
        tty = 2 + int(f.get("line", "0"))
        return f"%SYS-6-LOGOUT: User {user} has exited tty session {tty}({peer})"
    return f"%SYS-6-LOGGINGHOST_STARTSTOP: {event.kind}"


def _buffered(session: Session) -> tuple[int | None, int]:
    """``logging buffered [SIZE] [LEVEL]``: the size (None: the transcript's) and level."""
    for line in _top(session):
        words = line.text.split()
        if words[:2] == ["logging", "buffered"]:
            size = next((int(w) for w in words[2:] if w.isdigit()), None)
            level = next((_LEVELS[w] for w in words[2:] if w in _LEVELS), 7)
            return size, level
    return None, 7


def _show_logging(session: Session, found: Match[Action]) -> Reply:
    """``show logging``: the transcript, then what the device logged (see the module doc)."""
    text = session.device.transcript(("show", "logging"))
    where = _BUFFER.search(text)
    if where is None:
        return Reply(text)
    head = text[:where.start()]
    lines = text[where.end():].lstrip("\n").splitlines()
    size, level = _buffered(session)
    size = size if size is not None else int(where.group(1))
    sequence, msec, zone_shown, year = _stamp_words(session)
    zone = session.device.clock.spec.timezone
    last = next((int(m.group(1)) for m in (_SEQUENCE.match(x) for x in reversed(lines)) if m),
                0)
    events = [e for e in session.device.activity.events if _SEVERITY.get(e.kind, 6) <= level]
    for number, event in enumerate(events, start=last + 1):
        moment = event.time
        stamp = f"{_MONTHS[moment.month - 1]} {moment.day:>2}"
        if year:
            stamp += f" {moment.year}"
        stamp += f" {moment:%H:%M:%S}"
        if msec:
            stamp += f".{moment.microsecond // 1000:03d}"
        if zone_shown:
            stamp += f" {zone}"
        prefix = f"{number:06d}: " if sequence else ""
        lines.append(f"{prefix}{stamp}: {log_message(event, zone)}")
    while lines and sum(len(x) + 1 for x in lines) > size:
        lines.pop(0)
    added = len(events)
    console = sum(1 for e in events if _SEVERITY.get(e.kind, 6) <= 4)
    head = re.sub(r"(Buffer logging:\s+level \w+, )(\d+)( messages logged)",
                  lambda m: f"{m.group(1)}{int(m.group(2)) + added}{m.group(3)}", head)
    head = re.sub(r"(Console logging: level \w+, )(\d+)( messages logged)",
                  lambda m: f"{m.group(1)}{int(m.group(2)) + console}{m.group(3)}", head)
    head = re.sub(r"(\d+)( message lines logged)",
                  lambda m: f"{int(m.group(1)) + added}{m.group(2)}", head)
    body = "".join(f"{x}\n" for x in lines)
    return Reply(f"{head}Log Buffer ({size} bytes):\n\n{body}")


# --- show users -------------------------------------------------------------------------------


def _clock(seconds: int) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _show_users(session: Session, found: Match[Action]) -> Reply:
    """``show users``: the device's open CLI sessions, the caller's marked ``*``."""
    lines = session.device.activity.lines
    now = session.device.clock.elapsed()
    rows: list[tuple[int, str]] = []
    mine = lines.find(session)
    for line in lines:
        mark = "*" if line is mine else " "
        idle = 0 if line is mine else line.idle(now)
        rows.append((line.number, _user_row(mark, line.number, line.user, idle, line.peer)))
    if mine is None:
        number = lines.free_number()
        rows.append((number, _user_row("*", number, session.user, 0, session.peer)))
    rows.sort()
    return Reply("    Line       User       Host(s)              Idle       Location\n"
                 + "".join(f"{row}\n" for _, row in rows) + "\n"
                 "  Interface    User               Mode         Idle     Peer Address\n\n")


def _user_row(mark: str, number: int, user: str, idle: int, peer: str) -> str:
    return (f"{mark}{2 + number:>3} vty {number:<5} {user:<10} idle                 "
            f"{_clock(idle)} {peer}").rstrip()


# --- ping and traceroute ----------------------------------------------------------------------


def _hops(session: Session) -> reach.Hops:
    def hops(vrf: str | None, target: str, depth: int = 0) -> list[str] | None:
        if depth > 8:
            return None
        routes = table(session, vrf)
        if routes.local(target):
            return [target]
        route = routes.lookup(target)
        if route is None:
            return None
        path = route.paths[0]
        if path.via is None:
            return None if path.interface == "Null0" else [target]
        if path.via == target:
            return [target]
        before = hops(vrf, path.via, depth + 1)
        return None if before is None else [*before, target]
    return hops


def _source(session: Session) -> reach.Source:
    def source(vrf: str | None, word: str) -> str | None:
        derived = session.device.derived
        if derived is None:
            return None
        current, children = derived.current()
        members = iproute.interface_vrfs(children)
        for name, conf in current.items():
            if conf.shutdown or conf.address is None or members.get(name) != vrf:
                continue
            if word.lower() == name.lower() or word == conf.address[0] or \
                    word.lower() == short_name(name).lower():
                return conf.address[0]
        return None
    return source


def _probe(session: Session) -> reach.Probe:
    return reach.Probe(reach.IOS, _hops(session), lambda name: name in vrfs(session),
                       _source(session))


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show ip bgp summary": _summary,
    "show bgp ipv4 unicast summary": _summary,
    "show ip bgp ipv4 unicast summary": _summary,
    "show ip bgp all summary": _all_summary,
    "show bgp all summary": _all_summary,
    "show ip bgp neighbors": _neighbors,
    "show ip bgp neighbors <word>": _neighbors,
    "show ip bgp ipv4 unicast neighbors": _neighbors,
    "show ip bgp ipv4 unicast neighbors <word>": _neighbors,
    "show bgp ipv4 unicast neighbors": _neighbors,
    "show bgp ipv4 unicast neighbors <word>": _neighbors,
    "show bgp all neighbors": _neighbors,
    "show bgp all neighbors <word>": _neighbors,
    "show vrf": _show_vrf,
    "show vrf detail": _show_vrf_detail,
    "show vrf detail <word>": _show_vrf_detail,
    "show ip vrf": _show_ip_vrf,
    "show ip route vrf <word>": _show_route,
    "show ip route vrf <word> <word>": _show_route,
    "show ip route vrf <word> <word> <word>": _show_route,
    "show ip route <word>": _show_route,
    "show ip route <word> <word>": _show_route,
    "show logging": _show_logging,
    "show users": _show_users,
    **reachcommands.commands(_probe),
}

#: IOS's dialect: these exec commands; the IOS-style configuration as it is.
DIALECT = Dialect(exec=EXEC)
