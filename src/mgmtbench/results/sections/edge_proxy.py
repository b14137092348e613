"""The edge proxy (``benchmarks/test_edge_proxy.py``): per WAN profile, every way through the
lab (proxy, tunnel, direct) with its time, its round trips on the first link, and what the proxy
did; then the study's framing, direct against proxy: each proxy and tunnel mode's speed-up
against direct SSH ``pty-fresh`` and the fraction of the direct-HTTPS win (``pty-fresh`` ->
``batch-post``) it captures, beside the published study's (clibench v0.7.0, regional, 5
commands); and, with more than one WAN profile, time against the WAN's RTT (a table per
command count, and a chart: each mode's best client against the WAN link's measured RTT).

Each mode takes its best client (lowest mean), named, as the study's tables here do
(:mod:`mgmtbench.results.study`).
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.charts import lines as line_chart
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table
from mgmtbench.results.study import PUBLISHED

EXPERIMENT = "edge-proxy"
KEYS = ("path", "client", "mode", "wan_profile", "commands")
#: The study's published means at regional (30 ms WAN, 2 ms campus), 5 commands (ms): its
#: results/v0.7.0/netem-regional-n20-5cmd.json at tag v0.7.0 (``avg_ms``); the direct modes from
#: the same file (:data:`mgmtbench.results.study.PUBLISHED`).
STUDY_MS = {
    ("proxy", "fresh-ssh"): 179.9, ("proxy", "pooled-ssh"): 151.5, ("proxy", "keep-alive"): 71.9,
    ("tunnel", "ssh-https-ssh"): 261.5, ("tunnel", "ssh-https-ssh-batch"): 101.0,
    ("proxy", "h3-fresh-ssh"): 145.1, ("proxy", "h3-pooled-ssh"): 115.8,
    ("proxy", "h3-keep-alive"): 72.0,
    ("tunnel", "ssh-http3-ssh"): 262.0, ("tunnel", "ssh-http3-ssh-batch"): 88.4,
    ("direct", "pty-fresh"): PUBLISHED["ssh pty-fresh"].mean_ms,
    ("direct", "batch-post"): PUBLISHED["https batch-post"].mean_ms,
}
STUDY_PROFILE, STUDY_COMMANDS = "regional", 5
DETAIL = {"path": "path", "client": "client", "mode": "mode", "mean_ms": "mean ms",
          "p95_ms": "p95 ms", "wan_rtts": "WAN RTTs", "wire_rtts_per_iteration": "wire RTTs",
          "ssh_opened_per_iteration": "new SSH/iter", "proxy_ms_per_request": "in proxy ms",
          "proxy_cpu_ms_per_request": "proxy CPU ms"}


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Per WAN profile and command count: the detail table and direct-vs-proxy."""
    if not {"path", "mode", "client", "wan_profile", "mean_ms"} <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    lines: list[str] = []
    counts = frame["commands"] if "commands" in frame else pd.Series([0] * len(frame))
    for (wan, commands), group in frame.groupby([frame["wan_profile"], counts], sort=False):
        lines += [f"## Edge proxy: WAN {wan}, {commands} commands", "", _about(group), ""]
        columns = [c for c in DETAIL if c in group and group[c].notna().any()]
        table = group.sort_values("mean_ms")[columns].rename(columns=DETAIL)
        lines += [markdown_table(table), ""]
        lines += ["Direct against proxy (best client per mode): speed-up against direct SSH "
                  "pty-fresh, and the fraction of the direct-HTTPS win (pty-fresh -> "
                  "batch-post) each mode captures"
                  + (", beside the study's" if (wan, commands) == (STUDY_PROFILE, STUDY_COMMANDS)
                     else "") + ".", ""]
        lines += [_versus(group, (wan, commands) == (STUDY_PROFILE, STUDY_COMMANDS)), ""]
    charts = []
    for commands, group in frame.groupby(counts, sort=False):
        if group["wan_profile"].nunique() < 2:
            continue
        lines += [f"## Edge proxy: time against the WAN's RTT, {commands} commands", "",
                  "Mean ms of each mode's best client per WAN profile (the WAN link's measured "
                  "RTT in brackets).", "", markdown_table(_against_rtt(group)), ""]
        chart = line_chart(_by_wan_rtt(group), context.out, f"edge_proxy_rtt_{commands}cmd",
                           f"edge proxy, {commands} commands: time against the WAN's RTT",
                           "WAN link RTT, ms (measured)")
        if chart is not None:
            lines += [f"![{chart.stem}]({chart.name})", ""]
            charts.append(chart)
    return Section(lines, charts)


