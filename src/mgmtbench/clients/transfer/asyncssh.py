"""asyncssh on its own event loop: ``asyncssh.connect`` with the adapter's options.

Connection options (login, host key check, algorithm lists) are the adapter's
(:func:`mgmtbench.clients.asyncssh.connect.connect_options`). ``send`` writes the bytes to the
sink's stdin in chunks (waiting on ``drain`` after each: asyncssh's flow control) and sends
EOF; ``receive`` reads the source's stdout to its end. Lists: ``get_kex_algs()``, ``get_encryption_algs()``,
``get_mac_algs()`` (AEAD: ``encryption_needs_mac`` is false); default preference: their
``get_default_*`` twins. Negotiated: cipher and MAC from the connection's extra info
(``send_cipher``, ``send_mac``); the key exchange from asyncssh's own debug log of the handshake
(``Key exchange alg:``, level 2, switched on for :meth:`open` only), which is the one place
asyncssh names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, ClassVar, TypeVar

import asyncssh
from asyncssh.encryption import (
    encryption_needs_mac,
    get_default_encryption_algs,
    get_encryption_algs,
)
from asyncssh.kex import get_default_kex_algs, get_kex_algs
from asyncssh.mac import get_default_mac_algs, get_mac_algs

from mgmtbench.clients.algorithms import AlgorithmLists
from mgmtbench.clients.asyncssh.connect import ERRORS, check, connect_options
from mgmtbench.clients.transfer.base import (
    CHUNK,
    SINK_COMMAND,
    TRIVIAL_COMMAND,
    Negotiated,
    TransferClient,
    check_transfer,
    logged,
    source_command,
    zero_chunks,
)
from mgmtbench.clients.translate import translate_errors
from mgmtbench.errors import ClientError, UsageError
from mgmtbench.targets import Target

T = TypeVar("T")


def _names(algs: list[bytes]) -> list[str]:
    return [a.decode() for a in algs if not a.startswith(b"gss-")]  # no Kerberos here


class AsyncsshTransfer(TransferClient):
    """asyncssh, driven from blocking code on an event loop of its own."""

    name: ClassVar[str] = "asyncssh"
    needs: ClassVar[tuple[str, ...]] = ("asyncssh",)

    _conn: asyncssh.SSHClientConnection | None = None
    _kex: str | None = None

    def __init__(self, target: Target) -> None:
        check(target)
        super().__init__(target)
        self._loop = asyncio.new_event_loop()

    @classmethod
    def supported(cls) -> AlgorithmLists:
        """asyncssh's ``get_*_algs()``."""
        ciphers = _names(get_encryption_algs())
        return AlgorithmLists.of(_names(get_kex_algs()), ciphers, _names(get_mac_algs()),
                                 [c for c in ciphers if not encryption_needs_mac(c.encode())])

    @classmethod
    def preferred(cls) -> AlgorithmLists:
        """asyncssh's ``get_default_*_algs()``."""
        return AlgorithmLists.of(_names(get_default_kex_algs()),
                                 _names(get_default_encryption_algs()),
                                 _names(get_default_mac_algs()), cls.supported().aead)

    def _do(self, work: Coroutine[Any, Any, T]) -> T:
        if self._loop.is_closed():  # closed, then used again
            self._loop = asyncio.new_event_loop()
        with translate_errors(self.name, ERRORS):
            return self._loop.run_until_complete(work)

    def _connect(self) -> Any:
        t = self.target
        return asyncssh.connect(**connect_options(t, str(t.known_hosts) if t.known_hosts
                                                  else None))

    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """Connect, run ``command``, close."""
        async def once() -> tuple[int | None, int]:
            async with self._connect() as conn:
                done = await conn.run(command, encoding=None)
                return done.exit_status, len(done.stdout or b"")

        status, got = self._do(once())
        check_transfer(self.name, repr(command), status, got, 0)

    def open(self) -> None:
        """Connect; the key exchange's name is taken from asyncssh's debug log meanwhile."""
        debug = asyncssh.logging.SSHLogger._debug_level
        asyncssh.set_debug_level(2)
        try:
            with logged("asyncssh", r"Key exchange alg: (\S+)") as names:
                self._conn = self._do(self._connect())
        finally:
            asyncssh.set_debug_level(debug)
        # Both ends log it when the server runs in this process: the same name.
        self._kex = names[0] if names else None

    def negotiated(self) -> Negotiated:
        """The connection's extra info, and the logged key exchange."""
        conn = self._require()
        if self._kex is None:
            raise ClientError("asyncssh: its debug log did not name the key exchange")
        cipher = str(conn.get_extra_info("send_cipher"))
        mac = str(conn.get_extra_info("send_mac") or "")
        return Negotiated(self._kex, cipher, "" if mac == cipher else mac)

    def _require(self) -> asyncssh.SSHClientConnection:
        if self._conn is None:
            raise UsageError("asyncssh: open() the connection before transferring")
        return self._conn

    def send(self, size: int) -> None:
        """Write ``size`` bytes to the sink, EOF, wait for its exit."""
        conn = self._require()

        async def go() -> int | None:
            async with conn.create_process(SINK_COMMAND, encoding=None) as process:
                for chunk in zero_chunks(size):
                    process.stdin.write(chunk)
                    await process.stdin.drain()
                process.stdin.write_eof()
                await process.wait()
                return process.exit_status

        status = self._do(go())
        check_transfer(self.name, "the sink", status, 0, 0)

    def receive(self, size: int) -> None:
        """Read the source's output to its end."""
        conn = self._require()

        async def go() -> tuple[int | None, int]:
            got = 0
            async with conn.create_process(source_command(size), encoding=None) as process:
                while chunk := await process.stdout.read(CHUNK):
                    got += len(chunk)
                await process.wait()
                return process.exit_status, got

        status, got = self._do(go())
        check_transfer(self.name, "the source", status, got, size)

    def close(self) -> None:
        """Close the connection and the event loop."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            self._do(conn.wait_closed())
        self._loop.close()
