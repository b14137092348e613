"""A lab: devices in their own network namespace, reached over an impaired link.

::

    with Lab(resolve("regional")) as lab:
        device = lab.devices[0]            # address 198.18.x.y, ssh port 22, https port 443
        before = lab.counters()
        ...                                # talk to device.address from this process
        print(lab.calibration.rtt_ms, (lab.counters() - before).packets)
        with lab.wire_tap() as tap:        # round trips on the wire, counted by another process
            ...
        print(tap.result().wire_rtts)

The benchmark side is the namespace of the process that made the lab (pytest's), so every client
library connects as it would to a real device. The link is ``host_if`` (here) <-> ``dev_if`` (in the
lab's namespace), made and impaired by a link backend. Behind it a device runtime serves the
devices: ``netns`` (one emulator process in the lab's namespace), ``docker`` (a container per
device, routed by the lab's namespace) or ``sshd`` (a real OpenSSH sshd per device in the lab's
namespace). Addresses: lab ``k`` uses 198.19.k.0/30 for the link and
198.18.0.0/16's k-th /22 for its devices.
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from pyroute2 import IPRoute

from mgmtbench import progress
from mgmtbench.emulator.options import Credentials, EmulatorOptions, SshServerOptions
from mgmtbench.errors import LabError, LabNeedsPrivileges, UsageError
from mgmtbench.lab import interrupts, processes, procfs, runtimes, tcp, watchdog
from mgmtbench.lab.backends import LinkBackend, LinkEnds, choose
from mgmtbench.lab.calibrate import Calibration, calibrate
from mgmtbench.lab.cleanup import clean_stale, remove_network
from mgmtbench.lab.facts import LabDevice as LabDevice  # re-exported: their home until now
from mgmtbench.lab.facts import LabFacts
from mgmtbench.lab.facts import LinkCounters as LinkCounters
from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.netns import NETNS_DIR, PREFIX, create, link_index, namespace_id, run_in
from mgmtbench.lab.profiles import LinkProfile
from mgmtbench.lab.runtimes import DeviceRuntime, DeviceSpec, RuntimeContext
from mgmtbench.lab.runtimes.netns import start_in_netns, stop_processes
from mgmtbench.lab.state import LabState, ProcessRecord, registry_lock, used_indexes
from mgmtbench.lab.tcp import TcpFacts
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets.base import Service

log = logging.getLogger("mgmtbench.lab")
MAX_LABS = 64
_SERIAL = itertools.count(1)
MAX_DEVICES = 1022
ECHO_PORT = 7
LAB_RANGE = ipaddress.IPv4Network("198.18.0.0/15")  # RFC 2544: every lab address is in it
MAIN_TABLE = 254
SSH_PORT, HTTPS_PORT, NETCONF_PORT, GNMI_PORT = 22, 443, 830, 9339
#: The HTTPS API over HTTP/3: UDP 443, the HTTPS port's number.
HTTP3_PORT = HTTPS_PORT


def read_counters(interface: str) -> LinkCounters:
    """The kernel's counters of ``interface`` (tx: towards the devices)."""
    stats = Path("/sys/class/net") / interface / "statistics"
    tx_p, tx_b, rx_p, rx_b = (int((stats / name).read_text()) for name in
                              ("tx_packets", "tx_bytes", "rx_packets", "rx_bytes"))
    return LinkCounters(tx_p, tx_b, rx_p, rx_b)


def has_net_admin() -> bool:
    """CAP_NET_ADMIN and CAP_SYS_ADMIN (namespaces) in the effective set: root normally has both."""
    caps = procfs.effective_capabilities()
    if caps is None:
        return os.geteuid() == 0
    return bool(caps & (1 << procfs.CAP_NET_ADMIN)) and bool(caps & (1 << procfs.CAP_SYS_ADMIN))


def _networks(index: int) -> tuple[ipaddress.IPv4Network, ipaddress.IPv4Network]:
    """Lab ``index``'s link net and device subnet."""
    link = ipaddress.IPv4Network(f"198.19.{index}.0/30")
    subnet = list(ipaddress.IPv4Network("198.18.0.0/16").subnets(new_prefix=22))[index]
    return link, subnet


def _addresses(index: int, devices: int) -> tuple[str, str, str, list[str]]:
    link, subnet = _networks(index)
    hosts = [str(subnet.network_address + 1 + i) for i in range(devices)]
    return str(link.network_address + 1), str(link.network_address + 2), str(subnet), hosts


