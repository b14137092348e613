"""CPU time and memory of processes by pid (the emulator serving a lab's devices)."""

from __future__ import annotations

from dataclasses import dataclass

from mgmtbench.lab import procfs


@dataclass(frozen=True)
class Usage:
    """CPU time and resident memory of some processes."""
    cpu_s: float = 0.0  # user + system, all threads
    rss_bytes: int = 0

    def __sub__(self, other: Usage) -> Usage:
        """CPU spent between two readings; memory as of the later one."""
        return Usage(self.cpu_s - other.cpu_s, self.rss_bytes)


def usage(pids: list[int]) -> Usage:
    """Summed over ``pids``; a process that is gone counts nothing."""
    cpu, rss = 0.0, 0
    for pid in pids:
        try:
            pid_cpu, pid_rss = procfs.cpu_seconds(pid), procfs.rss_bytes(pid)
        except (OSError, ValueError):
            continue
        cpu, rss = cpu + pid_cpu, rss + pid_rss
    return Usage(cpu, rss)
