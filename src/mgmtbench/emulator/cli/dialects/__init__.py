"""A platform's own commands, from one place: :func:`platform_commands`.

Two keys of ``platform.toml`` pick them, and both end up here as one :class:`Dialect`:

- ``dialect`` names a module of this package for platforms whose configuration is not IOS-style
  lines (``dialect = "junos"``): exec commands (which take the place of a transcript of the same
  words, e.g. Junos's ``show configuration`` that follows commits), configuration-mode commands
  (``set``, ``delete``, ``commit``) and whether other configuration lines are IOS-style lines
  (``free_config``);
- ``file_commands`` names a set of file commands over the device file system
  (:mod:`mgmtbench.emulator.cli.fileops`: ``ios``, ``asa``), which become the dialect's
  ``privileged`` commands: privileged exec only, in place of the session's built-in command of
  the same words (``write memory``).

The two keys stay apart because they vary apart: the ASA has the IOS-style configuration and
its own file commands, Junos its own configuration and (so far) only ``dir``; a platform may
combine any dialect with any file command set. The session builds its command trees from
:func:`platform_commands` alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mgmtbench.emulator.cli.session import Action
    from mgmtbench.emulator.device.transcripts import PlatformStyle


@dataclass(frozen=True)
class Dialect:
    """A platform's own commands (patterns as :class:`~mgmtbench.emulator.cli.grammar.CommandTree`
    takes them) by mode."""

    exec: Mapping[str, Action] = field(default_factory=dict)
    config: Mapping[str, Action] = field(default_factory=dict)
    free_config: bool = True
    #: Privileged exec only, in place of a built-in of the same words (the file commands).
    privileged: Mapping[str, Action] = field(default_factory=dict)


def dialect_commands(name: str) -> Dialect:
    """The dialect ``name`` ("" : none, IOS-style configuration)."""
    if not name:
        return Dialect()
    from mgmtbench.emulator.cli.dialects import junos

    known = {"junos": junos.DIALECT}
    if name not in known:
        raise ValueError(f"unknown dialect {name!r} (known: {sorted(known)})")
    return known[name]


def platform_commands(style: PlatformStyle) -> Dialect:
    """Every command the platform has of its own: its ``dialect`` with its ``file_commands``
    as the privileged part."""
    from mgmtbench.emulator.cli.fileops import dialect as file_commands  # it builds on the session

    own = dialect_commands(style.dialect)
    files = file_commands(style.file_commands)
    return replace(own, privileged={**own.privileged, **files}) if files else own
