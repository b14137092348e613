"""Comparisons over a results frame: speed-ups, RTT counts, scaling, run-vs-run deltas."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from mgmtbench.errors import ResultsError

KEYS = ["client", "mode", "profile", "commands"]


def _need(frame: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in frame]
    if missing:
        raise ResultsError(f"these runs have no {', '.join(missing)} column(s): they are not "
                           "transport-mode benchmarks")


def cells(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """One row per distinct ``keys`` (those of them ``frame`` has): a benchmark repeated in a
    run gets the mean of its repeats' float columns and its first row's other values;
    ``frame`` itself when nothing repeats (or the keys hold values that cannot be compared)."""
    keys = [k for k in keys if k in frame]
    try:
        if not keys or not frame.duplicated(keys).any():
            return frame
    except TypeError:  # unhashable values (lists) in a key column: nothing to group by
        return frame
    floats = [c for c in frame.columns
              if c not in keys and pd.api.types.is_float_dtype(frame[c])]
    how = {c: "mean" if c in floats else "first" for c in frame.columns if c not in keys}
    grouped = frame.groupby(keys, sort=False, dropna=False).agg(how).reset_index()
    return grouped[list(frame.columns)]


def speedups(frame: pd.DataFrame, baseline: tuple[str, str] | None = None) -> pd.DataFrame:
    """Per profile and command count: mean, p95, RTTs and speed-up against ``baseline``
    (client, mode), or against the slowest client/mode of the group."""
    _need(frame, [*KEYS, "mean_ms"])
    out = []
    for (profile, commands), group in frame.groupby(["profile", "commands"], sort=False):
        if baseline is not None:
            base = group[(group["client"] == baseline[0]) & (group["mode"] == baseline[1])]
            if base.empty:
                raise ResultsError(f"baseline {baseline[0]}/{baseline[1]} is not in the "
                                   f"{profile}, {commands}-command results")
            reference = float(base["mean_ms"].mean())
        else:
            reference = float(group["mean_ms"].max())
        table = group[[c for c in [*KEYS, "mean_ms", "p95_ms", "rtts", "packets_per_iteration",
                                   "backend", "measured_rtt_ms"] if c in group]].copy()
        table["speedup"] = reference / table["mean_ms"]
        out.append(table.sort_values("mean_ms"))
    return pd.concat(out, ignore_index=True)


def by_commands(frame: pd.DataFrame, profile: str) -> pd.DataFrame:
    """Mean ms per client/mode (columns) against the command count (index) at one profile."""
    _need(frame, [*KEYS, "mean_ms"])
    part = frame[frame["profile"] == profile]
    return part.pivot_table(index="commands", columns=["client", "mode"], values="mean_ms")


def by_rtt(frame: pd.DataFrame, commands: int) -> pd.DataFrame:
    """Mean ms per client/mode (columns) against the measured RTT (index) at one command count."""
    _need(frame, [*KEYS, "mean_ms", "measured_rtt_ms"])
    part = frame[frame["commands"] == commands]
    return part.pivot_table(index="measured_rtt_ms", columns=["client", "mode"],
                            values="mean_ms").sort_index()


def deltas(old: pd.DataFrame, new: pd.DataFrame, keys: list[str] | None = None,
           sigmas: float = 3.0) -> pd.DataFrame:
    """Run ``new`` against run ``old`` per benchmark: change of the mean, and whether it exceeds
    the runs' own noise (``sigmas`` standard errors of the difference, and 2 %)."""
    keys = keys or [k for k in KEYS if k in old and k in new] or ["name"]
    columns = [*keys, "mean_ms", "stddev_ms", "rounds"]
    _need(old, columns)
    _need(new, columns)
    old, new = cells(old[columns], keys), cells(new[columns], keys)  # a row per benchmark
    merged = old.merge(new, on=keys, suffixes=("_old", "_new"))
    if merged.empty:
        raise ResultsError("the two runs have no benchmark in common (different params?)")
    rounds_old = pd.to_numeric(merged["rounds_old"], errors="coerce").fillna(1).clip(lower=1)
    rounds_new = pd.to_numeric(merged["rounds_new"], errors="coerce").fillna(1).clip(lower=1)
    merged["change_pct"] = (merged["mean_ms_new"] / merged["mean_ms_old"] - 1) * 100
    merged["noise_ms"] = np.sqrt(merged["stddev_ms_old"] ** 2 / rounds_old
                                 + merged["stddev_ms_new"] ** 2 / rounds_new)
    difference = (merged["mean_ms_new"] - merged["mean_ms_old"]).abs()
    merged["significant"] = (difference > sigmas * merged["noise_ms"]) & (
        merged["change_pct"].abs() > 2)
    return merged.sort_values("change_pct", key=abs, ascending=False)
