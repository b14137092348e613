"""What a run found, in sentences: the report's opening.

Per latency profile, at the run's reference command count (the study's 5 when the run has it):
the fastest way to run the commands overall and per transport, and what moving from the slowest
common practice, a PTY session per device (ssh ``pty-fresh``, as Netmiko, Scrapli and Ansible's
network_cli run it; its best client), to each transport's fastest way saves, in ms per iteration
and as a ratio. Then the run's own warnings (:mod:`mgmtbench.results.run_warnings`). Only the
ways that bring the commands' outputs back count (not
:data:`~mgmtbench.clients.base.UNREAD_MODES`). Everything is computed from the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from mgmtbench.results import run_warnings
from mgmtbench.results.plain import plural
from mgmtbench.results.ways import BASELINE, reference_count, transport_order, ways

__all__ = ["Findings", "ProfileFinding", "find", "markdown", "plural", "rtt_text", "transport_name"]

_NAMES = {"ssh": "SSH", "https": "HTTPS", "netconf": "NETCONF", "restconf": "RESTCONF",
          "gnmi": "gNMI", "http3": "HTTP/3"}
SERIAL_DEVICES = 100


@dataclass(frozen=True)
class ProfileFinding:
    """One profile's findings: a title (profile, RTT, command count) and sentences."""

    title: str
    sentences: list[str]


@dataclass(frozen=True)
class Findings:
    """A run's findings: what was compared, per profile what it found, and its warnings."""

    scope: str
    profiles: list[ProfileFinding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def transport_name(label: str) -> str:
    """``"ssh"`` -> ``"SSH"``, ``"netconf (yang)"`` -> ``"NETCONF (yang)"``."""
    base, sep, rest = label.partition(" (")
    return _NAMES.get(base, base) + (f" ({rest}" if sep else "")


def rtt_text(ms: float) -> str:
    """A measured RTT as the report writes it: ``"30.3 ms"``, ``"0.023 ms"`` below 1 ms."""
    return f"{ms:.1f} ms" if ms >= 1 else f"{ms:.3f} ms"


def _ms(ms: float) -> str:
    return f"{ms:,.0f} ms" if abs(ms) >= 1000 else f"{ms:.1f} ms"


def _time(ms: float, rtts: float) -> str:
    """``"33.1 ms (1.1 RTTs)"``; ms alone below a 1 ms RTT."""
    shown = _ms(ms)
    return shown if rtts != rtts else f"{shown} ({rtts:.1f} RTTs)"


def _way(row: pd.Series) -> str:
    """``"https batch-post (httpx)"``."""
    return f"{row['way']} ({row['plain_client']})"


def _saving(base: pd.Series, row: pd.Series) -> str:
    saved = float(base["mean_ms"]) - float(row["mean_ms"])
    ratio = float(base["mean_ms"]) / float(row["mean_ms"])
    if saved >= 0:
        return f"{_way(row)} saves {_ms(saved)} ({ratio:.1f}x faster)"
    return f"{_way(row)} is {_ms(-saved)} slower ({ratio:.2f}x)"


def _profile(rows: pd.DataFrame, profile: str, commands: int) -> ProfileFinding:
    """The findings at one profile and command count (``rows``: its reading ways)."""
    rtt = rows["rtt_ms"].dropna()
    measured = (f"measured RTT {rtt_text(float(rtt.median()))}" if not rtt.empty
                else "RTT not recorded")
    title = f"{profile} ({measured}), {plural(commands, 'command')}"
    fastest = rows.loc[rows["mean_ms"].idxmin()]
    sentences = [f"The fastest way to run {plural(commands, 'command')} is {_way(fastest)}: "
                 f"{_time(float(fastest['mean_ms']), float(fastest['rtts']))} per iteration, "
                 f"{SERIAL_DEVICES * float(fastest['mean_ms']) / 1000:,.1f} s for "
                 f"{SERIAL_DEVICES} devices one after another."]
    bests = rows.loc[rows.groupby("transport", sort=False)["mean_ms"].idxmin()]
    bests = bests.set_index("transport").loc[transport_order(bests["transport"])].reset_index()
    if len(bests) > 1:
        sentences.append("Fastest per transport: " + "; ".join(
            f"{transport_name(str(b['transport']))} {b['mode']} ({b['plain_client']}), "
            f"{_time(float(b['mean_ms']), float(b['rtts']))}" for _, b in bests.iterrows()) + ".")
    baseline = rows[rows["way"] == BASELINE]
    if baseline.empty:
        sentences.append(f"The run has no {BASELINE} here, so no savings against a PTY session "
                         "per device.")
        return ProfileFinding(title, sentences)
    base = baseline.loc[baseline["mean_ms"].idxmin()]
    others = bests[bests["way"] != BASELINE].sort_values("mean_ms")
    sentences.append(
        f"A PTY session per device ({BASELINE}, the Netmiko/Ansible way; its best client here, "
        f"{base['plain_client']}) takes {_time(float(base['mean_ms']), float(base['rtts']))}"
        + (f"; moving to {_saving(base, others.iloc[0])}"
           + "".join(f", to {_saving(base, row)}" for _, row in others.iloc[1:].iterrows())
           if not others.empty else "") + ".")
    return ProfileFinding(title, sentences)


def find(frame: pd.DataFrame, rows: pd.DataFrame | None = None) -> Findings | None:
    """The findings of the transport benchmarks in ``frame`` (one run's rows; ``rows``: its
    :func:`~mgmtbench.results.ways.ways`, if already made); None if it has none."""
    rows = ways(frame) if rows is None else rows
    if rows.empty:
        return None
    reading = rows[rows["reads"]]
    commands = reference_count(rows)
    counts = ", ".join(str(c) for c in sorted(rows["commands"].unique()))
    transports = ", ".join(transport_name(t) for t in transport_order(rows["transport"]))
    scope = (f"{plural(len(rows), 'transport benchmark')}: {plural(rows['way'].nunique(), 'way')}"
             f" (transport and mode) with {plural(rows['plain_client'].nunique(), 'client')} over "
             f"{transports}, at {plural(rows['profile'].nunique(), 'latency profile')} and "
             f"{counts} commands per iteration. Times are means per iteration of "
             f"{plural(commands, 'command')}; RTTs = time / "
             "the measured round-trip time. Modes that answer a status instead of the outputs "
             "are left out of the comparisons.")
    profiles = []
    at = reading[reading["commands"] == commands]
    for profile in pd.unique(at["profile"]):
        profiles.append(_profile(at[at["profile"] == profile], str(profile), commands))
    return Findings(scope, profiles, run_warnings.warnings(frame, rows))


def markdown(findings: Findings) -> list[str]:
    """The findings as Markdown: bold lead-ins and lists of sentences, no headings (the report's
    ``##`` headings stay its sections')."""
    lines = ["**What this run found.** " + findings.scope, ""]
    for profile in findings.profiles:
        lines += [f"**{profile.title}:**", "", *[f"- {s}" for s in profile.sentences], ""]
    if findings.warnings:
        lines += ["**Warnings from the run.**", "", *[f"- {w}" for w in findings.warnings], ""]
    else:
        lines += ["**Warnings from the run.** None: the run records nothing to warn about.", ""]
    return lines
