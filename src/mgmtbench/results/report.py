"""``mgmtbench report``: a Markdown report with tables and PNG charts from saved runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.results.charts import (
    bars_per_profile,
    concurrency_curves,
    time_vs_commands,
    time_vs_rtt,
)
from mgmtbench.results.compare import deltas, speedups
from mgmtbench.results.load import ResultsError, load_runs
from mgmtbench.results.projection import fleet_rows, project, projection_table

FLEET_COLUMNS = ["client", "concurrency", "median_ms", "session_ms", "connect_exec_ms", "finish_ms",
                 "exec_again_ms", "read_output_ms", "close_ms", "client_cpu_ms_per_session", "client_cpu_pct",
                 "client_peak_rss_mib", "emulator_cpu_pct"]


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


def write_report(paths: list[Path], out: Path, baseline: tuple[str, str] | None = None,
                 workers: int = 100, commands: int = 5) -> Path:
    """Write ``out/report.md`` (and its charts) for the runs in ``paths``; return its path.
    Concurrency runs get curves and a projection to fleets of 100/1,000/10,000 devices with
    ``workers`` concurrent sessions running ``commands`` commands each."""
    frames = [load_runs([p]) for p in paths]
    out.mkdir(parents=True, exist_ok=True)
    latest = frames[-1]
    lines = ["# mgmtbench report", "", f"Runs: {', '.join(p.name for p in paths)}", ""]
    modes = latest[latest["mode"].notna()] if "mode" in latest else latest.iloc[0:0]
    fleet = fleet_rows(latest)
    if modes.empty and fleet.empty:
        raise ResultsError(f"{paths[-1]}: no transport-mode or concurrency benchmarks to report on")
    if not modes.empty:
        lines += _modes_section(modes, out, baseline)
    if not fleet.empty:
        lines += _fleet_section(fleet, out, workers, commands)
    if len(frames) > 1:
        change = deltas(frames[-2], frames[-1])
        flagged = change[change["significant"]]
        lines += [f"## {paths[-1].name} against {paths[-2].name}", "",
                  f"{len(change)} benchmarks in common; {len(flagged)} changed by more than their "
                  "noise (3 standard errors and 2 %).", ""]
        if not flagged.empty:
            lines += [markdown_table(flagged[[c for c in [*change.columns[:4], "mean_ms_old",
                                                          "mean_ms_new", "change_pct"]
                                              if c in flagged]]), ""]
    path = out / "report.md"
    path.write_text("\n".join(lines))
    return path


def _fleet_section(fleet: pd.DataFrame, out: Path, workers: int, commands: int) -> list[str]:
    lines = []
    for profile, group in fleet.groupby("profile", sort=False):
        info = group.iloc[0]
        lines += [f"## Concurrency: {profile}", "",
                  f"Backend {info.get('backend')}, measured RTT {info.get('measured_rtt_ms')} ms; "
                  f"each session to its own device runs {info.get('command')!r} twice. Medians "
                  "in ms; CPU % of one core over the makespan; - where the library does not "
                  "separate a phase (its time is in the phase before).", "",
                  markdown_table(group.sort_values(["concurrency", "median_ms"])[
                      [c for c in FLEET_COLUMNS if c in group]].astype({"concurrency": int})
                      .rename(columns={"median_ms": "makespan_ms"})), ""]
        charts = concurrency_curves(fleet, out, str(profile))
        lines += [f"![{c.stem}]({c.name})" for c in charts] + [""]
    projected = projection_table(project(fleet, workers=workers, commands=commands))
    lines += [f"## Projection: {commands} commands per device, {workers} workers", "",
              "Fleets run in waves of the workers; measured = the benchmark's own figure, "
              "projected = waves and command count scaled from a measured point, "
              "interpolated/extrapolated = a concurrency that was not measured.", "",
              markdown_table(projected), ""]
    return lines


def _modes_section(latest: pd.DataFrame, out: Path, baseline: tuple[str, str] | None) -> list[str]:
    lines: list[str] = []
    table = speedups(latest, baseline)
    against = f"{baseline[0]} {baseline[1]}" if baseline else "the slowest client/mode"
    for (profile, commands), group in table.groupby(["profile", "commands"], sort=False):
        info = latest[(latest["profile"] == profile) & (latest["commands"] == commands)].iloc[0]
        lines += [f"## {profile}, {commands} commands", "",
                  f"Backend {info.get('backend')}, configured RTT {info.get('configured_rtt_ms')} "
                  f"ms, measured {info.get('measured_rtt_ms')} ms. Speed-up against {against}.",
                  "", markdown_table(group[[c for c in ["client", "mode", "mean_ms", "p95_ms",
                                                          "rtts", "packets_per_iteration",
                                                          "speedup"] if c in group]]), ""]
    charts = bars_per_profile(latest, out, int(latest["commands"].mode()[0]))
    for profile in latest["profile"].unique():
        if latest[latest["profile"] == profile]["commands"].nunique() > 1:
            charts.append(time_vs_commands(latest, out, profile))  # type: ignore[arg-type]
    for commands in latest["commands"].unique():
        if latest[latest["commands"] == commands]["profile"].nunique() > 1:
            charts.append(time_vs_rtt(latest, out, int(commands)))  # type: ignore[arg-type]
    lines += ["## Charts", ""] + [f"![{c.stem}]({c.name})" for c in charts if c is not None] + [""]
    return lines
