"""The SSH algorithm matrix (``benchmarks/test_ssh_algorithms.py``): every cell averaged across
ALL the runs the report was given (as the study appended its results per destination and
averaged them: the mean of the runs' mean times, MB/s at that mean), the top N per operation for
each client and server (fastest connect, fastest send, fastest receive), heatmaps of kex x cipher
per MAC, what one side supports that the other does not, and each client's receive throughput
beside its channel window (as the emulator saw it: ``client_*`` figures of the receive rows)."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd

from mgmtbench.results.charts import heatmaps
from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table

EXPERIMENT = "ssh-algorithms"
KEYS = ("profile", "server", "client", "operation", "kex", "cipher", "mac")
OPERATIONS = ("connect", "send", "receive")
#: Per operation: the figure it is ranked by, and whether higher is better.
RANKED_BY = {"connect": ("mean_ms", False), "send": ("mb_per_s", True),
             "receive": ("mb_per_s", True)}
LISTS = {"kex": "kex", "ciphers": "cipher", "macs": "MAC"}


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """Averages over every run in ``context.runs`` (the latest run alone without it)."""
    every = context.runs if context.runs is not None else frame
    rows = every[every["experiment"] == EXPERIMENT]
    measured = rows[rows["operation"].isin(OPERATIONS)] if "operation" in rows else rows[:0]
    if measured.empty or not set(KEYS) <= set(measured.columns):
        return generic(EXPERIMENT, frame)
    table = average(measured)
    runs = measured["run"].nunique()
    lines = ["## SSH algorithms: kex x cipher x MAC", "",
             f"Every cell averaged over the runs that measured it ({runs} run"
             f"{'s' if runs != 1 else ''} in all; `runs` per row: the mean of their mean times, "
             "MB/s at that mean); `connect` is a whole connection (TCP, key exchange, login, an "
             "exec of `head -c 0 /dev/zero`, close) in ms, `send` and `receive` MB/s through one "
             "channel of a kept connection. MAC `implicit`: an AEAD cipher.", ""]
    charts = []
    for profile, part in table.groupby("profile", sort=False):
        rtt = measured.loc[measured["profile"] == profile].get("measured_rtt_ms")
        rtt_text = (f" (measured RTT {rtt.mean():.1f} ms)"
                    if rtt is not None and rtt.notna().any() else "")
        lines += [f"### {profile}{rtt_text}: the best cell of each client and server", "",
                  markdown_table(best_cells(part), floats="{:.2f}"), ""]
        for (client, server), pair in part.groupby(["client", "server"], sort=False):
            ranked = [(op, ranking(pair, op, context.top)) for op in OPERATIONS]
            ranked = [(op, r) for op, r in ranked if len(r) > 1]
            if not ranked:
                continue
            lines += [f"### {profile}: {client} -> {server}", ""]
            for operation, top in ranked:
                lines += [f"Fastest {operation} (top {len(top)} of "
                          f"{(pair['operation'] == operation).sum()}):", "",
                          markdown_table(top, floats="{:.2f}"), ""]
                drawn = heatmap(pair, operation, context, f"{profile}: {client} -> {server}")
                if drawn is not None:
                    charts.append(drawn)
                    lines += [f"![{drawn.stem}]({drawn.name})", ""]
    lines += window_lines(measured, table)
    lines += unsupported_lines(rows)
    return Section(lines, charts)


#: The receive rows' window figures (recorded against the emulator), and their table headings.
WINDOW_COLUMNS = {"client_initial_window": "initial window KiB",
                  "client_max_packet": "max packet", "client_largest_window": "largest window KiB",
                  "client_adjusts_per_transfer": "adjusts per transfer"}


def window_lines(measured: pd.DataFrame, table: pd.DataFrame) -> list[str]:
    """Per profile and client: receive MB/s against each server (the cells every profile
    measured for that client, averaged over runs) beside the client's window as the emulator
    saw it (the latest run's), and the most that window lets through per round trip."""
    if "client_initial_window" not in measured:
        return []
    receives = measured[measured["operation"] == "receive"]
    seen = receives.dropna(subset=["client_initial_window"])
    if seen.empty:
        return []
    latest = seen.sort_values("run_time").groupby(["profile", "client"], sort=False).last()
    averaged = table[table["operation"] == "receive"]
    profiles = averaged["profile"].nunique()
    rows = []
    for client, mine in averaged.groupby("client", sort=False):
        everywhere = mine.groupby(["cipher", "mac"]).filter(
            lambda cell: cell["profile"].nunique() == profiles)
        for (profile, cipher, mac), cell in (everywhere if not everywhere.empty else mine).groupby(
                ["profile", "cipher", "mac"], sort=False):
            row: dict[str, Any] = {"profile": profile, "client": client, "cipher": cipher,
                                   "mac": mac}
            for server in ("emulator", "sshd"):
                found = cell.loc[cell["server"] == server, "mb_per_s"]
                row[f"{server} MB/s"] = float(found.iloc[0]) if not found.empty else float("nan")
            window = latest.loc[(profile, client)] if (profile, client) in latest.index else None
            for column, heading in WINDOW_COLUMNS.items():
                value = float(window[column]) if window is not None else float("nan")
                value = value / 1024 if heading.endswith("KiB") else value
                row[heading] = int(value) if value.is_integer() else value  # 2048, not 2048.0
            rtt = receives.loc[receives["profile"] == profile].get("measured_rtt_ms")
            rtt_ms = float(rtt.mean()) if rtt is not None and rtt.notna().any() else 0.0
            row["window / RTT MB/s"] = (float(window["client_largest_window"]) / 1e6 /
                                        (rtt_ms / 1e3)
                                        if window is not None and rtt_ms >= 1 else float("nan"))
            rows.append(row)
    if not rows:
        return []
    return ["### Receive throughput and the client's window", "",
            "Receive MB/s per client and profile (cells measured at every profile, averaged over "
            "runs) beside the client's SSH channel window as the emulator's source saw it on the "
            "wire (latest run): the initial window and maximum packet size of its CHANNEL_OPEN, "
            "the largest window it granted while reading (what it let the server have in "
            "flight), its window adjusts per transfer, and that largest window per measured RTT "
            "(the most a window allows; `-` below 1 ms). `sshd` does not show a client's "
            "window (only in its debug log); the window is the client's setting, whatever the "
            "server.", "", markdown_table(pd.DataFrame(rows, dtype=object), floats="{:.1f}"), ""]


def average(measured: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: the mean over runs of its mean time, its MB/s at that time (the bytes
    of all its runs over their time, so MB/s and time rank alike), how many runs measured it,
    and the spread of its mean time between runs (``run_sd_ms``)."""
    if "bytes" not in measured:
        measured = measured.assign(bytes=0)
    grouped = measured.groupby(list(KEYS), sort=False, dropna=False)
    table = grouped.agg(mean_ms=("mean_ms", "mean"), moved=("bytes", "max"),
                        runs=("run", "nunique"), run_sd_ms=("mean_ms", "std")).reset_index()
    moved = pd.to_numeric(table["moved"], errors="coerce")
    table["mb_per_s"] = (moved / 1e6 / (table["mean_ms"] / 1e3)).where(moved > 0)
    return table.drop(columns="moved")


def ranking(pair: pd.DataFrame, operation: str, top: int) -> pd.DataFrame:
    """The ``top`` fastest cells of ``operation`` for one client and server, ranked."""
    column, higher = RANKED_BY[operation]
    cells = pair[pair["operation"] == operation].sort_values(column, ascending=not higher,
                                                             kind="stable")
    shown = cells.head(top).reset_index(drop=True)
    shown.insert(0, "rank", range(1, len(shown) + 1))
    columns = ["rank", "kex", "cipher", "mac", "mean_ms", "runs"]
    if higher:
        columns.insert(4, "mb_per_s")
    return shown[columns]


def best_cells(part: pd.DataFrame) -> pd.DataFrame:
    """Per client, server and operation: its best cell and its figure, and how many cells were
    measured."""
    rows = []
    for (client, server, operation), cells in part.groupby(["client", "server", "operation"],
                                                           sort=False):
        column, higher = RANKED_BY[str(operation)]
        best = cells.sort_values(column, ascending=not higher, kind="stable").iloc[0]
        rows.append({"client": client, "server": server, "operation": operation,
                     "kex": best["kex"], "cipher": best["cipher"], "mac": best["mac"],
                     "mean_ms": best["mean_ms"], "mb_per_s": best["mb_per_s"],
                     "cells": len(cells)})
    found = pd.DataFrame(rows)
    order = {op: i for i, op in enumerate(OPERATIONS)}
    return found.sort_values(["operation", "client", "server"],
                             key=lambda s: s.map(order) if s.name == "operation" else s)


def heatmap(pair: pd.DataFrame, operation: str, context: ReportContext,
            title: str) -> Any:
    """kex x cipher, a panel per MAC, for one client, server and operation (with a single kex,
    as the sampled send and receive have: MAC x cipher in one panel); None for one cell."""
    column, higher = RANKED_BY[operation]
    cells = pair[pair["operation"] == operation]
    if len(cells) < 2:
        return None
    if cells["kex"].nunique() > 1:
        panels = {f"MAC {mac}": group.pivot_table(index="kex", columns="cipher", values=column)
                  for mac, group in cells.groupby("mac", sort=True)}
    else:
        kex = cells["kex"].iloc[0]
        panels = {f"kex {kex}: MAC x cipher": cells.pivot_table(index="mac", columns="cipher",
                                                               values=column)}
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_",
                  f"algorithms_{pair['profile'].iloc[0]}_{pair['client'].iloc[0]}_"
                  f"{pair['server'].iloc[0]}_{operation}")
    label = "ms (mean)" if column == "mean_ms" else "MB/s (mean)"
    return heatmaps(panels, context.out, name, f"{title}: {operation}", label, higher)


def unsupported_lines(rows: pd.DataFrame) -> list[str]:
    """What one side supports and the other lacks, per client and server (the latest record of
    each pair)."""
    if "operation" not in rows or "support" not in rows:
        return []
    records = rows[rows["operation"] == "support"]
    if records.empty:
        return ["### Not supported", "", "No run recorded the lists (test_ssh_algorithm_support).",
                ""]
    latest = records.sort_values("run_time").groupby(["client", "server"], sort=False).last()
    table = []
    for (client, server), row in latest.iterrows():
        support = row["support"]
        support = json.loads(support) if isinstance(support, str) else support
        lacking: dict[str, dict[str, list[str]]] = support.get("not_supported_by", {})
        for side in (server, client):
            for which, what in LISTS.items():
                names = lacking.get(side, {}).get(which, [])
                if names:
                    table.append({"client": client, "server": server, "list": what,
                                  "not supported by": side, "names": ", ".join(names)})
    lines = ["### Not supported", "",
             "Names one side supports and the other does not (so not in the matrix), as the "
             "lists were derived from the libraries and servers in the latest run.", ""]
    if table:
        lines += [markdown_table(pd.DataFrame(table)), ""]
    else:
        lines += ["Every client supports what its server does, and the other way round.", ""]
    return lines
