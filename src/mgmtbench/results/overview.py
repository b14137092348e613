"""The report's opening: what the run found (:mod:`mgmtbench.results.findings`), then the charts
people read first, all from the latest run's transport benchmarks:

- a client x mode heatmap per profile (:mod:`mgmtbench.results.heatmap`);
- the speed-up of each mode against ssh pty-fresh, time against RTT and time against the
  command count, each mode by its best client (:mod:`mgmtbench.results.mode_charts`).

Concurrency curves and the other experiments' charts are in their sections.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mgmtbench.results import findings as findings_module
from mgmtbench.results.findings import Findings
from mgmtbench.results.heatmap import heatmap
from mgmtbench.results.mode_charts import speedup_chart, time_vs_commands, time_vs_rtt
from mgmtbench.results.ways import reference_count, ways

__all__ = ["Overview", "markdown", "overview"]


@dataclass(frozen=True)
class Overview:
    """The findings and the opening charts (path, caption), in the order shown."""

    findings: Findings
    charts: list[tuple[Path, str]] = field(default_factory=list)


def overview(frame: pd.DataFrame, out: Path) -> Overview | None:
    """The opening of a report on ``frame`` (one run's rows), its charts written to ``out``;
    None if the run has no transport benchmarks."""
    rows = ways(frame)
    found = findings_module.find(frame, rows)
    if found is None:
        return None
    commands = reference_count(rows)
    charts: list[tuple[Path | None, str]] = []
    for profile in pd.unique(rows["profile"]):
        charts.append((heatmap(rows, out, str(profile), commands),
                       f"{profile}, {commands} commands: every client and mode"))
    charts.append((speedup_chart(rows, out, commands),
                   f"{commands} commands: each mode's speed-up against ssh pty-fresh"))
    charts.append((time_vs_rtt(rows, out, commands),
                   f"{commands} commands: time against RTT, each mode by its best client"))
    for profile in pd.unique(rows["profile"]):
        charts.append((time_vs_commands(rows, out, str(profile)),
                       f"{profile}: time against commands, each mode by its best client"))
    return Overview(found, [(path, caption) for path, caption in charts if path is not None])


def markdown(opening: Overview) -> list[str]:
    """The opening as Markdown: the findings, then the charts."""
    lines = findings_module.markdown(opening.findings)
    if opening.charts:
        lines += ["**Charts.** A heatmap of every client and mode per profile, each mode's "
                  "speed-up against ssh pty-fresh, and time against RTT and commands (each mode "
                  "by its best client; every transport in the same figure).", ""]
        lines += [f"![{caption}]({path.name})" for path, caption in opening.charts] + [""]
    return lines
