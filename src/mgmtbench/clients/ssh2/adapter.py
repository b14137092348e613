"""ssh2-python (libssh2) in blocking mode: exec channels, a PTY shell, pipelined channels.

One :class:`ssh2.session.Session` over a plain socket. Login follows ``target.auth``: password
(``userauth_password``), the private key file (``userauth_publickey_fromfile``) or the ssh-agent
at ``target.agent_socket`` (``agent_init``, ``set_identity_path``, each identity tried in turn).
``target.algorithms`` become libssh2 method preferences before the handshake (``method_pref``:
``LIBSSH2_METHOD_KEX``, ``CRYPT_CS``/``CRYPT_SC``, ``MAC_CS``/``MAC_SC``, ``HOSTKEY``); libssh2 refuses
names it does not support when the preference is set. The host key is
checked against ``target.known_hosts`` with libssh2's known-hosts API when a file is given
(``knownhost_init``/``readfile``/``checkp``; the emulator writes ``[host]:port`` entries, which
``checkp`` matches); with no file it is not verified.

``pipelined`` opens every command's channel first, then sends every exec request, then reads the
channels in order. libssh2 in blocking mode sends each request and waits for its reply before
returning, so the channel opens and exec requests are serialised round trips (unlike paramiko,
which does not wait for the exec reply); the outputs, though, come back concurrently on the one
connection and libssh2 queues the packets of the channels not being read. It is the most
pipelining this library allows in blocking mode.

The socket is a plain ``socket.create_connection`` as in ssh2-python's examples: Nagle's algorithm
stays on (no ``TCP_NODELAY``), like paramiko's own socket. Sequential channels on one connection
then wait for the device's delayed ACK (~40 ms on Linux) before each new channel open. The
``tcp-nodelay`` knob (:mod:`.knobs`, client ``ssh2+tuned``) sets ``TCP_NODELAY`` on that socket
before the handshake.

The PTY request carries only the terminal type (``Channel.pty(term)``): libssh2's default size
applies (80x24); ``terminal width 511`` in the session prep sets the device's width.
"""

from __future__ import annotations

import contextlib
import socket
from typing import Any

from mgmtbench.clients.channels import ChannelClient
from mgmtbench.clients.pty import SyncPty
from mgmtbench.clients.ssh2.knobs import KNOBS, TCP_NODELAY
from mgmtbench.clients.translate import ErrorMap, first_line, optional_errors
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
)
from mgmtbench.targets import Auth, Target

try:
    from ssh2 import exceptions as ssh2_exceptions
    from ssh2 import knownhost as ssh2_knownhost
    from ssh2 import session as ssh2_session
    from ssh2.exceptions import SSH2Error
except ImportError:  # reported by Client.missing()
    ssh2_knownhost = ssh2_session = ssh2_exceptions = None
    SSH2Error = OSError

_TIMEOUT_MS = 30_000
_CHUNK = 65536


class _Conn:
    """A socket and the libssh2 session on it."""

    def __init__(self, sock: socket.socket, session: Any) -> None:
        self.sock, self.session = sock, session

    def close(self) -> None:
        try:
            self.session.disconnect()
        except SSH2Error:
            pass  # the peer may be gone already; the socket closes anyway
        finally:
            self.sock.close()


class Ssh2Client(ChannelClient):
    """ssh2-python (libssh2), every SSH mode."""
    name = "ssh2"
    extra = "ssh2"
    needs = ("ssh2",)
    all_knobs = KNOBS

    def _connect(self, stack: contextlib.ExitStack) -> _Conn:
        t = self.target
        sock = socket.create_connection((t.host, t.ssh_port), timeout=30)
        sock.settimeout(None)  # a blocking descriptor for libssh2, which has its own timeout
        if self.tuned_with(TCP_NODELAY.name):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            session = ssh2_session.Session()
            session.set_timeout(_TIMEOUT_MS)
            _prefer(session, t)
            session.handshake(sock)
            conn = _Conn(sock, session)
        except BaseException:
            sock.close()
            raise
        stack.callback(conn.close)
        self._check_host_key(session)
        _login(session, t)
        return conn

    def _check_host_key(self, session: Any) -> None:
        t = self.target
        if t.known_hosts is None:
            return
        key, key_type = session.hostkey()
        kind = _KEY_TYPES.get(key_type)
        if kind is None:
            raise ClientError(f"ssh2: cannot check a host key of libssh2 type {key_type}")
        known = session.knownhost_init()
        known.readfile(str(t.known_hosts))
        mask = (ssh2_knownhost.LIBSSH2_KNOWNHOST_TYPE_PLAIN
                | ssh2_knownhost.LIBSSH2_KNOWNHOST_KEYENC_RAW | kind)
        known.checkp(t.host.encode(), t.ssh_port, key, mask)  # raises on mismatch / not found

    def _exec(self, conn: _Conn, command: str) -> str:
        channel = conn.session.open_session()
        try:
            channel.execute(command)
            return _read_all(channel)
        finally:
            _close(channel)

    def _shell(self, conn: _Conn, stack: contextlib.ExitStack) -> SyncPty:
        shell = conn.session.open_session()
        stack.callback(_close, shell, False)
        shell.pty("vt100")
        shell.shell()

        def recv() -> bytes:
            size, data = shell.read(_CHUNK)
            return bytes(data) if size > 0 else b""

        pty = SyncPty(shell.write, recv)
        pty.prepare(self.target)
        return pty

    def _pipelined(self, conn: _Conn, commands: list[str]) -> str:
        channels = []
        try:
            for _ in commands:
                channels.append(conn.session.open_session())
            for channel, command in zip(channels, commands, strict=True):
                channel.execute(command)
            return "".join(_read_all(channel) for channel in channels)
        finally:
            for channel in channels:
                _close(channel)

    def _error_map(self) -> ErrorMap:
        return ERRORS

    def _message(self, exc: BaseException) -> str:
        return _message(exc)


