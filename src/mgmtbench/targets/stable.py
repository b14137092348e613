"""Honest results without an oracle: every round's output compared with the first round's.

A real device's answer is not known beforehand, so the first round's output is the reference and
every later round must give the same text once the parts a live device changes by itself are
masked. The masks are per platform (``[inventory]`` in its ``platform.toml``, read by
:mod:`mgmtbench.targets.platforms`), applied line by line:

- ``volatile`` patterns: each match's group ``v`` (or, without one, the whole match) becomes
  ``<*>``: the clock, uptimes, route and neighbour ages, idle times, ARP ages, CDP hold times;
- ``counters`` patterns: in a line that matches one, every number becomes ``<n>``: interface
  counters and rates, CPU load, connection counts.

Everything else must be equal, line for line: an interface that changed its address, a route
that appeared, an output cut short, an error in place of an answer, or another device answering
are failures, reported with a unified diff of the masked texts.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mgmtbench.targets.platforms import InventoryPlatform

_NUMBER = re.compile(r"\d+")
VOLATILE, COUNTER = "<*>", "<n>"
DIFF_LINES = 40  # lines of a diff shown in a failure


def mask(text: str, platform: InventoryPlatform) -> str:
    """``text`` with what changes by itself on a live device of ``platform`` masked."""
    return "\n".join(_mask_line(line, platform) for line in text.split("\n"))


def _mask_line(line: str, platform: InventoryPlatform) -> str:
    spans: list[tuple[int, int]] = []
    for pattern in platform.volatile:
        for found in pattern.finditer(line):
            group = "v" if "v" in pattern.groupindex and found.start("v") >= 0 else 0
            spans.append(found.span(group))
    masked = _replace(line, spans)
    if any(p.search(line) for p in platform.counters):
        masked = _NUMBER.sub(COUNTER, masked)
    return masked


def _replace(line: str, spans: list[tuple[int, int]]) -> str:
    """``line`` with each run of overlapping ``spans`` replaced by one :data:`VOLATILE`."""
    out, at = [], 0
    for start, end in sorted(s for s in spans if s[0] < s[1]):
        if start < at:  # overlaps the run just masked: extend it
            at = max(at, end)
            continue
        out += [line[at:start], VOLATILE]
        at = end
    out.append(line[at:])
    return "".join(out)


@dataclass(frozen=True)
class Mismatch:
    """A round whose output differs from the first round's beyond the masks."""

    round: int  # 0 is the reference; the first later round that differs
    diff: str

    def __str__(self) -> str:
        return (f"round {self.round}'s output differs from the first round's beyond the volatile "
                f"lines (clock, uptime, counters):\n{self.diff}")


def compare_rounds(outputs: Sequence[str], platform: InventoryPlatform) -> Mismatch | None:
    """The first round of ``outputs`` that differs from round 0 once masked, None if all agree."""
    if not outputs:
        return None
    reference = mask(outputs[0], platform)
    for index, output in enumerate(outputs[1:], start=1):
        if output == outputs[0]:
            continue
        masked = mask(output, platform)
        if masked != reference:
            return Mismatch(index, diff(reference, masked, index))
    return None


def diff(reference: str, masked: str, index: int) -> str:
    """A unified diff of two masked outputs, at most :data:`DIFF_LINES` lines."""
    lines = list(difflib.unified_diff(reference.splitlines(), masked.splitlines(),
                                      "round 0 (masked)", f"round {index} (masked)", n=1,
                                      lineterm=""))
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    return "\n".join(lines)
