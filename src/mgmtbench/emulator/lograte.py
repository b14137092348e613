"""The log rate limit (:class:`~mgmtbench.emulator.guard.RateLimitFilter`) for emulators embedded
in another process (:class:`~mgmtbench.emulator.server.EmulatorThread`: tests, benchmarks).

``mgmtbench serve`` owns its process's logging and puts the limit on its handlers. An embedded
emulator does not: the process's logging (handlers, levels, pytest's capture) stays as its owner
set it. Instead one filter is put on the loggers the emulator writes to (:data:`LOGGERS`), and it
limits only records logged on an emulator's own loop thread (named :data:`THREAD`), each thread
with limits of its own: the process's other records (a test's asyncssh client, its own lines)
pass as they did. :func:`reset` starts every window anew (the pytest plugin calls it before each
test, so a test sees its own emulator's lines as if it ran alone).
"""

from __future__ import annotations

import logging
import threading

from mgmtbench.emulator.guard import RateLimitFilter

#: The name of an embedded emulator's loop thread (``EmulatorThread``).
THREAD = "mgmtbench-emulator"
#: Every logger an emulator writes to: its own, its HTTPS server's, and its SSH library's.
LOGGERS = ("mgmtbench.emulator", "mgmtbench.emulator.hypercorn", "asyncssh", "asyncssh.sftp")
MAX_THREADS = 256  # windows kept for this many emulator threads, then started over


class EmbeddedRateLimit(logging.Filter):
    """:class:`RateLimitFilter` per emulator loop thread; records of other threads pass."""

    def __init__(self) -> None:
        super().__init__()
        self._limits: dict[int | None, RateLimitFilter] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` goes out."""
        if record.threadName != THREAD:
            return True
        with self._lock:
            limiter = self._limits.get(record.thread)
            if limiter is None:
                if len(self._limits) >= MAX_THREADS:
                    self._limits.clear()
                limiter = self._limits[record.thread] = RateLimitFilter()
            return limiter.filter(record)

    def reset(self) -> None:
        """Forget every window: the next records start counting anew."""
        with self._lock:
            self._limits.clear()


_FILTER = EmbeddedRateLimit()


def limit_embedded_logs() -> EmbeddedRateLimit:
    """Put the filter on :data:`LOGGERS` (once per process); return it."""
    for name in LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
    return _FILTER


def reset() -> None:
    """Start every embedded emulator's log windows anew."""
    _FILTER.reset()
