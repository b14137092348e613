"""A platform's own commands, from one place: :func:`platform_commands`.

Two keys of ``platform.toml`` pick them, and both end up here as one :class:`Dialect`:

- ``dialect`` names a module of this package for platforms whose configuration is not IOS-style
  lines (``dialect = "junos"``): exec commands (which take the place of a transcript of the same
  words, e.g. Junos's ``show configuration`` that follows commits), configuration-mode commands
  (``set``, ``delete``, ``commit``) and whether other configuration lines are IOS-style lines
  (``free_config``);
- ``file_commands`` names a set of file commands over the device file system
  (:data:`FILE_COMMANDS`: ``ios``, ``asa``; :mod:`mgmtbench.emulator.cli.fileops`), which become
  the dialect's ``privileged`` commands: privileged exec only, in place of the session's built-in
  command of the same words (``write memory``).

The two keys stay apart because they vary apart: the ASA has the IOS-style configuration and
its own file commands, Junos its own configuration and (so far) only ``dir``; a platform may
combine any dialect with any file command set. The session builds its command trees from
:func:`platform_commands` alone (:func:`mgmtbench.emulator.cli.session.platform_trees`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from mgmtbench.emulator.cli import asafileops, fileops, revert
from mgmtbench.emulator.cli.dialects import eos, ios, junos, nxos
from mgmtbench.emulator.cli.engine import Action, Dialect
from mgmtbench.emulator.device.transcripts import PlatformStyle

__all__ = ["DIALECTS", "FILE_COMMANDS", "Dialect", "dialect_commands", "file_commands",
           "platform_commands"]

#: The dialects (``dialect`` in ``platform.toml``) by name.
DIALECTS: Mapping[str, Dialect] = {"junos": junos.DIALECT, "eos": eos.DIALECT,
                                   "nxos": nxos.DIALECT, "ios": ios.DIALECT}
#: The file command sets (``file_commands`` in ``platform.toml``): command patterns and their
#: actions. IOS's: copy, more, delete, the archive, ``configure replace`` and its revert timer
#: (:mod:`.revert`); the ASA's: ``more`` as IOS's, ``copy`` and ``delete`` worded as the ASA
#: words them (:mod:`.asafileops`).
FILE_COMMANDS: Mapping[str, Mapping[str, Action]] = {
    "": {},
    "ios": {**fileops.IOS_COMMANDS, **revert.COMMANDS},
    "asa": {**fileops.ASA_COMMANDS, **asafileops.COMMANDS},
}


def dialect_commands(name: str) -> Dialect:
    """The dialect ``name`` ("" : none, IOS-style configuration)."""
    if not name:
        return Dialect()
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r} (known: {sorted(DIALECTS)})")
    return DIALECTS[name]


def file_commands(name: str) -> dict[str, Action]:
    """The file commands of the set ``name`` (``file_commands`` in ``platform.toml``): command
    patterns and their actions."""
    try:
        return dict(FILE_COMMANDS[name])
    except KeyError:
        raise ValueError(f"file_commands {name!r}: choose one of "
                         f"{', '.join(repr(d) for d in FILE_COMMANDS)}") from None


def platform_commands(style: PlatformStyle) -> Dialect:
    """Every command the platform has of its own: its ``dialect`` with its ``file_commands``
    as the privileged part."""
    own = dialect_commands(style.dialect)
    files = file_commands(style.file_commands)
    return replace(own, privileged={**own.privileged, **files}) if files else own
