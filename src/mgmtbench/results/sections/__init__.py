"""Report sections: one module per experiment, found by name, nothing to register.

A section module in this package (any module but ``base`` and ``_private`` ones) defines:

- ``EXPERIMENT``: the experiment it reports on, a value of the results' ``experiment`` column
  (``"transport"``, ``"concurrency"`` ...);
- ``render(frame: pd.DataFrame, context: ReportContext) -> Section``: the Markdown for that
  experiment's rows of the latest run, and the charts it wrote to ``context.out``;
- optionally ``KEYS``: the columns that tell one benchmark from another across runs, for the
  run-against-run comparison (default: the benchmark's ``name``).

Reporting on a new experiment = one benchmark file that records ``extra_info["experiment"]`` plus
one module here. Experiments without a module get ``base.generic``'s table.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from mgmtbench.results.sections.base import ReportContext, Section

__all__ = ["ReportContext", "Section", "SectionModule", "discover"]


@dataclass(frozen=True)
class SectionModule:
    """A discovered section module: its experiment, its ``render`` and its comparison keys."""

    name: str
    experiment: str
    render: Callable[[pd.DataFrame, ReportContext], Section]
    keys: tuple[str, ...] = ("name",)


def discover() -> dict[str, SectionModule]:
    """The section modules of this package (``__path__``), by experiment."""
    found: dict[str, SectionModule] = {}
    for info in pkgutil.iter_modules(__path__, f"{__name__}."):
        short = info.name.rpartition(".")[2]
        if short == "base" or short.startswith("_"):
            continue
        module = importlib.import_module(info.name)
        experiment = getattr(module, "EXPERIMENT", None)
        render = getattr(module, "render", None)
        if not isinstance(experiment, str) or not callable(render):
            raise TypeError(f"{info.name}: a report section module defines EXPERIMENT = '...' "
                            "and render(frame, context) -> Section")
        if experiment in found:
            raise TypeError(f"{info.name} and {found[experiment].name} both report on "
                            f"experiment {experiment!r}")
        found[experiment] = SectionModule(info.name, experiment, render,
                                          tuple(getattr(module, "KEYS", ("name",))))
    return found
