"""Concurrency (``benchmarks/test_concurrency.py``): per profile, each client's makespan, phases,
CPU and memory at each number of concurrent sessions, curves, and the projection to fleets of
100/1,000/10,000 devices."""

from __future__ import annotations

import pandas as pd

from mgmtbench.results import tuning
from mgmtbench.results.charts import concurrency_curves
from mgmtbench.results.projection import fleet_rows, project, projection_table
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "concurrency"
KEYS = ("client", "profile", "concurrency")
COLUMNS = ["client", "concurrency", "median_ms", "session_ms", "connect_exec_ms", "finish_ms",
           "exec_again_ms", "read_output_ms", "close_ms", "client_cpu_ms_per_session",
           "client_cpu_pct", "client_peak_rss_mib", "emulator_cpu_pct"]


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Per profile a table and curves against concurrency, then the fleet projection with
    ``context.workers`` and ``context.project_commands``."""
    fleet = fleet_rows(frame)
    if fleet.empty:  # no makespans recorded: nothing to draw or project
        return generic(EXPERIMENT, frame)
    lines: list[str] = []
    charts = []
    for profile, group in fleet.groupby("profile", sort=False):
        info = group.iloc[0]
        lines += [f"## Concurrency: {profile}", "",
                  f"Backend {info.get('backend')}, measured RTT {info.get('measured_rtt_ms')} ms; "
                  f"each session to its own device runs {info.get('command')!r} twice. Medians "
                  "in ms; CPU % of one core over the makespan; - where the library does not "
                  "separate a phase (its time is in the phase before).", "",
                  markdown_table(group.sort_values(["concurrency", "median_ms"])[
                      [c for c in COLUMNS if c in group]].astype({"concurrency": int})
                      .rename(columns={"median_ms": "makespan_ms"})), ""]
        drawn = concurrency_curves(fleet, context.out, str(profile))
        lines += [f"![{c.stem}]({c.name})" for c in drawn] + [""]
        charts += drawn
    workers, commands = context.workers, context.project_commands
    projected = projection_table(project(fleet, workers=workers, commands=commands))
    lines += [f"## Projection: {commands} commands per device, {workers} workers", "",
              "Fleets run in waves of the workers; measured = the benchmark's own figure, "
              "projected = waves and command count scaled from a measured point, "
              "interpolated/extrapolated = a concurrency that was not measured.", "",
              markdown_table(projected), ""]
    lines += tuning.fleet_lines(fleet)
    return Section(lines, charts)
