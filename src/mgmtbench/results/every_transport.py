"""Every transport on the same work: the CLI over SSH and HTTPS, NETCONF, RESTCONF and gNMI, each
with the CLI envelope and (where it has one) modelled data, side by side.

Per profile, at the command count the run has most of: for each transport and payload, the
fastest client and mode (by median) among those that bring the commands' outputs back (not
:data:`~mgmtbench.clients.base.UNREAD_MODES`: the study's RESTCONF ``batch-patch`` and gNMI
``batch-set`` run the commands and answer a status only, so they are not the same work), its
time and time in RTTs, the speed-up against the best ssh ``pty-fresh`` of the same profile and
command count (the study's figure, a Netmiko-style PTY session per device), bytes and packets
per iteration on the link, and the client's CPU per command. The same bests are drawn against
the command count (per profile) and against the RTT (per command count), a line per transport
and payload, so eight lines instead of every client x mode.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.clients.base import UNREAD_MODES
from mgmtbench.results.charts import lines

__all__ = ["best_per_transport", "charts", "tables"]

#: The columns of a table, in order (those the run recorded).
COLUMNS = ["transport", "client", "mode", "median_ms", "rtts", "vs_pty_fresh",
           "bytes_per_iteration", "packets_per_iteration", "client_cpu_ms_per_command"]
_BASELINE_MODE = "pty-fresh"


def _label(frame: pd.DataFrame) -> pd.Series:
    """``transport`` or ``transport (payload)`` for a modelled payload."""
    payload = frame["payload"].fillna("cli") if "payload" in frame else pd.Series(
        "cli", index=frame.index)
    transport = frame["transport"].astype(str)
    return transport.where(payload == "cli", transport + " (" + payload.astype(str) + ")")


def _plain_client(client: str) -> str:
    return client.split(" (", 1)[0]


def best_per_transport(frame: pd.DataFrame, profile: str, commands: int) -> pd.DataFrame:
    """The fastest client/mode of each transport and payload at one profile and command count
    (see the module docstring), fastest first; empty if the run has none there."""
    if "transport" not in frame:
        return pd.DataFrame(columns=COLUMNS)
    part = frame[(frame["profile"] == profile)
                 & (pd.to_numeric(frame["commands"], errors="coerce") == commands)
                 & frame["transport"].notna() & ~frame["mode"].isin(UNREAD_MODES)]
    if part.empty:
        return pd.DataFrame(columns=COLUMNS)
    part = part.assign(transport=_label(part))
    best = part.loc[part.groupby("transport", sort=False)["median_ms"].idxmin()]
    ssh = part[(part["transport"] == "ssh") & (part["mode"] == _BASELINE_MODE)]
    baseline = float(ssh["median_ms"].min()) if not ssh.empty else float("nan")
    best = best.assign(client=best["client"].map(_plain_client),
                       vs_pty_fresh=baseline / best["median_ms"])
    if "measured_rtt_ms" in best:
        rtt = pd.to_numeric(best["measured_rtt_ms"], errors="coerce")
        best = best.assign(rtts=best["median_ms"] / rtt.where(rtt > 0))
    return best.sort_values("median_ms")[[c for c in COLUMNS if c in best]].reset_index(
        drop=True)


def tables(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``"<profile>, N commands"`` -> :func:`best_per_transport` at the run's most common command
    count, for every profile with more than one transport."""
    if "transport" not in frame or frame["transport"].nunique() < 2:
        return {}
    commands = int(pd.to_numeric(frame["commands"], errors="coerce").mode()[0])
    out = {}
    for profile in frame["profile"].unique():
        table = best_per_transport(frame, str(profile), commands)
        if len(table) > 1:
            out[f"{profile}, {commands} commands"] = table
    return out


def _bests(frame: pd.DataFrame) -> pd.DataFrame:
    """Every row of a transport's best client/mode, the best chosen per profile and command
    count, labelled ``transport`` / ``transport (payload)``."""
    part = frame[frame["transport"].notna() & ~frame["mode"].isin(UNREAD_MODES)]
    part = part.assign(transport=_label(part))
    keys = ["profile", "commands", "transport"]
    return part.loc[part.groupby(keys, sort=False)["median_ms"].idxmin()]


def charts(frame: pd.DataFrame, out: Path) -> list[Path]:
    """Time against the command count (a chart per profile with several counts) and against
    the measured RTT (a chart per command count with several profiles), a line per transport
    and payload: its fastest client/mode at each point."""
    if "transport" not in frame or frame["transport"].nunique() < 2:
        return []
    bests = _bests(frame)
    paths: list[Path | None] = []
    for profile, group in bests.groupby("profile", sort=False):
        if group["commands"].nunique() > 1:
            table = group.pivot_table(index="commands", columns="transport", values="median_ms")
            paths.append(lines(table, out, f"transports_commands_{profile}",
                               f"{profile}: the fastest way per transport, against commands",
                               "commands per iteration", "time per iteration, ms (median)"))
    if "measured_rtt_ms" in bests:
        for commands, group in bests.groupby("commands", sort=False):
            if group["profile"].nunique() > 1:
                table = group.pivot_table(index="measured_rtt_ms", columns="transport",
                                          values="median_ms").sort_index()
                paths.append(lines(table, out, f"transports_rtt_{int(commands)}cmd",
                                   f"{int(commands)} commands: the fastest way per transport, "
                                   "against RTT", "measured RTT, ms",
                                   "time per iteration, ms (median)"))
    return [p for p in paths if p is not None]
