"""The SSH modes for libraries that open exec channels and PTY shells on a connection.

A subclass provides the library's primitives; this class maps every mode onto them the same way,
so ``reuse-conn`` means the same thing for paramiko, libssh2 and parallel-ssh:

- ``_connect(stack)``: a connected, authenticated connection, its closing pushed on ``stack``;
- ``_exec(conn, command)``: one exec channel, its whole output;
- ``_shell(conn, stack)``: a prepared :class:`SyncPty` on a new PTY shell (closing on ``stack``);
- ``_pipelined(conn, commands)``: every command's channel at once, outputs in order;
- ``_error_map()``: the library's exception types and the :class:`ClientError` each becomes
  (used with :func:`~mgmtbench.clients.translate.translate_errors` around every call).

``pty-reuse`` connects in ``setup``; every iteration opens a new shell channel on that connection
(channel, PTY, shell, first prompt, ``enable`` if the prompt is ``>``, session prep), runs the
commands and closes the channel. ``pty-kept`` opens that shell once, in ``setup``, and runs every
iteration's commands on it.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from typing import Any

from mgmtbench.clients.base import (
    REUSING_MODES,
    SSH_MODES,
    TranslatedClient,
    Transport,
    require_credentials,
)
from mgmtbench.clients.pty import SyncPty
from mgmtbench.clients.translate import ErrorMap, Translator, first_line, translate_errors
from mgmtbench.targets import Target


class ChannelClient(TranslatedClient):
    """An SSH adapter built from a library's channel primitives (see the module)."""
    transport = Transport.SSH
    modes = SSH_MODES

    _stack: contextlib.ExitStack | None = None
    _conn: Any = None
    _pty: SyncPty | None = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) a target that lacks what its auth method
        needs: by default the library logs in every way, and refuses algorithm names it does not
        know itself."""
        require_credentials(cls.name, target)

    @abstractmethod
    def _connect(self, stack: contextlib.ExitStack) -> Any: ...

    @abstractmethod
    def _exec(self, conn: Any, command: str) -> str: ...

    @abstractmethod
    def _shell(self, conn: Any, stack: contextlib.ExitStack) -> SyncPty: ...

    @abstractmethod
    def _pipelined(self, conn: Any, commands: list[str]) -> str: ...

    @abstractmethod
    def _error_map(self) -> ErrorMap: ...

    def _message(self, exc: BaseException) -> str:
        return first_line(exc)

    def _translating(self) -> Translator:
        return translate_errors(self.name, self._error_map(), self._message)

    def setup(self) -> None:
        """Untimed preparation: connect here for the modes that reuse a connection."""
        if self.mode not in REUSING_MODES:
            return
        self._stack = stack = contextlib.ExitStack()
        with self._torn_down_on_failure(), self._translating():
            self._conn = self._connect(stack)
            if self.mode == "pty-kept":
                self._pty = self._shell(self._conn, stack)

    def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "reuse-conn":
            return "".join(self._exec(self._conn, c) for c in commands)
        if mode == "pty-kept":
            assert self._pty is not None
            return "".join(self._pty.command(c) for c in commands)
        if mode == "pty-reuse":
            with contextlib.ExitStack() as stack:  # a new shell channel, closed at the end
                pty = self._shell(self._conn, stack)
                return "".join(pty.command(c) for c in commands)
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
        """Close what ``setup`` or ``run`` left open."""
        stack, self._stack = self._stack, None
        self._conn = self._pty = None
        if stack is not None:
            with self._translating():
                stack.close()
