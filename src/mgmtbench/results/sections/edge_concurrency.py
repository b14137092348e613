"""The edge proxy at concurrency (``test_edge_proxy_concurrency``): N devices behind one proxy, a
client session to each at once, per WAN profile: the proxy's modes and the direct ones over the
same two links in one table, with each one's makespan (one round of every session) against
direct SSH ``pty-fresh``'s and direct HTTPS ``batch-post``'s, each session's time (p50, p95),
and CPU per request of the proxy, the devices (the emulator) and the client, and the proxy's
pooled SSH connections.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "edge-proxy-concurrency"
KEYS = ("path", "client", "mode", "wan_profile", "sessions")
COLUMNS = {"path": "path", "client": "client", "mode": "mode", "mean_ms": "round ms",
           "x_pty": "x vs direct pty-fresh", "x_batch": "x vs direct batch-post",
           "session_p50_ms": "session p50 ms", "session_p95_ms": "session p95 ms",
           "proxy_cpu_ms_per_request": "proxy CPU ms/req",
           "emulator_cpu_ms_per_request": "devices CPU ms/req",
           "client_cpu_ms_per_request": "client CPU ms/req",
           "ssh_pooled_open": "pooled SSH conns"}


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """A table per WAN profile and session count, fastest first."""
    if not {"path", "mode", "client", "wan_profile", "sessions", "mean_ms"} <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    lines: list[str] = []
    for (wan, count), group in frame.groupby(["wan_profile", "sessions"], sort=False):
        sessions = int(count)  # a float in a frame that holds other experiments' rows too
        table = group.copy()
        for column, mode in (("x_pty", "pty-fresh"), ("x_batch", "batch-post")):
            base = table[(table["path"] == "direct") & (table["mode"] == mode)]["mean_ms"]
            table[column] = base.min() / table["mean_ms"] if len(base) else float("nan")
        if "ssh_pooled_open" in table:  # a count; none for the direct modes
            table["ssh_pooled_open"] = table["ssh_pooled_open"].map(
                lambda v: "-" if pd.isna(v) else str(int(v)))
        columns = [c for c in COLUMNS if c in table and table[c].notna().any()]
        lines += [f"## Edge proxy at concurrency: {sessions} sessions, WAN {wan}", "",
                  f"{sessions} devices behind one proxy, a session to each at once, 5 commands; "
                  "round ms is one round of every session (the makespan); x: how many times "
                  "faster than that direct mode.", "",
                  markdown_table(table.sort_values("mean_ms")[columns].rename(columns=COLUMNS),
                                 floats="{:.2f}"), ""]
    return Section(lines)
