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

from mgmtbench.results.chart_style import line_style
from mgmtbench.results.compare import by_commands, by_rtt

TRANSPORT_COLOURS = {"ssh": "#1f77b4", "https": "#ff7f0e"}
MAX_BARS = 60  # a bar chart shows at most this many bars (the fastest)


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
        total = len(group)
        group = group.sort_values("mean_ms").head(MAX_BARS)
        labels = group["client"] + " " + group["mode"]
        colours = [TRANSPORT_COLOURS.get(str(t), "#777777") for t in group.get("transport", [])]
        fig, ax = plt.subplots(figsize=(9, 0.28 * len(group) + 1.5))
        ax.barh(labels, group["mean_ms"], color=colours or None)
        ax.invert_yaxis()
        rtt = group["measured_rtt_ms"].iloc[0] if "measured_rtt_ms" in group else None
        ax.set_title(f"{profile}: {commands} commands per iteration"
                     + (f" (measured RTT {rtt:.1f} ms)" if rtt else "")
                     + (f", the fastest {MAX_BARS} of {total}" if total > MAX_BARS else ""))
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
    for index, column in enumerate(table.columns):
        label = " ".join(map(str, column)) if isinstance(column, tuple) else str(column)
        ax.plot(table.index, table[column], label=label, **line_style(index))
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


