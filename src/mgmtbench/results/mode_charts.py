"""The transport run's charts with few series each: every mode drawn by its best client (not
every client x mode pair), every transport in the same figure (a panel each, shared axes).

- :func:`speedup_chart`: the study's figure, each way's speed-up against the best ssh
  ``pty-fresh``, a panel per profile, bars coloured by transport;
- :func:`time_vs_rtt`: time against the measured RTT, a panel per transport, a line per mode;
- :func:`time_vs_commands`: time against the command count at one profile, likewise.

Only the ways that bring the commands' outputs back are drawn
(:data:`~mgmtbench.clients.base.UNREAD_MODES` are in the heatmaps).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from mgmtbench.results.chart_style import line_style, transport_colour
from mgmtbench.results.findings import rtt_text, transport_name
from mgmtbench.results.ways import BASELINE, best_per_way, transport_order

__all__ = ["speedup_chart", "time_vs_commands", "time_vs_rtt"]

COLUMNS = 3  # panels per row


def _grid(panels: int, width: float, height: float, sharex: bool = False,
          sharey: bool = False) -> tuple[Figure, list[Axes]]:
    """``panels`` axes, at most :data:`COLUMNS` a row, each ``width`` x ``height`` inches."""
    columns = min(panels, COLUMNS)
    rows = math.ceil(panels / columns)
    fig, axes = plt.subplots(rows, columns, squeeze=False, sharex=sharex, sharey=sharey,
                             figsize=(width * columns, height * rows))
    flat = list(axes.ravel())
    for ax in flat[panels:]:
        ax.axis("off")
    return fig, flat[:panels]


def _save(fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def _wide(values: pd.Series) -> bool:
    flat = values[values > 0].dropna()
    return bool(len(flat)) and float(flat.max() / flat.min()) > 10


def speedup_chart(rows: pd.DataFrame, out: Path, commands: int) -> Path | None:
    """Per profile with ssh pty-fresh at ``commands`` commands, each reading way's best client
    against the best ssh pty-fresh: ``speedup_<n>cmd.png``; None if no profile has both."""
    best = best_per_way(rows[rows["reads"] & (rows["commands"] == commands)])
    speedups = []
    for profile, group in best.groupby("profile", sort=False):
        base = group[group["way"] == BASELINE]
        if base.empty or len(group) < 2:
            continue
        speedups.append(group.assign(speedup=float(base["mean_ms"].iloc[0]) / group["mean_ms"],
                                     profile=str(profile)))
    if not speedups:
        return None
    table = pd.concat(speedups, ignore_index=True)
    last = table[table["profile"] == table["profile"].iloc[-1]]
    order = list(last.sort_values("speedup")["way"])
    order = [w for w in table.sort_values("speedup")["way"].unique() if w not in order] + order
    profiles = list(pd.unique(table["profile"]))
    fig, axes = _grid(len(profiles), 5.2, 0.3 * len(order) + 1.6, sharex=True)
    for ax, profile in zip(axes, profiles, strict=True):
        group = table[table["profile"] == profile].set_index("way")
        shown = [w for w in order if w in group.index]
        values = group.loc[shown, "speedup"]
        # Bars grow from 1x (ssh pty-fresh): right when faster, left when slower.
        ax.barh(range(len(shown)), values - 1, left=1.0,
                color=[transport_colour(str(group.loc[w, "transport"])) for w in shown])
        ax.set_yticks(range(len(shown)), shown, fontsize=8)
        ax.set_ylim(-0.6, len(shown) - 0.4)
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        ax.axvline(1.0, color="#444444", linewidth=1, linestyle="--")
        for y, way in enumerate(shown):
            value = float(values[way])
            ax.text(value * 1.08 if value >= 1 else value / 1.08, y,
                    f"{value:.1f}x {group.loc[way, 'plain_client']}", va="center", fontsize=7,
                    ha="left" if value >= 1 else "right")
        rtt = group["rtt_ms"].dropna()
        ax.set_title(f"{profile}" + (f" (RTT {rtt_text(float(rtt.median()))})" if len(rtt) else ""),
                     fontsize=9)
        ax.set_xlabel(f"speed-up against {BASELINE} (log scale; left of 1x: slower)")
        ax.set_xlim(min(0.5, float(table["speedup"].min()) / 6),
                    float(table["speedup"].max()) * 2.6)
        ax.grid(axis="x", alpha=0.3)
    transports = transport_order(table["transport"])
    fig.legend(handles=[Patch(color=transport_colour(t), label=transport_name(t))
                        for t in transports], loc="lower center", ncol=len(transports),
               bbox_to_anchor=(0.5, -0.02), frameon=False)
    fig.suptitle(f"{commands} commands: how much faster than a PTY session per device "
                 f"({BASELINE}, its best client); each mode by its best client", fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return _save(fig, out / f"speedup_{commands}cmd.png")


def _by_transport(best: pd.DataFrame, index: str, out: Path, name: str, title: str,
                  xlabel: str) -> Path | None:
    """A panel per transport, a line per mode: mean ms against ``index``."""
    transports = [t for t in transport_order(best["transport"])
                  if best[best["transport"] == t][index].nunique() > 1]
    if not transports:
        return None
    fig, axes = _grid(len(transports), 4.8, 3.8, sharey=True)
    for ax, transport in zip(axes, transports, strict=True):
        part = best[best["transport"] == transport]
        table = part.pivot_table(index=index, columns="mode", values="mean_ms").sort_index()
        table = table[table.max().sort_values(ascending=False).index]  # slowest first
        for number, mode in enumerate(table.columns):
            series = table[mode].dropna()
            ax.plot(series.index, series, label=mode, **line_style(number))
        ax.set_title(transport_name(transport), fontsize=9)
        ax.set_xlabel(xlabel)
        if ax.get_subplotspec().is_first_col():  # type: ignore[union-attr]
            ax.set_ylabel("time per iteration, ms (mean)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
        if _wide(pd.Series(table.index, dtype=float)):
            ax.set_xscale("log")
    if _wide(best["mean_ms"]):
        axes[0].set_yscale("log")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return _save(fig, out / f"{name}.png")


def time_vs_rtt(rows: pd.DataFrame, out: Path, commands: int) -> Path | None:
    """Time against the measured RTT at ``commands`` commands: ``modes_rtt_<n>cmd.png``; None
    with fewer than two profiles."""
    part = rows[rows["reads"] & (rows["commands"] == commands) & rows["rtt_ms"].notna()]
    if part["profile"].nunique() < 2:
        return None
    best = best_per_way(part).assign(rtt=lambda f: f.groupby("profile")["rtt_ms"]
                                     .transform("median"))
    return _by_transport(best, "rtt", out, f"modes_rtt_{commands}cmd",
                         f"{commands} commands: time against round-trip time, each mode by its "
                         "best client at each RTT", "measured RTT, ms")


def time_vs_commands(rows: pd.DataFrame, out: Path, profile: str) -> Path | None:
    """Time against the command count at ``profile``: ``modes_commands_<profile>.png``; None
    with fewer than two counts."""
    part = rows[rows["reads"] & (rows["profile"] == profile)]
    if part["commands"].nunique() < 2:
        return None
    return _by_transport(best_per_way(part), "commands", out, f"modes_commands_{profile}",
                         f"{profile}: time against commands per iteration, each mode by its "
                         "best client at each count", "commands per iteration")
