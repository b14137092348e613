"""What every report section shares: the report's options (``ReportContext``), a section's result
(``Section``), Markdown tables, and the generic table for experiments without a section module."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

GENERIC_COLUMNS = ["name", "mean_ms", "median_ms", "min_ms", "max_ms", "stddev_ms", "rounds"]
GENERIC_ROWS = 500  # the generic table shows at most this many benchmarks


@dataclass(frozen=True)
class ReportContext:
    """The report's options, as ``mgmtbench report`` got them.

    ``out`` is the folder charts are written to (next to ``report.md``); ``baseline`` the
    client/mode speed-ups are measured against (None: the slowest); ``workers`` and
    ``project_commands`` size the fleet projections; ``top`` is how many rows a ranking shows.
    ``runs`` holds the rows of every run the report was given (``run`` tells them apart), for a
    section that aggregates across runs; None: only the latest run's rows are known.
    """

    out: Path
    baseline: tuple[str, str] | None = None
    workers: int = 100
    project_commands: int = 5
    top: int = 10
    runs: pd.DataFrame | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Section:
    """One experiment's part of the report: Markdown lines (headings, tables, chart links) and
    the chart files it wrote into ``ReportContext.out``."""

    lines: list[str]
    charts: list[Path] = field(default_factory=list)


def markdown_table(frame: pd.DataFrame, floats: str = "{:.1f}") -> str:
    """A Markdown table (no extra dependency)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = []
    for values in frame.itertuples(index=False):
        cells = ["-" if isinstance(v, float) and v != v else  # NaN: not measured
                 floats.format(v) if isinstance(v, float) else str(v) for v in values]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join([header, rule, *rows])


def generic(experiment: str, frame: pd.DataFrame) -> Section:
    """Every benchmark of ``experiment`` with its times: the section of an experiment that has
    no section module (yet)."""
    columns = [c for c in GENERIC_COLUMNS if c in frame and frame[c].notna().any()]
    shown = (f"{len(frame)} benchmarks, times in ms." if len(frame) <= GENERIC_ROWS else
             f"{len(frame):,} benchmarks, times in ms; the first {GENERIC_ROWS} shown (the run "
             "file holds them all).")
    return Section([f"## {experiment}", "", shown, "",
                    markdown_table(frame[columns].head(GENERIC_ROWS)), ""])
