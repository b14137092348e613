"""A chain of labs: links one after the other, from the benchmark's namespace through hop
namespaces to the devices.

::

    links = [ChainLink("wan", resolve("regional")), ChainLink("campus", resolve("campus"))]
    with LabChain(links) as chain:
        hop = chain.hops[0]                         # the namespace between the two links
        hop.start_service("proxy", argv, "ready")   # e.g. the edge proxy, on hop.address
        device = chain.devices[0]                   # behind both links
        print(chain.link_facts())                   # each link's configured and measured RTT

Each link is a :class:`~mgmtbench.lab.lab.Lab`. The first one is made from this namespace, as
usual; its "devices" namespace is a hop (:class:`~mgmtbench.lab.runtimes.hop.HopRuntime`): no
devices, one service address. Every later link is a lab whose benchmark side is the previous hop:
a ``Lab`` does everything on its benchmark side from the calling thread (its netlink socket, the
delay line process it starts, which makes its TUN interface where it starts, the calibration
sockets), so building it (``up``, and ``down``) on a thread that entered the hop's namespace puts
that side in the hop. Its calibration then measures that link alone, from the hop. The last lab
runs the devices with the runtime asked for (``netns``, ``docker``, ...).

Forwarding is on in every hop, and this namespace (and every hop) routes each subnet further down
the chain (devices and link nets) through the next hop, so a client here reaches the devices
directly over the whole chain: what the edge proxy's direct modes are measured over. The path's
RTT (this namespace to the devices' echo) is measured too. Nothing the chain makes outlives it:
the routes here go with the first link's interface, the hops' interfaces with their namespaces.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

from pyroute2 import IPRoute

from mgmtbench.emulator.options import Credentials, SshServerOptions
from mgmtbench.errors import UsageError
from mgmtbench.lab.calibrate import Calibration, calibrate
from mgmtbench.lab.facts import LabDevice, LabFacts, LinkCounters
from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.lab import ECHO_PORT, Lab
from mgmtbench.lab.netns import in_namespace, link_index
from mgmtbench.lab.profiles import LinkProfile
from mgmtbench.lab.runtimes.hop import HopRuntime
from mgmtbench.lab.tcp import route_metrics
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets.base import Service

T = TypeVar("T")


@dataclass(frozen=True)
class ChainLink:
    """One link of a chain: its name in results (``wan``, ``campus``) and its profile."""

    name: str
    profile: LinkProfile


def in_netns(name: str | None, work: Callable[[], T]) -> T:
    """``work()`` inside network namespace ``name`` (on a thread that entered it), or here for
    None; its result, or its exception raised here."""
    return work() if name is None else in_namespace(name, work)


def netlink_counters(interface: str) -> LinkCounters:
    """The kernel's counters of ``interface`` in this thread's namespace, over netlink (sysfs
    shows the namespace that mounted it, not the thread's)."""
    with IPRoute() as ipr:
        link = ipr.get_links(link_index(ipr, interface))[0]
    stats = link.get_attr("IFLA_STATS64") or link.get_attr("IFLA_STATS")
    return LinkCounters(int(stats["tx_packets"]), int(stats["tx_bytes"]),
                        int(stats["rx_packets"]), int(stats["rx_bytes"]))


class LabChain:
    """Labs in a row: the first from this namespace, each next one from the previous hop; the
    devices behind the last. ``LabLike``: its devices, trust files, counters (the first link's)
    and facts (the whole path's) are what a direct client sees."""

    def __init__(
        self,
        links: Sequence[ChainLink],
        *,
        devices: int = 1,
        platform: str = "cisco_ios",
        hostname: str = "R1",
        credentials: Credentials | None = None,
        backend: str = "auto",
        runtime: str = "netns",
        image: str | None = None,
        emulator_processes: int = 1,
        ssh: SshServerOptions | None = None,
        calibration_samples: int = 20,
    ) -> None:
        if len(links) < 2:
            raise UsageError("a chain needs at least two links (a hop between them)")
        names = [link.name for link in links]
        if len(set(names)) != len(names):
            raise UsageError(f"the chain's links need distinct names, not {names}")
        self.links = tuple(links)
        self.hops = [HopRuntime() for _ in links[:-1]]
        self.labs: list[Lab] = [
            Lab(link.profile, backend=backend, hostname=f"hop{i + 1}", runtime=hop,
                calibration_samples=calibration_samples)
            for i, (link, hop) in enumerate(zip(links, self.hops, strict=False))]
        self.labs.append(Lab(links[-1].profile, backend=backend, devices=devices,
                             platform=platform, hostname=hostname, credentials=credentials,
                             runtime=runtime, image=image, emulator_processes=emulator_processes,
                             ssh=ssh, calibration_samples=calibration_samples))
        self.calibration_samples = calibration_samples
        self.calibration: Calibration | None = None  # the whole path's, once up
        self.devices: list[LabDevice] = []  # behind the last link, once up
        self._up: list[Lab] = []

    # --- LabLike ----------------------------------------------------------------------------

    @property
    def profile(self) -> LinkProfile:
        """The whole path as one profile: the links' names and RTTs added up."""
        profiles = [link.profile for link in self.links]
        return replace(profiles[0], name="+".join(p.name for p in profiles),
                       rtt_ms=sum(p.rtt_ms for p in profiles),
                       jitter_ms=sum(p.jitter_ms for p in profiles), source="chain")

    @property
    def ca_file(self) -> Path:
        """The devices' CA."""
        return self.labs[-1].ca_file

    @property
    def known_hosts(self) -> Path:
        """The devices' host keys."""
        return self.labs[-1].known_hosts

    def unsupported(self, service: Service) -> str | None:
        """What the devices' runtime cannot serve."""
        return self.labs[-1].unsupported(service)

    def device_pids(self) -> list[int]:
        """The processes serving the devices."""
        return self.labs[-1].device_pids()

    def process_pids(self) -> list[int] | None:
        """Every link's processes (hop services such as the proxy included)."""
        return sorted({pid for lab in self.labs for pid in lab.process_pids() or []})

    def check(self) -> None:
        """Every link's watchdog (:meth:`Lab.check`): a dead delay line, echo server, device
        process or hop service (the proxy) raises ``LabError`` naming it."""
        for lab in self._up:
            lab.check()

    def counters(self) -> LinkCounters:
        """The first link's counters, seen from this namespace: everything that crosses it."""
        return self.labs[0].counters()

    def link_counters(self, name: str) -> LinkCounters:
        """Link ``name``'s counters, seen from its benchmark side (this namespace or a hop)."""
        index = self._index(name)
        lab = self.labs[index]
        assert lab.state is not None, "the chain is not up"
        host_if = lab.state.host_if
        return in_netns(self._host_netns(index), lambda: netlink_counters(host_if))

    def wire_tap(self, settle: float = 0.0, probe: bool = False) -> WireTap:
        """The first link's wire tap (round trips on the link next to this namespace)."""
        return self.labs[0].wire_tap(settle=settle, probe=probe)

    def facts(self) -> LabFacts:
        """The path's facts: backend of the first link, runtime of the devices, RTTs added up
        (configured) and measured end to end; :meth:`link_facts` has each link's own."""
        first, last = self.labs[0].facts(), self.labs[-1].facts()
        cal = self.calibration
        profile = self.profile
        return LabFacts(
            backend=first.backend, runtime=last.runtime, image=last.image,
            emulator_processes=last.emulator_processes, profile=profile.name,
            configured_rtt_ms=profile.rtt_ms,
            measured_rtt_ms=round(cal.rtt_ms, 3) if cal else None,
            measured_rtt_p95_ms=round(cal.echo_p95_ms, 3) if cal else None,
            link_rtt_ms=round(cal.link_p50_ms, 3) if cal and cal.link_p50_ms else None,
            connect_p50_ms=round(cal.connect_p50_ms, 3) if cal else None,
            jitter_ms=profile.jitter_ms,
            loss_pct=round(100 * (1 - _product(1 - f.loss_pct / 100 for f in self._facts())), 4),
            rate_mbit=min((f.rate_mbit for f in self._facts() if f.rate_mbit), default=0.0),
            devices=last.devices, tcp=_path_tcp(first.tcp, last.tcp))

    def link_facts(self) -> dict[str, Any]:
        """Each link's profile, configured RTT and measured RTTs (small echo, and ICMP where
        raw sockets work), flat: ``wan_configured_rtt_ms``, ``campus_measured_rtt_ms`` ..."""
        out: dict[str, Any] = {}
        for link, lab in zip(self.links, self.labs, strict=True):
            facts = lab.facts()
            out |= {f"{link.name}_profile": facts.profile,
                    f"{link.name}_configured_rtt_ms": facts.configured_rtt_ms,
                    f"{link.name}_measured_rtt_ms": facts.measured_rtt_ms,
                    f"{link.name}_link_rtt_ms": facts.link_rtt_ms}
        return out

    # --- building ---------------------------------------------------------------------------

    def up(self) -> Self:
        """Build every link in order, hops forwarding, routes down the chain; then measure the
        path. A failure removes what was built."""
        if self._up:
            return self
        try:
            for index, lab in enumerate(self.labs):
                in_netns(self._host_netns(index), lab.up)
                self._up.append(lab)
            with lab_failures("the chain's routes could not be set"):
                self._route()
            last = self.labs[-1]
            self.devices = last.devices
            assert last.echo_address is not None
            self.calibration = calibrate(last.echo_address, ECHO_PORT, self.calibration_samples,
                                         icmp=True)
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Remove every link, the devices' first (each from the namespace it was built from).
        Safe to call twice."""
        errors: list[BaseException] = []
        while self._up:
            index = len(self._up) - 1
            lab = self._up.pop()
            try:
                in_netns(self._host_netns(index), lab.down)
            except Exception as exc:  # the other links still go; the first failure is raised
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> Self:
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    # --- helpers ----------------------------------------------------------------------------

    def _index(self, name: str) -> int:
        for index, link in enumerate(self.links):
            if link.name == name:
                return index
        raise UsageError(f"the chain has no link {name!r}: it has "
                         f"{', '.join(link.name for link in self.links)}")

    def _host_netns(self, index: int) -> str | None:
        """The namespace link ``index`` is built from: None (this one) for the first."""
        return None if index == 0 else self.hops[index - 1].netns

    def _facts(self) -> list[LabFacts]:
        return [lab.facts() for lab in self.labs]

    def _route(self) -> None:
        """Forwarding on in every hop; from this namespace and each hop, a route to every subnet
        beyond the next hop (devices and link nets), through the next hop."""
        for index in range(len(self.labs) - 1):
            next_hop = self.labs[index].link_ips
            assert next_hop is not None
            beyond = [net for lab in self.labs[index + 1:] for net in _subnets(lab)]
            metrics = route_metrics(self.labs[index].profile, "client")
            in_netns(self._host_netns(index), partial(_add_routes, next_hop[1], beyond, metrics))
            in_netns(self.hops[index].netns, _forward)


def _subnets(lab: Lab) -> list[str]:
    """A lab's devices' subnet, then its link net (the /30 around its two link addresses)."""
    assert lab.subnet is not None
    assert lab.link_ips is not None
    link_net = ipaddress.ip_network(f"{lab.link_ips[0]}/30", strict=False)
    return [lab.subnet, str(link_net)]


def _add_routes(gateway: str, networks: list[str], metrics: dict[str, object]) -> None:
    """Routes to ``networks`` through ``gateway`` in this thread's namespace, carrying the
    first link's client-side TCP ``metrics`` (:mod:`mgmtbench.lab.tcp`) (one that exists
    already through the same gateway is left as it is; one through another gateway, a stale
    lab's or another chain's whose later link took the same index in its own hop, would send
    the direct modes to someone else's devices: a one-line UsageError)."""
    from pyroute2.netlink.exceptions import NetlinkError

    with IPRoute() as ipr:
        for network in networks:
            try:
                ipr.route("add", dst=network, gateway=gateway, metrics=metrics)
            except NetlinkError as exc:
                if exc.code != errno.EEXIST:
                    raise
                net = ipaddress.ip_network(network)
                via = {r.get_attr("RTA_GATEWAY") for r in ipr.get_routes(family=socket.AF_INET)
                       if r.get_attr("RTA_DST") == str(net.network_address)
                       and r["dst_len"] == net.prefixlen}
                if via - {gateway, None}:
                    raise UsageError(
                        f"a route to {network} via {', '.join(sorted(v for v in via if v))} is "
                        f"in the way of the chain's (via {gateway}): another lab's or left over; "
                        "remove it") from exc


def _forward() -> None:
    """IPv4 forwarding on in this thread's namespace (a hop)."""
    Path("/proc/sys/net/ipv4/ip_forward").write_text("1\n")


def _path_tcp(first: dict[str, Any] | None,
              last: dict[str, Any] | None) -> dict[str, Any] | None:
    """The path's TCP: the benchmark side as the first link has it, the devices' side as the
    last link has it (each link's own: ``lab.tcp`` of each lab); what either did not get as
    asked, and the host's differences."""
    if first is None or last is None:
        return last or first
    return {**last, "client": first["client"],
            "asked": {**last["asked"], "client_cc": first["asked"]["client_cc"]},
            "mismatches": [*first["mismatches"], *last["mismatches"]],
            "differs": first["differs"]}


def _product(values: Any) -> float:
    out = 1.0
    for value in values:
        out *= value
    return out

