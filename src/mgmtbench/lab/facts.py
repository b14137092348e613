"""What a lab is, as values: :class:`LabFacts` (recorded with every result), the devices and link
counters it offers, and :class:`LabLike`, what both kinds of lab (:class:`~mgmtbench.lab.Lab` in
namespaces, :class:`~mgmtbench.lab.local.LocalLab` on loopback) have in common.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

from mgmtbench.lab.calibrate import Calibration
from mgmtbench.lab.profiles import LinkProfile
from mgmtbench.lab.wiretap import WireTap
from mgmtbench.targets.base import Service

#: The backend name of a lab served on loopback: no link of its own, no link facts.
LOOPBACK = "loopback"


@dataclass(frozen=True)
class LinkCounters:
    """Packets and bytes on the link, seen from the benchmark side."""

    tx_packets: int = 0  # benchmark -> devices
    tx_bytes: int = 0
    rx_packets: int = 0  # devices -> benchmark
    rx_bytes: int = 0

    def __sub__(self, other: LinkCounters) -> LinkCounters:
        return LinkCounters(self.tx_packets - other.tx_packets, self.tx_bytes - other.tx_bytes,
                            self.rx_packets - other.rx_packets, self.rx_bytes - other.rx_bytes)

    @property
    def packets(self) -> int:
        """Packets both ways."""
        return self.tx_packets + self.rx_packets

    @property
    def bytes(self) -> int:
        """Bytes both ways."""
        return self.tx_bytes + self.rx_bytes


@dataclass(frozen=True)
class LabDevice:
    """A device in a lab, as a client reaches it."""

    hostname: str
    address: str
    ssh_port: int
    https_port: int
    mgmt_ip: str = ""  # the address the device reports in its outputs (its own, in a lab)
    netconf_port: int = 830  # the NETCONF subsystem's own port (0: none, use the SSH port)
    gnmi_port: int = 9339  # gNMI's port (0: none)
    http3_port: int = 0  # the HTTP/3 API's UDP port (0: none)

    @property
    def reported_ip(self) -> str:
        """The address the device reports as its own."""
        return self.mgmt_ip or self.address


@dataclass(frozen=True)
class RuntimeFacts:
    """What a device runtime adds to a lab's facts: its name and the option that shapes it."""

    runtime: str
    image: str | None = None  # docker: the device image; sshd: the server's version
    emulator_processes: int | None = None  # netns


@dataclass(frozen=True)
class LabFacts:
    """What every result records about the lab it ran on (milliseconds, percent, Mbit/s).

    The link facts (``link_rtt_ms`` to ``rate_mbit``) belong to a lab with a link of its own; a
    loopback lab (backend ``loopback``) has none and leaves them out of :meth:`as_dict`.
    """

    backend: str
    runtime: str
    profile: str
    configured_rtt_ms: float
    measured_rtt_ms: float | None
    measured_rtt_p95_ms: float | None
    devices: int
    image: str | None = None
    emulator_processes: int | None = None
    link_rtt_ms: float | None = None  # ICMP, kernel timestamps (None without raw sockets)
    connect_p50_ms: float | None = None
    jitter_ms: float = 0.0
    loss_pct: float = 0.0
    rate_mbit: float = 0.0
    # Both ends' TCP (mgmtbench.lab.tcp.TcpFacts.as_dict): asked for, shown, differences.
    tcp: dict[str, Any] | None = None

    @property
    def has_link(self) -> bool:
        """Whether the lab has a link of its own (not loopback)."""
        return self.backend != LOOPBACK

    def as_dict(self) -> dict[str, object]:
        """The JSON form results and ``mgmtbench lab check --json`` carry: keys in this order,
        the runtime's option only when it has one, the link facts only with a link."""
        out: dict[str, object] = {"backend": self.backend, "runtime": self.runtime}
        if self.emulator_processes is not None:
            out["emulator_processes"] = self.emulator_processes
        if self.image is not None:
            out["image"] = self.image
        out |= {"profile": self.profile, "configured_rtt_ms": self.configured_rtt_ms,
                "measured_rtt_ms": self.measured_rtt_ms,
                "measured_rtt_p95_ms": self.measured_rtt_p95_ms}
        if self.has_link:
            out |= {"link_rtt_ms": self.link_rtt_ms, "connect_p50_ms": self.connect_p50_ms,
                    "jitter_ms": self.jitter_ms, "loss_pct": self.loss_pct,
                    "rate_mbit": self.rate_mbit}
            if self.tcp is not None:
                out["tcp"] = self.tcp
        out["devices"] = self.devices
        return out


class LabLike(Protocol):
    """What both kinds of lab offer: start it (or use it as a context manager), reach its devices
    with its trust files, read its counters and the processes serving its devices, tap its link,
    record its facts."""

    devices: list[LabDevice]
    calibration: Calibration | None

    @property
    def profile(self) -> LinkProfile:
        """The link profile the lab was made for."""

    @property
    def ca_file(self) -> Path:
        """A PEM file that verifies every device's HTTPS certificate."""

    @property
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file with every device's host key."""

    def facts(self) -> LabFacts:
        """What every result records about the lab."""

    def counters(self) -> LinkCounters:
        """The link's packets and bytes so far, seen from the benchmark side."""

    def device_pids(self) -> list[int]:
        """Host-visible pids of the processes serving the devices."""

    def process_pids(self) -> list[int] | None:
        """Every process the lab runs on this host (devices, delay lines, echo servers), so a
        client's CPU can be told from the lab's; None if the devices run inside this process."""

    def check(self) -> None:
        """Raise ``LabError`` if a process the lab depends on has died (its watchdog)."""

    def unsupported(self, service: Service) -> str | None:
        """Why the lab's devices cannot serve ``service`` (one sentence, for a skip), None if
        they can."""

    def wire_tap(self, settle: float = 0.0, probe: bool = False) -> WireTap:
        """A capture of the link counting round trips on the wire (its result is None where
        there is no link of the lab's own); ``probe``: also the link's RTT meanwhile."""

    def up(self) -> Self:
        """Build the lab (a lab that is up stays as it is)."""

    def down(self) -> None:
        """Remove everything the lab made. Safe to call twice."""

    def __enter__(self) -> Self: ...

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None: ...
