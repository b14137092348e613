"""Transport modes (``benchmarks/test_transport_modes.py``): per profile and command count, each
client/mode's time, RTTs (time / measured RTT), wire RTTs (round trips counted on the link, see
:mod:`mgmtbench.lab.wiretap`; ``-`` for runs that did not record them) and packets, and its
speed-up; then the published study's tables (:mod:`mgmtbench.results.study`: the mode table beside
the study's figures, PTY overhead, speed-up against ssh pty-fresh per profile, time against command
count, 100 devices serially); bars per profile, time against commands and against RTT."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.lab.facts import LOOPBACK
from mgmtbench.results import study, study_gnmi, study_netconf
from mgmtbench.results.charts import bars_per_profile, time_vs_commands, time_vs_rtt
from mgmtbench.results.compare import KEYS as COMPARED_BY
from mgmtbench.results.compare import speedups
from mgmtbench.results.sections.base import ReportContext, Section, markdown_table
from mgmtbench.results.tcp import describe

EXPERIMENT = "transport"
KEYS = tuple(COMPARED_BY)
WIRE = "wire_rtts_per_iteration"
APP = "app_rtts_per_iteration"  # the study's own count: a read after a write, where recorded
COUNTED = (WIRE, APP)
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
    lines += _netconf(frame)
    lines += _gnmi(frame)
    charts = _charts(frame, context.out)
    lines += ["## Charts", "", *[f"![{c.stem}]({c.name})" for c in charts], ""]
    return Section(lines, charts)


def _netconf(frame: pd.DataFrame) -> list[str]:
    """NETCONF at 5 commands beside the study's v0.8 figures, per profile (nothing if the run
    has no NETCONF benchmark)."""
    if "transport" not in frame or not (frame["transport"] == "netconf").any():
        return []
    try:
        tables = study_netconf.netconf_table(frame)
    except ResultsError as exc:
        return ["## NETCONF", "", f"*{exc}*", ""]
    lines = ["## NETCONF beside the study", "",
             f"At 5 commands: median ms, the study's published p50 ({study_netconf.STUDY}, its "
             "Go client and Go server, the CLI envelope) where the profile's RTT is one of its, "
             "the ratio, wire and application round trips beside the study's count, packets "
             "and bytes per iteration, and the speed-up against the best ssh pty-fresh. "
             "`(yang)` rows carry modelled data, which the study does not.", ""]
    for profile, table in tables.items():
        lines += [f"### {profile}", "", markdown_table(table, floats="{:.2f}"), ""]
    return lines


def _gnmi(frame: pd.DataFrame) -> list[str]:
    """gNMI at 5 commands beside the study's v0.8 figures, per profile (nothing if the run has
    no gNMI benchmark)."""
    if "transport" not in frame or not (frame["transport"] == "gnmi").any():
        return []
    try:
        tables = study_gnmi.gnmi_table(frame)
    except ResultsError as exc:
        return ["## gNMI", "", f"*{exc}*", ""]
    lines = ["## gNMI beside the study", "",
             f"At 5 commands: median ms, the study's published p50 ({study_gnmi.STUDY}, its Go "
             "client and Go server, the /cli paths) where the profile's RTT is one of its and "
             "the mode one of its four, the ratio, wire round trips beside the study's count "
             "(grpcio's sockets cannot be wrapped: no application count), packets and bytes "
             "per iteration, and the speed-up against the best ssh pty-fresh. `(yang)` rows "
             "read OpenConfig data, which the study does not; fresh-get-per-cmd and batch-get "
             "are our modes.", ""]
    for profile, table in tables.items():
        lines += [f"### {profile}", "", markdown_table(table, floats="{:.2f}"), ""]
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


def _charts(frame: pd.DataFrame, out: Path) -> list[Path]:
    charts = bars_per_profile(frame, out, int(frame["commands"].mode()[0]))
    more: list[Path | None] = []
    for profile in frame["profile"].unique():
        if frame[frame["profile"] == profile]["commands"].nunique() > 1:
            more.append(time_vs_commands(frame, out, str(profile)))
    for commands in frame["commands"].unique():
        if frame[frame["commands"] == commands]["profile"].nunique() > 1:
            more.append(time_vs_rtt(frame, out, int(commands)))
    return charts + [c for c in more if c is not None]
