"""A model-driven transport's figures beside the published study's (clibench v0.8: the same
author's Go client against its Go server with the study's CLI envelope, tc netem, 5 commands).

Each transport's module (:mod:`~mgmtbench.results.study_netconf`,
:mod:`~mgmtbench.results.study_restconf`, :mod:`~mgmtbench.results.study_gnmi`) holds only its
:class:`Published` figures; :func:`study_table` gives, per profile, each of the run's clients,
payloads and modes of that transport at the study's 5 commands: the median time, the study's
published p50 where the profile's configured RTT is one of the study's, their ratio, wire and
application round trips beside the study's count, packets and bytes per iteration, and the
speed-up against the best ssh ``pty-fresh`` of the same run and profile. Our own modes and
``yang`` rows (client ``"x (yang)"``, :mod:`mgmtbench.results.load`) get no published figure:
the study has neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from mgmtbench.errors import ResultsError

__all__ = ["COMMANDS", "STUDY", "Published", "study_table"]

STUDY = "clibench v0.8.0"
COMMANDS = 5
_COLUMNS = ["client", "mode", "median_ms", "clibench_p50_ms", "ratio", "wire_rtts",
            "app_rtts", "clibench_rtts", "packets", "bytes", "vs_pty_fresh"]


@dataclass(frozen=True)
class Published:
    """One transport's published figures at 5 commands."""

    #: The ``transport`` the benchmarks record (``netconf``, ``restconf``, ``gnmi``).
    transport: str
    #: How the report names it.
    title: str
    #: p50 ms by configured RTT (ms) and mode.
    p50: Mapping[int, Mapping[str, float]]
    #: The study's round trips per mode (at every RTT but those of ``round_trips_by_rtt``).
    round_trips: Mapping[str, float]
    #: The clients that measure it, for the hint when a run has none.
    clients: str
    #: Our own modes of the transport, in the order the table shows them after the study's.
    ours: tuple[str, ...] = ()
    #: Round trips that differ by configured RTT (ms), where the study's do.
    round_trips_by_rtt: Mapping[int, Mapping[str, float]] = field(default_factory=dict)
    #: What the report says besides the common text (caveats on the study's figures).
    note: str = ""
    #: The study's release the figures are from.
    study: str = field(default=STUDY)

    @property
    def modes(self) -> tuple[str, ...]:
        """Row order: the study's modes, then ours."""
        return (*self.round_trips, *self.ours)


def _configured(group: pd.DataFrame) -> float | None:
    values = pd.to_numeric(group.get("configured_rtt_ms", pd.Series(dtype=float)),
                           errors="coerce").dropna()
    return float(values.iloc[0]) if not values.empty else None


def study_table(published: Published, frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per profile, the transport's rows at 5 commands (see the module docstring);
    :class:`ResultsError` if the run has none."""
    name = published.title
    if "transport" not in frame or "mode" not in frame:
        raise ResultsError(f"the run has no transport column: no {name} benchmarks")
    commands = pd.to_numeric(frame["commands"], errors="coerce")
    rows = frame[(frame["transport"] == published.transport) & (commands == COMMANDS)]
    if rows.empty:
        raise ResultsError(f"the run has no {name} benchmark at {COMMANDS} commands (./dev "
                           f"bench --clients {published.clients})")
    order = {mode: index for index, mode in enumerate(published.modes)}
    out: dict[str, pd.DataFrame] = {}
    for profile, group in rows.groupby("profile", sort=False):
        configured = _configured(group)
        rtt = round(configured) if configured is not None and abs(
            configured - round(configured)) < 0.5 else None
        p50s = published.p50.get(rtt) if rtt is not None else None
        trips = published.round_trips_by_rtt.get(rtt, published.round_trips) if rtt is not None \
            else published.round_trips
        ssh = frame[(frame["profile"] == profile) & (frame["transport"] == "ssh")
                    & (frame["mode"] == "pty-fresh") & (commands == COMMANDS)]
        baseline = float(ssh["median_ms"].min()) if not ssh.empty else float("nan")
        table = []
        for _, row in group.iterrows():
            mode = str(row["mode"])
            modelled = "(" in str(row["client"])
            p50 = p50s.get(mode) if p50s and not modelled else None
            median = float(row["median_ms"])
            table.append({
                "client": row["client"], "mode": mode, "median_ms": median,
                "clibench_p50_ms": p50 if p50 is not None else float("nan"),
                "ratio": median / p50 if p50 else float("nan"),
                "wire_rtts": row.get("wire_rtts_per_iteration", float("nan")),
                "app_rtts": row.get("app_rtts_per_iteration", float("nan")),
                "clibench_rtts": trips.get(mode, float("nan")),
                "packets": row.get("packets_per_iteration", float("nan")),
                "bytes": row.get("bytes_per_iteration", float("nan")),
                "vs_pty_fresh": baseline / median if median else float("nan")})
        ordered = pd.DataFrame(table, columns=_COLUMNS)
        ordered = ordered.assign(_m=ordered["mode"].map(order).fillna(len(order)))
        ordered = ordered.sort_values(["_m", "client"], kind="stable").drop(columns="_m")
        out[str(profile)] = ordered.reset_index(drop=True)
    return out
