"""``mgmtbench report``: a Markdown report with tables and PNG charts from saved runs, and the same
report as one self-contained HTML file (:mod:`mgmtbench.results.html`) next to it.

The report opens with what the latest run found and the charts read first
(:mod:`mgmtbench.results.overview`: findings in sentences, the run's warnings, heatmaps,
speed-ups, time against RTT and commands), from its transport benchmarks. Then the composer:
the latest run's rows, split by ``experiment``, each experiment rendered by its
section module (``mgmtbench.results.sections``), in a stable order (transport, concurrency, then
the others alphabetically); an experiment without a section module gets a generic table. Every
run's rows are there too (``ReportContext.runs``) for sections that aggregate across runs. With
two or more runs, the latest is compared with the one before, experiment by experiment (rows
recorded with ``compare=False``, records of facts rather than measurements, left out).

Runs are read as streams and checked (:mod:`mgmtbench.results.runfile`); a benchmark repeated
in a run (the same section ``KEYS``) is one row, the mean of its repeats, so tables and charts
grow with the cells measured, not with the benchmarks. The report is built in a new folder and
renamed into place at the end (:mod:`mgmtbench.results.output`): nothing partial is left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.results import emulated_vs_real
from mgmtbench.results.compare import cells, deltas
from mgmtbench.results.emulated_vs_real import Pairing
from mgmtbench.results.html import write_html
from mgmtbench.results.load import load_run
from mgmtbench.results.output import staged_folder
from mgmtbench.results.overview import markdown as opening_lines
from mgmtbench.results.overview import overview
from mgmtbench.results.sections import SectionModule, discover
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

__all__ = ["FIRST", "markdown_table", "ordered", "render_sections", "write_report"]

FIRST = ("transport", "concurrency")  # then the other experiments, alphabetically


def write_report(paths: list[Path], out: Path, baseline: tuple[str, str] | None = None,
                 workers: int = 100, commands: int = 5, top: int = 10,
                 skip: Callable[[ResultsError], None] | None = None,
                 pairing: Pairing | None = None,
                 notice: Callable[[str], None] | None = None) -> Path:
    """Write ``out/report.md`` (and its charts) for the runs in ``paths``, and ``out/report.html``,
    the same report in one file; return the Markdown's path. It opens with what the latest
    run's transport benchmarks found.
    Concurrency runs get curves and a projection to fleets of 100/1,000/10,000 devices with
    ``workers`` concurrent sessions running ``commands`` commands each; rankings show ``top``
    rows. A run that cannot be used raises :class:`ResultsError`, or with ``skip`` is passed to
    it and left out; ``out`` is written whole or not at all. When the runs hold transport
    results both on inventory hosts and on the lab, an "Emulated vs real" section pairs them
    (:mod:`mgmtbench.results.emulated_vs_real`, hosts matched to profiles by ``pairing``).
    ``notice`` is told, in one line, of the staging folders of killed reports it cleared."""
    with staged_folder(out, notice) as stage:
        used, frames = [], []
        for path in paths:
            try:
                frames.append(load_run(path))
                used.append(path)
            except ResultsError as exc:
                if skip is None:
                    raise
                skip(exc)
        if not frames:
            raise ResultsError(f"none of the {len(paths)} run files could be used")
        modules = discover()
        context = ReportContext(stage, baseline, workers=workers, project_commands=commands,
                                top=top, runs=frames[0] if len(frames) == 1
                                else pd.concat(frames, ignore_index=True))
        lines = ["# mgmtbench report", "", f"Runs: {', '.join(p.name for p in used)}", ""]
        opening = overview(frames[-1], stage)
        if opening is not None:
            lines += opening_lines(opening)
        for section in render_sections(frames[-1], context, modules):
            lines += section.lines
        assert context.runs is not None
        side_by_side = emulated_vs_real.render(context.runs, pairing or Pairing())
        if side_by_side is not None:
            lines += side_by_side.lines
        if len(frames) > 1:
            lines += [f"## {used[-1].name} against {used[-2].name}", "",
                      *_comparison(frames[-2], frames[-1], modules,
                                   paired=side_by_side is not None)]
        text = "\n".join(lines)
        (stage / "report.md").write_text(text)
        write_html(text, stage)
    return out / "report.md"


def ordered(experiments: Iterable[str]) -> list[str]:
    """``experiments`` in report order: those in ``FIRST``, then the others alphabetically."""
    return sorted(set(experiments),
                  key=lambda e: (FIRST.index(e) if e in FIRST else len(FIRST), e))


def render_sections(frame: pd.DataFrame, context: ReportContext,
                    modules: dict[str, SectionModule] | None = None) -> list[Section]:
    """A section per experiment in ``frame``, by its section module (default: the discovered
    ones) or, without one, the generic table."""
    modules = discover() if modules is None else modules
    sections = []
    for experiment in ordered(frame["experiment"]):
        module = modules.get(experiment)
        keys = module.keys if module else ("name",)
        rows = frame[frame["experiment"] == experiment]
        distinct = cells(rows, keys)
        section = module.render(distinct, context) if module else generic(experiment, distinct)
        if len(distinct) < len(rows):
            note = (f"{len(rows):,} benchmarks in {len(distinct):,} cells: a benchmark repeated "
                    f"with the same {', '.join(k for k in keys if k in rows)} is shown once, "
                    "its figures the mean of its repeats.")
            section = Section([*section.lines[:2], note, "", *section.lines[2:]],
                              section.charts)
        sections.append(section)
    return sections


def _compared(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a run-against-run comparison considers: not those recorded with
    ``compare=False``."""
    if "compare" not in frame:
        return frame
    return frame[~frame["compare"].eq(False)]


def _comparison(old: pd.DataFrame, new: pd.DataFrame,
                modules: dict[str, SectionModule], paired: bool = False) -> list[str]:
    """The benchmarks of ``new`` whose mean moved beyond the runs' noise against ``old``,
    matched within each experiment by its section's ``KEYS`` (``paired``: the runs' lab and
    inventory results are side by side in "Emulated vs real")."""
    old, new = _compared(old), _compared(new)
    common = ordered(set(old["experiment"]) & set(new["experiment"]))
    compared, flagged_count, tables = 0, 0, []
    for experiment in common:
        module = modules.get(experiment)
        keys = [k for k in (module.keys if module else ()) if k in old and k in new] or ["name"]
        before = cells(old[old["experiment"] == experiment], keys)
        after = cells(new[new["experiment"] == experiment], keys)
        if before[keys].merge(after[keys]).empty:
            continue  # this experiment ran with other params
        change = deltas(before, after, keys)
        flagged = change[change["significant"]]
        compared, flagged_count = compared + len(change), flagged_count + len(flagged)
        if not flagged.empty:
            tables += [f"### {experiment}", ""] if len(common) > 1 else []
            tables += [markdown_table(flagged[[*keys, "mean_ms_old", "mean_ms_new",
                                               "change_pct"]]), ""]
    if not compared:
        return ["No benchmark in common (other experiments or params)"
                + ("; lab and inventory results are side by side in \"Emulated vs real\"."
                   if paired else "."), ""]
    return [f"{compared} benchmarks in common; {flagged_count} changed by more than their "
            "noise (3 standard errors and 2 %).", "", *tables]
