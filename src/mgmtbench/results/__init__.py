"""Results: saved pytest-benchmark runs as one pandas DataFrame, comparisons, charts, reports.

Needs the ``results`` extra (pandas, matplotlib): ``pip install 'mgmtbench[results]'``. The names
below load on first use, so ``mgmtbench serve`` (whose CLI registers ``mgmtbench report`` too)
runs without pandas, as in the device image.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mgmtbench.errors import ResultsError

if TYPE_CHECKING:
    from mgmtbench.results.compare import by_commands, by_rtt, deltas, speedups
    from mgmtbench.results.load import load_runs, saved_runs

__all__ = ["ResultsError", "by_commands", "by_rtt", "deltas", "load_runs", "saved_runs", "speedups"]
_HOMES = {"by_commands": "compare", "by_rtt": "compare", "deltas": "compare",
          "speedups": "compare", "load_runs": "load", "saved_runs": "load"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"mgmtbench.results.{_HOMES[name]}"), name)
