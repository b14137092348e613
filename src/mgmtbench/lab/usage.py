"""CPU time and memory of processes by pid (the emulator serving a lab's devices), from /proc."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Usage:
    cpu_s: float = 0.0  # user + system, all threads
    rss_bytes: int = 0

    def __sub__(self, other: Usage) -> Usage:
        """CPU spent between two readings; memory as of the later one."""
        return Usage(self.cpu_s - other.cpu_s, self.rss_bytes)


def usage(pids: list[int]) -> Usage:
    """Summed over ``pids``; a process that is gone counts nothing."""
    cpu, rss = 0.0, 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            # Fields after the command name (which may hold spaces): utime and stime are 14, 15.
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
            cpu += (int(fields[11]) + int(fields[12])) / TICK
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
    return Usage(cpu, rss)
