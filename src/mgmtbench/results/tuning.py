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

__all__ = ["render", "tables"]

#: The columns of a table, in order (those the run recorded).
COLUMNS = ["mode", "client", "median_ms", "wire_rtts_per_iteration", "client_cpu_ms_per_command",
           "gain"]


def tables(frame: pd.DataFrame) -> dict[tuple[str, str, int], pd.DataFrame]:
    """``(library, profile, commands) -> table``: every mode of the library that the run has
    both as shipped and tuned (or with a knob), the shipped row first, then each knob alone, then
    ``+tuned``; ``gain`` is the shipped median over the row's."""
    if "client" not in frame or "mode" not in frame:
        return {}
    rows = frame[frame["client"].notna()].assign(
        library=frame["client"].astype(str).map(shipped_name))
    tuned_libraries = sorted(set(rows.loc[rows["client"] != rows["library"], "library"]))
    found: dict[tuple[str, str, int], pd.DataFrame] = {}
    for library in tuned_libraries:
        mine = rows[rows["library"] == library]
        for (profile, commands), group in mine.groupby(["profile", "commands"], sort=False):
            parts = []
            for mode, by_mode in group.groupby("mode", sort=False):
                shipped = by_mode[by_mode["client"] == library]
                if shipped.empty or len(by_mode) < 2:
                    continue  # nothing to hold it against in this mode
                base = float(shipped["median_ms"].iloc[0])
                ordered = pd.concat([shipped, by_mode[(by_mode["client"] != library)
                                                      & ~by_mode["client"].str.endswith(TUNED)],
                                     by_mode[by_mode["client"].str.endswith(TUNED)]])
                parts.append(ordered.assign(mode=str(mode), gain=base / ordered["median_ms"]))
            if parts:
                table = pd.concat(parts)
                found[(library, str(profile), int(commands))] = table[
                    [c for c in COLUMNS if c in table]].reset_index(drop=True)
    return found


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
            verdict = "" if knob.matters else " (measured: does not matter; not in +tuned)"
            lines += [f"- **{knob.name}**{verdict}: {knob.why}", "", "  ```python",
                      *[f"  {line}" for line in knob.change.splitlines()], "  ```", ""]
    return lines
