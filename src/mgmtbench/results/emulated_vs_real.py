"""Emulated against real: the transport benchmark's results on inventory hosts (``target:
inventory``, run with ``--inventory``) beside the lab's (``target: lab``), from any of the runs a
report is given.

Each inventory host is paired with one lab profile:

- ``--match HOST=PROFILE`` for that host, else ``--match-all PROFILE`` for every host;
- else, by default, the lab profile whose configured RTT is nearest the host's measured RTT (its
  SSH echo, ``measured_rtt_ms``; the first such profile on a tie).

Then every client x mode x command count measured on both sides is a row: mean ms emulated and
real, their ratio (real / emulated), RTTs per iteration on each side (mean / that side's measured
RTT) and wire round trips per iteration where the link was tapped (``-`` where it was not).
Where several runs hold the same benchmark, the last run given is used (a benchmark repeated
within a run: the mean of its repeats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.results.compare import cells
from mgmtbench.results.sections.base import Section, markdown_table

EXPERIMENT = "transport"
PAIRED_BY = ["client", "mode", "commands"]
SIDES = ("emulated", "real")
COLUMNS = ["client", "mode", "commands", "mean_ms emulated", "mean_ms real", "real/emulated",
           "rtts emulated", "rtts real", "wire_rtts emulated", "wire_rtts real"]


@dataclass(frozen=True)
class Pairing:
    """How inventory hosts are paired with lab profiles: ``hosts`` by name (``--match``), then
    ``every`` (``--match-all``), then the nearest configured RTT."""

    hosts: Mapping[str, str] = field(default_factory=dict)
    every: str | None = None

    @property
    def given(self) -> bool:
        """Whether the user asked for a pairing (then runs without both sides are an error)."""
        return bool(self.hosts) or self.every is not None


def render(runs: pd.DataFrame, pairing: Pairing = Pairing()) -> Section | None:
    """The "Emulated vs real" section for ``runs`` (every run's rows, ``run`` telling them apart,
    in the order given), None when they do not hold both inventory and lab transport results
    and no pairing was asked for; a :class:`ResultsError` (one line) for a pairing that cannot
    be made."""
    lab, real = _side(runs, "lab"), _side(runs, "inventory")
    if lab.empty or real.empty or "host" not in real:
        if pairing.given:
            missing = "an inventory run (--inventory)" if real.empty or "host" not in real \
                else "a lab run"
            raise ResultsError(f"--match/--match-all: the runs hold no transport results of "
                               f"{missing} to pair")
        return None
    profiles = _profiles(lab)
    hosts = real.drop_duplicates("host", keep="last").set_index("host")
    unknown = sorted(set(pairing.hosts) - set(hosts.index))
    if unknown:
        raise ResultsError(f"--match {unknown[0]}=...: no inventory host {unknown[0]!r} in the "
                           f"runs (hosts: {', '.join(map(str, hosts.index))})")
    for wanted in [*pairing.hosts.values(), *([pairing.every] if pairing.every else [])]:
        if wanted not in profiles:
            raise ResultsError(f"--match: no lab profile {wanted!r} in the runs (profiles: "
                               f"{', '.join(profiles)})")
    lines = ["## Emulated vs real", "",
             "The transport benchmark on inventory hosts (real) beside the lab (emulated), per "
             "client, mode and command count measured on both. Ratio: real / emulated mean. "
             "RTTs: mean / that side's measured RTT; wire RTTs: round trips counted on the link "
             "(`-`: not tapped).", ""]
    for host, facts in hosts.iterrows():
        profile, why = _choose(str(host), facts.get("measured_rtt_ms"), profiles, pairing)
        emulated = lab[lab["profile"] == profile]
        table = _pair(emulated, real[real["host"] == host])
        lab_facts = emulated.iloc[-1]
        lines += [f"### {host} against {profile}", "",
                  f"Host {host} ({_text(facts.get('device_version'))}; measured RTT "
                  f"{_ms(facts.get('measured_rtt_ms'))} ms by SSH echo, "
                  f"{_ms(facts.get('tcp_rtt_ms'))} ms by TCP connect) against lab profile "
                  f"{profile} (configured RTT {_ms(lab_facts.get('configured_rtt_ms'))} ms, "
                  f"measured {_ms(lab_facts.get('measured_rtt_ms'))} ms): {why}.", ""]
        if table.empty:
            lines += ["No client, mode and command count measured on both sides.", ""]
        else:
            lines += [markdown_table(table[COLUMNS], floats="{:.2f}"), ""]
    return Section(lines)


def _side(runs: pd.DataFrame, target: str) -> pd.DataFrame:
    """The transport rows of ``target``, one per benchmark: the last run's that holds it."""
    if "target" not in runs or "experiment" not in runs:
        return runs.iloc[0:0]
    rows = runs[(runs["experiment"] == EXPERIMENT) & (runs["target"] == target)]
    keys = ["host" if target == "inventory" else "profile", *PAIRED_BY]
    if rows.empty or any(k not in rows for k in keys):
        return rows.iloc[0:0]
    per_run = [cells(group, keys) for _, group in rows.groupby("run", sort=False)]
    return pd.concat(per_run, ignore_index=True).drop_duplicates(keys, keep="last")


