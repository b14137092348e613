"""``mgmtbench report``: a Markdown report with tables and PNG charts from saved runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.results.charts import bars_per_profile, time_vs_commands, time_vs_rtt
from mgmtbench.results.compare import deltas, speedups
from mgmtbench.results.load import ResultsError, load_runs


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


def write_report(paths: list[Path], out: Path, baseline: tuple[str, str] | None = None) -> Path:
    """Write ``out/report.md`` (and its charts) for the runs in ``paths``; return its path."""
    frames = [load_runs([p]) for p in paths]
    out.mkdir(parents=True, exist_ok=True)
    latest = frames[-1]
    lines = ["# mgmtbench report", "", f"Runs: {', '.join(p.name for p in paths)}", ""]
    if "client" not in latest:
        raise ResultsError(f"{paths[-1]}: no transport-mode benchmarks to report on")
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
