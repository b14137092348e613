"""ssh-python (libssh) in blocking mode: a session on a plain socket, a channel per transfer.

Algorithm choices are libssh options set before ``connect`` (``KEY_EXCHANGE``,
``CIPHERS_C_S``/``_S_C``, ``HMAC_C_S``/``_S_C``); the host key is checked against
``target.known_hosts`` (``KNOWNHOSTS``, then ``is_server_known``) when one is given; login with
the password or the key file (``Auth.AGENT`` is refused). libssh reads the system's
ssh_config as it does for any user (ssh-python cannot switch that off); the options set here
take precedence over it.

Lists: libssh has no call that lists what it supports, but ``options_set`` refuses a list with
no name it knows; so each name any other side knows here (the emulator's and OpenSSH's lists,
the other installed libraries') is offered to it alone, and what it keeps is its list (names
only libssh knows are therefore not seen). AEAD ciphers: libssh marks none; the other side's
library does. Negotiated: ``get_kex_algo``, ``get_cipher_out``, ``get_hmac_out`` (libssh names an
AEAD cipher's MAC ``aead-poly1305``, ``aead-gcm``: reported as none; it names no DH group
exchange, which is then the one key exchange offered, as nothing else could have been agreed).
"""

from __future__ import annotations

import socket
from functools import cache
from typing import Any, ClassVar

from mgmtbench.clients.algorithms import LISTS, AlgorithmLists
from mgmtbench.clients.transfer import known_names
from mgmtbench.clients.transfer.base import (
    CHUNK,
    SINK_COMMAND,
    TRIVIAL_COMMAND,
    Negotiated,
    TransferClient,
    check_transfer,
    source_command,
    zero_chunks,
)
from mgmtbench.clients.translate import ErrorMap, Translator, optional_errors, translate_errors
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    UsageError,
)
from mgmtbench.targets import Auth, Target

try:
    from ssh import exceptions as ssh_exceptions
    from ssh import options as ssh_options
    from ssh import session as ssh_session
    from ssh.key import import_privkey_file
except ImportError:  # reported by missing()
    ssh_exceptions = ssh_options = ssh_session = None

_TIMEOUT = 120

ERRORS: ErrorMap = optional_errors(
    {OSError: ConnectionFailed, TimeoutError: ClientTimeout},
    ssh_exceptions, lambda: {
        ssh_exceptions.BaseSSHError: ClientError,
        ssh_exceptions.AuthenticationDenied: AuthenticationFailed,
        ssh_exceptions.AuthenticationError: AuthenticationFailed,
        ssh_exceptions.KeyImportError: AuthenticationFailed,
        ssh_exceptions.HostNotAllowedToConnect: ConnectionFailed,
        ssh_exceptions.ConnectionLost: ConnectionFailed,
    })


def _message(exc: BaseException) -> str:
    """libssh's errors carry (code, message bytes): the message."""
    for arg in reversed(exc.args):
        if isinstance(arg, bytes) and arg.strip():
            return arg.decode(errors="replace").strip().splitlines()[0]
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


#: SshAlgorithms field -> the libssh options it sets (both directions).
def _options() -> dict[str, tuple[Any, ...]]:
    o = ssh_options
    return {"kex": (o.KEY_EXCHANGE,), "ciphers": (o.CIPHERS_C_S, o.CIPHERS_S_C),
            "macs": (o.HMAC_C_S, o.HMAC_S_C)}


class _Conn:
    """A socket and the libssh session on it."""

    def __init__(self, sock: socket.socket, session: Any) -> None:
        self.sock, self.session = sock, session

    def close(self) -> None:
        try:
            self.session.disconnect()
        except ssh_exceptions.BaseSSHError:
            pass  # the peer may have gone already; the socket closes anyway
        finally:
            self.sock.close()


