"""Server throughput (``benchmarks/test_server_throughput.py``): per link and direction, the
emulator against OpenSSH ``sshd`` (total MB/s at each number of concurrent connections, pinned
to one core and unpinned, and the ratio emulator/sshd), a table per server and cipher (total and
per-connection MB/s, server, client and other CPU), what one core of each server moves (MB
per second of its CPU time), the link's own ceiling, and the curves of total MB/s against
connections."""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.charts import throughput_curves
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "throughput"
KEYS = ("link", "server", "cipher", "direction", "pinning", "connections")
CEILING = "tcp"  # the server name of the link ceiling rows (plain TCP, no SSH)
SERVERS = ("emulator", "sshd")
DETAIL = {"connections": "connections", "pinning": "pinning", "mb_per_s_total": "total MB/s",
          "mb_per_s_per_connection": "MB/s per connection",
          "mb_per_s_per_connection_min": "slowest connection MB/s",
          "server_cpu_pct": "server CPU %", "mb_per_server_cpu_s": "MB per server CPU s",
          "client_cpu_pct": "client CPU %",
          "link_cpu_pct": "link CPU %", "other_cpu_pct": "other CPU %",
          "server_cpus_busy_pct": "server's CPUs busy %",
          "client_cpus_busy_pct": "client's CPUs busy %"}


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Per link and direction: the side-by-side table with ratios, the ceiling, a table per
    server and cipher, and the curves."""
    frame = _tidy(frame)
    needed = {"link", "server", "cipher", "connections", "mb_per_s_total"}
    if not needed <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    ceilings = frame[frame["server"] == CEILING]
    rows = frame[frame["server"] != CEILING]
    lines: list[str] = []
    charts = []
    for (link, direction), group in rows.groupby(["link", "direction"], sort=False):
        lines += [f"## Server throughput: {link}, {direction}", "", _about(group), ""]
        ceiling = ceilings[ceilings["link"] == link]
        if not ceiling.empty:
            row = ceiling.iloc[-1]
            link_cpu = row.get("link_cpu_pct")
            lines += [f"The link's own ceiling (plain TCP, one connection, no SSH): "
                      f"{row['mb_per_s_total']:.1f} MB/s"
                      + (f", its delay line at {link_cpu:.0f} % of a core" if
                         pd.notna(link_cpu) and link_cpu else "") + ".", ""]
        lines += ["Total MB/s of all connections; ratio = emulator / sshd.", "",
                  markdown_table(side_by_side(group)), ""]
        if "mb_per_server_cpu_s" in group and group["mb_per_server_cpu_s"].notna().any():
            lines += ["What one core of each server moves: MB per second of the server's CPU "
                      "time (median over connection counts and pinning): a server's cost per "
                      "byte, less sensitive than MB/s to whatever else shares the machine.", "",
                      markdown_table(per_core(group)), ""]
        for (server, cipher), detail in group.groupby(["server", "cipher"], sort=False):
            columns = [c for c in DETAIL if c in detail and detail[c].notna().any()]
            table = (detail.sort_values(["pinning", "connections"])[columns]
                     .rename(columns=DETAIL))
            lines += [f"### {server}, {cipher} ({link}, {direction})", "",
                      markdown_table(table), ""]
        chart = throughput_curves(group, context.out, f"throughput_{_slug(link)}_{direction}",
                                  f"{link}, {direction}: total MB/s against connections")
        if chart is not None:
            lines += [f"![{chart.stem}]({chart.name})", ""]
            charts.append(chart)
    if rows.empty:
        lines += ["## Server throughput: link ceilings", "",
                  markdown_table(ceilings[["link", "backend", "mb_per_s_total"]]), ""]
    return Section(lines, charts)


def side_by_side(group: pd.DataFrame) -> pd.DataFrame:
    """Rows cipher x connections; per pinning the emulator's and sshd's total MB/s and their
    ratio, to two decimals (NaN, ``-``, where a side was not measured)."""
    table = group.pivot_table(index=["cipher", "connections"], columns=["pinning", "server"],
                              values="mb_per_s_total", aggfunc="last")
    out = pd.DataFrame(index=table.index)
    for pinning in ("pinned", "unpinned"):
        if pinning not in table.columns.get_level_values(0):
            continue
        sides = {s: table[(pinning, s)] if (pinning, s) in table else pd.Series(
            float("nan"), index=table.index) for s in SERVERS}
        for server in SERVERS:
            out[f"{server} {pinning}"] = sides[server]
        ratio = sides["emulator"] / sides["sshd"]
        out[f"ratio {pinning}"] = ["-" if pd.isna(r) else f"{r:.2f}" for r in ratio]
    out = out.reset_index()
    out["connections"] = out["connections"].astype(int)
    return out


def per_core(group: pd.DataFrame) -> pd.DataFrame:
    """Per cipher: each server's median MB per CPU-second and the ratio emulator / sshd."""
    table = group.pivot_table(index="cipher", columns="server", values="mb_per_server_cpu_s",
                              aggfunc="median", sort=False)
    out = pd.DataFrame(index=table.index)
    for server in SERVERS:
        out[f"{server} MB per CPU s"] = table[server] if server in table else float("nan")
    ratio = out["emulator MB per CPU s"] / out["sshd MB per CPU s"]
    out["ratio"] = ["-" if pd.isna(r) else f"{r:.2f}" for r in ratio]
    return out.reset_index()


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Short cipher names, numeric connections, a ``pinning`` label (``pinned``/``unpinned``)
    from the recorded ``pinned`` where the run has no such param, MB per server CPU second
    where a run did not record it, and ``upload`` where no direction was recorded."""
    frame = frame.copy()
    if "cipher" in frame:  # short names (runs that had OpenSSH's full names as params too)
        frame["cipher"] = frame["cipher"].astype(str).str.removesuffix("@openssh.com")
    if "connections" in frame:
        frame["connections"] = pd.to_numeric(frame["connections"], errors="coerce")
    if "pinning" not in frame:
        pinned = frame["pinned"] if "pinned" in frame else pd.Series(False, index=frame.index)
        frame["pinning"] = ["pinned" if p is True or p == "True" else "unpinned" for p in pinned]
    frame["pinning"] = frame["pinning"].fillna("unpinned")
    if "mb_per_server_cpu_s" not in frame and {"mb_per_s_total", "server_cpu_pct"} <= set(frame):
        # Runs recorded before the figure: the same quotient (bytes / window over CPU / window).
        cpu = pd.to_numeric(frame["server_cpu_pct"], errors="coerce")
        frame["mb_per_server_cpu_s"] = frame["mb_per_s_total"] / (cpu / 100).where(cpu > 0)
    if "direction" not in frame:
        frame["direction"] = "upload"
    frame["direction"] = frame["direction"].fillna("upload")
    return frame


def _about(group: pd.DataFrame) -> str:
    info = group.iloc[0]
    size = info.get("bytes_per_connection")
    parts = [f"Backend {info.get('backend')}"]
    rate = info.get("rate_mbit")
    if pd.notna(rate) and rate:
        parts.append(f"rate {rate:g} Mbit/s")
    if pd.notna(info.get("measured_rtt_ms")):
        parts.append(f"measured RTT {info.get('measured_rtt_ms')} ms")
    text = ", ".join(parts) + "."
    if pd.notna(size):
        text += f" {size / 1e6:g} MB per connection"
    versions = [f"{s}: {v}" for s, v in group.groupby("server")["server_version"].first().items()
                ] if "server_version" in group else []
    text += (", client OpenSSH ssh (a ControlMaster per connection); servers "
             + "; ".join(versions) if versions else "") + "."
    text += (" Pinned: the server on one core, the client on the others. CPU % is of one core "
             "over the transfer; other = the rest of the machine (kernel network work outside "
             "the processes, anything else running); CPUs busy % = how much of the server's "
             "(the client's) CPUs was used by anything (100: no time to spare on that side).")
    return text


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)
