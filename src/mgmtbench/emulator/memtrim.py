"""Memory of closed connections given back to the operating system (glibc's ``malloc_trim``).

Each connection the emulator holds allocates through C's ``malloc`` (OpenSSL's TLS state,
asyncssh's and the loop's buffers, Python objects above pymalloc's small sizes). When thousands
of connections close, glibc keeps what they freed in its arenas for the next allocations instead
of returning it: measured on the emulator (uvloop; 2,000 idle TLS connections and 1,000
unauthenticated SSH ones, opened and closed three times), RSS went from 54 MB idle to 117 MB,
150 MB and 167 MB after each round had closed, and to 77 MB after one ``malloc_trim(0)`` (12-17
ms). With this module the rounds ended at 77, 77 and 79 MB. A device that was hammered once
should not hold that memory for the rest of a benchmark run.

:class:`MemoryTrimmer` runs on the emulator's loop and calls ``malloc_trim(0)`` when connections
have closed and things have settled:

- it counts the process's open descriptors every :attr:`TrimPolicy.poll` seconds (every
  connection is one; a ``/proc/self/fd`` listing: ~0.1 ms with a hundred open, ~13 ms with
  10,000);
- it trims when at least :attr:`TrimPolicy.min_closed` connections closed since the last trim,
  the count did not change since the previous poll (nothing is opening or closing: no
  benchmark's connections are being made, when a trim would add to their time), and no trim of
  this process ran in the last :attr:`TrimPolicy.interval` seconds (several emulators in one
  process share that limit: the trim is process-wide). Closed connections are counted as they
  close (the SSH and HTTPS servers call :func:`connection_closed`) and as the fall of the
  descriptor count from its highest look, whichever is more: from the descriptors alone, a
  burst that opened and closed between two looks was missed (900 connections held for half a
  second: no trim in 2 of 5 runs, their 38 MiB kept);
- or, with few connections closed, when the heap's free bytes (glibc's ``mallinfo2``) grew by
  :attr:`TrimPolicy.min_freed` since the last trim, nothing opening or closing and the interval
  past, as before: a few connections' heavy work frees as much as many connections (an HTTP/2
  SETTINGS flood on a handful of connections left +7 MiB, all of it given back by one trim).

Where the C library has no ``malloc_trim`` (musl, macOS) nothing runs; that is logged once at
debug level. glibc's arena count is left as it is: with ``M_ARENA_MAX`` 1 the same three rounds
ended at 117, 150 and 174 MB without the trim and 76-77 MB with it, the same as without the cap
(the emulator's connections are served by one thread, its loop's, so they use one arena anyway).
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("mgmtbench.emulator")


@dataclass(frozen=True)
class TrimPolicy:
    """When a :class:`MemoryTrimmer` trims."""

    poll: float = 2.0  # seconds between looks at the open descriptors
    min_closed: int = 64  # descriptors closed since the last trim before another one
    interval: float = 10.0  # seconds between two trims of this process, at least
    # Or: bytes the C heap holds free (glibc's mallinfo2 fordblks) grown by at least this since
    # the last trim, though few connections closed: a few connections' heavy work (an HTTP/2
    # control-frame flood, an 8,000-line configuration and its removal) freed it.
    min_freed: int = 1024 * 1024
    # Run a full garbage collection just before each trim. Closed connections' objects sit in
    # reference cycles (asyncssh's connections and transports, HTTP/2 protocol objects with
    # their TLS buffers, exceptions with their tracebacks) that only CPython's full collection
    # frees, and that runs once the long-lived objects have grown by a quarter: after the soak's
    # hostile mix, 2,800-4,300 objects and 4-5 MiB of C memory waited for it. `serve` sets it,
    # with its start-up objects frozen (gc.freeze) so that the collection passes over only what
    # came after; an emulator inside another program leaves that program's collector alone.
    collect: bool = False


def malloc_trim() -> Callable[[], int] | None:
    """glibc's ``malloc_trim(0)``, None where the C library has none (logged once at debug)."""
    global _warned
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        if not _warned:
            _warned = True
            log.debug("this C library has no malloc_trim (musl, macOS): memory freed by closed "
                      "connections stays with the allocator")
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: int(trim(0))


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def heap_free() -> Callable[[], int] | None:
    """glibc's free bytes held in the heap (``mallinfo2().fordblks``), None where there is no
    ``mallinfo2`` (glibc before 2.33, other C libraries)."""
    try:
        info = ctypes.CDLL(None).mallinfo2
    except (OSError, AttributeError):
        return None
    info.argtypes, info.restype = [], _MallInfo2
    return lambda: int(info().fordblks)