class LibsshTransfer(TransferClient):
    """libssh through ssh-python."""

    name: ClassVar[str] = "ssh-python"
    needs: ClassVar[tuple[str, ...]] = ("ssh",)
    extra: ClassVar[str] = "parallel-ssh"

    _conn: _Conn | None = None

    def __init__(self, target: Target) -> None:
        if target.auth is Auth.AGENT:
            raise UsageError("ssh-python logs in with a password or a key file here, not an "
                             "agent: use auth 'password' or 'key'")
        if target.auth is Auth.KEY and target.key_file is None:
            raise UsageError("ssh-python: auth 'key' needs a target key_file")
        if target.algorithms.host_key:
            raise UsageError("ssh-python: host key algorithm choices are not supported here")
        super().__init__(target)

    @classmethod
    def supported(cls) -> AlgorithmLists:
        """The names libssh keeps when each known name is offered to it alone."""
        return _probed()

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS, _message)

    def _connect(self) -> _Conn:
        t = self.target
        o = ssh_options
        sock = socket.create_connection((t.host, t.ssh_port), timeout=30)
        sock.settimeout(None)  # libssh has its own timeout
        session = ssh_session.Session()
        conn = _Conn(sock, session)
        try:
            session.options_set(o.HOST, t.host)
            session.options_set_port(t.ssh_port)
            session.options_set(o.USER, t.username)
            session.options_set(o.TIMEOUT, str(_TIMEOUT))
            session.options_set(o.GLOBAL_KNOWNHOSTS, "/dev/null")
            session.options_set(o.KNOWNHOSTS, str(t.known_hosts or "/dev/null"))
            for field, options in _options().items():
                chosen = getattr(t.algorithms, field)
                for option in options if chosen else ():
                    session.options_set(option, ",".join(chosen))
            session.set_socket(sock)
            session.connect()
            if t.known_hosts is not None and not session.is_server_known():
                raise ClientError(f"ssh-python: the host key of {t.host}:{t.ssh_port} is not "
                                  f"the one in {t.known_hosts}")
            if t.auth is Auth.KEY:
                session.userauth_publickey(import_privkey_file(str(t.key_file)))
            else:
                session.userauth_password(t.username, t.password)
        except BaseException:
            conn.close()
            raise
        return conn

    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """Connect, run ``command``, close."""
        with self._translating():
            conn = self._connect()
            try:
                status, got = _exec(conn.session, command)
            finally:
                conn.close()
        check_transfer(self.name, repr(command), status, got, 0)

    def open(self) -> None:
        """Connect and log in."""
        with self._translating():
            self._conn = self._connect()

    def _session(self) -> Any:
        if self._conn is None:
            raise UsageError("ssh-python: open() the connection before transferring")
        return self._conn.session

    def negotiated(self) -> Negotiated:
        """``get_kex_algo``, ``get_cipher_out``, ``get_hmac_out``."""
        session = self._session()
        mac = _text(session.get_hmac_out())
        kex = _text(session.get_kex_algo())
        offered = self.target.algorithms.kex
        if not kex and len(offered) == 1:
            # libssh names no DH group exchange; offered alone, it is the one that was agreed
            # (or the key exchange would have failed).
            kex = offered[0]
        return Negotiated(kex, _text(session.get_cipher_out()),
                          "" if mac.startswith("aead-") else mac)

    def send(self, size: int) -> None:
        """Write to the sink, EOF, its exit status."""
        with self._translating():
            channel = self._session().channel_new()
            channel.open_session()
            try:
                channel.request_exec(SINK_COMMAND)
                for chunk in zero_chunks(size):
                    _, written = channel.write(chunk)
                    if written != len(chunk):
                        raise ClientError(f"ssh-python: wrote {written} of {len(chunk)} bytes")
                channel.send_eof()
                status = channel.get_exit_status()
            finally:
                channel.close()
        check_transfer(self.name, "the sink", status, 0, 0)

    def receive(self, size: int) -> None:
        """Read the source to its end."""
        with self._translating():
            status, got = _exec(self._session(), source_command(size))
        check_transfer(self.name, "the source", status, got, size)

    def close(self) -> None:
        """Disconnect."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


def _exec(session: Any, command: str) -> tuple[int, int]:
    """Run ``command`` on a new channel: its exit status and how many bytes it wrote."""
    channel = session.channel_new()
    channel.open_session()
    got = 0
    try:
        channel.request_exec(command)
        while True:
            size, _ = channel.read(CHUNK)
            if size <= 0:
                break
            got += size
        status: int = channel.get_exit_status()
    finally:
        channel.close()
    return status, got


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value or "")


@cache
def _probed() -> AlgorithmLists:
    session = ssh_session.Session()
    options = _options()
    kept: dict[str, list[str]] = {}
    candidates = known_names(exclude=LibsshTransfer.name)
    for field in LISTS:
        kept[field] = []
        for name in candidates.names(field):
            try:
                session.options_set(options[field][0], name)
            except ssh_exceptions.BaseSSHError:
                continue
            kept[field].append(name)
    return AlgorithmLists.of(kept["kex"], kept["ciphers"], kept["macs"])
