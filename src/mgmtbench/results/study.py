"""The published study's tables, for a transport-mode run (``benchmarks/test_transport_modes.py``).

The study is clibench v0.7.0 (github.com/lykinsbd/clibench: one Go client, an emulated IOS
device, delay by tc netem; the "CLI Over HTTPS" blog series on network-notes.com). Its tables
compare SSH and HTTPS transport modes, 5 commands per iteration. Each function here reproduces one
of them for our data, with the study's mode names (which mean here exactly what they mean there:
the README's mode table), every mode labelled with its transport, since both transports have a
``fresh-conn`` (``ssh fresh-conn``, ``https fresh-conn``):

- :func:`pty_overhead`: the PTY overhead table, what a PTY shell costs over plain exec:
  ``pty-fresh`` - ``fresh-conn`` and ``pty-reuse`` - ``reuse-conn``, in ms and in RTTs;
- :func:`speedup_vs_pty_fresh`: the speed-up of each mode against ssh ``pty-fresh`` (what
  Netmiko, Scrapli and Ansible's network_cli do), per profile;
- :func:`command_scaling`: time against the command count (the study: 1, 5, 10, 25, 50 at
  regional): per-command modes grow linearly, batch modes stay flat;
- :func:`serial_fleet`: "100 devices serially", the mean time per device x 100, per mode and
  profile (as in the study, a warm mode's connection set-up is not in it: its mean has none);
- :func:`versus_study`: our figures beside the study's published ones (``PUBLISHED``).

Which client per mode. The study has one client; we have several libraries per transport. The
PTY overhead is a property of a library's PTY handling, so that table has a row per SSH client
that ran both modes of a pair. The others take, per profile and mode, the best client: the
lowest mean at the reference command count (the study's 5 when the run has it, else the count
the run has most of), named in the table; the speed-up's baseline is the best ssh ``pty-fresh``.
Times are means, as the study's published figures (``avg_ms``); its own ``report`` command ranks
by p50, and its "~17x" headline (HTTPS batch against SSH PTY fresh) is what its v0.7.0 regional
run gives with p50s (540.8 / 31.5 ms; with means 16.1x). Our variants (``pipelined``,
``tls-resume``, ``pty-kept`` ...) are in the transport section's per-profile tables, not here.

Each function raises :class:`~mgmtbench.errors.ResultsError` with one line saying what the run
lacks; :func:`render` prints that line in the table's place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.results.projection import duration
from mgmtbench.results.sections.base import markdown_table

__all__ = ["ALIGNED_MARK", "BASELINE", "MODES", "PTY_PAIRS", "PUBLISHED", "Published",
           "command_scaling", "pty_overhead", "reference_count", "render", "serial_fleet",
           "speedup_vs_pty_fresh", "study_rows", "versus_study"]

STUDY = "clibench v0.7.0"
STUDY_COMMANDS = 5
STUDY_RTT_MS = 30.0  # its regional profile, where it publishes its comparisons
SERIAL_DEVICES = 100


@dataclass(frozen=True)
class Published:
    """One mode's figures as the study published them (see ``PUBLISHED``)."""

    mean_ms: float  #: mean time per iteration at regional (30 ms RTT), 5 commands
    rtts_600: float  #: mean time / RTT at geo (600 ms RTT), 5 commands: its round trips
    round_trips: int  #: round trips its client counted at regional (median read-after-write)


#: The study's published figures, one place, by ``"<transport> <mode>"`` in the study's order.
#: Source: github.com/lykinsbd/clibench at tag v0.7.0, tc netem runs of its Go client:
#: ``mean_ms`` and ``round_trips`` are ``avg_ms`` and ``round_trips`` of
#: results/v0.7.0/netem-regional-n20-5cmd.json (20 iterations); ``rtts_600`` is ``avg_ms`` / 600
#: of results/v0.7.0/netem-geo-n10-5cmd.json (10 iterations), the round trips quoted in issue 12
#: (16, 10, 8, 17, 10; 15, 5, 1, 1), comparable with our ``rtts`` (time / measured RTT).
PUBLISHED: dict[str, Published] = {
    "ssh fresh-conn": Published(507.4, 16.02, 17),
    "ssh reuse-conn": Published(331.0, 10.02, 10),
    "ssh batch-exec": Published(267.9, 8.02, 9),
    "ssh pty-fresh": Published(546.7, 17.03, 17),
    "ssh pty-reuse": Published(325.0, 10.02, 10),
    "https fresh-conn": Published(497.7, 15.06, 10),
    "https keep-alive": Published(161.6, 5.01, 5),
    "https batch-post": Published(33.9, 1.00, 1),
    "https multi-cmd": Published(34.3, 1.00, 1),
}
MODES = tuple(PUBLISHED)  #: the study's modes, labelled with their transport, in its order
PTY_PAIRS = (("pty-fresh", "fresh-conn"), ("pty-reuse", "reuse-conn"))  #: (PTY mode, exec mode)
BASELINE = "ssh pty-fresh"
_OPTIONAL = ("measured_rtt_ms", "configured_rtt_ms", "rtts", "wire_rtts_per_iteration")
#: Runs recorded before the mode names meant the study's (commit 08c2d62), such as
#: docs/report-2026-11-22/nox-bench-run.json, are told by the absence of this column: every
#: transport run records it since the commit before (edb9e59); the study's tables leave them out.
ALIGNED_MARK = "rtt_error_ms"