def open_descriptors() -> int:
    """How many file descriptors this process has open."""
    return len(os.listdir("/proc/self/fd"))


_warned = False
_lock = threading.Lock()
_last_trim = float("-inf")  # time.monotonic() of this process's last trim
_closed = 0  # connections of this process's servers closed so far


def connection_closed() -> None:
    """A server of this process closed a connection (an SSH or HTTPS server's)."""
    global _closed
    _closed += 1  # several loops' threads: an increment lost now and then costs nothing


def closed_connections() -> int:
    """How many connections this process's servers have closed."""
    return _closed


class MemoryTrimmer:
    """Trims the C heap after connections closed (see the module docstring).

    ``trim``, ``count`` and ``closed`` default to ``malloc_trim(0)``, :func:`open_descriptors`
    and :func:`closed_connections`; tests give their own. :meth:`poll` is one look (what
    :meth:`run` does every ``policy.poll`` seconds); ``trims`` counts the trims it made.
    """

    def __init__(self, policy: TrimPolicy | None = None, *,
                 trim: Callable[[], int] | None = None,
                 count: Callable[[], int] = open_descriptors,
                 closed: Callable[[], int] = closed_connections,
                 free: Callable[[], int] | None = None) -> None:
        self.policy = policy or TrimPolicy()
        self._trim = trim if trim is not None else malloc_trim()
        self._count = count
        self._closed = closed
        self._free = free if free is not None else (heap_free() or (lambda: 0))
        self.trims = 0
        self._last = self._peak = count() if self._trim is not None else 0
        self._closed_before = closed()  # at the last trim (or the start)
        self._free_before = self._free() if self._trim is not None else 0

    @property
    def enabled(self) -> bool:
        """Whether there is a ``malloc_trim`` to call."""
        return self._trim is not None

    def poll(self) -> bool:
        """Look at the open descriptors once; trim if the policy says so. Whether it trimmed."""
        global _last_trim
        if self._trim is None:
            return False
        now, last = self._count(), self._last
        self._last, self._peak = now, max(self._peak, now)
        closed = max(self._peak - now, self._closed() - self._closed_before)
        if now != last:
            return False  # still opening or closing
        freed = self._free() - self._free_before
        if closed < self.policy.min_closed and freed < self.policy.min_freed:
            return False  # too few closed, too little freed, to bother
        with _lock:
            started = time.monotonic()
            if started - _last_trim < self.policy.interval:
                return False
            _last_trim = started
        if self.policy.collect:
            gc.collect()
        self._trim()
        self.trims += 1
        # What the heap holds free after a trim stays counted (its pages are given back, its
        # chunks stay in the free lists): only what is freed after it counts towards the next.
        self._peak, self._closed_before, self._free_before = now, self._closed(), self._free()
        log.debug("gave freed memory back to the system after %d connections closed, %d bytes "
                  "freed (%.1f ms)", closed, freed, (time.monotonic() - started) * 1000)
        return True

    async def run(self) -> None:
        """Poll every ``policy.poll`` seconds until cancelled (returns at once without
        ``malloc_trim``)."""
        if self._trim is None:
            return
        while True:
            await asyncio.sleep(self.policy.poll)
            try:
                self.poll()
            except OSError as exc:  # no /proc (a container without it): nothing to go by
                log.debug("cannot count open descriptors (%s): no memory trims", exc)
                return
