"""The ways a transport run gets N commands into a device and their outputs back: one row per
profile, command count, transport, mode and client, as the report's findings and overview charts
read them.

A way is ``"<transport> <mode>"`` (``"ssh pty-fresh"``, ``"https batch-post"``); a modelled
payload is its own transport (``"netconf (yang)"``), as in :mod:`mgmtbench.results.every_transport`.
Times are means per iteration (the study's figure); ``rtts`` is the mean over the measured RTT,
NaN below a 1 ms RTT (as the benchmark's own ``rtts``): there, times are read in ms.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.clients.base import UNREAD_MODES
from mgmtbench.results.compare import KEYS, cells

__all__ = ["BASELINE", "TRANSPORT_ORDER", "best_per_way", "reference_count", "transport_order",
           "ways"]

#: The slowest common practice, what every saving is measured from: a new SSH connection, PTY
#: and shell per device and iteration (Netmiko, Scrapli, Ansible network_cli).
BASELINE = "ssh pty-fresh"
#: Transports in the order the report names them; others (and payload variants) after their base.
TRANSPORT_ORDER = ("ssh", "https", "netconf", "restconf", "gnmi", "http3")
STUDY_COMMANDS = 5


def transport_order(labels: object) -> list[str]:
    """``labels`` (transport labels, payload variants included) in :data:`TRANSPORT_ORDER`."""
    def key(label: str) -> tuple[int, str]:
        base = label.split(" (", 1)[0]
        return (TRANSPORT_ORDER.index(base) if base in TRANSPORT_ORDER else len(TRANSPORT_ORDER),
                label)
    return sorted({str(label) for label in labels}, key=key)  # type: ignore[attr-defined]


def ways(frame: pd.DataFrame) -> pd.DataFrame:
    """The run's transport benchmarks, a row per profile, command count, transport, mode and
    client (repeats averaged), with ``transport`` labelled by payload, ``way``, ``plain_client``
    (without the payload), ``rtt_ms`` (measured), ``rtts`` and ``reads`` (False for the modes
    that answer a status, not the outputs: :data:`~mgmtbench.clients.base.UNREAD_MODES`).
    Empty if the run has none."""
    needed = [*KEYS, "mean_ms", "transport"]
    if any(column not in frame for column in needed):
        return pd.DataFrame(columns=[*needed, "way", "plain_client", "rtt_ms", "rtts", "reads"])
    part = frame[frame["transport"].notna() & frame["mean_ms"].notna()
                 & pd.to_numeric(frame["commands"], errors="coerce").notna()]
    if "experiment" in part:
        part = part[part["experiment"] == "transport"]
    part = cells(part, KEYS)
    payload = (part["payload"].fillna("cli").astype(str) if "payload" in part
               else pd.Series("cli", index=part.index))
    transport = part["transport"].astype(str)
    transport = transport.where(payload == "cli", transport + " (" + payload + ")")
    rtt = (pd.to_numeric(part["measured_rtt_ms"], errors="coerce") if "measured_rtt_ms" in part
           else pd.Series(float("nan"), index=part.index))
    mean = part["mean_ms"].astype(float)
    return part.assign(
        transport=transport, way=transport + " " + part["mode"].astype(str),
        plain_client=part["client"].astype(str).str.split(" (", n=1, regex=False).str[0],
        commands=pd.to_numeric(part["commands"]).astype(int), mean_ms=mean, rtt_ms=rtt,
        rtts=mean / rtt.where(rtt >= 1), reads=~part["mode"].isin(UNREAD_MODES),
    ).reset_index(drop=True)


def reference_count(rows: pd.DataFrame) -> int:
    """The command count one-count views use: the study's 5 if the run has it, else the count
    with the most benchmarks (the smallest of a tie)."""
    counts = rows["commands"].value_counts()
    if STUDY_COMMANDS in counts.index:
        return STUDY_COMMANDS
    return int(min(counts.index, key=lambda c: (-counts[c], c)))


def best_per_way(rows: pd.DataFrame) -> pd.DataFrame:
    """Per profile, command count and way, the row of its fastest client (lowest mean)."""
    if rows.empty:
        return rows
    chosen = rows.groupby(["profile", "commands", "way"], sort=False)["mean_ms"].idxmin()
    return rows.loc[chosen.to_numpy()].reset_index(drop=True)
