"""The SSH side of a device (asyncssh): password, public-key and keyboard-interactive auth, exec
requests, PTY shell, the bulk sink and source (:mod:`.bulk`), SCP and SFTP on the device's file
system (:mod:`.sftp`); the algorithms and login methods offered come from
:class:`SshServerOptions`.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncssh
from asyncssh.encryption import get_encryption_algs
from asyncssh.kex import get_kex_algs
from asyncssh.mac import get_mac_algs
from asyncssh.public_key import get_public_key_algs
from asyncssh.sftp import MIN_SFTP_VERSION

from mgmtbench.emulator import memtrim
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.device.identity import login_banner
from mgmtbench.emulator.device.transcripts import LOGIN_PRIVILEGES
from mgmtbench.emulator.guard import Admission, AuthThrottle, Descriptors, source_of
from mgmtbench.emulator.options import AUTH_METHODS, Credentials, Limits, SshServerOptions
from mgmtbench.emulator.ssh.backpressure import follow_socket
from mgmtbench.emulator.ssh.bulk import bulk_handler
from mgmtbench.emulator.ssh.channel import device_channel
from mgmtbench.emulator.ssh.exec import (
    PEER_GONE,
    CliExec,
    DeviceSession,
    Subsystems,
    client_gone,
)
from mgmtbench.emulator.ssh.lean import lean_connection
from mgmtbench.emulator.ssh.sftp import sftp_factory
from mgmtbench.emulator.ssh.shell import run_shell
from mgmtbench.errors import UsageError

log = logging.getLogger("mgmtbench.emulator")

# The ASA's default key exchange (diffie-hellman-group14-sha256) is finite-field DH, which the
# cryptography package marks deprecated on every use: the device offers it, so the emulator
# does, without a warning per connection.
warnings.filterwarnings("ignore", message="Diffie-Hellman over finite fields")

@dataclass
class SshCounts:
    """What one device's SSH server has accepted since it started: TCP connections, exec
    requests, shells and, of those, shells with a PTY (tests use them to pin what a client mode
    opens per iteration); and the payload bytes the bulk sink has read and the source has written
    (:mod:`~mgmtbench.emulator.ssh.bulk`)."""

    connections: int = 0  # accepted and not dropped (see ``dropped``)
    execs: int = 0
    shells: int = 0
    ptys: int = 0
    sink_bytes: int = 0
    source_bytes: int = 0
    dropped: int = 0  # connections dropped before the banner (MaxStartups, per source)
    auth_failures: int = 0  # failed password and keyboard-interactive logins
    refused_channels: int = 0  # session channels over ``Limits.max_channels``

    def count_exec(self) -> None:
        """One more exec request."""
        self.execs += 1


class _DeviceSSHServer(asyncssh.SSHServer):
    """Admission, authentication and session limits for one connection to a device."""

    def __init__(self, device: Device, credentials: Credentials, limits: Limits,
                 authorized: Sequence[asyncssh.SSHKey], admission: Admission,
                 throttle: AuthThrottle, connections: set[asyncssh.SSHServerConnection],
                 counts: SshCounts, cli: CliExec, process: Any, sftp: Any,
                 banner: LoginBanner | None = None, subsystems: Subsystems | None = None,
                 cli_allowed: bool = True) -> None:
        self._device = device
        self._banner = banner
        self._credentials = credentials
        self._limits = limits
        self._authorized = authorized
        self._admission = admission
        self._throttle = throttle
        self._connections = connections
        self._conn: asyncssh.SSHServerConnection | None = None
        self._send_now: Callable[[], None] | None = None  # set with _conn
        self._peer = "?"
        self._source = "?"
        self._admitted = False
        self._authenticated = False
        self._failures = 0
        self._channels = 0
        self._counts = counts
        self._user = ""  # who is logging in (the device logs the login)
        self._cli = cli
        self._process = process
        self._sftp = sftp
        self._subsystems = subsystems
        self._cli_allowed = cli_allowed

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        peer = conn.get_extra_info("peername")
        self._peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self._source = source_of(peer)
        refused = self._admission.refuse(self._source, self, conn.abort)
        if refused is not None:
            # As OpenSSH's MaxStartups: closed before the banner, nothing else spent on it.
            self._counts.dropped += 1
            log.warning("%s ssh %s: connection dropped: %s", self._device.hostname, self._peer,
                        refused)
            conn.abort()
            return
        self._admitted = True
        self._counts.connections += 1
        self._conn = conn
        self._connections.add(conn)
        # As a device: no SSH_MSG_IGNORE packets, no sshd_config reloads.
        self._send_now = lean_connection(conn)
        # Channel data waits while the client's socket is full (asyncssh writes on).
        follow_socket(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        memtrim.connection_closed()
        if self._admitted:
            self._admission.closed(self._source, authenticated=self._authenticated, key=self)
            self._admitted = False
        if self._conn is not None:
            self._connections.discard(self._conn)
        if exc is not None and not isinstance(exc, asyncssh.ConnectionLost):
            log.info("%s ssh %s: connection closed: %s", self._device.hostname, self._peer, exc)

    def begin_auth(self, username: str) -> bool:
        self._user = username
        if self._admission.sessions_full():
            log.warning("%s ssh %s: refused, %d sessions is the limit",
                        self._device.hostname, self._peer, self._limits.max_sessions)
            raise asyncssh.DisconnectError(asyncssh.DISC_TOO_MANY_CONNECTIONS,
                                           "Too many sessions")
        text = self._banner.text() if self._banner is not None else ""
        if text and self._conn is not None:  # the device's `banner login`, before the password
            self._conn.send_auth_banner(text)
        return True

    def auth_completed(self) -> None:
        if not self._admitted:
            return
        self._admission.logged_in(self._source, self)
        self._authenticated = True
        self._device.activity.login(self._user, self._source, self._local_port())
        if self._admission.authenticated > self._limits.max_sessions and self._conn is not None:
            # Others logged in while this one did: the last one in leaves.
            log.warning("%s ssh %s: refused, %d sessions is the limit",
                        self._device.hostname, self._peer, self._limits.max_sessions)
            self._conn.disconnect(asyncssh.DISC_TOO_MANY_CONNECTIONS, "Too many sessions")

    def _local_port(self) -> str:
        """The port the client connected to (the device logs it with a login)."""
        sock = self._conn.get_extra_info("sockname") if self._conn is not None else None
        return str(sock[1]) if sock else "22"

    def password_auth_supported(self) -> bool:
        return bool(self._credentials.password)

    async def validate_password(self, username: str, password: str) -> bool:
        ok = _same(username, self._credentials.username) & _same(
            password, self._credentials.password)
        if ok:
            return True
        self._failures += 1
        self._counts.auth_failures += 1
        self._device.activity.login_failed(username, self._source, self._local_port())
        last = self._failures >= self._limits.auth_tries
        log.warning("%s ssh %s: bad password for user %r (%d of %d tries)",
                    self._device.hostname, self._peer, username, self._failures,
                    self._limits.auth_tries)
        await self._throttle.failed(self._source)
        if last:
            # IOS closes the connection after `ip ssh authentication-retries` failures.
            raise asyncssh.DisconnectError(asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE,
                                           "Too many authentication failures")
        return False

    def public_key_auth_supported(self) -> bool:
        return bool(self._authorized)

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        return _same(username, self._credentials.username) and any(
            key.public_data == k.public_data for k in self._authorized)

    def session_requested(self) -> Any:
        """A session channel, unless ``max_channels`` are open on this connection already
        (OpenSSH's MaxSessions): then the client's open fails, its other channels go on."""
        if self._conn is None or self._send_now is None:
            return False
        if self._channels >= self._limits.max_channels:
            self._counts.refused_channels += 1
            log.warning("%s ssh %s: channel refused, %d sessions per connection is the limit",
                        self._device.hostname, self._peer, self._limits.max_channels)
            raise asyncssh.ChannelOpenError(
                asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED,
                f"Too many sessions on this connection (limit {self._limits.max_channels})")
        self._channels += 1
        return (device_channel(self._conn, self._channel_closed),
                DeviceSession(self._cli, self._new_process, self._send_now, self._subsystems,
                              self._cli_allowed))

    def _new_process(self) -> asyncssh.SSHServerProcess[bytes]:
        """An asyncssh process for a session that is not a CLI exec (a shell, the bulk sink or
        source, SCP, SFTP)."""
        return asyncssh.SSHServerProcess(self._process, self._sftp, MIN_SFTP_VERSION, True)

    def _channel_closed(self) -> None:
        self._channels -= 1


class LoginBanner:
    """A device's login banner (``banner login`` in its running configuration), worked out once
    per configuration change."""

    def __init__(self, device: Device) -> None:
        self._device = device
        self._seen: tuple[object, int, str] | None = None  # (config, its version, banner)

    def text(self) -> str:
        """The banner as of now ("" when the configuration has none)."""
        config = self._device.config
        if config is None:
            return ""
        seen = self._seen
        if seen is None or seen[0] is not config or seen[1] != config.version:
            seen = self._seen = (config, config.version, login_banner(config.render()))
        return seen[2]


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


def _is_cli(command: str) -> bool:
    """Whether an exec request is for the device's CLI (not the bulk sink or source, not SCP)."""
    return bulk_handler(command) is None and not command.startswith("scp ")


def _who(process: asyncssh.SSHServerProcess[bytes]) -> dict[str, str]:
    """The user and peer address of an SSH session (for ``show users``)."""
    return {"user": str(process.get_extra_info("username") or ""),
            "peer": source_of(process.get_extra_info("peername"))}


def _process_factory(device: Device, limits: Limits, login_privilege: int,
                     counts: SshCounts) -> Any:
    shell_mode = Mode.PRIV if login_privilege == 15 else Mode.USER

    async def handle(process: asyncssh.SSHServerProcess[bytes]) -> None:
        # CLI exec requests are answered by DeviceSession (ssh.exec): what comes here is a shell
        # or the throughput sink or source.
        status = 0
        try:
            bulk = bulk_handler(process.command) if process.command is not None else None
            if bulk is not None:
                counts.execs += 1
                done = await bulk(process)
                counts.sink_bytes += done.received
                counts.source_bytes += done.sent
                status = done.status
                if done.window is not None:
                    device.ssh_windows.add(done.window, done.sent)
            else:
                counts.shells += 1
                if process.get_terminal_type() is not None:
                    counts.ptys += 1
                session = CliSession(device, mode=shell_mode, max_line=limits.max_line,
                                     max_output=limits.max_output, **_who(process))
                await run_shell(process, session, device.processing_delay)
        except PEER_GONE as exc:
            client_gone(device, exc)
            return
        with contextlib.suppress(*PEER_GONE):  # the client may have closed first
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
    subsystems: Subsystems | None = None,
    cli_allowed: bool = True,
    descriptors: Descriptors | None = None,
) -> asyncssh.SSHAcceptor:
    """Start the device's SSH listener; the caller closes it and the ``connections`` it tracks.
    ``host_key`` comes from :func:`host_key_pair`; ``counts`` (if given) counts what it
    accepts; ``subsystems`` are served by sessions of their own (``netconf``), and with
    ``cli_allowed`` False nothing else is (no shell, exec or SFTP: a NETCONF-only port). A
    shell starts at ``ssh.login_privilege``, or the platform's ``login_privilege``."""
    counts = counts if counts is not None else SshCounts()
    level = (ssh.login_privilege if ssh.login_privilege is not None
             else device.platform.style.login_privilege)
    admission = Admission(limits, budget=descriptors)
    throttle = AuthThrottle(limits)
    process = _process_factory(device, limits, level, counts)
    cli = CliExec(device, limits, counts.count_exec, _is_cli)
    sftp = sftp_factory(device.files)
    algorithms = ssh.algorithms
    # Each list the options leave open is the platform's, as its real image offers it.
    identity = device.platform.style.identity.ssh
    options: dict[str, Any] = {}
    for option, chosen in (("kex_algs", algorithms.kex or identity.kex),
                           ("encryption_algs", algorithms.ciphers or identity.ciphers),
                           ("mac_algs", algorithms.macs or identity.macs)):
        if chosen:
            options[option] = list(chosen)
    banner = LoginBanner(device)
    return await asyncssh.listen(
        host,
        port,
        server_host_keys=[host_key],
        # Sessions come from _DeviceSSHServer.session_requested (it counts them per connection):
        # CLI exec requests to ``cli`` (answered by ssh.exec.DeviceSession), shells and the bulk
        # sink and source to ``process``; SCP ("scp -t"/"scp -f" exec requests) and the "sftp"
        # subsystem to ``sftp``, on the device's file system.
        server_factory=lambda: _DeviceSSHServer(device, credentials, limits, authorized,
                                                admission, throttle, connections, counts,
                                                cli, process, sftp, banner, subsystems,
                                                cli_allowed),
        encoding=None,
        line_editor=False,
        allow_pty=True,
        x11_forwarding=False,
        agent_forwarding=False,
        compression_algs=list(algorithms.compression),
        login_timeout=limits.login_timeout,
        password_auth="password" in ssh.auth_methods,
        public_key_auth="publickey" in ssh.auth_methods,
        kbdint_auth="keyboard-interactive" in ssh.auth_methods,
        reuse_address=True,
        server_version=identity.version,  # SSH-2.0-<version>
        # No GSSAPI: its default host name costs a socket.getfqdn() per connection, a DNS
        # timeout (10 s) wherever no resolver answers, as in a container without a network.
        gss_host=None,
        **options,
    )
