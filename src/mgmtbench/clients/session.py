"""The PTY modes for libraries that run their own PTY logic over one session object (Netmiko's
``ConnectHandler``, scrapli's ``Cli``).

A subclass provides the library's primitives; this class maps the modes onto them the same way:

- ``_open()``: a logged-in, prepared session (closed again by ``_open`` itself if preparing fails);
- ``_close(session)``: end it;
- ``_commands(session, commands)``: the commands' outputs, concatenated in order;
- ``_translating()``: the library's error translation, around every call;
- ``library``, ``driver_field``, ``driver_kind``: where the library's driver for a platform is
  named (:meth:`SessionClient.driver`).

Such a library logs in with a password or a key file and negotiates its own algorithms: the
adapter refuses the rest up front (:func:`~mgmtbench.clients.base.password_or_key_only`, with
its ``no_agent`` and ``no_algorithms`` reasons), and a platform it has no driver for.

``pty-kept`` opens the session in ``setup`` (untimed) and runs every iteration's commands on it;
``pty-fresh`` opens a session, runs the commands and closes it, all inside the iteration.
``pty-reuse`` (the study's: a kept connection, a new shell channel per iteration) only where the
library can open a new shell on its kept connection: the subclass then adds it to ``modes`` and
writes ``_in_new_channel``. ``teardown`` closes what ``setup`` opened.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from mgmtbench.clients.base import (
    KEPT_SHELL,
    REUSING_MODES,
    TranslatedClient,
    Transport,
    password_or_key_only,
)
from mgmtbench.emulator.device.transcripts import load_platform
from mgmtbench.errors import UsageError
from mgmtbench.targets import Target


class SessionClient(TranslatedClient):
    """A PTY adapter built from a library's session primitives (see the module)."""
    transport = Transport.SSH
    modes: ClassVar[tuple[str, ...]] = ("pty-fresh", KEPT_SHELL)

    #: The library (as the errors name it), the ``[clients]`` field of ``platform.toml`` that
    #: names its driver for a platform, and what the library calls that driver.
    library: ClassVar[str]
    driver_field: ClassVar[str]
    driver_kind: ClassVar[str]
    #: Why the library cannot use an agent at a given socket, and cannot choose SSH algorithms
    #: (``" (...)"`` in the :class:`UsageError`; empty: no reason given).
    no_agent: ClassVar[str] = ""
    no_algorithms: ClassVar[str] = ""

    _session: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`UsageError`) an auth method or algorithm choice this library cannot
        honour, and a platform it has no driver for."""
        password_or_key_only(cls.name, target, agent=cls.no_agent, algorithms=cls.no_algorithms)
        cls.driver(target.platform)

    @classmethod
    def driver(cls, platform: str) -> str:
        """The library's driver for ``platform``: the ``[clients] <driver_field>`` of its
        ``platform.toml`` (:class:`UsageError` if the platform has none)."""
        found: str | None = getattr(load_platform(platform).style.clients, cls.driver_field)
        if found is None:
            raise UsageError(f"{cls.library} has no {cls.driver_kind} for platform {platform!r}: "
                             f"add [clients] {cls.driver_field} to its platform.toml")
        return found

    @abstractmethod
    def _open(self) -> Any:
        """A new logged-in, prepared session."""

    @abstractmethod
    def _close(self, session: Any) -> None:
        """End ``session``."""

    @abstractmethod
    def _commands(self, session: Any, commands: list[str]) -> str:
        """Run ``commands`` on ``session``: their outputs, concatenated in order."""

    def _in_new_channel(self, session: Any, commands: list[str]) -> str:
        """``pty-reuse``: open and prepare a new shell channel on ``session``'s connection, run
        ``commands`` there, close the channel (only for a library that lists ``pty-reuse``)."""
        raise NotImplementedError(f"{self.name} cannot open a new shell on a kept connection")

    def setup(self) -> None:
        """Untimed preparation: open the session here for the modes that reuse one."""
        if self.mode in REUSING_MODES:
            with self._translating():
                self._session = self._open()

    def _run(self, commands: list[str]) -> str:
        if self.mode == KEPT_SHELL:
            return self._commands(self._session, commands)
        if self.mode == "pty-reuse":
            return self._in_new_channel(self._session, commands)
        session = self._open()  # pty-fresh
        try:
            return self._commands(session, commands)
        finally:
            self._close(session)

    def teardown(self) -> None:
        """Close what ``setup`` opened."""
        if self._session is not None:
            session, self._session = self._session, None
            with self._translating():
                self._close(session)
