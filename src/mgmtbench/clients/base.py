"""The client interface: one management session against one device, in one usage mode.

Every adapter (one module per library under :mod:`mgmtbench.clients`) subclasses :class:`Client`
(blocking libraries) or :class:`AsyncClient` (asyncio libraries) and declares the modes it supports.
A benchmark calls ``setup()`` outside the timed part, ``run(commands)`` inside it (once per
iteration) and ``teardown()`` at the end. What ``setup`` does depends on the mode: ``reuse-conn``,
``keep-alive`` and ``pty-reuse`` connect there, ``fresh-conn`` and ``pty-fresh`` connect inside
``run``.

``run`` returns the devices' outputs concatenated in command order, so a benchmark checks the
answer, not only the time: a fast wrong answer fails.

Library errors never leave an adapter: they become :class:`ClientError` (or one of its
subclasses, through :func:`~mgmtbench.clients.translate.translate_errors`).

``target.auth`` and ``target.algorithms`` are honoured where the library can; an adapter refuses
(:class:`~mgmtbench.errors.UsageError`, in its constructor) what it cannot do, never ignoring it:
:meth:`_Common.check` is called with the target and by default accepts only password login and the
library's default algorithms.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from enum import StrEnum
from typing import ClassVar

from mgmtbench.errors import ClientError, MissingLibrary, UsageError
from mgmtbench.targets import Auth, Target

__all__ = ["HTTPS_MODES", "REUSING_MODES", "SSH_MODES", "AnyClient", "AsyncClient", "Client",
           "ClientError", "MissingLibrary", "Target", "Transport"]


class Transport(StrEnum):
    """How a client reaches the device."""
    SSH = "ssh"
    HTTPS = "https"


# Mode names as they appear in test ids and in the JSON results.
SSH_MODES = ("fresh-conn", "reuse-conn", "batch-exec", "pty-fresh", "pty-reuse", "pipelined")
HTTPS_MODES = ("fresh-conn", "keep-alive", "batch-post", "multi-cmd", "tls-resume", "h2-multiplex")
#: Modes whose connection is made in ``setup`` (outside the timed part).
REUSING_MODES = frozenset({"reuse-conn", "pty-reuse", "keep-alive", "pipelined", "h2-multiplex"})


class _Common:
    name: ClassVar[str]
    transport: ClassVar[Transport]
    modes: ClassVar[tuple[str, ...]]
    #: The pip extra that installs the library (``pip install mgmtbench[<extra>]``).
    extra: ClassVar[str]
    #: Importable modules the adapter needs.
    needs: ClassVar[tuple[str, ...]] = ()

    def __init__(self, target: Target, mode: str) -> None:
        if mode not in self.modes:
            raise ValueError(f"{self.name} does not support mode {mode!r}")
        self.check(target)
        self.target = target
        self.mode = mode

    @classmethod
    def check(cls, target: Target) -> None:
        """:class:`UsageError` for an auth method or algorithm choice this library cannot honour
        (the default: password login, the library's own algorithms)."""
        if target.auth is not Auth.PASSWORD:
            raise UsageError(f"client {cls.name} can only log in with a password, not with "
                             f"auth {target.auth.value!r}")
        if not target.algorithms.is_default():
            raise UsageError(f"client {cls.name} cannot choose SSH algorithms: leave the "
                             "target's algorithms empty")

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the library is not importable, else None."""
        for module in cls.needs:
            try:
                importlib.import_module(module)
            except ImportError:
                return (f"client {cls.name} needs the {module!r} module: "
                        f"pip install 'mgmtbench[{cls.extra}]'")
        return None

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of the libraries this adapter drives (for the results)."""
        from importlib.metadata import PackageNotFoundError, version

        out = {}
        for module in cls.needs:
            dist = _DISTRIBUTIONS.get(module, module)
            try:
                out[dist] = version(dist)
            except PackageNotFoundError:
                continue
        return out


_DISTRIBUTIONS = {"ssh2": "ssh2-python", "ssh": "ssh-python", "pssh": "parallel-ssh"}


class Client(_Common, ABC):
    """A blocking client."""

    def setup(self) -> None:
        """Untimed preparation (connect, for the modes that reuse a connection)."""

    @abstractmethod
    def run(self, commands: list[str]) -> str:
        """One iteration: send ``commands``, return their outputs concatenated."""

    def teardown(self) -> None:
        """Close whatever ``setup`` or ``run`` left open."""


class AsyncClient(_Common, ABC):
    """An asyncio client; the benchmark runs it on one persistent event loop."""

    async def setup(self) -> None:
        """Untimed preparation."""

    @abstractmethod
    async def run(self, commands: list[str]) -> str:
        """One iteration."""

    async def teardown(self) -> None:
        """Close what is open."""


AnyClient = Client | AsyncClient
