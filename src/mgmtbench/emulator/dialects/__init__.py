"""Platforms whose configuration is not IOS-style lines: their own commands, one module each.

A platform's ``platform.toml`` names its dialect (``dialect = "junos"``); the dialect gives exec
commands (which take the place of a transcript of the same words, e.g. Junos's ``show
configuration`` that follows commits) and configuration-mode commands (``set``, ``delete``,
``commit``), and says whether other configuration lines are IOS-style lines (``free_config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mgmtbench.emulator.session import Action


@dataclass(frozen=True)
class Dialect:
    """A platform's own commands (patterns as :class:`~mgmtbench.emulator.grammar.CommandTree`
    takes them) by mode."""

    exec: Mapping[str, Action] = field(default_factory=dict)
    config: Mapping[str, Action] = field(default_factory=dict)
    free_config: bool = True


def dialect_commands(name: str) -> Dialect:
    """The dialect ``name`` ("" : none, IOS-style configuration)."""
    if not name:
        return Dialect()
    from mgmtbench.emulator.dialects import junos

    known = {"junos": junos.DIALECT}
    if name not in known:
        raise ValueError(f"unknown dialect {name!r} (known: {sorted(known)})")
    return known[name]
