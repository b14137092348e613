"""What to change in your code: each library as shipped against tuned, measured side by side.

From the transport benchmark's rows of one run (``mgmtbench knobs``, or any run whose
``--clients`` name a library and its ``+tuned`` client or ``+<knob>`` clients, see
:mod:`mgmtbench.clients.tuning`): per library, profile, command count and mode, the library as
shipped against each knob alone and against ``+tuned`` (every knob that matters): median time,
wire round trips, the client's CPU per command, and the gain (shipped time / tuned time). Then
each knob's change as the lines a user writes, and the knobs that were measured and do not
matter. The knobs come from the library's declarations (:func:`~mgmtbench.clients.registry
.knobs_of`, which import nothing of the library), so a report needs no client library installed.
"""

from __future__ import annotations

import pandas as pd

from mgmtbench.clients.registry import knobs_of
from mgmtbench.clients.tuning import TUNED, shipped_name
from mgmtbench.results.sections.base import markdown_table

__all__ = ["fleet_lines", "render", "tables"]

#: The columns of a table, in order (those the run recorded): the transport benchmark's, per mode.
COLUMNS = ["mode", "client", "median_ms", "wire_rtts_per_iteration", "client_cpu_ms_per_command",
           "gain"]
#: The concurrency benchmark's, per number of sessions (``median_ms`` is the makespan there).
FLEET_COLUMNS = ["concurrency", "client", "median_ms", "client_cpu_ms_per_session",
                 "client_peak_rss_mib", "gain"]


def tables(frame: pd.DataFrame, axis: str = "mode", within: str | None = "commands",
           columns: list[str] = COLUMNS) -> dict[tuple[str, str, int], pd.DataFrame]:
    """``(library, profile, <within>) -> table``: every value of ``axis`` (a mode; for fleets a
    number of sessions, with no ``within``: 0 in the key) where the run has the library both as shipped
    and tuned (or with a knob): the shipped row first, then each knob alone, then ``+tuned``;
    ``gain`` is the shipped median over the row's."""
    if "client" not in frame or axis not in frame or "median_ms" not in frame:
        return {}
    rows = frame[frame["client"].notna()].assign(
        library=frame["client"].astype(str).map(shipped_name))
    if within is None or within not in rows:
        within = "_all"
        rows = rows.assign(_all=0)
    tuned_libraries = sorted(set(rows.loc[rows["client"] != rows["library"], "library"]))
    found: dict[tuple[str, str, int], pd.DataFrame] = {}
    for library in tuned_libraries:
        mine = rows[rows["library"] == library]
        for (profile, each), group in mine.groupby(["profile", within], sort=False):
            parts = []
            for value, by_value in group.groupby(axis, sort=False):
                shipped = by_value[by_value["client"] == library]
                if shipped.empty or len(by_value) < 2:
                    continue  # nothing to hold it against here
                base = float(shipped["median_ms"].iloc[0])
                tuned = by_value["client"].str.endswith(TUNED)
                ordered = pd.concat([shipped, by_value[(by_value["client"] != library) & ~tuned],
                                     by_value[tuned]])
                parts.append(ordered.assign(**{axis: value}, gain=base / ordered["median_ms"]))
            if parts:
                table = pd.concat(parts)
                key = int(each) if isinstance(each, (int, float)) else 0
                found[(library, str(profile), key)] = table[
                    [c for c in columns if c in table]].reset_index(drop=True)
    return found


def fleet_lines(frame: pd.DataFrame) -> list[str]:
    """Fleet runners as shipped against tuned, per profile and number of sessions (nothing if
    the run has none): for the concurrency section."""
    found = tables(frame, axis="concurrency", within=None, columns=FLEET_COLUMNS)
    if not found:
        return []
    lines = ["## What to change in your code: fleets", "",
             "Each fleet runner as shipped and tuned (the same knobs as its single-session "
             "client), in the same run: the makespan (median_ms), the client's CPU per session and "
             "peak memory, and the gain (the shipped makespan over the row's).", ""]
    for (library, profile, _), table in found.items():
        lines += [f"### {library}: {profile}", "",
                  markdown_table(table.astype({"concurrency": int}), floats="{:.2f}"), ""]
    return lines


def render(frame: pd.DataFrame) -> list[str]:
    """The report's "What to change" part (nothing if the run tuned no library)."""
    found = tables(frame)
    if not found:
        return []
    lines = ["## What to change in your code", "",
             "Each library as shipped, with one knob at a time, and tuned (every knob that "
             "matters), in the same run: median ms, wire round trips per iteration, the client's "
             "CPU per command, and the gain (the shipped median over the row's). Every tuned "
             "output was checked against the transcripts like the shipped one.", ""]
    for (library, profile, commands), table in found.items():
        lines += [f"### {library}: {profile}, {commands} commands", "",
                  markdown_table(table, floats="{:.2f}"), ""]
    for library in dict.fromkeys(key[0] for key in found):
        knobs = knobs_of(library)
        if not knobs:
            continue
        lines += [f"### {library}: the changes", ""]
        for knob in knobs:
            verdict = (" (measured: wrong outputs; do not)" if not knob.correct else
                       "" if knob.matters else " (measured: does not matter; not in +tuned)")
            lines += [f"- **{knob.name}**{verdict}: {knob.why}", "", "  ```python",
                      *[f"  {line}" for line in knob.change.splitlines()], "  ```", ""]
    return lines
