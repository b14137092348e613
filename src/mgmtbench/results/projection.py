"""Fleet-size projections from measured concurrency curves.

The question a user asks: how long to run K commands on D devices with W workers (concurrent
sessions), per client? The concurrency benchmark measures, per client and profile, the makespan
of ``c`` sessions at once, each running the command twice, and each session's phases. From those:

- **per session** at concurrency ``c``: ``per_command`` = ``exec_again`` + ``read_output`` (a
  command on a kept session) and ``setup`` = ``connect_exec`` + ``finish`` + ``close`` -
  ``per_command`` (connecting, logging in and disconnecting); a session of K commands takes
  ``setup + K * per_command``, so the makespan for K commands is the measured makespan scaled by
  ``(setup + K * per_command) / (setup + 2 * per_command)``;
- **per fleet**: D devices with W workers run in ``ceil(D / W)`` waves of ``min(W, D)`` sessions
  (a conservative model: a worker pool refills as sessions end, so real runs can be a little
  faster than waves).

Each figure says what it rests on (``basis``): ``measured`` (one wave at a measured concurrency,
K = 2: the benchmark's own number), ``projected`` (waves and/or K-scaling of a measured point),
``interpolated`` (a concurrency between two measured ones, linear in makespan) or
``extrapolated`` (a concurrency beyond the largest measured one, continuing the last segment).
"""

from __future__ import annotations

import math

import pandas as pd

MEASURED_COMMANDS = 2  # the concurrency benchmark runs its command twice per session
BASES = ("measured", "projected", "interpolated", "extrapolated")


def fleet_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The concurrency benchmark's rows (those with a ``concurrency`` and a makespan)."""
    if "concurrency" not in frame or "makespan_ms" not in frame:
        return frame.iloc[0:0]
    return frame[frame["concurrency"].notna() & frame["makespan_ms"].notna()]


def _session_scale(row: pd.Series, commands: int) -> float:
    def ms(phase: str) -> float:
        value = row.get(f"{phase}_ms")
        return 0.0 if value is None or pd.isna(value) else float(value)

    per_command = ms("exec_again") + ms("read_output")
    setup = max(0.0, ms("connect_exec") + ms("finish") + ms("close") - per_command)
    measured = setup + MEASURED_COMMANDS * per_command
    return (setup + commands * per_command) / measured if measured > 0 else 1.0


def _makespan(points: pd.DataFrame, concurrency: int, commands: int) -> tuple[float, str]:
    """Makespan in ms of ``concurrency`` sessions of ``commands`` commands, and its basis."""
    by_c = points.set_index("concurrency").sort_index()
    levels = [int(c) for c in by_c.index]
    if concurrency in levels:
        row = by_c.loc[concurrency]
        basis = "measured" if commands == MEASURED_COMMANDS else "projected"
        return float(row["median_ms"]) * _session_scale(row, commands), basis
    if len(levels) < 2:
        return math.nan, "extrapolated"
    if concurrency < levels[0]:
        low, high, basis = levels[0], levels[1], "extrapolated"
    elif concurrency > levels[-1]:
        low, high, basis = levels[-2], levels[-1], "extrapolated"
    else:
        high = next(c for c in levels if c > concurrency)
        low, basis = levels[levels.index(high) - 1], "interpolated"
    lo, hi = by_c.loc[low], by_c.loc[high]
    slope = (float(hi["median_ms"]) - float(lo["median_ms"])) / (high - low)
    makespan = max(float(lo["median_ms"]) + slope * (concurrency - low), 0.0)
    nearest = lo if abs(concurrency - low) <= abs(concurrency - high) else hi
    return makespan * _session_scale(nearest, commands), basis


def project(frame: pd.DataFrame, devices: tuple[int, ...] = (100, 1000, 10000),
            workers: int = 100, commands: int = 5) -> pd.DataFrame:
    """Seconds to run ``commands`` commands on each fleet size in ``devices`` with ``workers``
    concurrent sessions, per profile and client; long form with a ``basis`` column."""
    rows = []
    fleet = fleet_rows(frame)
    for (profile, client), points in fleet.groupby(["profile", "client"], sort=False):
        points = points.drop_duplicates("concurrency", keep="last")
        for size in devices:
            width = min(workers, size)
            makespan_ms, basis = _makespan(points, width, commands)
            waves = math.ceil(size / width)
            if waves > 1 and basis == "measured":
                basis = "projected"
            rows.append({"profile": profile, "client": client, "devices": size,
                         "workers": workers, "commands": commands,
                         "seconds": waves * makespan_ms / 1000, "basis": basis})
    return pd.DataFrame(rows, columns=["profile", "client", "devices", "workers", "commands",
                                       "seconds", "basis"])


def projection_table(projected: pd.DataFrame) -> pd.DataFrame:
    """Wide form for reading: a row per profile and client, a column per fleet size, each cell
    ``12.3 s (measured)``."""
    if projected.empty:
        return projected
    cells = projected.assign(cell=[
        "-" if math.isnan(s) else f"{duration(s)} ({b})"
        for s, b in zip(projected["seconds"], projected["basis"], strict=True)])
    wide = cells.pivot_table(index=["profile", "client"], columns="devices", values="cell",
                             aggfunc="first", sort=False)
    wide.columns = [f"{c:,} devices" for c in wide.columns]
    return wide.reset_index()


def duration(seconds: float) -> str:
    """A time to read at a glance: seconds, minutes or hours, one decimal."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
