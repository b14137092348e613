"""The client side's CPU time during a benchmark's rounds: this process (every thread: a library's
own threads and event loop included), the children it reaps meanwhile (an ``ssh`` per command),
and its live descendants (a kept ``ssh`` master), less the processes of the site (the lab's
emulator, delay line, echo server) and of the wire tap, which are descendants too.

Recorded as ``client_cpu_ms_per_command`` by the transport benchmark; not recorded where the
devices run inside this process (the unprivileged loopback lab), whose CPU cannot be told apart.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Collection

from mgmtbench.lab import proctree
from mgmtbench.lab.procfs import TICK

__all__ = ["client_cpu_seconds"]


def client_cpu_seconds(exclude: Collection[int]) -> float:
    """CPU seconds used so far by this process, the children it reaped and its live
    descendants outside the process trees rooted at ``exclude``."""
    me = os.getpid()
    excluded = {member for pid in exclude for member in proctree.tree(pid)}
    ticks = 0
    for member in proctree.tree(me):
        if member in excluded:
            continue
        with contextlib.suppress(OSError, ValueError):
            own, reaped = proctree.cpu_ticks(member)
            ticks += own + reaped
    return ticks / TICK
