"""Fleets on Dask (``benchmarks/test_fleet_dask.py``): per profile, each fleet size's measured
makespan beside the projection the concurrency section makes from its one-wave curves (same
client, profile, sessions at once and commands), where the CPU went, and the shards' start skew.

The projection needs the concurrency benchmark's rows of the same client and profile: from this
run or any other run given to ``mgmtbench report`` (the latest of each concurrency is used).
"""

from __future__ import annotations

import math

import pandas as pd

from mgmtbench.results.charts import lines
from mgmtbench.results.projection import MEASURED_COMMANDS, duration, fleet_rows, project
from mgmtbench.results.sections.base import ReportContext, Section, markdown_table

EXPERIMENT = "fleet-dask"
KEYS = ("client", "profile", "devices", "shards", "fleet_concurrency")


def projected(row: pd.Series, curves: pd.DataFrame) -> tuple[float, str]:
    """Seconds and basis of the projection for ``row``'s fleet (NaN and ``-`` without curves)."""
    points = curves[(curves["profile"] == row["profile"]) & (curves["client"] == row["client"])]
    if points.empty:
        return math.nan, "-"
    found = project(points, devices=(int(row["devices"]),), workers=int(row["fleet_concurrency"]),
                    commands=MEASURED_COMMANDS)
    return float(found["seconds"].iloc[0]), str(found["basis"].iloc[0])


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """A table per profile (measured against projected, CPU, skew) and a makespan chart."""
    runs = context.runs if context.runs is not None else frame
    curves = fleet_rows(runs[runs["experiment"] == "concurrency"]) if "experiment" in runs \
        else runs.iloc[0:0]
    lines_out: list[str] = []
    charts = []
    for profile, group in frame.groupby("profile", sort=False):
        group = group.sort_values(["client", "devices"])
        found = [projected(row, curves) for _, row in group.iterrows()]
        group = group.assign(projected_s=[seconds for seconds, _ in found])
        rows = []
        for (_, row), (seconds, basis) in zip(group.iterrows(), found, strict=True):
            measured = float(row["makespan_ms"]) / 1000
            rows.append({
                "client": row["client"], "devices": int(row["devices"]),
                "shards": int(row["shards"]), "at once": int(row["fleet_concurrency"]),
                "measured": duration(measured),
                "projected": "-" if math.isnan(seconds) else f"{duration(seconds)} ({basis})",
                "measured / projected": "-" if math.isnan(seconds) else f"{measured / seconds:.2f}",
                "start skew ms": row["start_skew_ms"],
                "client CPU s": row["client_cpu_s"], "emulator CPU s": row["emulator_cpu_s"],
                "link CPU s": row["link_cpu_s"], "coordinator CPU s": row["coordinator_cpu_s"],
                "sessions/s": row["sessions_per_s"],
            })
        info = group.iloc[0]
        lines_out += [
            f"## Fleets on Dask: {profile}", "",
            f"Cluster {info.get('cluster')}, backend {info.get('backend')}, measured RTT "
            f"{info.get('measured_rtt_ms')} ms; each session to its own device runs "
            f"{info.get('command')!r} twice; the shards run their devices in waves of their share "
            "of the sessions at once. Measured: the makespan on the shards' clocks (first "
            "release to last end); projected: the concurrency benchmark's curve at the same "
            "sessions at once, in waves (`projection`). CPU in seconds per round, summed over "
            "the shards: the fleet runners (client), the emulators, the links (the delay line "
            "where a lab has one) and the Dask workers themselves (coordinator).", "",
            markdown_table(pd.DataFrame(rows)), ""]
        data = {}
        for client, part in group.groupby("client", sort=False):
            sizes = part["devices"].astype(int).to_numpy()
            data[f"{client} measured"] = pd.Series(part["makespan_ms"].to_numpy() / 1000, sizes)
            data[f"{client} projected"] = pd.Series(part["projected_s"].to_numpy(), sizes)
        table = pd.DataFrame(data).sort_index().dropna(axis=1, how="all")
        chart = lines(table, context.out, f"fleet_dask_{profile}",
                      f"{profile}: fleet makespan on Dask, measured and projected", "devices",
                      "makespan, s", logx=True)
        if chart is not None:
            lines_out += [f"![{chart.stem}]({chart.name})", ""]
            charts.append(chart)
    return Section(lines_out, charts)
