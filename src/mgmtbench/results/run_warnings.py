"""The run's own warnings, in sentences, from what its benchmarks recorded (nothing is said about
what a run did not record):

- runs recorded before the mode names meant the study's (no ``rtt_error_ms``);
- the instrument's own error: the measured RTT minus the profile's (``rtt_error_ms``), and the
  link's RTT under load minus the profile's (``rtt_error_under_load_ms``), beyond a tolerance;
- round trips counted on the link (``wire_rtts_per_iteration``, HTTP/3's
  ``quic_rtts_per_iteration``) above the protocol minimum (:mod:`mgmtbench.results.minimums`);
- the lab's TCP not as its profile asked (``tcp.mismatches``) or the benchmark side's host
  settings unlike the device side's (``tcp.differs``);
- TCP retransmissions and packets the wire tap's kernel dropped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

from mgmtbench.results.minimums import minimum
from mgmtbench.results.plain import plural

__all__ = ["ALIGNED_MARK", "warnings"]

#: Recorded by every transport run since the mode names meant the study's (see
#: :data:`mgmtbench.results.study.ALIGNED_MARK`).
ALIGNED_MARK = "rtt_error_ms"
SHOWN = 3  # the worst cases a warning names


def _tolerance(configured: float, floor: float, share: float) -> float:
    return max(floor, share * abs(configured))


def _names(rows: pd.DataFrame) -> list[str]:
    if ALIGNED_MARK in rows:
        return []
    return ["The run was recorded before the mode names meant the study's: its https "
            "fresh-conn, batch-post, multi-cmd and ssh pty-reuse are today's conn-per-iteration, "
            "batch-post-fresh, multi-cmd-fresh and pty-kept; it records no instrument error and "
            "its round trips are not checked against the protocol minimums."]


def _instrument(rows: pd.DataFrame) -> list[str]:
    """The measured RTT against each profile's, and the link's RTT under load."""
    if ALIGNED_MARK not in rows or "configured_rtt_ms" not in rows:
        return []
    out, within = [], []
    for profile, group in rows.groupby("profile", sort=False):
        error = pd.to_numeric(group[ALIGNED_MARK], errors="coerce").dropna()
        configured = pd.to_numeric(group["configured_rtt_ms"], errors="coerce").dropna()
        if error.empty or configured.empty:
            continue
        asked, worst = float(configured.median()), float(error.abs().max())
        measured = asked + float(error.median())
        if worst > _tolerance(asked, 1.0, 0.05):
            out.append(f"Instrument error at {profile}: the lab measured {measured:.1f} ms "
                       f"against the profile's {asked:g} ms RTT (up to {worst:+.1f} ms off): "
                       "times in RTTs and comparisons with other runs are off by as much.")
        else:
            within.append(f"{float(error.median()):+.2f} ms at {profile}")
        if "rtt_error_under_load_ms" in group:
            loaded = pd.to_numeric(group["rtt_error_under_load_ms"], errors="coerce")
            over = group[loaded.abs() > _tolerance(asked, 2.0, 0.10)]
            if not over.empty:
                worst_row = over.loc[loaded[over.index].abs().idxmax()]
                out.append(f"Under load at {profile}, the link's RTT left the profile's "
                           f"{asked:g} ms in {len(over)} of {len(group)} benchmarks (worst "
                           f"{float(worst_row['rtt_error_under_load_ms']):+.1f} ms, "
                           f"{worst_row['client']} {worst_row['way']}, "
                           f"{plural(int(worst_row['commands']), 'command')}): the link, not the "
                           "client, may have set their time.")
    if within:
        out.insert(0, "The instrument's own error (the lab's measured RTT minus the profile's) "
                      "is within 1 ms or 5 %: " + ", ".join(within) + ".")
    return out


def _counted(rows: pd.DataFrame) -> pd.Series:
    """Each row's round trips counted on the link (QUIC's for HTTP/3), NaN where not recorded."""
    wire = (pd.to_numeric(rows["wire_rtts_per_iteration"], errors="coerce")
            if "wire_rtts_per_iteration" in rows else pd.Series(float("nan"), index=rows.index))
    if "quic_rtts_per_iteration" in rows:
        quic = pd.to_numeric(rows["quic_rtts_per_iteration"], errors="coerce")
        wire = wire.where(~rows["transport"].str.startswith("http3"), quic)
    return wire


def _round_trips(rows: pd.DataFrame) -> list[str]:
    """Benchmarks whose counted round trips exceed the protocol minimum (by more than one round
    trip and 10 %)."""
    if ALIGNED_MARK not in rows:
        return []
    counted = _counted(rows)
    checked = []
    for index, row in rows[counted.notna()].iterrows():
        base = str(row["transport"]).split(" (", 1)[0]
        platform = row.get("platform")
        least = minimum(base, str(row["mode"]), int(row["commands"]),
                        str(platform) if isinstance(platform, str) else None)
        if least is None:
            continue
        excess = float(counted[index]) - least
        checked.append((excess, least, float(counted[index]), row))
    over = [c for c in checked if c[0] > _tolerance(c[1], 1.0, 0.10)]
    if not checked:
        return []
    if not over:
        return [f"Round trips counted on the link are within one round trip (or 10 %) of the "
                f"protocol minimum in all {len(checked)} benchmarks that have both."]
    over.sort(key=lambda c: -c[0])
    named = "; ".join(f"{r['client']} {r['way']} at {r['profile']}, "
                      f"{plural(int(r['commands']), 'command')}: {counted:.1f} against {least} "
                      f"(+{excess:.1f})"
                      for excess, least, counted, r in over[:SHOWN])
    return [f"Round trips above the protocol minimum (counted on the link, more than one round "
            f"trip and 10 % over the README's mode table) in {len(over)} of {len(checked)} "
            f"benchmarks, most: {named}."]


def _tcp_record(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return value if isinstance(value, Mapping) else None


def _tcp(rows: pd.DataFrame) -> list[str]:
    """The lab's TCP not as asked, and host settings unlike the device side's: each finding once,
    with the profiles it was recorded at."""
    if "tcp" not in rows:
        return []
    found: dict[tuple[str, str], list[str]] = {}
    for profile, group in rows.groupby("profile", sort=False):
        for value in group["tcp"]:
            record = _tcp_record(value)
            for kind in ("mismatches", "differs"):
                for text in map(str, (record or {}).get(kind) or ()):
                    where = found.setdefault((kind, text), [])
                    if str(profile) not in where:
                        where.append(str(profile))
    out = []
    for kind, lead in (("mismatches", "The link was not as its profile asks"),
                       ("differs", "Host settings differ from the device side's")):
        for (each, text), profiles in found.items():
            if each == kind:
                out.append(f"{lead} at {' and '.join(profiles)}: {text}.")
    return out


def _losses(rows: pd.DataFrame) -> list[str]:
    out = []
    for column, what in (("tcp_retransmits", "TCP retransmitted segments"),
                         ("wire_dropped_packets", "the wire tap's kernel dropped packets (its "
                                                  "round-trip counts are low)")):
        if column not in rows:
            continue
        counts = pd.to_numeric(rows[column], errors="coerce").fillna(0)
        hit = rows[counts > 0]
        if hit.empty:
            continue
        worst = hit.loc[counts[hit.index].idxmax()]
        out.append(f"In {len(hit)} benchmarks {what} ({int(counts.sum()):,} in all; most "
                   f"{int(counts.max()):,}: {worst['client']} {worst['way']} at "
                   f"{worst['profile']}).")
    return out


def warnings(frame: pd.DataFrame, rows: pd.DataFrame) -> list[str]:
    """The warnings of a run's transport benchmarks ``rows`` (:func:`~mgmtbench.results.ways.ways`
    of ``frame``), in sentences."""
    del frame  # the rows hold every column the run recorded
    if rows.empty:
        return []
    return [*_names(rows), *_instrument(rows), *_round_trips(rows), *_tcp(rows), *_losses(rows)]