class Lab:
    """Namespaces, a link with a profile, emulated devices and their measured RTT.

    ``runtime`` says how the devices run (``netns``: ``emulator_processes`` emulator processes in
    the lab's namespace sharing the fleet, one by default; ``docker``: a container per device from
    ``image``; ``sshd``: a real OpenSSH sshd per device, SSH exec only); every backend works with
    every runtime. ``ssh`` sets the devices' SSH servers
    (algorithm lists, host key type, login methods) whatever the runtime.

    Failures of the lab network itself (netlink, namespaces, the TUN device) raise
    :class:`~mgmtbench.errors.LabError`; impossible requests raise ``UsageError``.
    """

    def __init__(
        self,
        profile: LinkProfile,
        *,
        backend: str = "auto",
        devices: int = 1,
        platform: str = "cisco_ios",
        hostname: str = "R1",
        credentials: Credentials | None = None,
        calibration_samples: int = 20,
        state_dir: Path | None = None,
        runtime: str | DeviceRuntime = "netns",
        image: str | None = None,
        emulator_processes: int = 1,
        ssh: SshServerOptions | None = None,
    ) -> None:
        if not 1 <= devices <= MAX_DEVICES:
            raise UsageError(f"a lab holds 1..{MAX_DEVICES} devices, not {devices}")
        if not has_net_admin():
            raise LabNeedsPrivileges("the lab needs root or CAP_NET_ADMIN to create network namespaces; "
                             "without them, run the local profile against `mgmtbench serve` on "
                             "127.0.0.1")
        self.ssh = ssh or SshServerOptions()
        self.profile = profile.validate()
        tcp.check_available(self.profile)
        self.backend_class = choose(backend, profile)
        # A runtime by name, or one the caller made (the edge proxy's hops: lab/chain.py).
        self.runtime: DeviceRuntime = runtime if isinstance(runtime, DeviceRuntime) else (
            runtimes.choose(runtime, runtimes.RuntimeOptions(image=image,
                                                             processes=emulator_processes)))
        self.runtime.check_ssh(self.ssh)  # before anything is built
        self.device_count = devices
        self.platform = platform
        self.hostname = hostname
        self.credentials = credentials or Credentials()
        self.calibration_samples = calibration_samples
        self._state_dir_arg = state_dir
        self.state: LabState | None = None
        self.backend: LinkBackend | None = None
        self.devices: list[LabDevice] = []
        self.calibration: Calibration | None = None
        self.tcp: TcpFacts | None = None  # both ends' TCP as a live connection showed them
        self.echo_address: str | None = None  # the calibration echo server's (ECHO_PORT)
        # The link's two addresses (benchmark side, lab side) and the devices' subnet, once up.
        self.link_ips: tuple[str, str] | None = None
        self.subnet: str | None = None
        self._processes: list[subprocess.Popen[bytes]] = []
        self._signals = False  # SIGINT and SIGTERM taken over (interrupts.acquire)

    # --- public API -------------------------------------------------------------------------

    @property
    def backend_name(self) -> str:
        """The link backend's name."""
        return self.backend_class.name

    @property
    def folder(self) -> Path:
        """The lab's own folder (outputs, CA and known_hosts files)."""
        assert self.state is not None
        return self._state_dir_arg or self.state.folder

    @property
    def runtime_name(self) -> str:
        """The device runtime's name."""
        return self.runtime.name

    @property
    def ca_file(self) -> Path:
        """A PEM file that verifies every device's HTTPS certificate."""
        return self.runtime.ca_file

    @property
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file with every device's host key."""
        return self.runtime.known_hosts

    def unsupported(self, service: Service) -> str | None:
        """Why the lab's devices cannot serve ``service`` (the runtime's one sentence), None if
        they can."""
        return self.runtime.unsupported(service)

    def device_pids(self) -> list[int]:
        """Host-visible pids of the processes that serve the lab's devices (their CPU time and
        memory are what a fleet benchmark reports as the emulator's): the emulator process, or
        each device container's main process."""
        return self.runtime.device_pids()

    def process_pids(self) -> list[int] | None:
        """Every process the lab started (its state's record) and those serving its devices."""
        recorded = self.state.pids if self.state is not None else []
        return sorted({*recorded, *self.device_pids()})

    def counters(self) -> LinkCounters:
        """The host interface's kernel counters (tx: towards the devices); :meth:`check` first,
        so counters taken around a benchmark's timed part fail it if the lab died meanwhile."""
        assert self.state is not None
        self.check()
        return read_counters(self.state.host_if)

    def check(self) -> None:
        """Raise :class:`~mgmtbench.errors.LabError` naming the first process the lab depends
        on that has died (the delay line, the echo server, a device process or container, a
        wire tap while it captures) and how (exit status, signal, the last line of its log).

        The lab's watchdog: :meth:`counters` and :meth:`wire_tap` call it, and mgmtbench's pytest
        plugin calls it for every lab a test used, before and after the test, so a benchmark
        fails with this message instead of measuring a dead link. A lab that is down passes."""
        state = self.state
        if state is None:
            return
        # Every process the lab started, recorded in its state: wire taps while they capture too.
        dead = [d for r in list(state.processes) if (d := processes.death(state.lab_id, r))]
        if (failure := self.runtime.failure()) is not None:
            dead.append(failure)
        if dead:
            more = f" (and {len(dead) - 1} more)" if len(dead) > 1 else ""
            raise LabError(f"lab {state.lab_id} ({self.profile.name}): its {dead[0]}{more}; "
                           "what is measured on it now measures a dead link or device")

    def wire_tap(self, settle: float = 0.0, probe: bool = False) -> WireTap:
        """A capture of the link's benchmark-side interface (the one this lab made) that counts
        turns and data packets: ``with lab.wire_tap() as tap: ...``, then ``tap.result()``. See
        :mod:`mgmtbench.lab.wiretap`; ``settle``: seconds to wait for packets in flight before
        the totals are taken; ``probe``: also measure the link's RTT meanwhile (ICMP to the echo
        address, counted apart)."""
        if self.state is None:
            raise UsageError("the lab is not up: enter its with block (or call up()) before "
                             "tapping its link")
        self.check()
        return WireTap(self.state.host_if, settle=settle,
                       probe=self.echo_address if probe else None, lab_id=self.state.lab_id)

    def link_stats(self) -> dict[str, Any] | None:
        """The link backend's own tally (the ``tun`` delay line's: see
        :meth:`~mgmtbench.lab.backends.tun.TunBackend.stats`), None for a backend that keeps
        none."""
        return self.backend.stats() if self.backend is not None else None

    def facts(self) -> LabFacts:
        """What every result records about the lab it ran on."""
        cal = self.calibration
        runtime = self.runtime.facts()
        return LabFacts(
            backend=self.backend_name,
            runtime=runtime.runtime,
            image=runtime.image,
            emulator_processes=runtime.emulator_processes,
            profile=self.profile.name,
            configured_rtt_ms=self.profile.rtt_ms,
            measured_rtt_ms=round(cal.rtt_ms, 3) if cal else None,
            measured_rtt_p95_ms=round(cal.echo_p95_ms, 3) if cal else None,
            link_rtt_ms=round(cal.link_p50_ms, 3) if cal and cal.link_p50_ms else None,
            connect_p50_ms=round(cal.connect_p50_ms, 3) if cal else None,
            jitter_ms=self.profile.jitter_ms,
            loss_pct=self.profile.loss_pct,
            rate_mbit=self.profile.rate_mbit,
            devices=self.device_count,
            tcp=self.tcp.as_dict() if self.tcp else None,
        )

    def up(self) -> Lab:
        """Build the lab (a lab that is up stays as it is); a failure removes what was built.

        From the first step to the last, SIGINT and SIGTERM unwind it (``KeyboardInterrupt``)
        and :meth:`down` removes what was built; every process it starts is recorded in its
        state before anything waits on it (:mod:`.processes`)."""
        if self.state is not None:
            return self
        self._signals = interrupts.acquire()
        try:
            index = self._register()
            with lab_failures("the lab network could not be built"):
                self._build(index)
        except BaseException:
            self.down()
            raise
        watchdog.use(self)
        return self

    def down(self) -> None:
        """Stop everything the lab started and remove what it created. Safe to call twice; a
        signal that arrives meanwhile is raised once it is done."""
        with interrupts.held(), lab_failures("the lab could not be removed"):
            try:
                self.runtime.stop()
            finally:
                try:
                    stop_processes(self._processes)
                    self._processes.clear()
                    if self.backend is not None:
                        self.backend.down()
                        self.backend = None
                finally:
                    self._teardown()

    def _register(self) -> int:
        """Pick a free index and write the lab's state; return the index."""
        with interrupts.held(), lab_failures("the lab could not be registered"), registry_lock():
            # Labs started at the same time by other processes pick other indexes.
            clean_stale()
            index = _free_index()
            lab_id = f"{os.getpid()}-{index}-{next(_SERIAL)}"
            self.state = LabState(lab_id=lab_id, index=index, owner_pid=os.getpid(),
                                  owner_start=procfs.start_time(os.getpid()),
                                  netns=PREFIX + lab_id, host_if=f"mgb{index}h")
            processes.register(self.state)
            self.state.save()
        return index

    def _teardown(self) -> None:
        """After the runtime and the backend: what the lab started that they did not stop (a
        start interrupted before they held it), whatever still carries the lab's mark, then its
        namespace and state."""
        state = self.state
        try:
            if state is not None:
                processes.stop(state.processes, state.lab_id)
                processes.stop_marked(lambda lab_id: lab_id == state.lab_id)
                # The host interface by name and index, not left to the kernel's removal of its
                # peer with the namespace, which lags seconds on a busy machine (a lab stopped
                # by SIGTERM while its emulator started left mgb6h for over 5 s in one CI run).
                remove_network(state)
                processes.forget(state.lab_id)
                self.state = None
        finally:
            interrupts.release(self._signals)
            self._signals = False

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    # --- building ---------------------------------------------------------------------------

    def _build(self, index: int) -> None:
        # Steps and an estimate on the terminal when someone watches (mgmtbench.progress): the
        # last lab of this backend and runtime's times per step and per device to go by.
        kinds = ["namespace", "link", "addresses", "echo", *["device"] * self.device_count,
                 "calibration", "tcp"]
        with progress.task(f"lab {self.profile.name}", kinds,
                           remember_as=f"lab up {self.backend_name}/{self.runtime_name}") as steps:
            self._build_steps(index, steps)

    def _build_steps(self, index: int, steps: progress.Steps) -> None:
        assert self.state is not None
        state = self.state
        steps.begin("namespace", "namespace")
        with interrupts.held():  # all of it, or none
            create(state.netns)
            _wait_mounted(NETNS_DIR / state.netns)
        steps.step("namespace")
        steps.begin("link", f"link ({self.backend_name})")
        ends = LinkEnds(state.lab_id, state.netns, state.host_if, f"mgb{index}d")
        self.backend = self.backend_class(ends, self.profile)
        self.backend.up()
        with IPRoute() as ipr:
            state.host_ifindex = link_index(ipr, state.host_if)
        state.host_netns = namespace_id()
        for pid in self.backend.pids():  # a backend that did not start it through processes.spawn
            if pid not in state.pids:
                with contextlib.suppress(OSError, ValueError):
                    state.processes.append(ProcessRecord.of(f"{self.backend_name} link", pid))
        state.save()
        steps.step("link")
        steps.begin("addresses", "addresses and routes")
        host_ip, dev_ip, subnet, addresses = _addresses(index, self.device_count)
        self.link_ips, self.subnet = (host_ip, dev_ip), subnet
        self._configure(ends, host_ip, dev_ip, subnet, addresses)
        steps.step("addresses")
        names = EmulatorOptions(hostname=self.hostname, devices=self.device_count).hostnames()
        context = RuntimeContext(
            state=state, folder=self.folder, lab_ip=dev_ip,
            devices=tuple(DeviceSpec(n, a) for n, a in zip(names, addresses, strict=True)),
            hostname=self.hostname, platform=self.platform, credentials=self.credentials,
            ssh_port=SSH_PORT, https_port=HTTPS_PORT, netconf_port=NETCONF_PORT, gnmi_port=GNMI_PORT,
            http3_port=HTTP3_PORT, ssh=self.ssh,
            tcp=self._tcp_spec())
        self.echo_address = self.runtime.echo_address(context)
        steps.begin("echo", "echo server")
        self._processes.append(start_in_netns(
            state, self.folder, "echo",
            [sys.executable, "-m", "mgmtbench.lab.echo", self.echo_address, str(ECHO_PORT)],
            "ready"))
        steps.step("echo")
        steps.begin("device", f"{self.device_count} device(s) on {self.runtime_name}")
        self.runtime.start(context)
        steps.step("device", count=self.device_count)
        # HTTP/3 on the HTTPS port's number (UDP), as the emulator serves it by default; a
        # runtime that serves no HTTP/3 says so (DeviceRuntime.unsupported).
        self.devices = [LabDevice(d.hostname, d.address, SSH_PORT, HTTPS_PORT,
                                  netconf_port=NETCONF_PORT, gnmi_port=GNMI_PORT,
                                  http3_port=HTTP3_PORT)
                        for d in context.devices]
        steps.begin("calibration", f"calibration ({self.calibration_samples} samples)")
        self.calibration = calibrate(self.echo_address, ECHO_PORT, self.calibration_samples,
                                     icmp=True)
        steps.step("calibration")
        steps.begin("tcp", "TCP on both ends")
        self.tcp = tcp.observe(self.profile, *self.runtime.tcp_end(context, ECHO_PORT))
        tcp.require(self.tcp, state.lab_id)
        steps.step("tcp")
        with progress.hidden():  # the progress lines off while the warnings are written
            for difference in self.tcp.differs:
                log.warning("lab %s: %s (the host's, not the lab's to set: recorded with every "
                            "result)", state.lab_id, difference)

    def _tcp_spec(self) -> dict[str, Any]:
        """The device side's TCP settings, as nsconfig and the runtimes take them."""
        return {"cc": self.profile.device_cc, "mtu": self.profile.mtu,
                "metrics": tcp.route_metrics(self.profile, "device")}

    def _configure(self, ends: LinkEnds, host_ip: str, dev_ip: str, subnet: str,
                   addresses: list[str]) -> None:
        run_in(ends.netns, "mgmtbench.lab.nsconfig", {
            "dev_if": ends.dev_if, "dev_ip": dev_ip, "gateway": host_ip,
            "lo_addresses": addresses if self.runtime.devices_in_lab_namespace else [],
            "tcp": self._tcp_spec()})
        metrics = tcp.route_metrics(self.profile, "client")
        with IPRoute() as ipr:
            index = link_index(ipr, ends.host_if)
            ipr.addr("add", index=index, address=host_ip, prefixlen=30)
            ipr.link("set", index=index, state="up")
            tcp.own_link(ipr, index, host_ip, 30, metrics, self.profile.mtu)
            ipr.route("add", dst=subnet, gateway=dev_ip, metrics=metrics)
        with contextlib.suppress(OSError):  # IPv4 only: keep IPv6 chatter out of the counts
            procfs.disable_ipv6(ends.host_if)


