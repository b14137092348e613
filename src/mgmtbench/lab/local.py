"""The local profile without privileges: the emulator on 127.0.0.1 in this namespace, no link.

Same public face as :class:`mgmtbench.lab.Lab` (:class:`~mgmtbench.lab.facts.LabLike`), so
benchmarks run unchanged; the backend is recorded as ``loopback``.
"""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from types import TracebackType

from mgmtbench import progress
from mgmtbench.emulator import Credentials, EmulatorOptions, EmulatorThread
from mgmtbench.emulator.options import SshServerOptions
from mgmtbench.lab.calibrate import Calibration, calibrate
from mgmtbench.lab.facts import LOOPBACK, LabDevice, LabFacts, LinkCounters
from mgmtbench.lab.lab import read_counters
from mgmtbench.lab.profiles import LinkProfile
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets.base import Service


class LocalLab:
    """Devices served on loopback; counters are loopback's, shared with the rest of the machine."""

    backend_name = LOOPBACK

    def __init__(self, profile: LinkProfile, *, devices: int = 1, platform: str = "cisco_ios",
                 hostname: str = "R1", credentials: Credentials | None = None,
                 calibration_samples: int = 20, ssh: SshServerOptions | None = None) -> None:
        self.profile = profile
        self._options = EmulatorOptions(
            hostname=hostname, platform=platform, devices=devices,
            credentials=credentials or Credentials()).with_ssh_server(ssh or SshServerOptions())
        self._samples = calibration_samples
        self._emulator: EmulatorThread | None = None
        self._echo: socket.socket | None = None
        self.devices: list[LabDevice] = []
        self.calibration: Calibration | None = None

    @property
    def ca_file(self) -> Path:
        """A PEM file that verifies every device's HTTPS certificate."""
        assert self._emulator is not None
        assert self._emulator.emulator.tls is not None
        return self._emulator.emulator.tls.ca

    @property
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file with every device's host key."""
        assert self._emulator is not None
        return self._emulator.emulator.known_hosts

    def up(self) -> LocalLab:
        """Start the emulator and calibrate (a lab that is up stays as it is)."""
        if self._emulator is not None:
            return self
        count = self._options.devices
        # Steps and an estimate on the terminal when someone watches (mgmtbench.progress).
        with progress.task(f"lab {self.profile.name}", ["device"] * count + ["calibration"],
                           remember_as="lab up loopback") as steps:
            steps.begin("device", f"{count} device(s) on 127.0.0.1")
            self._emulator = EmulatorThread(self._options).start()
            steps.step("device", count=count)
            self.devices = [LabDevice(e.hostname, e.host, e.ssh_port or 0, e.https_port or 0,
                                      e.device.facts.mgmt_ip, e.netconf_port or 0,
                                      e.gnmi_port or 0, e.http3_port or 0)
                            for e in self._emulator.endpoints]
            steps.begin("calibration", f"calibration ({self._samples} samples)")
            self._echo = _echo_server()
            self.calibration = calibrate("127.0.0.1", self._echo.getsockname()[1], self._samples)
            steps.step("calibration")
        return self

    def down(self) -> None:
        """Stop the emulator and the echo server. Safe to call twice."""
        if self._echo is not None:
            self._echo.close()
            self._echo = None
        if self._emulator is not None:
            self._emulator.stop()
            self._emulator = None

    def unsupported(self, service: Service) -> str | None:
        """None: the emulator serves everything."""
        return None

    def device_pids(self) -> list[int]:
        """None of its own: the emulator runs in a thread of this process."""
        return []

    def process_pids(self) -> list[int] | None:
        """None: the devices are threads of this process."""
        return None

    def check(self) -> None:
        """Nothing to watch: its servers are threads of this process, with no link between."""

    def counters(self) -> LinkCounters:
        """Loopback's counters (shared with the rest of the machine)."""
        return read_counters("lo")

    def wire_tap(self, settle: float = 0.0, probe: bool = False) -> WireTap:
        """A tap that measures nothing (its result is None): loopback is no link of the lab's
        own, and carries the whole machine's traffic (``probe`` changes nothing)."""
        return WireTap(None, reason="a loopback lab has no link of its own to capture",
                       settle=settle)

    def facts(self) -> LabFacts:
        """What every result records about the lab it ran on (no link facts: there is no link)."""
        cal = self.calibration
        return LabFacts(backend=self.backend_name, runtime="thread", profile=self.profile.name,
                        configured_rtt_ms=self.profile.rtt_ms,
                        measured_rtt_ms=round(cal.rtt_ms, 3) if cal else None,
                        measured_rtt_p95_ms=round(cal.echo_p95_ms, 3) if cal else None,
                        devices=len(self.devices))

    def __enter__(self) -> LocalLab:
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()


def _echo_server() -> socket.socket:
    """A loopback echo server in a daemon thread (closed with the returned socket)."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return server


def _echo(conn: socket.socket) -> None:
    with conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while data := conn.recv(65536):
            conn.sendall(data)
