"""The parsers :mod:`mgmtbench.emulator.coverage` tries on every answered show command, one
module each (``ntc``: ntc-templates' TextFSM templates; ``genie``: pyATS's Genie parsers), with
``NAME`` and ``parses(platform, command, text)`` (None when it has no parser for the command)."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["PARSERS", "parser"]

PARSERS = ("ntc", "genie")


def parser(name: str) -> ModuleType:
    """The module of parser ``name``."""
    if name not in PARSERS:
        raise ValueError(f"unknown parser {name!r} (known: {', '.join(PARSERS)})")
    return importlib.import_module(f"{__name__}.{name}")
