"""RESTCONF beside the published study's figures (clibench v0.8, the same author's Go client
against its Go RESTCONF server with the study's CLI envelope, tc netem, 5 commands).

:func:`restconf_table` gives, per profile, each RESTCONF client, payload and mode at the study's
5 commands: the median time, the study's published p50 where the profile's configured RTT is one
of the study's, their ratio, wire and application round trips beside the study's count, packets
and bytes per iteration, and the speed-up against the best ssh ``pty-fresh`` of the same run and
profile. Our own modes (``h2-multiplex``, ``conn-per-iteration``) and ``yang`` rows get no
published figure.

The study's round-trip count for ``fresh-conn`` (2) is its last connection's only: its counter
wraps each new connection and keeps the last one (``internal/bench/restconf.go``), so five
connections' handshakes and requests are not in it. Ours counts every connection.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.errors import ResultsError

STUDY = "clibench v0.8.0"
COMMANDS = 5
#: p50 ms at 5 commands by configured RTT (ms) and mode.
#: Source: github.com/lykinsbd/clibench, results/v0.8.0/netem-<profile>-n20-5cmd.json
#: (geo: n10), ``p50_ms`` of transport ``restconf``.
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 15.283, "keep-alive": 0.942, "batch-patch": 0.267, "json-vs-xml": 0.974},
    2: {"fresh-conn": 51.277, "keep-alive": 16.687, "batch-patch": 2.740, "json-vs-xml": 14.685},
    30: {"fresh-conn": 471.945, "keep-alive": 155.138, "batch-patch": 30.885,
         "json-vs-xml": 155.039},
    44: {"fresh-conn": 678.644, "keep-alive": 224.002, "batch-patch": 44.866,
         "json-vs-xml": 224.536},
    70: {"fresh-conn": 1070.880, "keep-alive": 354.787, "batch-patch": 70.834,
         "json-vs-xml": 354.481},
    100: {"fresh-conn": 1532.698, "keep-alive": 505.765, "batch-patch": 101.299,
          "json-vs-xml": 505.984},
    150: {"fresh-conn": 2271.960, "keep-alive": 754.757, "batch-patch": 150.860,
          "json-vs-xml": 754.376},
    174: {"fresh-conn": 2635.609, "keep-alive": 875.247, "batch-patch": 174.863,
          "json-vs-xml": 874.584},
    600: {"fresh-conn": 9019.498, "keep-alive": 3005.565, "batch-patch": 600.819,
          "json-vs-xml": 3004.292},
}
#: ``round_trips`` as published (the same at every RTT); fresh-conn's is one connection's.
PUBLISHED_ROUND_TRIPS = {"fresh-conn": 2, "keep-alive": 5, "batch-patch": 1, "json-vs-xml": 5}
#: Row order: the study's modes, then ours.
MODES = (*PUBLISHED_ROUND_TRIPS, "h2-multiplex", "conn-per-iteration")
_ORDER = {mode: index for index, mode in enumerate(MODES)}
_COLUMNS = ["client", "mode", "median_ms", "clibench_p50_ms", "ratio", "wire_rtts",
            "app_rtts", "clibench_rtts", "packets", "bytes", "vs_pty_fresh"]


def _configured(group: pd.DataFrame) -> float | None:
    values = pd.to_numeric(group.get("configured_rtt_ms", pd.Series(dtype=float)),
                           errors="coerce").dropna()
    return float(values.iloc[0]) if not values.empty else None


def restconf_table(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per profile, the RESTCONF rows at 5 commands (see the module docstring);
    :class:`ResultsError` if the run has none."""
    if "transport" not in frame or "mode" not in frame:
        raise ResultsError("the run has no transport column: no RESTCONF benchmarks")
    commands = pd.to_numeric(frame["commands"], errors="coerce")
    rows = frame[(frame["transport"] == "restconf") & (commands == COMMANDS)]
    if rows.empty:
        raise ResultsError("the run has no RESTCONF benchmark at 5 commands (./dev bench "
                           "--clients httpx-restconf,httpx-restconf-h2,httpx-restconf-async)")
    out: dict[str, pd.DataFrame] = {}
    for profile, group in rows.groupby("profile", sort=False):
        configured = _configured(group)
        published = PUBLISHED_P50.get(round(configured)) if configured is not None and abs(
            configured - round(configured)) < 0.5 else None
        ssh = frame[(frame["profile"] == profile) & (frame["transport"] == "ssh")
                    & (frame["mode"] == "pty-fresh") & (commands == COMMANDS)]
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
                "app_rtts": row.get("app_rtts_per_iteration", float("nan")),
                "clibench_rtts": PUBLISHED_ROUND_TRIPS.get(mode, float("nan")),
                "packets": row.get("packets_per_iteration", float("nan")),
                "bytes": row.get("bytes_per_iteration", float("nan")),
                "vs_pty_fresh": baseline / median if median else float("nan")})
        ordered = pd.DataFrame(table, columns=_COLUMNS)
        ordered = ordered.assign(_m=ordered["mode"].map(_ORDER).fillna(len(_ORDER)))
        ordered = ordered.sort_values(["_m", "client"], kind="stable").drop(columns="_m")
        out[str(profile)] = ordered.reset_index(drop=True)
    return out
