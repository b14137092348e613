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
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from pyroute2 import IPRoute, netns

from mgmtbench.emulator.options import Credentials, EmulatorOptions, SshServerOptions
from mgmtbench.errors import LabError, LabNeedsPrivileges, UsageError
from mgmtbench.lab import procfs, runtimes
from mgmtbench.lab.backends import LinkBackend, LinkEnds, choose
from mgmtbench.lab.calibrate import Calibration, calibrate
from mgmtbench.lab.cleanup import clean_stale
from mgmtbench.lab.facts import LabDevice as LabDevice  # re-exported: their home until now
from mgmtbench.lab.facts import LabFacts
from mgmtbench.lab.facts import LinkCounters as LinkCounters
from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.netns import NETNS_DIR, PREFIX, link_index, run_in
from mgmtbench.lab.profiles import LinkProfile
from mgmtbench.lab.runtimes import DeviceRuntime, DeviceSpec, RuntimeContext
from mgmtbench.lab.runtimes.netns import start_in_netns, stop_processes
from mgmtbench.lab.state import LabState, registry_lock, used_indexes
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets import Service

log = logging.getLogger("mgmtbench.lab")
MAX_LABS = 64
_SERIAL = itertools.count(1)
MAX_DEVICES = 1022
ECHO_PORT = 7
SSH_PORT, HTTPS_PORT = 22, 443


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


