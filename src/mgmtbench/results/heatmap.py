"""A client x mode heatmap per profile: every transport benchmark of the profile at one command
count, a panel per transport (its clients down, its modes across), each cell's time in RTTs
written in it (in ms where the measured RTT is below 1 ms), one logarithmic colour scale for the
figure, fastest brightest."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files, no display
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm

from mgmtbench.clients.base import (
    GNMI_MODES,
    HTTP3_MODES,
    HTTPS_MODES,
    NETCONF_MODES,
    RESTCONF_MODES,
    SSH_MODES,
    UNREAD_MODES,
)
from mgmtbench.results.findings import rtt_text, transport_name
from mgmtbench.results.ways import transport_order

__all__ = ["heatmap"]

_MODE_ORDER = {"ssh": SSH_MODES, "https": HTTPS_MODES, "netconf": NETCONF_MODES,
               "restconf": RESTCONF_MODES, "gnmi": GNMI_MODES, "http3": HTTP3_MODES}
CELL_W, CELL_H = 0.95, 0.32  # inches
CMAP = "viridis_r"


def _ordered_modes(transport: str, modes: list[str]) -> list[str]:
    known = _MODE_ORDER.get(transport.split(" (", 1)[0], ())
    return ([m for m in known if m in modes] + sorted(m for m in modes if m not in known))


def _panel(part: pd.DataFrame, value: str) -> pd.DataFrame:
    """One transport's clients (fastest first) x modes (in the adapters' order)."""
    table = part.pivot_table(index="plain_client", columns="mode", values=value, aggfunc="mean")
    table = table[_ordered_modes(str(part["transport"].iloc[0]), list(table.columns))]
    return table.loc[table.median(axis=1).sort_values().index]


def nice_ticks(low: float, high: float) -> list[float]:
    """1-2-5 steps from ``low`` to ``high`` (both ends included), for a log colour scale."""
    ticks = [low]
    decade = 10.0 ** np.floor(np.log10(low))
    while decade <= high:
        ticks += [decade * step for step in (1, 2, 5) if low * 1.15 < decade * step < high / 1.15]
        decade *= 10
    return [*ticks, high]


def _text_colour(rgba: tuple[float, float, float, float]) -> str:
    red, green, blue = rgba[:3]
    return "black" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.5 else "white"


def heatmap(rows: pd.DataFrame, out: Path, profile: str, commands: int) -> Path | None:
    """The heatmap of ``profile`` at ``commands`` commands from ``rows``
    (:func:`~mgmtbench.results.ways.ways`), written to ``out/heatmap_<profile>_<n>cmd.png``;
    None if the run has nothing there."""
    part = rows[(rows["profile"] == profile) & (rows["commands"] == commands)]
    if part.empty:
        return None
    in_rtts = bool(part["rtts"].notna().all())
    value = "rtts" if in_rtts else "mean_ms"
    panels = {t: _panel(part[part["transport"] == t], value)
              for t in transport_order(part["transport"])}
    values = pd.concat([t.stack() for t in panels.values()])
    values = values[values > 0]
    if values.empty:
        return None
    norm = LogNorm(vmin=float(values.min()), vmax=max(float(values.max()),
                                                      float(values.min()) * 1.01))
    cmap = plt.get_cmap(CMAP).with_extremes(bad="#eeeeee")
    widest = max(t.shape[1] for t in panels.values())
    heights = [t.shape[0] + 1.6 for t in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, squeeze=False, layout="constrained",
                             figsize=(2.4 + CELL_W * widest + 1.4,
                                      CELL_H * sum(heights) + 1.2 * len(panels) + 0.8),
                             gridspec_kw={"height_ratios": heights})
    image = None
    for ax, (transport, table) in zip(axes[:, 0], panels.items(), strict=True):
        data = np.ma.masked_invalid(table.to_numpy(dtype=float))
        image = ax.imshow(data, cmap=cmap, norm=norm, aspect="auto",
                          extent=(-0.5, table.shape[1] - 0.5, table.shape[0] - 0.5, -0.5))
        ax.set_xlim(-0.5, widest - 0.5)
        ax.set_title(f"{transport_name(transport)}: {table.shape[0]} client(s) x "
                     f"{table.shape[1]} mode(s)", fontsize=9, loc="left")
        ax.set_xticks(range(table.shape[1]),
                      [m + (" *" if m in UNREAD_MODES else "") for m in table.columns],
                      rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(table.shape[0]), list(table.index), fontsize=8)
        for spine in ax.spines.values():
            spine.set_visible(False)
        for (y, x), cell in np.ndenumerate(table.to_numpy(dtype=float)):
            if cell != cell:
                ax.text(x, y, "-", ha="center", va="center", fontsize=7, color="#777777")
                continue
            text = f"{cell:.0f}" if cell >= 100 else f"{cell:.1f}"
            ax.text(x, y, text, ha="center", va="center", fontsize=7.5,
                    color=_text_colour(cmap(norm(cell))))
    rtt = part["rtt_ms"].dropna()
    unit = ("time per iteration in RTTs (mean / measured RTT)" if in_rtts
            else "time per iteration, ms (mean; RTT below 1 ms)")
    if image is not None:
        bar = fig.colorbar(image, ax=axes[:, 0].tolist(), label=unit, location="top",
                           shrink=0.7, aspect=35, pad=0.01)
        ticks = nice_ticks(float(values.min()), float(values.max()))
        bar.set_ticks(ticks, labels=[f"{t:.3g}" for t in ticks])
        bar.minorticks_off()
    title = (f"{profile}: {commands} commands per iteration, "
             + (f"measured RTT {rtt_text(float(rtt.median()))}" if not rtt.empty else "RTT unknown")
             + "; lower (brighter) is faster")
    if any(m in UNREAD_MODES for t in panels.values() for m in t.columns):
        title += "\n* answers a status, not the outputs"
    fig.suptitle(title, fontsize=10, x=0.02, ha="left")
    path = out / f"heatmap_{profile}_{commands}cmd.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
