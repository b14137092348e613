"""Where a benchmark runs: a *site* gives it targets, checks their answers, taps the link, paces
its rounds and says what its results record. Benchmarks ask a site and never which kind it is.

- :class:`LabSite`: a lab's emulated devices behind an impaired link. Answers are checked against
  the oracle; the lab's wire tap counts round trips; results record the lab's facts.
- :class:`InventorySite`: hosts of an inventory (``--inventory``): real devices, a containerlab
  lab, or any SSH/HTTPS endpoint. No emulator and no impairment: the network is the lab. Before
  its first round each host is measured once (:func:`~mgmtbench.targets.probe.probe`: RTT by TCP
  connect and by an SSH echo, the version string); answers are compared round to round
  (:mod:`mgmtbench.targets.stable`); only show commands run unless ``--allow-config``; rounds are
  paced (``--inventory-rate``) and timed out per host. When the hosts sit behind a running
  mgmtbench lab's link (the kernel routes their address through its interface), that link is
  tapped as the lab's own benchmarks tap it, so wire round trips are recorded too. Results record
  ``target: inventory``, the host, its platform, its measured RTT and its version string.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol

import pytest

from mgmtbench.lab.facts import LabLike, LinkCounters
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets import Login, Service, Target, lab_targets
from mgmtbench.targets.inventory import Inventory, InventoryHost
from mgmtbench.targets.probe import HostReport, probe
from mgmtbench.targets.safety import Pacer, deadline, refusal
from mgmtbench.targets.stable import compare_rounds
from mgmtbench.testing.recording import lab_facts

#: The services whose certificate a client verifies against the host's CA file, as a message
#: names them.
_VERIFIED = {Service.HTTPS: "HTTPS", Service.HTTP3: "HTTP/3", Service.GNMI: "gNMI"}

#: Checks a benchmark's outputs, one per round: None when right, else why not (a message).
OutputCheck = Callable[[Sequence[str]], "str | None"]
BeforeRound = Callable[[], None]


class Site(Protocol):
    """What a benchmark asks of where it runs."""

    @property
    def name(self) -> str:
        """What results record as the profile (``regional``; ``inventory:r1``)."""

    def unsupported(self, service: Service) -> str | None:
        """Why the devices cannot serve ``service`` (a skip's reason), None if they can."""

    def refused(self, commands: Sequence[str]) -> str | None:
        """Why the devices must not run ``commands`` (a skip's reason), None if they may."""

    def targets(self, count: int, platform: str) -> list[Target]:
        """``count`` targets (a lab's devices are of ``platform``; an inventory's of their own)."""

    def output_check(self, target: Target, commands: Sequence[str]) -> OutputCheck:
        """How the outputs of ``commands`` from ``target`` are checked, round by round."""

    def fleet_expected(self, command: str, count: int, platform: str) -> list[str] | None:
        """The sha256 each of the first ``count`` targets must answer to ``command``; None when
        unknown beforehand (then the first round's answers are the reference)."""

    def wire_tap(self, probe: bool = False) -> WireTap:
        """A capture of the devices' link (a tap whose result is None where there is none)."""

    def counters(self) -> LinkCounters | None:
        """The link's counters so far (None: no link to count)."""

    def rounds(self, sessions: int) -> AbstractContextManager[BeforeRound | None]:
        """Around a benchmark's rounds: what to call before each (``pedantic(setup=...)``; None:
        nothing), given the new sessions a round opens."""

    def record_info(self) -> dict[str, Any]:
        """What a result records about the site (before the benchmark's own figures)."""

    def rtt_ms(self) -> float | None:
        """The measured RTT, for time in round trips."""

    def device_pids(self) -> list[int]:
        """Host-visible pids serving the devices (none for real devices)."""

    def process_pids(self) -> list[int] | None:
        """Every process the site runs on this host besides the client's (none for real
        devices); None if its devices run inside this process."""

    def device_count(self) -> int:
        """How many devices the site has."""

    def under_load(self, link: dict[str, float]) -> dict[str, float]:
        """The link's RTT measured by a wire tap during the rounds, as recorded."""


@dataclass
class LabSite:
    """A lab's emulated devices (see the module docstring)."""

    lab: LabLike
    login: Login

    @property
    def name(self) -> str:
        """The lab's profile."""
        return self.lab.profile.name

    def unsupported(self, service: Service) -> str | None:
        """The lab runtime's reason, if any."""
        return self.lab.unsupported(service)

    def refused(self, commands: Sequence[str]) -> str | None:
        """Nothing is refused on emulated devices."""
        return None

    def targets(self, count: int, platform: str) -> list[Target]:
        """The lab's first ``count`` devices."""
        return lab_targets(self.lab, self.login, platform=platform, count=count)

    def output_check(self, target: Target, commands: Sequence[str]) -> OutputCheck:
        """Every round must print exactly what the oracle says the device prints."""
        from mgmtbench.emulator.oracle import expected_output, same_output

        device = next(d for d in self.lab.devices if d.address == target.host)
        want = expected_output(target.platform, device.hostname, device.reported_ip, commands)

        def check(outputs: Sequence[str]) -> str | None:
            # Compared in their stable form: the device's clock, uptimes and counters run.
            wrong = [i for i, out in enumerate(outputs)
                     if not same_output(target.platform, out, want)]
            if not wrong:
                return None
            return f"rounds {wrong} returned wrong output (first: {outputs[wrong[0]][:200]!r})"

        return check

    def fleet_expected(self, command: str, count: int, platform: str) -> list[str] | None:
        """The oracle's digests for the lab's devices."""
        from mgmtbench.testing.expectations import expected_digests

        return expected_digests(self.lab, command, count=count, platform=platform)

    def wire_tap(self, probe: bool = False) -> WireTap:
        """The lab's own tap."""
        return self.lab.wire_tap(probe=probe)

    def counters(self) -> LinkCounters | None:
        """The lab link's counters."""
        return self.lab.counters()

    def rounds(self, sessions: int) -> AbstractContextManager[BeforeRound | None]:
        """Nothing between rounds: emulated devices need no pacing."""
        return nullcontext(None)

    def record_info(self) -> dict[str, Any]:
        """``target: lab`` and the lab's facts."""
        return {"target": "lab", **lab_facts(self.lab)}

    def rtt_ms(self) -> float | None:
        """The lab's measured RTT."""
        return self.lab.facts().measured_rtt_ms

    def device_pids(self) -> list[int]:
        """The processes serving the lab's devices."""
        return self.lab.device_pids()

    def process_pids(self) -> list[int] | None:
        """The lab's processes (None: its devices are threads of this process)."""
        return self.lab.process_pids()

    def device_count(self) -> int:
        """The lab's devices."""
        return len(self.lab.devices)

    def under_load(self, link: dict[str, float]) -> dict[str, float]:
        """The link's RTT under load and the instrument's error then (``rtt_error_under_load_ms``:
        that RTT minus the profile's)."""
        configured = self.lab.facts().configured_rtt_ms
        if "link_rtt_under_load_ms" in link and configured is not None:
            link = {**link, "rtt_error_under_load_ms": round(
                link["link_rtt_under_load_ms"] - configured, 3)}
        return link


@dataclass(frozen=True)
class InventoryOptions:
    """The ``--inventory-*`` safety options."""

    allow_config: bool = False
    rate: float = 10.0  # new sessions per second over all devices
    sessions_per_device: int = 1


@dataclass
class InventorySite:
    """Hosts of an inventory (see the module docstring): one for the transport benchmark, all of
    them (after ``--limit``) for a fleet."""

    inventory: Inventory
    hosts: tuple[InventoryHost, ...]
    options: InventoryOptions
    pacer: Pacer  # shared by every site of the session: the rate is a total
    _reports: dict[str, HostReport] = field(default_factory=dict)
    _link: str | bool | None = False  # False: not looked up yet

    @property
    def name(self) -> str:
        """``inventory:<host>`` for one host, ``inventory`` for several."""
        return f"inventory:{self.hosts[0].name}" if len(self.hosts) == 1 else "inventory"

    def report(self, host: InventoryHost) -> HostReport:
        """The host measured once (untimed); a host that fails its probe fails the test in one
        line."""
        if host.name not in self._reports:
            found = asyncio.run(probe(host))
            if not found.ok:
                pytest.fail(f"inventory host {host.name} ({host.target.host}): {found.error}",
                            pytrace=False)
            self._reports[host.name] = found
        return self._reports[host.name]

    def unsupported(self, service: Service) -> str | None:
        """HTTPS, HTTP/3 and gNMI need the host's CA file (its certificate is verified)."""
        if service in _VERIFIED:
            missing = [h.name for h in self.hosts if h.target.ca_file is None]
            if missing:
                what = _VERIFIED[service]
                return (f"inventory host {missing[0]} has no ca_file to verify its "
                        f"{what} certificate: set ca_file in the inventory or MGMTBENCH_CA_FILE")
        return None

    def refused(self, commands: Sequence[str]) -> str | None:
        """Show commands only, unless ``--allow-config``."""
        return refusal(commands, allow_config=self.options.allow_config)

    def targets(self, count: int, platform: str) -> list[Target]:
        """``count`` targets, the hosts in turn, at most ``--sessions-per-device`` on each; each
        host keeps its own platform."""
        most = len(self.hosts) * self.options.sessions_per_device
        if count > most:
            pytest.skip(f"{count} sessions need more devices: the inventory has "
                        f"{len(self.hosts)} at {self.options.sessions_per_device} session(s) each "
                        "(--sessions-per-device)")
        for host in self.hosts:
            self.report(host)
        return [self.hosts[i % len(self.hosts)].target for i in range(count)]

    def output_check(self, target: Target, commands: Sequence[str]) -> OutputCheck:
        """Every round against the first, modulo the platform's volatile lines."""
        platform = self._host(target).platform

        def check(outputs: Sequence[str]) -> str | None:
            mismatch = compare_rounds(outputs, platform)
            return None if mismatch is None else f"{target.host}: {mismatch}"

        return check

    def fleet_expected(self, command: str, count: int, platform: str) -> list[str] | None:
        """Unknown: the first round's answers are the reference."""
        return None

    def lab_link(self) -> str | None:
        """The interface of a running mgmtbench lab that the hosts are reached through, if any."""
        if self._link is False:
            links = {lab_link_for(h.target.host) for h in self.hosts}
            self._link = links.pop() if len(links) == 1 else None
        return self._link if isinstance(self._link, str) else None

    def wire_tap(self, probe: bool = False) -> WireTap:
        """The lab link's tap when the hosts are behind one (no probe: the inventory's addresses
        only), else none."""
        return WireTap(self.lab_link(), reason="inventory hosts are not behind a mgmtbench lab")

    def counters(self) -> LinkCounters | None:
        """The lab link's counters when the hosts are behind one."""
        from mgmtbench.lab.lab import read_counters

        link = self.lab_link()
        return read_counters(link) if link else None

    @contextmanager
    def rounds(self, sessions: int) -> Iterator[BeforeRound | None]:
        """Before each round: the pacer, then the per-host time-out for that round."""
        what = f"inventory host {self.hosts[0].name}" if len(self.hosts) == 1 else \
            f"one of {len(self.hosts)} inventory hosts"
        with deadline(max(h.timeout for h in self.hosts), what) as arm:
            def before_round() -> None:
                self.pacer.wait(sessions)
                arm()

            yield before_round

    def record_info(self) -> dict[str, Any]:
        """``target: inventory``, the host(s), platform(s), measured RTTs and version strings."""
        reports = [self.report(h) for h in self.hosts]
        info: dict[str, Any] = {
            "target": "inventory", "backend": "inventory", "runtime": "device",
            "configured_rtt_ms": None, "measured_rtt_ms": self.rtt_ms(), "rtt_error_ms": None,
            "tcp_rtt_ms": _median([r.tcp_rtt_ms for r in reports]),
            "inventory_format": self.inventory.format,
        }
        if len(self.hosts) == 1:
            info |= {"host": self.hosts[0].name, "platform": self.hosts[0].platform.name,
                     "device_version": reports[0].version}
        else:
            info |= {"hosts": [h.name for h in self.hosts],
                     "device_versions": sorted({r.version or "?" for r in reports})}
        if self.lab_link():
            info["lab_link"] = self.lab_link()
        return info

    def rtt_ms(self) -> float | None:
        """The median SSH echo RTT of the hosts."""
        return _median([self.report(h).echo_rtt_ms for h in self.hosts])

    def device_pids(self) -> list[int]:
        """None: the devices are not ours."""
        return []

    def process_pids(self) -> list[int] | None:
        """The lab's processes when the hosts sit behind a running lab's link are not this
        process's descendants: nothing to set apart."""
        return []

    def device_count(self) -> int:
        """The hosts."""
        return len(self.hosts)

    def under_load(self, link: dict[str, float]) -> dict[str, float]:
        """As measured (no configured RTT to compare with)."""
        return link

    def _host(self, target: Target) -> InventoryHost:
        return next(h for h in self.hosts if h.target == target)


def _median(values: Sequence[float | None]) -> float | None:
    import statistics

    found = [v for v in values if v is not None]
    return round(statistics.median(found), 3) if found else None


def lab_link_for(address: str) -> str | None:
    """The benchmark-side interface of a running mgmtbench lab that the kernel routes ``address``
    through, None when it routes it elsewhere (or there is no lab)."""
    from pyroute2 import IPRoute, NetlinkError

    from mgmtbench.lab.state import known_labs

    interfaces = {state.host_if for state in known_labs()}
    if not interfaces:
        return None
    try:
        with IPRoute() as ip:
            route = ip.route("get", dst=address)
            index = route[0].get_attr("RTA_OIF") if route else None
            links = ip.get_links(index) if index else []
            name = links[0].get_attr("IFLA_IFNAME") if links else None
    except (OSError, NetlinkError):  # no route: then there is no lab link to tap
        return None
    return str(name) if name in interfaces else None


def first_round_digests(report: dict[str, Any]) -> list[str]:
    """Each session's answer in a fleet worker's first report, as the reference for the next
    rounds (a device answers the same command the same way twice in one session, else the
    comparison would be meaningless): sessions whose only error is a "wrong output" against an
    unknown reference pass. The digests are of the outputs with the platform's volatile lines
    masked (:mod:`mgmtbench.targets.stable`, applied in the worker by
    :func:`mgmtbench.clients.fleet.base.set_platform`), so commands with counters compare too."""
    digests = []
    for index, session in enumerate(report["sessions"]):
        if session["error"] not in (None, "wrong output"):
            raise AssertionError(f"session {index} failed: {session['error']}")
        found = session["digests"]
        if len(found) != 2 or found[0] != found[1]:
            raise AssertionError(
                f"session {index}: the device answered the same command differently twice in "
                "one session, beyond its platform's volatile lines (clock, uptime, counters: "
                "the fleet worker digests outputs with those masked); choose another "
                "--fleet-command")
        digests.append(found[0])
    return digests