def _profiles(lab: pd.DataFrame) -> dict[str, float | None]:
    """The lab's profiles and their configured RTTs, in the order first met."""
    found: dict[str, float | None] = {}
    for profile, group in lab.groupby("profile", sort=False):
        rtt = pd.to_numeric(group.get("configured_rtt_ms"), errors="coerce").dropna()
        found[str(profile)] = float(rtt.iloc[-1]) if len(rtt) else None
    return found


def _choose(host: str, measured: object, profiles: dict[str, float | None],
            pairing: Pairing) -> tuple[str, str]:
    """The profile ``host`` is paired with, and why (for the table's heading line)."""
    if host in pairing.hosts:
        return pairing.hosts[host], f"chosen with --match {host}={pairing.hosts[host]}"
    if pairing.every is not None:
        return pairing.every, f"chosen with --match-all {pairing.every}"
    known = {p: rtt for p, rtt in profiles.items() if rtt is not None}
    rtt = pd.to_numeric(pd.Series([measured]), errors="coerce").iloc[0]
    if not known or pd.isna(rtt):
        first = next(iter(profiles))
        return first, ("the lab's only profile" if len(profiles) == 1 else
                       "the first lab profile (no RTT to match by); choose with --match")
    best = min(known, key=lambda p: abs(known[p] - float(rtt)))
    return best, (f"the lab profile whose configured RTT is nearest the host's measured "
                  f"{float(rtt):.2f} ms (choose another with --match {host}=PROFILE)")


def _pair(emulated: pd.DataFrame, real: pd.DataFrame) -> pd.DataFrame:
    """One row per client x mode x command count on both sides, with the report's columns."""
    wanted = {"mean_ms": "mean_ms", "rtts": "rtts", "wire_rtts_per_iteration": "wire_rtts"}
    sides = []
    for side, frame in zip(SIDES, (emulated, real), strict=True):
        part = frame[PAIRED_BY].copy()
        for column, shown in wanted.items():
            values = frame[column] if column in frame else float("nan")
            part[f"{shown} {side}"] = pd.to_numeric(values, errors="coerce")
        sides.append(part)
    table = sides[0].merge(sides[1], on=PAIRED_BY)
    table["real/emulated"] = table["mean_ms real"] / table["mean_ms emulated"]
    if not table.empty:
        table["commands"] = table["commands"].astype(int)
    return table.sort_values(PAIRED_BY, kind="stable")


def _ms(value: object) -> str:
    number = pd.to_numeric(pd.Series([value]), errors="coerce").iloc[0]
    return "-" if pd.isna(number) else f"{float(number):.2f}"


def _text(value: object) -> str:
    return "version unknown" if value is None or (isinstance(value, float) and value != value) \
        else str(value)