def heatmaps(panels: dict[str, pd.DataFrame], out: Path, name: str, title: str,
             label: str, higher_is_better: bool) -> Path | None:
    """One figure of heatmaps, a panel per key of ``panels`` (rows x columns of values, NaN:
    not measured), on one colour scale, each cell annotated; None if there is nothing to draw.
    Colours: better values brighter (``higher_is_better`` says which way is better)."""
    panels = {key: table for key, table in panels.items() if table.notna().to_numpy().any()}
    if not panels:
        return None
    values = pd.concat([t.stack() for t in panels.values()]).dropna()
    low, high = float(values.min()), float(values.max())
    columns = min(len(panels), 3)
    rows = -(-len(panels) // columns)
    widest = max(t.shape[1] for t in panels.values())
    tallest = max(t.shape[0] for t in panels.values())
    fig, axes = plt.subplots(rows, columns, squeeze=False,
                             figsize=(columns * (1.6 + 0.75 * widest) + 2,
                                      rows * (1.2 + 0.32 * tallest) + 0.8))
    cmap = "viridis" if higher_is_better else "viridis_r"
    image = None
    for ax, (key, table) in zip(axes.ravel(), panels.items(), strict=False):
        image = ax.imshow(table.to_numpy(dtype=float), cmap=cmap, vmin=low, vmax=high,
                          aspect="auto")
        ax.set_title(key, fontsize=8)
        ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns], rotation=45,
                      ha="right", fontsize=7)
        ax.set_yticks(range(table.shape[0]), [str(i) for i in table.index], fontsize=7)
        for (y, x), value in pd.DataFrame(table.to_numpy(dtype=float)).stack().items():
            share = (value - low) / (high - low) if high > low else 1.0
            bright = share > 0.6 if higher_is_better else share < 0.4
            ax.text(x, y, f"{value:.0f}" if abs(value) >= 10 else f"{value:.1f}",
                    ha="center", va="center", fontsize=6, color="black" if bright else "white")
    for ax in axes.ravel()[len(panels):]:
        ax.axis("off")
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), label=label, shrink=0.8)
    fig.suptitle(title, fontsize=10)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def throughput_curves(frame: pd.DataFrame, out: Path, name: str, title: str) -> Path | None:
    """Total MB/s against concurrent connections: a panel per pinning (pinned, unpinned), a
    colour per cipher, a line style per server (emulator solid, sshd dashed); None with fewer
    than two connection counts. ``frame`` has ``connections``, ``mb_per_s_total``, ``server``,
    ``cipher`` and ``pinning``."""
    if frame["connections"].nunique() < 2:
        return None
    pinnings = [p for p in ("pinned", "unpinned") if p in set(frame["pinning"])]
    ciphers = list(dict.fromkeys(frame["cipher"]))
    colours = {c: plt.get_cmap("tab10")(i % 10) for i, c in enumerate(ciphers)}
    styles = {"emulator": "-", "sshd": "--"}
    fig, axes = plt.subplots(1, len(pinnings), squeeze=False, sharey=True,
                             figsize=(6.5 * len(pinnings) + 2, 5))
    for ax, pinning in zip(axes[0], pinnings, strict=True):
        part = frame[frame["pinning"] == pinning]
        for (server, cipher), group in part.groupby(["server", "cipher"], sort=False):
            group = group.sort_values("connections")
            ax.plot(group["connections"], group["mb_per_s_total"], marker="o",
                    linestyle=styles.get(str(server), ":"), color=colours[cipher],
                    label=f"{server} {cipher}")
        ax.set_xscale("log")
        ticks = sorted(int(c) for c in frame["connections"].unique())
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_title("server pinned to one core" if pinning == "pinned" else "server unpinned")
        ax.set_xlabel("concurrent connections")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("total MB/s (all connections)")
    axes[0][0].set_ylim(bottom=0)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.suptitle(title)
    fig.tight_layout()
    path = out / f"{name}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def signing_bars(rows: pd.DataFrame, out: Path) -> Path | None:
    """ssh-agent signing: ms per signature per key type (32 B, unique messages), a bar per
    signer (the agent clients and the in-process signature)."""
    part = rows[(rows["size"] == 32) & (rows["message"] == "unique")]
    if part.empty:
        return None
    table = part.pivot_table(index="kind", columns="signer", values="ms_per_signature",
                             aggfunc="last")
    order = ["ed25519", "ecdsa-p256", "ecdsa-p384", "ecdsa-p521", "rsa-2048", "rsa-4096"]
    table = table.reindex([k for k in order if k in table.index]
                          + [k for k in table.index if k not in order])
    table = table[[s for s in ("raw", "asyncssh", "paramiko", "in-process") if s in table]]
    fig, ax = plt.subplots(figsize=(10, 5))
    table.plot.bar(ax=ax, rot=0)
    ax.set_title("ms per signature, 32 B unique messages (agent clients and in-process)")
    ax.set_xlabel("key type")
    ax.set_ylabel("ms per signature (mean)")
    _log_if_wide(ax, table)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    path = out / "agent_signing.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def agent_concurrency_lines(table: pd.DataFrame, out: Path) -> Path | None:
    """ssh-agent throughput (signatures/s, all clients together) against clients at once, a line
    per signer/how/key type (a flat line: the agent is the limit)."""
    labels = table["signer"] + " " + table["how"] + " " + table["kind"]
    pivot = table.assign(line=labels).pivot_table(index="clients", columns="line",
                                                  values="signatures/s", aggfunc="last")
    return lines(pivot, out, "agent_concurrency", "ssh-agent throughput against clients at once",
                 "clients at once", "signatures per second (all clients)", logx=True)


def login_bars(rows: pd.DataFrame, out: Path, profile: str) -> Path | None:
    """Login time per client and key type, a bar per login method (password, key file, agent)."""
    if rows.empty:
        return None
    labels = rows["client"] + " " + rows["kind"].where(rows["auth"] != "password", "")
    table = rows.assign(label=labels.str.strip()).pivot_table(
        index="label", columns="auth", values="median_ms", aggfunc="last")
    table = table[[a for a in ("password", "key", "agent") if a in table]]
    fig, ax = plt.subplots(figsize=(9, 0.35 * len(table) + 1.5))
    table.plot.barh(ax=ax)
    ax.invert_yaxis()
    ax.set_title(f"{profile}: one login (connect to output and close), by login method")
    ax.set_xlabel("ms per login (median)")
    _log_if_wide(ax, table, axis="x")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path = out / f"agent_login_{profile}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
