"""A process with its descendants, as ``/proc`` shows them: who they are, the CPU time they used
(children already reaped included) and the CPUs they may run on (every thread's).

Made for servers measured from outside: ``sshd`` forks a process per connection (and that one
its privilege-separated child and the user's command), the emulator runs threads. A pinned
server must have every thread pinned (Linux keeps affinity per thread: ``sched_setaffinity(pid)``
changes one thread only), and a server's CPU time must count the per-connection processes that
ran and exited meanwhile.

CPU time of a tree: a process's own time is in its ``utime + stime`` while it lives; once its
parent has reaped it (``wait``), the parent's ``cutime + cstime`` holds it, and its reaped
children's. So the sum over the live processes of a tree of all four fields counts every
process that ever ran in it exactly once, as long as each is reaped by a parent inside the tree
(``sshd`` reaps its connection processes, and they reap theirs). The reading is exact while no
process of the tree exits during it; one that exits and is reaped between reading it and reading
its parent counts twice, or not at all the other way round. Readings taken around a transfer,
before the connections open and after their processes are gone, are exact.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

from mgmtbench.lab.procfs import PROC, TICK


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (of every thread of it); none if it is gone."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in (PROC / str(pid) / "task").iterdir():
            with contextlib.suppress(OSError, ValueError):
                found += [int(c) for c in (task / "children").read_text().split()]
    return found


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (children, their children ...), parents first."""
    found: list[int] = []
    stack = children(pid)
    while stack:
        current = stack.pop(0)
        found.append(current)
        stack += children(current)
    return found


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    return [pid, *descendants(pid)]


def threads(pid: int) -> list[int]:
    """The thread ids of ``pid`` (the main thread's is ``pid``); none if it is gone."""
    try:
        return sorted(int(t.name) for t in (PROC / str(pid) / "task").iterdir())
    except OSError:
        return []


def cpu_ticks(pid: int) -> tuple[int, int]:
    """``(utime + stime, cutime + cstime)`` of ``pid`` in clock ticks: its own CPU time (every
    thread) and that of the children it has reaped."""
    # The fields after the command name (which may hold spaces and parentheses): utime, stime,
    # cutime, cstime are fields 14-17 of the line, 12-15 after the name.
    fields = (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()
    try:
        return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
    except (IndexError, ValueError):
        raise ValueError(f"/proc/{pid}/stat: unexpected format") from None


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) used so far by ``pid``, its live descendants and every
    descendant reaped inside the tree (see the module docstring). A process that exits while
    the tree is read counts what could be read of it."""
    ticks = 0
    for member in tree(pid):
        with contextlib.suppress(OSError, ValueError):
            own, reaped = cpu_ticks(member)
            ticks += own + reaped
    return ticks / TICK


def cpus_allowed(pid: int) -> set[int]:
    """The CPUs thread ``pid`` may run on, as ``/proc/PID/status`` says (``Cpus_allowed_list``)."""
    for line in (PROC / str(pid) / "status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return parse_cpu_list(line.partition(":")[2])
    raise ValueError(f"/proc/{pid}/status: no Cpus_allowed_list")


def parse_cpu_list(text: str) -> set[int]:
    """``0-2,5`` -> {0, 1, 2, 5}."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def pin(pids: Iterable[int], cpus: set[int]) -> list[int]:
    """Restrict every thread of each of ``pids`` and of their live descendants to ``cpus``
    (processes they start later inherit it); the ids of the threads set. A thread that exits
    meanwhile is skipped."""
    done: list[int] = []
    for pid in pids:
        for member in tree(pid):
            for thread in threads(member):
                try:
                    os.sched_setaffinity(thread, cpus)
                except ProcessLookupError:
                    continue
                done.append(thread)
    return done


def all_cpus() -> set[int]:
    """The CPUs this process may use (the set ``pin`` restores an unpinned server to)."""
    return set(os.sched_getaffinity(0))
