"""The tools :mod:`mgmtbench.emulator.coverage` runs, one module each (``napalm``, ``ansible``,
``pyats``), found by name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from types import ModuleType

from mgmtbench.emulator.coverage import Outcome, Target

__all__ = ["TOOLS", "Runner", "tool"]

#: The tools, in the table's order.
TOOLS = ("napalm", "ansible", "pyats")
Runner = Callable[[Target], list[Outcome]]


def tool(name: str) -> ModuleType:
    """The module of tool ``name`` (ValueError, in one line, for another name)."""
    if name not in TOOLS:
        raise ValueError(f"unknown tool {name!r} (known: {', '.join(TOOLS)})")
    return importlib.import_module(f"{__name__}.{name}")


def drivers(name: str) -> Mapping[str, str]:
    """Platform -> the driver (or module) tool ``name`` uses for it."""
    platforms: Mapping[str, str] = tool(name).PLATFORMS
    return platforms