def _wait_mounted(path: Path) -> None:
    """Wait until a new namespace's mount is there (it is when :func:`create` returns; kept for
    a slow file system view)."""
    for _ in range(200):
        if os.path.ismount(path):
            return
        time.sleep(0.01)
    raise LabError(f"network namespace {path.name} was not created")


def _free_index() -> int:
    """The lowest lab index that no running lab uses and that nothing in this namespace claims:
    no interface named after it (``mgb{i}h``, ``mgb{i}d``) and no route or address in its link
    net or device subnet. Such things are someone else's (another user's lab, a chain's routes,
    a tool's interface), to be left as they are, so their index is skipped."""
    with IPRoute() as ipr:
        names = {link.get("ifname") for link in ipr.get_links()}
        claimed = [ipaddress.IPv4Network(f"{r.get_attr('RTA_DST')}/{r['dst_len']}", strict=False)
                   for r in ipr.get_routes(family=socket.AF_INET, table=MAIN_TABLE)
                   if r.get_attr("RTA_DST")]
        claimed += [ipaddress.IPv4Network(f"{a.get_attr('IFA_ADDRESS')}/{a['prefixlen']}",
                                          strict=False) for a in ipr.get_addr(family=socket.AF_INET)]
    lab_range = [n for n in claimed if n.overlaps(LAB_RANGE)]
    used = used_indexes()
    taken: dict[int, list[str]] = {}
    for i in range(MAX_LABS):
        if i in used:
            continue
        link, subnet = _networks(i)
        taken[i] = sorted(names & {f"mgb{i}h", f"mgb{i}d"}) + [
            str(n) for n in lab_range if n.overlaps(link) or n.overlaps(subnet)]
    index = next((i for i, what in taken.items() if not what), None)
    if index is None:
        examples = ", ".join(w for what in list(taken.values())[:3] for w in what)
        raise UsageError(f"no lab index is free: {len(used)} lab(s) run here"
                         + (f" and interfaces or routes like a lab's ({examples} ...) hold the "
                            f"other {len(taken)}: remove them" if taken else ": stop one first"))
    return index
