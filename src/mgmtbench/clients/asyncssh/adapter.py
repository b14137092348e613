"""asyncssh: exec channels, an interactive shell, and concurrent channels on one connection.

Login and algorithm choices: :mod:`.connect` (shared with the fleet runner). The host key is
checked against ``target.known_hosts`` when one is given, and not checked otherwise.

``pipelined`` is ``asyncio.gather`` of one ``conn.run`` per command on the connection made in
``setup``: the channel opens and exec requests all go out before any answer is read.

Every exec is ``conn.run(command, encoding=None)``: stdin gets EOF at once and the output is
the exact bytes, decoded as ascii-replace here. The PTY modes use
``conn.create_process(term_type="vt100", term_size=(511, 24), encoding=None)`` (a shell) under
the shared :class:`~mgmtbench.clients.pty.AsyncPty` steps: per iteration on a new connection
(``pty-fresh``), per iteration on the connection made in ``setup`` (``pty-reuse``), or once in
``setup`` (``pty-kept``).

Application round trips are counted (every mode) through asyncssh's ``tunnel=``
(:class:`~mgmtbench.clients.asyncssh.connect.CountingTunnel`).

Timing notes: asyncio sets ``TCP_NODELAY`` on its sockets, so unlike paramiko, ssh2-python and
parallel-ssh this client never waits for a delayed ACK between channels on one connection.

asyncssh is a core dependency of mgmtbench (the emulator's SSH server), so it is never missing.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mgmtbench.clients.asyncssh.knobs import KNOBS
from mgmtbench.clients.base import REUSING_MODES, SSH_MODES, AsyncClient, Transport
from mgmtbench.clients.pty import AsyncPty
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.targets import Target

try:
    import asyncssh

    from mgmtbench.clients.asyncssh import connect
except ImportError:  # reported by AsyncClient.missing()
    asyncssh = None  # type: ignore[assignment]
    connect = None  # type: ignore[assignment]

_TIMEOUT = 30
_CHUNK = 65536


class AsyncsshClient(AsyncClient):
    """asyncssh, every SSH mode."""
    name = "asyncssh"
    transport = Transport.SSH
    modes = SSH_MODES
    extra = "all"  # a core dependency: any install of mgmtbench has it
    needs = ("asyncssh",)
    counts_round_trips = True
    all_knobs = KNOBS

    _conn: Any = None
    _pty: AsyncPty | None = None
    _shell: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) an auth method or algorithm choice this
        library cannot honour."""
        if connect is not None:
            connect.check(target)

    def _translating(self) -> Translator:
        return translate_errors(self.name, connect.ERRORS)

    async def _connect(self) -> Any:
        t = self.target
        known = str(t.known_hosts) if t.known_hosts is not None else None
        options = connect.connect_options(t, known, self.tuned_with)
        if self.round_trips is not None:
            options["tunnel"] = connect.CountingTunnel(self.round_trips)
        return await asyncssh.connect(**options, connect_timeout=_TIMEOUT)

    async def _exec(self, conn: Any, command: str) -> str:
        result = await conn.run(command, encoding=None, timeout=_TIMEOUT)
        return bytes(result.stdout or b"").decode("ascii", "replace")

    async def _open_shell(self, conn: Any) -> tuple[Any, AsyncPty]:
        shell = await conn.create_process(term_type="vt100", term_size=(511, 24), encoding=None)

        async def send(data: bytes) -> None:
            shell.stdin.write(data)
            await shell.stdin.drain()

        async def recv() -> bytes:
            async with asyncio.timeout(_TIMEOUT):
                return bytes(await shell.stdout.read(_CHUNK))

        pty = AsyncPty(send, recv)
        try:
            await pty.prepare(self.target)
        except BaseException:
            await _close(shell)
            raise
        return shell, pty

    async def setup(self) -> None:
        """Untimed preparation: connect here for the modes that reuse a connection."""
        if self.mode in REUSING_MODES:
            async with self._translating():
                self._conn = await self._connect()
            if self.mode == "pty-kept":
                try:
                    async with self._translating():
                        self._shell, self._pty = await self._open_shell(self._conn)
                except BaseException:
                    await self.teardown()
                    raise

    async def run(self, commands: list[str]) -> str:
        """One iteration: the commands' outputs, concatenated in order."""
        async with self._translating():
            return await self._run(commands)

    async def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "reuse-conn":
            return "".join([await self._exec(self._conn, c) for c in commands])
        if mode == "pty-kept":
            assert self._pty is not None
            return "".join([await self._pty.command(c) for c in commands])
        if mode == "pty-reuse":
            return await self._in_new_shell(self._conn, commands)
        if mode == "pipelined":
            outputs = await asyncio.gather(*(self._exec(self._conn, c) for c in commands))
            return "".join(outputs)
        conn = await self._connect()
        try:
            if mode == "fresh-conn":
                return "".join([await self._exec(conn, c) for c in commands])
            if mode == "batch-exec":
                return await self._exec(conn, "\n".join(commands))
            return await self._in_new_shell(conn, commands)  # pty-fresh
        finally:
            await _close(conn)

    async def _in_new_shell(self, conn: Any, commands: list[str]) -> str:
        """Open and prepare a shell channel on ``conn``, run ``commands``, close the channel."""
        shell, pty = await self._open_shell(conn)
        try:
            return "".join([await pty.command(c) for c in commands])
        finally:
            await _close(shell)

    async def teardown(self) -> None:
        """Close what ``setup`` or ``run`` left open."""
        shell, conn = self._shell, self._conn
        self._conn = self._shell = self._pty = None
        async with self._translating():
            if shell is not None:
                await _close(shell)
            if conn is not None:
                await _close(conn)


async def _close(closable: Any) -> None:
    """Close a connection or a process and wait until it is closed."""
    closable.close()
    await closable.wait_closed()
