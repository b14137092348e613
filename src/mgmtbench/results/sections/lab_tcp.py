"""The lab's own TCP as an experiment (``benchmarks/test_lab_tcp.py``): per link and case, the
device side's congestion control side by side (median ms and RTTs, and the ratio to cubic), with
what each lab's connection showed."""

from __future__ import annotations

import pandas as pd

from mgmtbench.results.sections.base import ReportContext, Section, generic, markdown_table
from mgmtbench.results.tcp import describe

EXPERIMENT = "lab-tcp"
KEYS = ("profile", "case", "device_cc")
REFERENCE = "cubic"


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows case, columns per congestion control: median ms, RTTs (the median over the lab's
    measured RTT); then each one's ratio to cubic."""
    if "measured_rtt_ms" in rows:
        rows = rows.assign(rtts=rows["median_ms"] / pd.to_numeric(rows["measured_rtt_ms"]))
    wide = rows.pivot_table(index="case", columns="device_cc", values=["median_ms", "rtts"],
                            aggfunc="last", sort=False)
    out = pd.DataFrame({"case": wide.index})
    controls = list(dict.fromkeys(rows["device_cc"]))
    for cc in controls:
        out[f"{cc} ms"] = wide[("median_ms", cc)].to_numpy()
        if ("rtts", cc) in wide:
            out[f"{cc} RTTs"] = wide[("rtts", cc)].to_numpy()
    if REFERENCE in controls:
        for cc in controls:
            if cc != REFERENCE:
                out[f"{cc} / {REFERENCE}"] = out[f"{cc} ms"] / out[f"{REFERENCE} ms"]
    return out


def render(frame: pd.DataFrame, context: ReportContext) -> Section:
    """A table per link."""
    if not {"profile", "case", "device_cc", "median_ms"} <= set(frame.columns):
        return generic(EXPERIMENT, frame)
    lines = ["## The lab's own TCP: the device side's congestion control", "",
             "Each case on a connection made before the timed part; median ms, and the median "
             "in RTTs of the lab's measured RTT. The benchmark side keeps the profile's "
             "default.", ""]
    for profile, rows in frame.groupby("profile", sort=False):
        facts = [describe(t) for t in rows.drop_duplicates("device_cc")["tcp"]] \
            if "tcp" in rows else []
        lines += [f"### {profile}", "", *[f"- {f}" for f in facts], "",
                  markdown_table(table(rows), floats="{:.2f}"), ""]
    return Section(lines)
