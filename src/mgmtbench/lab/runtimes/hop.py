"""The ``hop`` runtime: a namespace in the middle of a chain of labs (:mod:`mgmtbench.lab.chain`),
where services such as the edge proxy run instead of devices.

A hop lab has one "device": the service address on the namespace's loopback (198.18.x.1), which
is where a service started with :meth:`HopRuntime.start_service` listens. Nothing runs until a
service is started: the chain builds the links beyond the hop first, then the service that needs
them. Services are the hop's processes (their pids are in the lab's crash record, so a later run
removes them after a SIGKILL); their CA (``tls/ca.pem``) and host keys (``known_hosts``) go in
the hop's folder. Not chosen by name (``--device-runtime``): :class:`~mgmtbench.lab.chain.LabChain`
makes it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.lab.runtimes.base import DeviceRuntime, RuntimeContext, RuntimeOptions
from mgmtbench.lab.runtimes.netns import start_in_netns, stop_processes


class HopRuntime(DeviceRuntime):
    """Services in a chain's middle namespace, on its one service address."""

    name = "hop"
    devices_in_lab_namespace = True

    def __init__(self) -> None:
        self._context: RuntimeContext | None = None
        self._services: dict[str, subprocess.Popen[bytes]] = {}

    @classmethod
    def from_options(cls, options: RuntimeOptions) -> HopRuntime:
        """A hop takes no options."""
        return cls()

    @property
    def context(self) -> RuntimeContext:
        """What the lab handed over when it started the hop."""
        if self._context is None:
            raise UsageError("the hop is not up: start its chain first")
        return self._context

    @property
    def address(self) -> str:
        """The service address (on the hop namespace's loopback)."""
        return self.context.devices[0].address

    @property
    def netns(self) -> str:
        """The hop's network namespace."""
        return self.context.netns

    @property
    def folder(self) -> Path:
        """The hop's own folder: services' state, CA and host keys."""
        return self.context.folder

    def start(self, context: RuntimeContext) -> None:
        """Remember the lab's context; services start later (:meth:`start_service`)."""
        self._context = context

    def start_service(self, name: str, argv: list[str], ready: str) -> subprocess.Popen[bytes]:
        """Run ``argv`` in the hop's namespace as service ``name`` and wait until its output
        says ``ready`` (output in the hop's folder, ``NAME.out`` and ``NAME.log``)."""
        if name in self._services:
            raise UsageError(f"the hop already runs a service named {name!r}")
        process = start_in_netns(self.context.state, self.folder, name, argv, ready)
        self._services[name] = process
        return process

    def service_pid(self, name: str) -> int | None:
        """The pid of service ``name`` while it runs."""
        process = self._services.get(name)
        return process.pid if process is not None and process.poll() is None else None

    def stop(self) -> None:
        """Stop every service."""
        stop_processes(list(self._services.values()))
        self._services.clear()

    def device_pids(self) -> list[int]:
        """The services that still run."""
        return [p.pid for p in self._services.values() if p.poll() is None]

    @property
    def ca_file(self) -> Path:
        """Where a service that serves HTTPS writes its CA."""
        return self.folder / "tls" / "ca.pem"

    @property
    def known_hosts(self) -> Path:
        """Where a service that serves SSH writes its host key."""
        return self.folder / "known_hosts"