def _about(group: pd.DataFrame) -> str:
    row = group.iloc[0]
    parts = []
    for link in ("access", "wan", "campus"):
        configured = row.get(f"{link}_configured_rtt_ms")
        if configured is None or pd.isna(configured):
            continue
        measured = row.get(f"{link}_link_rtt_ms")
        parts.append(f"{link} {configured:g} ms (measured {measured:.2f})"
                     if measured is not None and pd.notna(measured) else f"{link} {configured:g} ms")
    return ("Links: " + ", ".join(parts) + ". Wire RTTs are counted on the first link "
            "(the WAN; for the tunnel, the access link to the head-end).")


def _best(group: pd.DataFrame) -> pd.DataFrame:
    """The lowest-mean client of each (path, mode)."""
    ordered = group.sort_values("mean_ms")
    return ordered.drop_duplicates(["path", "mode"]).set_index(["path", "mode"])


def _versus(group: pd.DataFrame, with_study: bool) -> str:
    best = _best(group)
    pty, batch = ("direct", "pty-fresh"), ("direct", "batch-post")
    if pty not in best.index or batch not in best.index:
        return "(needs the direct pty-fresh and batch-post benchmarks in the same run)"
    slow, fast = best.loc[pty, "mean_ms"], best.loc[batch, "mean_ms"]
    rows = []
    for key, row in best.iterrows():
        path, mode = key
        out = {"path": path, "mode": mode, "client": row["client"], "mean ms": row["mean_ms"],
               "x vs pty-fresh": slow / row["mean_ms"],
               "win captured": _captured(slow, fast, row["mean_ms"])}
        if with_study and (path, mode) in STUDY_MS:
            study = STUDY_MS[(path, mode)]
            study_slow, study_fast = STUDY_MS[pty], STUDY_MS[batch]
            out |= {"study ms": study, "study x": study_slow / study,
                    "study captured": _captured(study_slow, study_fast, study),
                    "ours / study": row["mean_ms"] / study}
        rows.append(out)
    table = pd.DataFrame(rows).sort_values("mean ms")
    return markdown_table(table, floats="{:.2f}")


def _captured(slow: float, fast: float, mode: float) -> float:
    """The share of the gap slow -> fast that ``mode`` closes (1.0: all of it)."""
    return (slow - mode) / (slow - fast) if slow != fast else float("nan")


def _wan_rtt(group: pd.DataFrame) -> float:
    """The WAN link's measured RTT in a profile's rows (else its configured one)."""
    for column in ("wan_link_rtt_ms", "wan_configured_rtt_ms"):
        if column in group and group[column].notna().any():
            return float(group[column].median())
    return float("nan")


def _by_wan_rtt(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows: the WAN's RTT per profile; columns: path and mode; values: the best mean ms."""
    rows = [{"rtt": _wan_rtt(group), "mode": f"{path} {mode}", "mean_ms": row["mean_ms"]}
            for _, group in frame.groupby("wan_profile", sort=False)
            for (path, mode), row in _best(group).iterrows()]
    table = pd.DataFrame(rows).pivot_table(index="rtt", columns="mode", values="mean_ms")
    return table.sort_index()


def _against_rtt(frame: pd.DataFrame) -> pd.DataFrame:
    rows = []
    profiles = sorted(frame.groupby("wan_profile", sort=False), key=lambda g: _wan_rtt(g[1]))
    for wan, group in profiles:  # columns in the order of the WAN's RTT
        rtt = _wan_rtt(group)
        for (path, mode), row in _best(group).iterrows():
            rows.append({"mode": f"{path} {mode}", "wan": f"{wan} ({rtt:.0f} ms)",
                         "mean_ms": row["mean_ms"]})
    return (pd.DataFrame(rows).pivot_table(index="mode", columns="wan", values="mean_ms",
                                           sort=False).reset_index())