def _addresses(index: int, devices: int) -> tuple[str, str, str, list[str]]:
    link = ipaddress.IPv4Network(f"198.19.{index}.0/30")
    subnet = list(ipaddress.IPv4Network("198.18.0.0/16").subnets(new_prefix=22))[index]
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
        runtime: str = "netns",
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
        self.backend_class = choose(backend, profile)
        self.runtime: DeviceRuntime = runtimes.choose(
            runtime, runtimes.RuntimeOptions(image=image, processes=emulator_processes))
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
        self.echo_address: str | None = None  # the calibration echo server's (ECHO_PORT)
        self._processes: list[subprocess.Popen[bytes]] = []
        self._old_sigterm: object = None

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

    def counters(self) -> LinkCounters:
        """The host interface's kernel counters (tx: towards the devices)."""
        assert self.state is not None
        return read_counters(self.state.host_if)

    def wire_tap(self, settle: float = 0.0, probe: bool = False) -> WireTap:
        """A capture of the link's benchmark-side interface (the one this lab made) that counts
        turns and data packets: ``with lab.wire_tap() as tap: ...``, then ``tap.result()``. See
        :mod:`mgmtbench.lab.wiretap`; ``settle``: seconds to wait for packets in flight before
        the totals are taken; ``probe``: also measure the link's RTT meanwhile (ICMP to the echo
        address, counted apart)."""
        if self.state is None:
            raise UsageError("the lab is not up: enter its with block (or call up()) before "
                             "tapping its link")
        return WireTap(self.state.host_if, settle=settle,
                       probe=self.echo_address if probe else None)

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
        )

    def up(self) -> Lab:
        """Build the lab (a lab that is up stays as it is); a failure removes what was built."""
        if self.state is not None:
            return self
        with lab_failures("the lab could not be registered"), registry_lock():
            # Labs started at the same time by other processes pick other indexes.
            clean_stale()
            index = next((i for i in range(MAX_LABS) if i not in used_indexes()), None)
            if index is None:
                raise UsageError(f"{MAX_LABS} labs are already running: stop one first")
            lab_id = f"{os.getpid()}-{index}-{next(_SERIAL)}"
            self.state = LabState(lab_id=lab_id, index=index, owner_pid=os.getpid(),
                                  netns=PREFIX + lab_id, host_if=f"mgb{index}h")
            self.state.save()
        self._catch_sigterm()
        try:
            with lab_failures("the lab network could not be built"):
                self._build(index)
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Stop everything the lab started and remove what it created. Safe to call twice."""
        with lab_failures("the lab could not be removed"):
            try:
                self.runtime.stop()
            finally:
                stop_processes(self._processes)
                self._processes.clear()
                self._teardown_network()

    def _teardown_network(self) -> None:
        if self.backend is not None:
            self.backend.down()
            self.backend = None
        if self.state is not None:
            if self.state.netns in netns.listnetns():
                netns.remove(self.state.netns)
            shutil.rmtree(self.state.folder, ignore_errors=True)
            self.state = None
        self._restore_sigterm()

    def __enter__(self) -> Lab:
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    # --- building ---------------------------------------------------------------------------

    def _build(self, index: int) -> None:
        assert self.state is not None
        state = self.state
        netns.create(state.netns)
        _wait_mounted(NETNS_DIR / state.netns)
        ends = LinkEnds(state.lab_id, state.netns, state.host_if, f"mgb{index}d")
        self.backend = self.backend_class(ends, self.profile)
        self.backend.up()
        state.pids = self.backend.pids()
        state.save()
        host_ip, dev_ip, subnet, addresses = _addresses(index, self.device_count)
        self._configure(ends, host_ip, dev_ip, subnet, addresses)
        names = EmulatorOptions(hostname=self.hostname, devices=self.device_count).hostnames()
        context = RuntimeContext(
            state=state, folder=self.folder, lab_ip=dev_ip,
            devices=tuple(DeviceSpec(n, a) for n, a in zip(names, addresses, strict=True)),
            hostname=self.hostname, platform=self.platform, credentials=self.credentials,
            ssh_port=SSH_PORT, https_port=HTTPS_PORT, ssh=self.ssh)
        self.echo_address = self.runtime.echo_address(context)
        self._processes.append(start_in_netns(
            state, self.folder, "echo",
            [sys.executable, "-m", "mgmtbench.lab.echo", self.echo_address, str(ECHO_PORT)],
            "ready"))
        self.runtime.start(context)
        self.devices = [LabDevice(d.hostname, d.address, SSH_PORT, HTTPS_PORT)
                        for d in context.devices]
        self.calibration = calibrate(self.echo_address, ECHO_PORT, self.calibration_samples,
                                     icmp=True)

    def _configure(self, ends: LinkEnds, host_ip: str, dev_ip: str, subnet: str,
                   addresses: list[str]) -> None:
        run_in(ends.netns, "mgmtbench.lab.nsconfig", {
            "dev_if": ends.dev_if, "dev_ip": dev_ip, "gateway": host_ip,
            "lo_addresses": addresses if self.runtime.devices_in_lab_namespace else []})
        with IPRoute() as ipr:
            index = link_index(ipr, ends.host_if)
            ipr.addr("add", index=index, address=host_ip, prefixlen=30)
            ipr.link("set", index=index, state="up")
            ipr.route("add", dst=subnet, gateway=dev_ip)
        with contextlib.suppress(OSError):  # IPv4 only: keep IPv6 chatter out of the counts
            procfs.disable_ipv6(ends.host_if)

    # --- signals ----------------------------------------------------------------------------

    def _catch_sigterm(self) -> None:
        """SIGTERM unwinds like Ctrl-C (KeyboardInterrupt, which pytest also obeys: it stops the
        session and runs fixture teardown), so `down` runs. Main thread only."""
        if threading.current_thread() is not threading.main_thread():
            return
        current = signal.getsignal(signal.SIGTERM)
        if current in (signal.SIG_DFL, None):
            self._old_sigterm = current
            signal.signal(signal.SIGTERM, _raise_exit)

    def _restore_sigterm(self) -> None:
        if self._old_sigterm is not None and threading.current_thread() is threading.main_thread():
            with contextlib.suppress(ValueError, TypeError):
                signal.signal(signal.SIGTERM, self._old_sigterm)  # type: ignore[arg-type]
            self._old_sigterm = None


def _wait_mounted(path: Path) -> None:
    """pyroute2 mounts a new namespace from a helper process: wait until it is there."""
    for _ in range(200):
        if os.path.ismount(path):
            return
        time.sleep(0.01)
    raise LabError(f"network namespace {path.name} was not created")


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
