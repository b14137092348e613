"""The SSH side of a device (asyncssh): password, public-key and keyboard-interactive auth, exec
requests, PTY shell, the bulk sink and source (:mod:`.bulk`), SCP and SFTP on the device's file
system (:mod:`.sftp`); the algorithms and login methods offered come from
:class:`SshServerOptions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import asyncssh
from asyncssh.encryption import get_encryption_algs
from asyncssh.kex import get_kex_algs
from asyncssh.mac import get_mac_algs
from asyncssh.public_key import get_public_key_algs

from mgmtbench.emulator.bulk import bulk_handler
from mgmtbench.emulator.device import Device
from mgmtbench.emulator.options import AUTH_METHODS, Credentials, Limits, SshServerOptions
from mgmtbench.emulator.session import CliSession, Mode
from mgmtbench.emulator.sftp import sftp_factory
from mgmtbench.emulator.shell import run_shell
from mgmtbench.emulator.transcripts import LOGIN_PRIVILEGES
from mgmtbench.errors import UsageError

log = logging.getLogger("mgmtbench.emulator")

_PEER_GONE = (BrokenPipeError, ConnectionError, asyncssh.Error)


@dataclass
class SshCounts:
    """What one device's SSH server has accepted since it started: TCP connections, exec
    requests, shells and, of those, shells with a PTY (tests use them to pin what a client mode
    opens per iteration); and the payload bytes the bulk sink has read and the source has written
    (:mod:`~mgmtbench.emulator.bulk`)."""

    connections: int = 0
    execs: int = 0
    shells: int = 0
    ptys: int = 0
    sink_bytes: int = 0
    source_bytes: int = 0


class _DeviceSSHServer(asyncssh.SSHServer):
    """Authentication and session limits for one device's SSH listener."""

    def __init__(self, device: Device, credentials: Credentials, limits: Limits,
                 authorized: Sequence[asyncssh.SSHKey], counter: list[int],
                 connections: set[asyncssh.SSHServerConnection], counts: SshCounts) -> None:
        self._device = device
        self._credentials = credentials
        self._limits = limits
        self._authorized = authorized
        self._counter = counter
        self._connections = connections
        self._conn: asyncssh.SSHServerConnection | None = None
        self._peer = "?"
        self._counted = False
        self._counts = counts

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._counts.connections += 1
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


def supported_algorithms() -> dict[str, list[str]]:
    """Every name the SSH server accepts, per list (keyed by the ``mgmtbench serve`` flag)."""
    def names(algs: list[bytes]) -> list[str]:
        # The gss-* key exchanges need a Kerberos setup the emulator does not have.
        return [a.decode() for a in algs if not a.startswith(b"gss-")]

    return {"kex": names(get_kex_algs()), "ciphers": names(get_encryption_algs()),
            "macs": names(get_mac_algs()), "host-key-algs": names(get_public_key_algs()),
            "auth-methods": list(AUTH_METHODS)}


_WHAT = {"kex": "key exchange algorithm", "ciphers": "cipher", "macs": "MAC",
         "host-key-algs": "host key algorithm", "auth-methods": "login method"}


def check_ssh_server(options: SshServerOptions) -> None:
    """Raise a one-line :class:`UsageError` naming an algorithm or login method the server does
    not have, and what it has."""
    if options.login_privilege not in (None, *LOGIN_PRIVILEGES):
        raise UsageError(f"login privilege {options.login_privilege} (--login-privilege): "
                         "choose 1 or 15")
    algs = options.algorithms
    supported = supported_algorithms()
    for flag, chosen in (("kex", algs.kex), ("ciphers", algs.ciphers), ("macs", algs.macs),
                         ("host-key-algs", algs.host_key_algs),
                         ("auth-methods", options.auth_methods)):
        if chosen is None:
            continue
        if not chosen:
            raise UsageError(f"--{flag} is empty: choose from {', '.join(supported[flag])}")
        for name in chosen:
            if name not in supported[flag]:
                raise UsageError(f"unsupported {_WHAT[flag]} {name!r} (--{flag}): choose from "
                                 f"{', '.join(supported[flag])}")


