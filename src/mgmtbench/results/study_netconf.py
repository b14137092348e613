"""NETCONF beside the published study's figures (clibench v0.8, the same author's Go client
against its Go NETCONF server with the study's CLI envelope, tc netem, 5 commands).

:func:`netconf_table` gives, per profile, each NETCONF client, payload and mode at the study's
5 commands: the median time, the study's published p50 where the profile's configured RTT is one
of the study's, their ratio, wire and application round trips beside the study's count, packets
and bytes per iteration (modelled replies are larger), and the speed-up against the best ssh
``pty-fresh`` of the same run and profile. Rows of the ``yang`` payload (client ``"x (yang)"``,
:mod:`mgmtbench.results.load`) get no published figure: the study has no modelled data.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.errors import ResultsError

STUDY = "clibench v0.8.0"
COMMANDS = 5
#: p50 ms at 5 commands by configured RTT (ms) and mode; round trips the same at every RTT.
#: Source: github.com/lykinsbd/clibench, results/v0.8.0/netem-<profile>-n20-5cmd.json
#: (geo: n10), ``p50_ms`` and ``round_trips`` of transport ``netconf``.
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-session": 5.159, "reuse-session": 0.837, "batch-rpc": 0.462, "edit-commit": 0.315},
    2: {"fresh-session": 38.108, "reuse-session": 15.713, "batch-rpc": 2.577,
        "edit-commit": 5.046},
    30: {"fresh-session": 400.289, "reuse-session": 154.328, "batch-rpc": 30.619,
         "edit-commit": 61.367},
    44: {"fresh-session": 581.755, "reuse-session": 223.741, "batch-rpc": 44.678,
         "edit-commit": 89.526},
    70: {"fresh-session": 921.335, "reuse-session": 355.521, "batch-rpc": 70.654,
         "edit-commit": 141.315},
    100: {"fresh-session": 1312.851, "reuse-session": 504.663, "batch-rpc": 100.708,
          "edit-commit": 201.479},
    150: {"fresh-session": 1981.838, "reuse-session": 756.912, "batch-rpc": 150.948,
          "edit-commit": 301.433},
    174: {"fresh-session": 2272.672, "reuse-session": 873.767, "batch-rpc": 174.632,
          "edit-commit": 350.214},
    600: {"fresh-session": 7811.219, "reuse-session": 3003.251, "batch-rpc": 600.638,
          "edit-commit": 1201.220},
}
PUBLISHED_ROUND_TRIPS = {"fresh-session": 14, "reuse-session": 5, "batch-rpc": 1,
                         "edit-commit": 2}
MODES = tuple(PUBLISHED_ROUND_TRIPS)
_COLUMNS = ["client", "mode", "median_ms", "clibench_p50_ms", "ratio", "wire_rtts",
            "app_rtts", "clibench_rtts", "packets", "bytes", "vs_pty_fresh"]


def _configured(group: pd.DataFrame) -> float | None:
    values = pd.to_numeric(group.get("configured_rtt_ms", pd.Series(dtype=float)),
                           errors="coerce").dropna()
    return float(values.iloc[0]) if not values.empty else None


def netconf_table(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per profile, the NETCONF rows at 5 commands (see the module docstring);
    :class:`ResultsError` if the run has none."""
    if "transport" not in frame or "mode" not in frame:
        raise ResultsError("the run has no transport column: no NETCONF benchmarks")
    rows = frame[(frame["transport"] == "netconf")
                 & (pd.to_numeric(frame["commands"], errors="coerce") == COMMANDS)]
    if rows.empty:
        raise ResultsError("the run has no NETCONF benchmark at 5 commands (./dev bench "
                           "--clients ncclient,scrapli-netconf,asyncssh-netconf)")
    out: dict[str, pd.DataFrame] = {}
    for profile, group in rows.groupby("profile", sort=False):
        configured = _configured(group)
        published = PUBLISHED_P50.get(round(configured)) if configured is not None and abs(
            configured - round(configured)) < 0.5 else None
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
                "app_rtts": row.get("app_rtts_per_iteration", float("nan")),
                "clibench_rtts": PUBLISHED_ROUND_TRIPS.get(mode, float("nan")),
                "packets": row.get("packets_per_iteration", float("nan")),
                "bytes": row.get("bytes_per_iteration", float("nan")),
                "vs_pty_fresh": baseline / median if median else float("nan")})
        ordered = pd.DataFrame(table, columns=_COLUMNS)
        ordered = ordered.assign(_m=ordered["mode"].map(MODES.index)).sort_values(
            ["_m", "client"], kind="stable").drop(columns="_m")
        out[str(profile)] = ordered.reset_index(drop=True)
    return out
