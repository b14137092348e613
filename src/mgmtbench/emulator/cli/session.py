"""A CLI session with every command its platform has: :class:`CliSession`, what the transports
(SSH exec, the SSH shell, HTTPS) run and what tests drive.

The engine (:mod:`.engine`) runs the commands; which commands a platform has of its own is
:mod:`.dialects`' to say, and those build on the engine. This module puts the two together:
:func:`platform_trees` is the engine's built-in commands with the platform's own, built once per
platform. The engine's names a session's user needs (:class:`Reply`, :class:`Mode` ...) are
here too.
"""

from __future__ import annotations

from functools import cache

from mgmtbench.emulator.cli.dialects import platform_commands
from mgmtbench.emulator.cli.engine import (
    CHUNK,
    Action,
    Mode,
    Question,
    Reply,
    Session,
    Trees,
    build_trees,
)
from mgmtbench.emulator.device.transcripts import Platform

__all__ = ["CHUNK", "Action", "CliSession", "Mode", "Question", "Reply", "platform_trees"]


class CliSession(Session):
    """One CLI session on a device (:class:`~.engine.Session`), with the built-in commands, the
    platform's transcripts and the platform's own commands (:func:`platform_trees`)."""

    def trees(self) -> Trees:
        """The commands of this session's platform, by mode."""
        return platform_trees(self.device.platform)


@cache
def platform_trees(platform: Platform) -> Trees:
    """The command trees of ``platform``: the engine's with the platform's own commands
    (:func:`~.dialects.platform_commands`)."""
    return build_trees(platform, platform_commands(platform.style))