def host_key_pair(key: asyncssh.SSHKey, algorithms: Sequence[str] | None) -> asyncssh.SSHKeyPair:
    """The server's host key, offered for ``algorithms`` only (None: all the key can sign with);
    a one-line UsageError when the key can sign with none of them."""
    pair = asyncssh.load_keypairs([key])[0]
    if algorithms is None:
        return pair
    offered = tuple(a.encode() for a in algorithms if a.encode() in pair.host_key_algorithms)
    if not offered:
        raise UsageError(f"the {key.get_algorithm()} host key cannot sign with "
                         f"{', '.join(algorithms)}: choose from "
                         f"{', '.join(a.decode() for a in pair.host_key_algorithms)}")
    # asyncssh's server offers one host key algorithm per entry of the pair's list (read when
    # the listener starts), and has no option to narrow it: narrow the list itself.
    pair.host_key_algorithms = offered
    return pair


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


def _process_factory(device: Device, limits: Limits, login_privilege: int,
                     counts: SshCounts) -> Any:
    shell_mode = Mode.PRIV if login_privilege == 15 else Mode.USER

    async def handle(process: asyncssh.SSHServerProcess[bytes]) -> None:
        status = 0
        try:
            if process.command is not None:
                counts.execs += 1
                bulk = bulk_handler(process.command)
                if bulk is not None:  # the throughput sink or source, not the CLI
                    done = await bulk(process)
                    counts.sink_bytes += done.received
                    counts.source_bytes += done.sent
                    status = done.status
                else:
                    session = CliSession(device, mode=Mode.PRIV, max_line=limits.max_line)
                    status = await _run_exec(process, session, device.processing_delay)
            else:
                counts.shells += 1
                if process.get_terminal_type() is not None:
                    counts.ptys += 1
                session = CliSession(device, mode=shell_mode, max_line=limits.max_line)
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
    host_key: asyncssh.SSHKeyPair,
    credentials: Credentials,
    limits: Limits,
    ssh: SshServerOptions,
    authorized: Sequence[asyncssh.SSHKey],
    connections: set[asyncssh.SSHServerConnection],
    counts: SshCounts | None = None,
) -> asyncssh.SSHAcceptor:
    """Start the device's SSH listener; the caller closes it and the ``connections`` it tracks.
    ``host_key`` comes from :func:`host_key_pair`; ``counts`` (if given) counts what it
    accepts. A shell starts at ``ssh.login_privilege``, or the platform's ``login_privilege``."""
    counts = counts if counts is not None else SshCounts()
    level = (ssh.login_privilege if ssh.login_privilege is not None
             else device.platform.style.login_privilege)
    counter = [0]
    algorithms = ssh.algorithms
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
                                                connections, counts),
        process_factory=_process_factory(device, limits, level, counts),
        encoding=None,
        line_editor=False,
        allow_pty=True,
        x11_forwarding=False,
        agent_forwarding=False,
        # SCP ("scp -t"/"scp -f" exec requests) and the "sftp" subsystem on the device's file
        # system; every other exec request goes to process_factory.
        sftp_factory=sftp_factory(device.files),
        allow_scp=True,
        compression_algs=list(algorithms.compression),
        login_timeout=limits.login_timeout,
        password_auth="password" in ssh.auth_methods,
        public_key_auth="publickey" in ssh.auth_methods,
        kbdint_auth="keyboard-interactive" in ssh.auth_methods,
        reuse_address=True,
        server_version="mgmtbench",
        # No GSSAPI: its default host name costs a socket.getfqdn() per connection, a DNS
        # timeout (10 s) wherever no resolver answers, as in a container without a network.
        gss_host=None,
        **options,
    )