#: ssh2-python with every knob that matters.
Ssh2ClientTuned = tuned(Ssh2Client, KNOBS)


def _prefer(session: Any, target: Target) -> None:
    """The target's algorithm choices as libssh2 method preferences (before the handshake)."""
    algorithms = target.algorithms
    s = ssh2_session
    for methods, chosen in (
            ((s.LIBSSH2_METHOD_KEX,), algorithms.kex),
            ((s.LIBSSH2_METHOD_CRYPT_CS, s.LIBSSH2_METHOD_CRYPT_SC), algorithms.ciphers),
            ((s.LIBSSH2_METHOD_MAC_CS, s.LIBSSH2_METHOD_MAC_SC), algorithms.macs),
            ((s.LIBSSH2_METHOD_HOSTKEY,), algorithms.host_key)):
        for method in methods if chosen else ():
            session.method_pref(method, ",".join(chosen))


def _login(session: Any, target: Target) -> None:
    if target.auth is Auth.PASSWORD:
        session.userauth_password(target.username, target.password)
    elif target.auth is Auth.KEY:
        session.userauth_publickey_fromfile(target.username, str(target.key_file))
    else:
        agent = session.agent_init()
        agent.set_identity_path(str(target.agent_socket))
        agent.connect()
        try:
            for identity in agent.get_identities():
                try:
                    agent.userauth(target.username, identity)
                    return
                except ssh2_exceptions.AgentAuthenticationError:
                    continue
            raise AuthenticationFailed(f"ssh2: no key of the agent at {target.agent_socket} "
                                       "was accepted")
        finally:
            agent.disconnect()


def _message(exc: BaseException) -> str:
    """ssh2-python's exceptions carry a format and its arguments: put them together."""
    args = exc.args
    if args and isinstance(args[0], str) and "%" in args[0]:
        try:
            return args[0] % tuple(a.decode("ascii", "replace") if isinstance(a, bytes) else a
                                   for a in args[1:])
        except (TypeError, ValueError):
            pass
    return first_line(exc)


def _read_all(channel: Any) -> str:
    chunks = []
    while True:
        size, data = channel.read(_CHUNK)
        if size <= 0:
            break
        chunks.append(bytes(data))
    channel.wait_eof()
    return b"".join(chunks).decode("ascii", "replace")


def _close(channel: Any, wait: bool = True) -> None:
    """Close a channel; ``wait`` for the peer's close (exec channels, which have ended)."""
    try:
        channel.close()
        if wait:
            channel.wait_closed()
            channel.get_exit_status()
    except SSH2Error:
        pass  # already closed by the peer or the session is gone: nothing left to release


_KEY_TYPES: dict[int, int] = {}
ERRORS = optional_errors(
    {OSError: ConnectionFailed, TimeoutError: ClientTimeout},
    ssh2_exceptions, lambda: {
        ssh2_exceptions.SSH2Error: ClientError,
        ssh2_exceptions.AuthenticationError: AuthenticationFailed,
        ssh2_exceptions.PublicKeyError: AuthenticationFailed,
        ssh2_exceptions.PublickeyUnverifiedError: AuthenticationFailed,
        ssh2_exceptions.KeyfileAuthFailedError: AuthenticationFailed,
        ssh2_exceptions.AgentError: AuthenticationFailed,
        ssh2_exceptions.PasswordExpiredError: AuthenticationFailed,
        ssh2_exceptions.SocketDisconnectError: ConnectionFailed,
        ssh2_exceptions.SocketRecvError: ConnectionFailed,
        ssh2_exceptions.SocketSendError: ConnectionFailed,
        ssh2_exceptions.BannerRecvError: ConnectionFailed,
        ssh2_exceptions.SessionHandshakeError: ConnectionFailed,
        ssh2_exceptions.KexFailureError: ConnectionFailed,
        ssh2_exceptions.Timeout: ClientTimeout,
        ssh2_exceptions.SocketTimeout: ClientTimeout,
    })
if ssh2_session is not None:
    _KEY_TYPES = {
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_RSA: ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_SSHRSA,
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_DSS: ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_SSHDSS,
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_ECDSA_256:
            ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_ECDSA_256,
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_ECDSA_384:
            ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_ECDSA_384,
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_ECDSA_521:
            ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_ECDSA_521,
        ssh2_session.LIBSSH2_HOSTKEY_TYPE_ED25519: ssh2_knownhost.LIBSSH2_KNOWNHOST_KEY_ED25519,
    }
