"""parallel-ssh at scale: its own fleet API, ``ParallelSSHClient`` (gevent, ``pool_size`` = the
concurrency), with the libssh2 (``pssh-ssh2``) or libssh (``pssh-ssh``) back end.

The API works on the whole fleet at once, so each phase is timed for the fleet and every session
gets the fleet's time: ``connect_exec`` is ``run_command`` (returns once every host has connected,
authenticated and started the command); ``finish`` is ``join`` (every command done, its channel
closed) plus reading the buffered output and exit codes; ``exec_again``/``read_output`` the same
again on the kept connections; ``close`` disconnects every host client (the library has no fleet
call for it: its per-host clients are disconnected one by one, and pssh-ssh2's leaked socket
descriptors closed as in the single-host adapter). Login options are the adapter's
(:func:`.connect.login_options`), per host in a ``HostConfig``.

The ``+tuned`` runners take their adapter's knobs: with ``tcp-nodelay``, ``TCP_NODELAY`` is set
on each host client's socket (``HostOutput.client.sock``: the fleet API has no option for it, and
its host clients exist only once ``run_command`` has connected them) after the first
``run_command``, so it speeds up ``exec_again`` and later commands, not the first.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, ClassVar

from mgmtbench.clients.fleet.base import FleetRunner, SessionTimes
from mgmtbench.clients.pssh.adapter import (
    PsshSsh2Client,
    PsshSsh2ClientTuned,
    PsshSshClient,
    PsshSshClientTuned,
)
from mgmtbench.clients.pssh.connect import check, closer_of_leaked, login_options, no_delay
from mgmtbench.clients.pssh.knobs import TCP_NODELAY
from mgmtbench.targets import Target

_TIMEOUT = 60


class _PsshFleet(FleetRunner):
    how = "ParallelSSHClient(pool_size=concurrency)"
    _options: ClassVar[dict[str, Any]] = {}

    def _client_class(self) -> Any:
        raise NotImplementedError

    def run(self, targets: list[Target], command: str) -> list[SessionTimes]:
        from pssh.config import HostConfig

        for target in targets:
            check(self.name, target)
        first = targets[0]
        sessions = [SessionTimes() for _ in targets]
        phases: dict[str, float] = {}
        start = time.perf_counter()

        def lap(phase: str) -> None:
            nonlocal start
            now = time.perf_counter()
            phases[phase] = now - start
            start = now

        client = self._client_class()(
            [t.host for t in targets], port=first.ssh_port, pool_size=len(targets),
            num_retries=1, timeout=_TIMEOUT, **login_options(first),
            host_config=[HostConfig(port=t.ssh_port, **login_options(t, "private_key")) for t in targets],
            **self._options)
        try:
            for phase_exec, phase_read in (("connect_exec", "finish"),
                                           ("exec_again", "read_output")):
                output = client.run_command(command, stop_on_errors=False, encoding="ascii")
                lap(phase_exec)
                if phase_exec == "connect_exec" and self.adapter.tuned_with(TCP_NODELAY.name):
                    for host_out in output:
                        if host_out.client is not None and host_out.client.sock is not None:
                            no_delay(host_out.client)
                live = [o for o in output if o.exception is None]
                client.join(live, timeout=_TIMEOUT)
                for times, host_out in zip(sessions, output, strict=True):
                    _collect(times, host_out)
                lap(phase_read)
        finally:
            self._disconnect(client)
            lap("close")
        for times in sessions:
            for phase, seconds in phases.items():
                setattr(times, phase, seconds)
        return sessions

    def _disconnect(self, client: Any) -> None:
        for host_client in list(getattr(client, "_host_clients", {}).values()):
            sock = getattr(host_client, "sock", None)
            closer = closer_of_leaked(sock.fileno()) if sock is not None else None
            with contextlib.suppress(Exception):
                host_client.disconnect()
            if closer is not None:
                closer()


def _collect(times: SessionTimes, host_out: Any) -> None:
    if times.error is not None:
        return
    if host_out.exception is not None:
        times.error = f"{type(host_out.exception).__name__}: {host_out.exception}"
        return
    times.record(b"".join(host_out.buffers.stdout.rw_buffer))
    if host_out.exit_code is None:
        times.error = "no exit status"


class PsshSsh2Fleet(_PsshFleet):
    """ParallelSSHClient with the libssh2 back end."""
    name = "pssh-ssh2"
    adapter = PsshSsh2Client
    _options: ClassVar[dict[str, Any]] = {"keepalive_seconds": 0}

    def _client_class(self) -> Any:
        from pssh.clients.native.parallel import ParallelSSHClient

        return ParallelSSHClient


class PsshSshFleet(_PsshFleet):
    """ParallelSSHClient with the libssh back end."""
    name = "pssh-ssh"
    adapter = PsshSshClient

    def _client_class(self) -> Any:
        from pssh.clients.ssh.parallel import ParallelSSHClient

        return ParallelSSHClient


class PsshSsh2FleetTuned(PsshSsh2Fleet):
    """ParallelSSHClient (libssh2) with every knob of ``pssh-ssh2+tuned``."""
    name = PsshSsh2ClientTuned.name
    adapter = PsshSsh2ClientTuned


class PsshSshFleetTuned(PsshSshFleet):
    """ParallelSSHClient (libssh) with every knob of ``pssh-ssh+tuned``."""
    name = PsshSshClientTuned.name
    adapter = PsshSshClientTuned
