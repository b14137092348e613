"""Junos's ``ping`` and ``traceroute``: :mod:`mgmtbench.emulator.cli.reach` with Junos's words
(:data:`~mgmtbench.emulator.cli.reach.JUNOS`), the hops walked through the ``show route``
transcript's ``inet.0`` (its ``Local`` routes are the device's own addresses, its ``Direct``
routes the connected subnets, the others go through their active ``to`` next hop), or a
``routing-instance``'s table (none here: every probe is lost).

``ping ADDRESS [count N] [size N] [wait N] [ttl N] [source A] [interface I] [routing-instance
V] [rapid]``; without ``count`` a device pings until interrupted, here 5 probes.
``traceroute ADDRESS [ttl MAX] [wait N] [source A] [routing-instance V] [no-resolve]``. Their
XML (``ping-results``, ``traceroute-results``, what NAPALM's junos driver reads through
``<command>``) is :mod:`mgmtbench.emulator.structured.juniper_junos`'. Worded from memory of
Junos 22.x, not captures.
"""

from __future__ import annotations

import ipaddress
import re

from mgmtbench.emulator.cli import reach, reachcommands
from mgmtbench.emulator.cli.engine import Action, Session

_TABLE = re.compile(r"^(\S+): \d+ destinations")
_ROUTE = re.compile(r"^(\d+\.\d+\.\d+\.\d+/\d+)\s+[*+\- ]?\[(\w+)/\d+\]")
_TO = re.compile(r"^\s+>?\s*to (\d+\.\d+\.\d+\.\d+) via")


def _table(session: Session) -> tuple[set[str], list[reach.Route]]:
    """The device's own addresses and ``inet.0``'s routes."""
    text = session.device.transcript(("show", "route"))
    own: set[str] = set()
    routes: list[reach.Route] = []
    table = ""
    current: tuple[ipaddress.IPv4Network, str, list[str]] | None = None

    def close() -> None:
        if current is None:
            return
        prefix, protocol, vias = current
        if protocol == "Local":
            own.add(str(prefix.network_address))
        elif protocol == "Direct":
            routes.append(reach.Route(prefix, (None,)))
        elif protocol not in ("INET6",):
            routes.append(reach.Route(prefix, tuple(vias), discard=not vias))

    for line in text.splitlines():
        head = _TABLE.match(line)
        if head:
            close()
            current, table = None, head.group(1)
            continue
        if table != "inet.0":
            continue
        route = _ROUTE.match(line)
        if route:
            close()
            current = (ipaddress.IPv4Network(route.group(1), strict=False), route.group(2), [])
            continue
        to = _TO.match(line)
        if to and current is not None:
            current[2].append(to.group(1))
    close()
    return own, routes


def _probe(session: Session) -> reach.Probe:
    def hops(vrf: str | None, target: str) -> list[str] | None:
        if vrf is not None:
            return None
        own, routes = _table(session)
        return reach.walk(lambda a: a in own, lambda: routes, target)

    def source(vrf: str | None, word: str) -> str | None:
        own, _ = _table(session)
        return word if vrf is None and word in own else None

    return reach.Probe(reach.JUNOS, hops, lambda name: False, source)


#: Exec commands.
EXEC: dict[str, Action] = reachcommands.commands(_probe)
