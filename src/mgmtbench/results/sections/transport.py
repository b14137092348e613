"""Transport modes (``benchmarks/test_transport_modes.py``): per profile and command count, each
client/mode's time, RTTs (time / measured RTT), wire RTTs (round trips counted on the link, see
:mod:`mgmtbench.lab.wiretap`; ``-`` for runs that did not record them) and packets, and its
speed-up; then the published study's tables (:mod:`mgmtbench.results.study`: the mode table beside
the study's figures, PTY overhead, speed-up against ssh pty-fresh per profile, time against command
count, 100 devices serially); the fastest way per transport against commands and RTT. The
heatmaps, speed-ups and per-mode time charts open the report (:mod:`mgmtbench.results.overview`).
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.lab.facts import LOOPBACK
from mgmtbench.results import every_transport, study, tuning
from mgmtbench.results.compare import KEYS as COMPARED_BY
from mgmtbench.results.compare import speedups
from mgmtbench.results.published import Published, study_table
from mgmtbench.results.sections.base import ReportContext, Section, markdown_table
from mgmtbench.results.study_gnmi import GNMI
from mgmtbench.results.study_http3 import HTTP3
from mgmtbench.results.study_netconf import NETCONF
from mgmtbench.results.study_restconf import RESTCONF
from mgmtbench.results.tcp import describe

EXPERIMENT = "transport"
KEYS = tuple(COMPARED_BY)
WIRE = "wire_rtts_per_iteration"
APP = "app_rtts_per_iteration"  # the study's own count: a read after a write, where recorded
COUNTED = (WIRE, APP)
#: The transports shown beside the study's published figures (the model-driven ones and
#: HTTP/3), in this order.
MODEL_DRIVEN = (NETCONF, RESTCONF, GNMI, HTTP3)
COLUMNS = ["client", "mode", "mean_ms", "p95_ms", "rtts", WIRE, APP, "packets_per_iteration",
           "speedup"]


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Per profile and command count a table with speed-ups against ``context.baseline`` (or
    the slowest client/mode), then the study's tables (each where the run has its data), then
    the charts."""
    if "commands" in frame and frame["commands"].notna().all():
        frame = frame.astype({"commands": int})  # float when other experiments' rows had none
    lines: list[str] = []
    table = _with_wire_rtts(speedups(frame, context.baseline), frame)
    baseline = context.baseline
    against = f"{baseline[0]} {baseline[1]}" if baseline else "the slowest client/mode"
    for (profile, commands), group in table.groupby(["profile", "commands"], sort=False):
        info = frame[(frame["profile"] == profile) & (frame["commands"] == commands)].iloc[0]
        lines += [f"## {profile}, {commands} commands", "",
                  f"Backend {info.get('backend')}, configured RTT {info.get('configured_rtt_ms')} "
                  f"ms, measured {info.get('measured_rtt_ms')} ms. Speed-up against {against}. "
                  + (describe(info.get("tcp")) if info.get("backend") != LOOPBACK else ""),
                  "", markdown_table(group[[c for c in COLUMNS if c in group]]), ""]
    lines += study.render(frame)
    for published in MODEL_DRIVEN:
        lines += _beside_study(frame, published)
    lines += _every_transport(frame)
    lines += tuning.render(frame)
    charts = every_transport.charts(frame, context.out)
    lines += ["## Charts", "", "The heatmaps of every client and mode, the speed-ups against ssh "
              "pty-fresh and time against RTT and commands per mode open the report.", "",
              *[f"![{c.stem}]({c.name})" for c in charts], ""]
    return Section(lines, charts)


def _beside_study(frame: pd.DataFrame, published: Published) -> list[str]:
    """A model-driven transport at 5 commands beside the study's v0.8 figures, per profile
    (nothing if the run has no benchmark of it)."""
    if "transport" not in frame or not (frame["transport"] == published.transport).any():
        return []
    try:
        tables = study_table(published, frame)
    except ResultsError as exc:
        return [f"## {published.title}", "", f"*{exc}*", ""]
    lines = [f"## {published.title} beside the study", "",
             f"At 5 commands: median ms, the study's published p50 ({published.study}, its "
             "Go client and Go server, the CLI envelope) where the profile's RTT is one of its, "
             "the ratio, wire and application round trips beside the study's count, packets "
             "and bytes per iteration, and the speed-up against the best ssh pty-fresh. "
             "`(yang)` rows carry modelled data, which the study does not."
             + (f" {published.note}" if published.note else ""), ""]
    for profile, table in tables.items():
        lines += [f"### {profile}", "", markdown_table(table, floats="{:.2f}"), ""]
    return lines


def _every_transport(frame: pd.DataFrame) -> list[str]:
    """The fastest way of each transport and payload, per profile (nothing if the run has one
    transport)."""
    tables = every_transport.tables(frame)
    if not tables:
        return []
    lines = ["## Every transport on the same work", "",
             "Per transport and payload, its fastest client and mode: median ms, time in RTTs, "
             "the speed-up against the best ssh pty-fresh (a PTY session per device), bytes and "
             "packets per iteration on the link, and the client's CPU per command (where the "
             "devices ran outside the benchmark's process). `(yang)`: modelled data instead of "
             "the CLI's text.", ""]
    for title, table in tables.items():
        lines += [f"### {title}", "", markdown_table(table, floats="{:.2f}"), ""]
    return lines


def _with_wire_rtts(table: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each row's counted round trips from ``frame`` (wire and app RTTs, matched
    by client, mode, profile, command count and mean), NaN where a run did not record them
    (shown as ``-``)."""
    missing = [c for c in COUNTED if c not in table]
    if not missing:
        return table
    recorded = [c for c in missing if c in frame]
    table = table.assign(**{c: float("nan") for c in missing if c not in recorded})
    if not recorded:
        return table
    match = [*KEYS, "mean_ms"]
    counted = frame[[*match, *recorded]].drop_duplicates(subset=match)
    return table.merge(counted, on=match, how="left")
