"""ssh2-python (libssh2) in blocking mode, connected the adapter's way.

The connection (socket, method preferences from ``target.algorithms``, handshake, host key check,
login) is :class:`mgmtbench.clients.ssh2.adapter.Ssh2Client`'s. ``send`` writes with
``Channel.write`` (which writes the whole buffer in blocking mode) and ``send_eof``; ``receive``
reads ``Channel.read`` to the end. Lists: ``Session.supported_algs(LIBSSH2_METHOD_KEX |
CRYPT_CS | MAC_CS)``, in libssh2's order of preference (libssh2 marks no cipher as AEAD; the
other side's library does). Negotiated: ``Session.methods(...)`` (libssh2 names an AEAD
cipher's MAC ``INTEGRATED-AES-GCM`` and the like: reported as none).
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from mgmtbench.clients.algorithms import AlgorithmLists
from mgmtbench.clients.ssh2.adapter import ERRORS, Ssh2Client, _message
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
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.errors import UsageError
from mgmtbench.targets import Target

try:
    from ssh2 import session as ssh2_session
except ImportError:  # reported by missing()
    ssh2_session = None


class Ssh2Transfer(TransferClient):
    """libssh2 through ssh2-python."""

    name: ClassVar[str] = "ssh2"
    needs: ClassVar[tuple[str, ...]] = ("ssh2",)
    extra: ClassVar[str] = "ssh2"

    _stack: contextlib.ExitStack | None = None
    _conn: Any = None

    def __init__(self, target: Target) -> None:
        self._adapter = Ssh2Client(target, "fresh-conn")  # its checks and its connecting
        super().__init__(target)

    @classmethod
    def supported(cls) -> AlgorithmLists:
        """libssh2's ``supported_algs``."""
        s = ssh2_session
        session = s.Session()
        return AlgorithmLists.of(session.supported_algs(s.LIBSSH2_METHOD_KEX),
                                 session.supported_algs(s.LIBSSH2_METHOD_CRYPT_CS),
                                 session.supported_algs(s.LIBSSH2_METHOD_MAC_CS))

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS, _message)

    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """Connect, run ``command``, close."""
        with self._translating(), contextlib.ExitStack() as stack:
            conn = self._adapter._connect(stack)
            status, got = _exec(conn.session, command)
        check_transfer(self.name, repr(command), status, got, 0)

    def open(self) -> None:
        """Connect and log in."""
        self._stack = contextlib.ExitStack()
        with self._translating():
            try:
                self._conn = self._adapter._connect(self._stack)
            except BaseException:
                self.close()
                raise

    def _session(self) -> Any:
        if self._conn is None:
            raise UsageError("ssh2: open() the connection before transferring")
        return self._conn.session

    def negotiated(self) -> Negotiated:
        """``Session.methods``."""
        session, s = self._session(), ssh2_session
        cipher = session.methods(s.LIBSSH2_METHOD_CRYPT_CS)
        mac = session.methods(s.LIBSSH2_METHOD_MAC_CS)
        return Negotiated(session.methods(s.LIBSSH2_METHOD_KEX), cipher,
                          "" if mac.startswith("INTEGRATED") else mac)

    def send(self, size: int) -> None:
        """Write to the sink, EOF, its exit status."""
        with self._translating():
            channel = self._session().open_session()
            try:
                channel.execute(SINK_COMMAND)
                for chunk in zero_chunks(size):
                    channel.write(chunk)
                channel.send_eof()
                channel.wait_eof()
            finally:
                channel.close()
                channel.wait_closed()
            status = channel.get_exit_status()
        check_transfer(self.name, "the sink", status, 0, 0)

    def receive(self, size: int) -> None:
        """Read the source to its end."""
        with self._translating():
            status, got = _exec(self._session(), source_command(size))
        check_transfer(self.name, "the source", status, got, size)

    def close(self) -> None:
        """Disconnect."""
        stack, self._stack, self._conn = self._stack, None, None
        if stack is not None:
            with self._translating():
                stack.close()


def _exec(session: Any, command: str) -> tuple[int, int]:
    """Run ``command`` on a new channel: its exit status and how many bytes it wrote."""
    channel = session.open_session()
    got = 0
    try:
        channel.execute(command)
        while True:
            size, _ = channel.read(CHUNK)
            if size <= 0:
                break
            got += size
        channel.wait_eof()
    finally:
        channel.close()
        channel.wait_closed()
    return channel.get_exit_status(), got
