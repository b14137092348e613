"""Charts, the way people read these results: grouped bars per profile, time against commands
and against RTT. Log scales where the values span more than a decade."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from mgmtbench.results.compare import by_commands, by_rtt

TRANSPORT_COLOURS = {"ssh": "#1f77b4", "https": "#ff7f0e"}


def _log_if_wide(ax: Axes, values: pd.Series | pd.DataFrame, axis: str = "y") -> None:
    flat = pd.Series(values.to_numpy().ravel()).dropna()
    flat = flat[flat > 0]
    if len(flat) and flat.max() / flat.min() > 10:
        (ax.set_yscale if axis == "y" else ax.set_xscale)("log")


def bars_per_profile(frame: pd.DataFrame, out: Path, commands: int) -> list[Path]:
    """One horizontal bar chart per profile: mean ms per client/mode, SSH and HTTPS coloured."""
    paths = []
    part = frame[frame["commands"] == commands]
    for profile, group in part.groupby("profile", sort=False):
        group = group.sort_values("mean_ms")
        labels = group["client"] + " " + group["mode"]
        colours = [TRANSPORT_COLOURS.get(str(t), "#777777") for t in group.get("transport", [])]
        fig, ax = plt.subplots(figsize=(9, 0.28 * len(group) + 1.5))
        ax.barh(labels, group["mean_ms"], color=colours or None)
        ax.invert_yaxis()
        rtt = group["measured_rtt_ms"].iloc[0] if "measured_rtt_ms" in group else None
        ax.set_title(f"{profile}: {commands} commands per iteration"
                     + (f" (measured RTT {rtt:.1f} ms)" if rtt else ""))
        ax.set_xlabel("time per iteration, ms (mean)")
        _log_if_wide(ax, group["mean_ms"], axis="x")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(handles=[Patch(color=c, label=t.upper()) for t, c in TRANSPORT_COLOURS.items()],
                  loc="lower right")
        fig.tight_layout()
        path = out / f"bars_{profile}_{commands}cmd.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def lines(table: pd.DataFrame, out: Path, name: str, title: str, xlabel: str,
          ylabel: str = "time per iteration, ms (mean)", logx: bool = False) -> Path | None:
    """Time against a numeric index (commands, RTT, concurrency), one line per column."""
    if table.shape[0] < 2:
        return None
    fig, ax = plt.subplots(figsize=(13, 6))
    for column in table.columns:
        label = " ".join(map(str, column)) if isinstance(column, tuple) else str(column)
        ax.plot(table.index, table[column], marker="o", label=label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _log_if_wide(ax, table)
    if logx:
        _log_if_wide(ax, pd.Series(table.index, dtype=float), axis="x")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2 if len(table.columns) > 25 else 1, loc="upper left",
              bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.tight_layout()
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def time_vs_commands(frame: pd.DataFrame, out: Path, profile: str) -> Path | None:
    """Mean ms against commands per iteration at one profile, a line per client/mode."""
    return lines(by_commands(frame, profile), out, f"commands_{profile}",
                 f"{profile}: time against commands per iteration", "commands per iteration")


def time_vs_rtt(frame: pd.DataFrame, out: Path, commands: int) -> Path | None:
    """Mean ms against the measured RTT at one command count, a line per client/mode."""
    return lines(by_rtt(frame, commands), out, f"rtt_{commands}cmd",
                 f"{commands} commands: time against round-trip time", "measured RTT, ms")


def concurrency_curves(frame: pd.DataFrame, out: Path, profile: str) -> list[Path]:
    """Makespan and client CPU per session against concurrency, a line per client."""
    part = frame[(frame["profile"] == profile) & frame["concurrency"].notna()]
    paths = []
    for column, name, ylabel in (
            ("median_ms", "makespan", "makespan of the fleet run, ms (median)"),
            ("client_cpu_ms_per_session", "cpu", "client CPU per session, ms (median)")):
        if column not in part:
            continue
        table = part.pivot_table(index="concurrency", columns="client", values=column,
                                 aggfunc="last")
        path = lines(table, out, f"concurrency_{name}_{profile}",
                     f"{profile}: {name} against concurrent sessions", "concurrent sessions", ylabel,
                     logx=True)
        if path is not None:
            paths.append(path)
    return paths