def study_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The run's benchmarks of the study's modes, one row per profile, command count, client and
    mode (``label``: ``"ssh fresh-conn"`` ...), duplicates averaged."""
    missing = [c for c in ("client", "mode", "profile", "commands", "mean_ms", "transport")
               if c not in frame]
    if missing:
        raise ResultsError(f"the run has no {', '.join(missing)} column(s): the study's tables "
                           "need transport-mode benchmarks that record their transport")
    if ALIGNED_MARK not in frame:
        raise ResultsError("the run was recorded before the mode names meant the study's (it has "
                           f"no {ALIGNED_MARK}): its https fresh-conn, batch-post, multi-cmd and "
                           "ssh pty-reuse are today's conn-per-iteration, batch-post-fresh, "
                           "multi-cmd-fresh and pty-kept")
    rows = frame.assign(**{c: frame.get(c, np.nan) for c in _OPTIONAL})
    rows = rows[rows["transport"].notna() & rows["commands"].notna() & rows["mean_ms"].notna()]
    rows = rows.assign(label=rows["transport"].astype(str) + " " + rows["mode"].astype(str),
                       commands=pd.to_numeric(rows["commands"]).astype(int))
    rows = rows[rows["label"].isin(MODES)]
    if rows.empty:
        raise ResultsError(f"the run has none of the study's modes ({', '.join(MODES)})")
    keys = ["profile", "commands", "client", "transport", "mode", "label"]
    numbers = ["mean_ms", *_OPTIONAL]
    rows = rows[keys + numbers].astype(dict.fromkeys(numbers, float))
    return rows.groupby(keys, as_index=False, sort=False)[numbers].mean()


def reference_count(rows: pd.DataFrame) -> int:
    """The command count the one-count tables use: the study's 5 if the run has it, else the
    count with the most benchmarks (the smallest of a tie)."""
    counts = rows["commands"].value_counts()
    if STUDY_COMMANDS in counts.index:
        return STUDY_COMMANDS
    return int(min(counts.index, key=lambda c: (-counts[c], c)))


def _rtts(ms: float, rtt_ms: float) -> float:
    """``ms`` in round trips; NaN below a 1 ms RTT (as the benchmark's own ``rtts``)."""
    return ms / rtt_ms if rtt_ms >= 1 else float("nan")


def _is_study_profile(group: pd.DataFrame) -> bool:
    """Whether ``group``'s profile is the study's regional: a configured RTT of 30 ms (or, for
    runs that did not record it, the name ``regional``)."""
    configured = group["configured_rtt_ms"].dropna()
    if configured.empty:
        return bool((group["profile"] == "regional").all())
    return bool(abs(float(configured.iloc[0]) - STUDY_RTT_MS) < 0.5)


def _published_here(group: pd.DataFrame, commands: int) -> bool:
    return commands == STUDY_COMMANDS and _is_study_profile(group)


def _best(rows: pd.DataFrame) -> pd.DataFrame:
    """Per profile, command count and mode, the client with the lowest mean."""
    chosen = rows.groupby(["profile", "commands", "label"], sort=False)["mean_ms"].idxmin()
    return rows.loc[chosen.to_numpy()]


def _in_study_order(table: pd.DataFrame, column: str = "mode") -> pd.DataFrame:
    order = table[column].map(MODES.index)
    return table.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order")


def pty_overhead(frame: pd.DataFrame, commands: int | None = None) -> pd.DataFrame:
    """The study's PTY overhead table: per profile and SSH client, ``pty_ms - exec_ms`` for
    (``pty-fresh``, ``fresh-conn``) and (``pty-reuse``, ``reuse-conn``), in ms and in RTTs
    (measured), at ``commands`` (default: :func:`reference_count`); ``clibench_overhead_ms`` is
    the study's where the profile is its regional at 5 commands."""
    rows = study_rows(frame)
    n = commands or reference_count(rows)
    ssh = rows[(rows["transport"] == "ssh") & (rows["commands"] == n)]
    out = []
    for (profile, client), group in ssh.groupby(["profile", "client"], sort=False):
        means = group.set_index("mode")["mean_ms"]
        rtt = float(group["measured_rtt_ms"].mean())
        for pty, plain in PTY_PAIRS:
            if pty not in means or plain not in means:
                continue
            overhead = float(means[pty] - means[plain])
            study = (PUBLISHED[f"ssh {pty}"].mean_ms - PUBLISHED[f"ssh {plain}"].mean_ms
                     if _published_here(group, n) else float("nan"))
            out.append({"profile": profile, "client": client, "pty_mode": pty,
                        "exec_mode": plain, "exec_ms": float(means[plain]),
                        "pty_ms": float(means[pty]), "overhead_ms": overhead,
                        "overhead_rtts": _rtts(overhead, rtt), "clibench_overhead_ms": study})
    if not out:
        have = sorted(set(ssh["mode"])) or ["none"]
        raise ResultsError(f"no PTY overhead: it needs ssh pty-fresh and fresh-conn (or pty-reuse "
                           f"and reuse-conn) from one client at {n} commands; this run's ssh "
                           f"study modes there: {', '.join(have)}")
    return pd.DataFrame(out)


def speedup_vs_pty_fresh(frame: pd.DataFrame, commands: int | None = None) -> pd.DataFrame:
    """The study's speed-up table: per profile, each mode's best client and ``speedup`` = the best
    ssh ``pty-fresh`` mean / the mode's mean, at ``commands`` (default: :func:`reference_count`).
    Profiles without ssh ``pty-fresh`` have no rows; ``clibench_speedup`` is the study's where
    the profile is its regional at 5 commands."""
    rows = study_rows(frame)
    n = commands or reference_count(rows)
    out = []
    for profile, group in _best(rows[rows["commands"] == n]).groupby("profile", sort=False):
        base = group[group["label"] == BASELINE]
        if base.empty:
            continue
        base_ms, base_client = float(base["mean_ms"].iloc[0]), base["client"].iloc[0]
        published = _published_here(group, n)
        for row in group.itertuples(index=False):
            out.append({"profile": profile, "mode": row.label, "client": row.client,
                        "mean_ms": row.mean_ms, "baseline_client": base_client,
                        "baseline_ms": base_ms, "speedup": base_ms / row.mean_ms,
                        "clibench_speedup": PUBLISHED[BASELINE].mean_ms
                        / PUBLISHED[row.label].mean_ms if published else float("nan")})
    if not out:
        raise ResultsError(f"no speed-up against {BASELINE}: no profile of this run has "
                           f"{BASELINE} at {n} commands")
    table = pd.DataFrame(out)
    return pd.concat([_in_study_order(part) for _, part in table.groupby("profile", sort=False)],
                     ignore_index=True)


def command_scaling(frame: pd.DataFrame) -> pd.DataFrame:
    """The study's time against command count: per profile with more than one count, each mode
    (its best client at :func:`reference_count`, kept for the whole row) with its mean ms at every
    count (columns ``"<n> cmd"``), ``ms_per_command`` (least-squares slope), ``rtts_per_command``
    (the slope in measured RTTs) and ``growth`` (mean at the most commands / at the fewest):
    per-command modes grow linearly, batch modes stay flat (growth ~1)."""
    rows = study_rows(frame)
    reference = reference_count(rows)
    counts = sorted(rows["commands"].unique())
    out = []
    for profile, group in rows.groupby("profile", sort=False):
        have = sorted(group["commands"].unique())
        if len(have) < 2:
            continue
        at = reference if reference in have else have[0]
        rtt = float(group["measured_rtt_ms"].mean())
        for chosen in _best(group[group["commands"] == at]).itertuples(index=False):
            line = group[(group["label"] == chosen.label) & (group["client"] == chosen.client)]
            means = line.set_index("commands")["mean_ms"].sort_index()
            row: dict[str, object] = {"profile": profile, "mode": chosen.label,
                                      "client": chosen.client}
            row.update({f"{c} cmd": float(means.get(c, np.nan)) for c in counts})
            slope = (float(np.polyfit(means.index.to_numpy(float), means.to_numpy(float), 1)[0])
                     if len(means) > 1 else float("nan"))
            row.update({"ms_per_command": slope, "rtts_per_command": _rtts(slope, rtt),
                        "growth": float(means.iloc[-1] / means.iloc[0])
                        if len(means) > 1 else float("nan")})
            out.append(row)
    if not out:
        raise ResultsError(f"no time against command count: every profile of this run has one "
                           f"command count ({', '.join(map(str, counts))}); run with e.g. "
                           "--commands 1,5,10,25,50")
    table = pd.DataFrame(out)
    return pd.concat([_in_study_order(part) for _, part in table.groupby("profile", sort=False)],
                     ignore_index=True)


def serial_fleet(frame: pd.DataFrame, commands: int | None = None,
                 devices: int = SERIAL_DEVICES) -> pd.DataFrame:
    """The study's "100 devices serially": per profile and mode (best client), ``seconds`` =
    ``devices`` x the mean time per device at ``commands`` (default: :func:`reference_count`),
    one device after the other; ``clibench_seconds`` is the study's where the profile is its
    regional at 5 commands."""
    rows = study_rows(frame)
    n = commands or reference_count(rows)
    out = []
    for profile, group in _best(rows[rows["commands"] == n]).groupby("profile", sort=False):
        published = _published_here(group, n)
        for row in group.itertuples(index=False):
            out.append({"profile": profile, "mode": row.label, "client": row.client,
                        "mean_ms": row.mean_ms, "devices": devices,
                        "seconds": row.mean_ms * devices / 1000,
                        "clibench_seconds": PUBLISHED[row.label].mean_ms * devices / 1000
                        if published else float("nan")})
    if not out:
        raise ResultsError(f"no serial fleet: this run has no study mode at {n} commands")
    table = pd.DataFrame(out)
    return pd.concat([_in_study_order(part) for _, part in table.groupby("profile", sort=False)],
                     ignore_index=True)


def versus_study(frame: pd.DataFrame) -> pd.DataFrame:
    """Our figures beside the study's, at each profile that is its regional (30 ms configured),
    5 commands: per mode our best client's mean, the study's, ``ratio`` (ours / its), our time in
    RTTs (``rtts``) beside its time in RTTs at 600 ms, and our round trips counted on the wire
    beside those its client counted."""
    rows = study_rows(frame)
    at = rows[rows["commands"] == STUDY_COMMANDS]
    out = []
    for profile, group in _best(at).groupby("profile", sort=False):
        if not _is_study_profile(group):
            continue
        for row in group.itertuples(index=False):
            study = PUBLISHED[row.label]
            out.append({"profile": profile, "mode": row.label, "client": row.client,
                        "mean_ms": row.mean_ms, "clibench_ms": study.mean_ms,
                        "ratio": row.mean_ms / study.mean_ms, "rtts": row.rtts,
                        "clibench_rtts_600": study.rtts_600,
                        "wire_rtts": row.wire_rtts_per_iteration,
                        "clibench_round_trips": study.round_trips})
    if not out:
        found = ", ".join(dict.fromkeys(
            f"{p} ({c:g} ms)" if c == c else str(p)
            for p, c in zip(rows["profile"], rows["configured_rtt_ms"], strict=True)))
        counts = ", ".join(map(str, sorted(rows["commands"].unique())))
        raise ResultsError(f"no comparison with the study: it needs a profile with a configured "
                           f"RTT of {STUDY_RTT_MS:g} ms (regional) at {STUDY_COMMANDS} commands; "
                           f"this run has {found} at {counts} commands")
    table = pd.DataFrame(out)
    return pd.concat([_in_study_order(part) for _, part in table.groupby("profile", sort=False)],
                     ignore_index=True)


def _speedup_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Modes down, profiles across, ``17.1x`` cells; the clients each mode used; the study's."""
    profiles = list(dict.fromkeys(table["profile"]))
    wide = pd.DataFrame({"mode": list(dict.fromkeys(_in_study_order(table)["mode"]))})
    wide["client"] = [", ".join(dict.fromkeys(table[table["mode"] == m]["client"]))
                      for m in wide["mode"]]
    for profile in profiles:
        part = table[table["profile"] == profile].set_index("mode")["speedup"]
        wide[profile] = [f"{part[m]:.1f}x" if m in part else "-" for m in wide["mode"]]
    study = table.dropna(subset=["clibench_speedup"]).drop_duplicates("mode")
    if not study.empty:
        published = study.set_index("mode")["clibench_speedup"]
        wide["clibench (regional)"] = [f"{published[m]:.1f}x" if m in published else "-"
                                       for m in wide["mode"]]
    return wide


def _serial_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Modes down, profiles across, durations (s, min, h) in the cells; the study's."""
    wide = pd.DataFrame({"mode": list(dict.fromkeys(_in_study_order(table)["mode"]))})
    wide["client"] = [", ".join(dict.fromkeys(table[table["mode"] == m]["client"]))
                      for m in wide["mode"]]
    for profile in dict.fromkeys(table["profile"]):
        part = table[table["profile"] == profile].set_index("mode")["seconds"]
        wide[profile] = [duration(part[m]) if m in part else "-" for m in wide["mode"]]
    study = table.dropna(subset=["clibench_seconds"]).drop_duplicates("mode")
    if not study.empty:
        published = study.set_index("mode")["clibench_seconds"]
        wide["clibench (regional)"] = [duration(published[m]) if m in published else "-"
                                       for m in wide["mode"]]
    return wide


def _two_decimals(table: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``table`` with ``columns`` as text with two decimals (``-`` for NaN), for ratios and RTT
    counts that one decimal would flatten."""
    return table.assign(**{c: ["-" if v != v else f"{v:.2f}" for v in table[c]]
                           for c in columns if c in table})


def render(frame: pd.DataFrame) -> list[str]:
    """The Markdown of the study's tables for ``frame`` (a transport run): each table, or the
    one line that says what the run lacks for it."""
    lines = ["## The study's tables", ""]
    try:
        rows = study_rows(frame)
    except ResultsError as exc:
        return [*lines, f"Not in this run: {exc}.", ""]
    n = reference_count(rows)
    count = ("the study's count" if n == STUDY_COMMANDS else
             f"the study ran {STUDY_COMMANDS}, this run did not")
    lines += [f"The tables of the published SSH-vs-HTTPS study ({STUDY}, Go client, tc netem) "
              f"for this run: its modes, with its names, at {n} commands ({count}) unless "
              "said. Per mode the best client (lowest mean), named; "
              "the PTY overhead per SSH client. Times are means; RTTs = ms / measured RTT "
              "(`-` below 1 ms). `clibench` columns: the study's published figures, beside ours "
              f"at a profile with its regional RTT ({STUDY_RTT_MS:g} ms) at {STUDY_COMMANDS} "
              "commands.", ""]

    def section(title: str, intro: str, build: Callable[[], pd.DataFrame],
                footnote: str = "") -> None:
        lines.extend([f"### {title}", ""])
        try:
            table = build()
        except ResultsError as exc:
            lines.extend([f"Not in this run: {exc}.", ""])
            return
        lines.extend([intro, "", markdown_table(table), ""])
        if footnote:
            lines.extend([footnote, ""])

    fresh = PUBLISHED["ssh pty-fresh"].rtts_600 - PUBLISHED["ssh fresh-conn"].rtts_600
    reuse = PUBLISHED["ssh pty-reuse"].rtts_600 - PUBLISHED["ssh reuse-conn"].rtts_600
    section(f"Against the study: regional, {STUDY_COMMANDS} commands",
            "Ours / the study's mean (`ratio`); our time in RTTs beside its time in RTTs at "
            "600 ms (its geo run, where time is round trips); our round trips counted on the "
            "wire beside those its client counted (read after write).",
            lambda: _two_decimals(versus_study(frame), ("ratio", "rtts", "clibench_rtts_600")))
    section(f"PTY overhead, {n} commands",
            "What the PTY shell costs over plain exec, per SSH client: pty-fresh - fresh-conn "
            "(a new connection each) and pty-reuse - reuse-conn (a warm one). The study at 600 "
            f"ms: {fresh:+.1f} and {reuse:+.1f} RTTs.",
            lambda: pty_overhead(frame, n))
    at_n = rows[rows["commands"] == n]
    without = [p for p in dict.fromkeys(at_n["profile"])
               if not ((at_n["profile"] == p) & (at_n["label"] == BASELINE)).any()]
    section(f"Speed-up against {BASELINE}, {n} commands",
            f"Each mode's best client against the best {BASELINE} client, per profile.",
            lambda: _speedup_wide(speedup_vs_pty_fresh(frame, n)),
            f"No {BASELINE} at {n} commands, so no speed-up, in: {', '.join(without)}."
            if without else "")
    section("Time against command count",
            f"Mean ms per iteration; the client is the mode's best at {n} commands. "
            "`ms_per_command`: least-squares slope; `rtts_per_command`: the slope in measured "
            "RTTs; `growth`: time at the most commands / at the fewest (batch modes flat, ~1).",
            lambda: _two_decimals(command_scaling(frame), ("rtts_per_command", "growth")))
    section(f"{SERIAL_DEVICES} devices serially, {n} commands",
            f"{SERIAL_DEVICES} x the mean time per device, one device after the other, as the "
            "study figures it (a warm mode's connection set-up is not in its mean).",
            lambda: _serial_wide(serial_fleet(frame, n)))
    return lines
