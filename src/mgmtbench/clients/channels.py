"""The six SSH modes for libraries that open exec channels and PTY shells on a connection.

A subclass provides the library's primitives; this class maps every mode onto them the same way,
so ``reuse-conn`` means the same thing for paramiko, libssh2 and parallel-ssh:

- ``_connect(stack)``: a connected, authenticated connection, its closing pushed on ``stack``;
- ``_exec(conn, command)``: one exec channel, its whole output;
- ``_shell(conn, stack)``: a prepared :class:`SyncPty` on a new PTY shell (closing on ``stack``);
- ``_pipelined(conn, commands)``: every command's channel at once, outputs in order;
- ``_errors()``: the library's exception types, turned into :class:`ClientError`.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

from mgmtbench.clients.base import REUSING_MODES, SSH_MODES, Client, ClientError, Transport
from mgmtbench.clients.pty import SyncPty

T = TypeVar("T")


class ChannelClient(Client):
    transport = Transport.SSH
    modes = SSH_MODES

    _stack: contextlib.ExitStack | None = None
    _conn: Any = None
    _pty: SyncPty | None = None

    @abstractmethod
    def _connect(self, stack: contextlib.ExitStack) -> Any: ...

    @abstractmethod
    def _exec(self, conn: Any, command: str) -> str: ...

    @abstractmethod
    def _shell(self, conn: Any, stack: contextlib.ExitStack) -> SyncPty: ...

    @abstractmethod
    def _pipelined(self, conn: Any, commands: list[str]) -> str: ...

    @abstractmethod
    def _errors(self) -> tuple[type[BaseException], ...]: ...

    def _message(self, exc: BaseException) -> str:
        return str(exc) or type(exc).__name__

    def setup(self) -> None:
        if self.mode not in REUSING_MODES:
            return
        self._stack = stack = contextlib.ExitStack()
        try:
            self._conn = self._guard(lambda: self._connect(stack))
            if self.mode == "pty-reuse":
                self._pty = self._guard(lambda: self._shell(self._conn, stack))
        except BaseException:
            self.teardown()
            raise

    def run(self, commands: list[str]) -> str:
        return self._guard(lambda: self._run(commands))

    def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "reuse-conn":
            return "".join(self._exec(self._conn, c) for c in commands)
        if mode == "pty-reuse":
            assert self._pty is not None
            return "".join(self._pty.command(c) for c in commands)
        if mode == "pipelined":
            return self._pipelined(self._conn, commands)
        with contextlib.ExitStack() as stack:  # fresh-conn, batch-exec, pty-fresh
            conn = self._connect(stack)
            if mode == "fresh-conn":
                return "".join(self._exec(conn, c) for c in commands)
            if mode == "batch-exec":
                return self._exec(conn, "\n".join(commands))
            pty = self._shell(conn, stack)
            return "".join(pty.command(c) for c in commands)

    def teardown(self) -> None:
        stack, self._stack = self._stack, None
        self._conn = self._pty = None
        if stack is not None:
            self._guard(stack.close)

    def _guard(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except self._errors() as exc:
            raise ClientError(f"{self.name}: {self._message(exc)}") from exc
