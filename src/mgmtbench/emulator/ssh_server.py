"""The SSH side of a device (asyncssh): password and public-key auth, exec requests, PTY shell."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Sequence
from typing import Any

import asyncssh

from mgmtbench.emulator.device import Device
from mgmtbench.emulator.options import Algorithms, Credentials, Limits
from mgmtbench.emulator.session import CliSession, Mode
from mgmtbench.emulator.shell import run_shell

log = logging.getLogger("mgmtbench.emulator")

_PEER_GONE = (BrokenPipeError, ConnectionError, asyncssh.Error)


class _DeviceSSHServer(asyncssh.SSHServer):
    """Authentication and session limits for one device's SSH listener."""

    def __init__(self, device: Device, credentials: Credentials, limits: Limits,
                 authorized: Sequence[asyncssh.SSHKey], counter: list[int],
                 connections: set[asyncssh.SSHServerConnection]) -> None:
        self._device = device
        self._credentials = credentials
        self._limits = limits
        self._authorized = authorized
        self._counter = counter
        self._connections = connections
        self._conn: asyncssh.SSHServerConnection | None = None
        self._peer = "?"
        self._counted = False

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        peer = conn.get_extra_info("peername")
        self._peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self._counter[0] += 1
        self._counted = True
        self._conn = conn
        self._connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._counted:
            self._counter[0] -= 1
            self._counted = False
        if self._conn is not None:
            self._connections.discard(self._conn)
        if exc is not None and not isinstance(exc, asyncssh.ConnectionLost):
            log.info("%s ssh %s: connection closed: %s", self._device.hostname, self._peer, exc)

    def begin_auth(self, username: str) -> bool:
        if self._counter[0] > self._limits.max_sessions:
            log.warning("%s ssh %s: refused, %d sessions is the limit",
                        self._device.hostname, self._peer, self._limits.max_sessions)
            raise asyncssh.DisconnectError(asyncssh.DISC_TOO_MANY_CONNECTIONS,
                                           "Too many sessions")
        return True

    def password_auth_supported(self) -> bool:
        return bool(self._credentials.password)

    def validate_password(self, username: str, password: str) -> bool:
        ok = _same(username, self._credentials.username) & _same(
            password, self._credentials.password)
        if not ok:
            log.info("%s ssh %s: bad password for user %r", self._device.hostname, self._peer,
                     username)
        return ok

    def public_key_auth_supported(self) -> bool:
        return bool(self._authorized)

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return _same(username, self._credentials.username) and any(
            key.public_data == k.public_data for k in self._authorized)


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


async def _run_exec(process: asyncssh.SSHServerProcess[bytes], session: CliSession,
                    delay: float) -> int:
    """Newline-separated commands, run in order; exit status 0 if every one succeeded."""
    command = process.command or ""
    failed = False
    for line in command.replace("\r\n", "\n").split("\n"):
        if line.strip() and delay:
            await asyncio.sleep(delay)
        reply = session.execute(line)
        failed |= not reply.ok
        if reply.output:
            process.stdout.write(reply.output.encode("ascii", "replace"))
        if reply.close:
            break
    await process.stdout.drain()
    return 1 if failed else 0


def _process_factory(device: Device, limits: Limits) -> Any:
    async def handle(process: asyncssh.SSHServerProcess[bytes]) -> None:
        status = 0
        try:
            if process.command is not None:
                session = CliSession(device, mode=Mode.PRIV, max_line=limits.max_line)
                status = await _run_exec(process, session, device.processing_delay)
            else:
                session = CliSession(device, mode=Mode.USER, max_line=limits.max_line)
                await run_shell(process, session, device.processing_delay)
        except _PEER_GONE as exc:
            log.info("%s ssh: client went away mid-output (%s)", device.hostname,
                     type(exc).__name__)
            return
        with contextlib.suppress(*_PEER_GONE):  # the client may have closed first
            process.exit(status)

    return handle


async def listen_ssh(
    device: Device,
    host: str,
    port: int,
    *,
    host_key: asyncssh.SSHKey,
    credentials: Credentials,
    limits: Limits,
    algorithms: Algorithms,
    authorized: Sequence[asyncssh.SSHKey],
    connections: set[asyncssh.SSHServerConnection],
) -> asyncssh.SSHAcceptor:
    """Start the device's SSH listener; the caller closes it and the ``connections`` it tracks."""
    counter = [0]
    options: dict[str, Any] = {}
    if algorithms.kex:
        options["kex_algs"] = list(algorithms.kex)
    if algorithms.ciphers:
        options["encryption_algs"] = list(algorithms.ciphers)
    if algorithms.macs:
        options["mac_algs"] = list(algorithms.macs)
    return await asyncssh.listen(
        host,
        port,
        server_host_keys=[host_key],
        server_factory=lambda: _DeviceSSHServer(device, credentials, limits, authorized, counter,
                                                connections),
        process_factory=_process_factory(device, limits),
        encoding=None,
        line_editor=False,
        allow_pty=True,
        x11_forwarding=False,
        agent_forwarding=False,
        allow_scp=False,
        compression_algs=list(algorithms.compression),
        login_timeout=limits.login_timeout,
        reuse_address=True,
        server_version="mgmtbench",
        # No GSSAPI: its default host name costs a socket.getfqdn() per connection, a DNS
        # timeout (10 s) wherever no resolver answers, as in a container without a network.
        gss_host=None,
        **options,
    )
