"""gNMI beside the published study's figures (clibench v0.8, the same author's Go client against
its Go gNMI server with the study's CLI paths, tc netem, 5 commands).

:func:`gnmi_table` gives, per profile, each gNMI client, payload and mode at the study's 5
commands: the median time, the study's published p50 where the profile's configured RTT is one
of the study's and the mode is one of its four, their ratio, wire round trips beside the study's
count (the gRPC clients cannot count application round trips: grpcio's sockets are its C
core's), packets and bytes per iteration, and the speed-up against the best ssh ``pty-fresh`` of
the same run and profile. Our own modes (``fresh-get-per-cmd``, ``batch-get``) and the ``yang``
payload's rows (client ``"x (yang)"``) get no published figure.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.errors import ResultsError

STUDY = "clibench v0.8.0"
COMMANDS = 5
#: p50 ms at 5 commands by configured RTT (ms) and mode. Source: github.com/lykinsbd/clibench,
#: results/v0.8.0/netem-<profile>-n20-5cmd.json, ``p50_ms`` of transport ``gnmi`` (local and
#: regional; v0.7.0's gNMI-only files, results/v0.7.0/netem-gnmi-*.json, differ by a few %).
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 3.8585, "reuse-stream": 1.301, "batch-set": 0.34,
        "subscribe-once": 0.3885},
    30: {"fresh-conn": 125.2635, "reuse-stream": 153.5005, "batch-set": 30.735,
         "subscribe-once": 30.831},
}
#: The study's ``round_trips`` (its rtcount: a read after a write), by configured RTT: they
#: differ between its local and regional runs.
PUBLISHED_ROUND_TRIPS: dict[int, dict[str, int]] = {
    0: {"fresh-conn": 5, "reuse-stream": 8, "batch-set": 2, "subscribe-once": 2},
    30: {"fresh-conn": 3, "reuse-stream": 6, "batch-set": 2, "subscribe-once": 1},
}
MODES = ("fresh-conn", "reuse-stream", "batch-set", "subscribe-once", "fresh-get-per-cmd",
         "batch-get")
_COLUMNS = ["client", "mode", "median_ms", "clibench_p50_ms", "ratio", "wire_rtts",
            "clibench_rtts", "packets", "bytes", "vs_pty_fresh"]


def _configured(group: pd.DataFrame) -> int | None:
    values = pd.to_numeric(group.get("configured_rtt_ms", pd.Series(dtype=float)),
                           errors="coerce").dropna()
    if values.empty:
        return None
    value = float(values.iloc[0])
    return round(value) if abs(value - round(value)) < 0.5 else None


def gnmi_table(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per profile, the gNMI rows at 5 commands (see the module docstring);
    :class:`ResultsError` if the run has none."""
    if "transport" not in frame or "mode" not in frame:
        raise ResultsError("the run has no transport column: no gNMI benchmarks")
    rows = frame[(frame["transport"] == "gnmi")
                 & (pd.to_numeric(frame["commands"], errors="coerce") == COMMANDS)]
    if rows.empty:
        raise ResultsError("the run has no gNMI benchmark at 5 commands (./dev bench "
                           "--clients pygnmi,grpc-gnmi)")
    out: dict[str, pd.DataFrame] = {}
    for profile, group in rows.groupby("profile", sort=False):
        configured = _configured(group)
        published = PUBLISHED_P50.get(configured) if configured is not None else None
        trips = PUBLISHED_ROUND_TRIPS.get(configured) if configured is not None else None
        ssh = frame[(frame["profile"] == profile) & (frame["transport"] == "ssh")
                    & (frame["mode"] == "pty-fresh")
                    & (pd.to_numeric(frame["commands"], errors="coerce") == COMMANDS)]
        baseline = float(ssh["median_ms"].min()) if not ssh.empty else float("nan")
        table = []
        for _, row in group.iterrows():
            mode = str(row["mode"])
            modelled = "(" in str(row["client"])
            p50 = published.get(mode) if published and not modelled else None
            median = float(row["median_ms"])
            table.append({
                "client": row["client"], "mode": mode, "median_ms": median,
                "clibench_p50_ms": p50 if p50 is not None else float("nan"),
                "ratio": median / p50 if p50 else float("nan"),
                "wire_rtts": row.get("wire_rtts_per_iteration", float("nan")),
                "clibench_rtts": (trips or {}).get(mode, float("nan")),
                "packets": row.get("packets_per_iteration", float("nan")),
                "bytes": row.get("bytes_per_iteration", float("nan")),
                "vs_pty_fresh": baseline / median if median else float("nan")})
        ordered = pd.DataFrame(table, columns=_COLUMNS)
        ordered = ordered.assign(_m=ordered["mode"].map(
            lambda m: MODES.index(m) if m in MODES else len(MODES))).sort_values(
            ["_m", "client"], kind="stable").drop(columns="_m")
        out[str(profile)] = ordered.reset_index(drop=True)
    return out
