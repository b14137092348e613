"""The device runtime interface: how a lab runs the devices behind its link.

A lab makes its namespace and the impaired link (a link backend), then hands a runtime a
:class:`RuntimeContext`: the runtime serves every device on its address so that the lab's
namespace routes to it. The link stays the one between the benchmark and the lab's namespace, so
every link backend works with every runtime. One module per runtime; :mod:`.runtimes` picks one by
name, and :mod:`mgmtbench.lab.cleanup` asks each one to :meth:`~DeviceRuntime.sweep` up after
labs that died.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from mgmtbench.emulator.options import Credentials, SshServerOptions
from mgmtbench.lab.facts import RuntimeFacts
from mgmtbench.lab.netns import NETNS_DIR
from mgmtbench.lab.state import LabState
from mgmtbench.targets.base import Service


@dataclass(frozen=True)
class DeviceSpec:
    """A device to serve: its hostname and the address clients reach it on."""

    hostname: str
    address: str


@dataclass(frozen=True)
class RuntimeContext:
    """What a runtime gets from the lab. ``state`` is the lab's crash record: a runtime adds
    whatever it starts (pids, containers) and saves it before starting the thing."""

    state: LabState
    folder: Path  # the lab's own folder (outputs, CA and known_hosts files)
    lab_ip: str  # the lab namespace's address on the link
    devices: tuple[DeviceSpec, ...]
    hostname: str  # the name the lab was given (a fleet's devices are HOSTNAME-001 ...)
    platform: str
    credentials: Credentials
    ssh_port: int
    https_port: int
    netconf_port: int = 830  # the netconf subsystem's own port (IOS-XE's)
    gnmi_port: int = 9339  # gNMI's port (IANA's)
    http3_port: int = 443  # the HTTPS API over HTTP/3, UDP (0: none)
    # Algorithms, host key type and login methods of every device's SSH server.
    ssh: SshServerOptions = field(default_factory=SshServerOptions)
    # The device side's TCP (mgmtbench.lab.tcp): ``cc``, route ``metrics``, ``mtu``; None: the
    # kernel's defaults (a runtime whose devices have namespaces of their own applies it there).
    tcp: dict[str, Any] | None = None

    @property
    def netns(self) -> str:
        """The lab's namespace."""
        return self.state.netns


@dataclass(frozen=True)
class RuntimeOptions:
    """How the devices should run; each runtime takes what applies to it and refuses what it
    cannot do (in one sentence)."""

    image: str | None = None  # docker: the device image (None: the default image)
    processes: int = 1  # netns: emulator processes sharing the fleet


class DeviceRuntime(ABC):
    """Starts the lab's devices and stops them."""

    name: ClassVar[str]

    @classmethod
    @abstractmethod
    def from_options(cls, options: RuntimeOptions) -> DeviceRuntime:
        """A runtime configured by ``options``; UsageError for an option it cannot honour."""
    #: Whether the devices' addresses live in the lab's own namespace (on its loopback), or
    #: behind it (the lab's namespace only routes to them).
    devices_in_lab_namespace: ClassVar[bool] = False

    @classmethod
    def unavailable(cls) -> str | None:
        """Why this runtime cannot run here (None: it can)."""
        return None

    @classmethod
    def check_ssh(cls, options: SshServerOptions) -> None:
        """A one-line ``UsageError`` for SSH options its devices cannot serve, before anything
        is built: by default the emulator's lists (every runtime that runs the emulator)."""
        from mgmtbench.emulator.ssh.server import check_ssh_server

        check_ssh_server(options)

    @classmethod
    def unsupported(cls, service: Service) -> str | None:
        """Why a client cannot ask this runtime's devices for ``service`` (one sentence, for a
        benchmark's skip), None if it can: every runtime that runs the emulator serves all."""
        return None

    @abstractmethod
    def start(self, context: RuntimeContext) -> None:
        """Serve every device of ``context`` on its address; return when all answer."""

    @abstractmethod
    def stop(self) -> None:
        """Stop what :meth:`start` started; safe to call twice or after a failed ``start``."""

    @abstractmethod
    def device_pids(self) -> list[int]:
        """Host-visible pids of the processes that serve the devices (for CPU time and memory)."""

    def failure(self) -> str | None:
        """For the lab's watchdog (:meth:`mgmtbench.lab.Lab.check`): which device process died
        and how, beyond the processes recorded in the lab's state (which the lab checks itself),
        None if all serve."""
        return None

    @property
    @abstractmethod
    def ca_file(self) -> Path:
        """A PEM bundle that verifies every device's HTTPS certificate."""

    @property
    @abstractmethod
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file with every device's host key."""

    def tcp_end(self, context: RuntimeContext, echo_port: int) -> tuple[str, int, Path]:
        """Where a connection shows the device side's TCP (:mod:`mgmtbench.lab.tcp`): an address
        and port that accept one, and the network namespace that serves it. By default the lab's
        echo server, in the lab's namespace where the devices run too, with the same routes;
        a runtime whose devices have namespaces of their own names a device there."""
        return self.echo_address(context), echo_port, NETNS_DIR / context.netns

    def echo_address(self, context: RuntimeContext) -> str:
        """Where the lab's calibration echo server listens, inside the lab namespace, behind the
        impaired link: the lab namespace's own link address unless the runtime says otherwise."""
        return context.lab_ip

    def facts(self) -> RuntimeFacts:
        """What a lab's facts record about this runtime."""
        return RuntimeFacts(self.name)

    @classmethod
    def sweep(cls, dead: Sequence[LabState], live: set[str], everything: bool = False) -> list[str]:
        """Remove what this runtime left behind for labs that are gone: what the ``dead`` labs'
        states record, and what it can tell is a lab's but that no ``live`` lab (any lab, with
        ``everything``) owns, such as containers of a lab that died while starting. The lab's
        processes, interface and namespace are not the runtime's to remove. Return descriptions
        of what was found beyond the states' records (``container NAME``)."""
        return []
