"""What keeps a device answering its real users while others misbehave: who may start a login
(:class:`Admission`, OpenSSH's MaxStartups and PerSourceMaxStartups), what a wrong password costs
(:class:`AuthThrottle`), and a log that says each thing once instead of flooding
(:class:`RateLimitFilter`, :func:`quiet_loop_errors`).

Nothing here costs a client that logs in correctly anything: admission is a counter, and only a
failed login waits.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mgmtbench.emulator.options import Limits

log = logging.getLogger("mgmtbench.emulator")


def source_of(peer: object) -> str:
    """The source address of a peer name (``("192.0.2.1", 5000)`` -> ``"192.0.2.1"``)."""
    if isinstance(peer, (tuple, list)) and peer:
        return str(peer[0])
    return "?"


@dataclass
class Holders:
    """Connections held per source, oldest first, each with the call that closes it: what lets
    a newcomer in when a cap is full (:class:`Admission` for SSH's unauthenticated connections,
    :class:`~mgmtbench.emulator.https.accept.ConnectionCaps` for HTTPS). The source holding the
    most gives up its oldest connection to a source holding at least two fewer, so attackers
    can only push out their own kind, and a source alone among the holders never loses a
    connection to its own newer one."""

    held: dict[str, dict[object, Callable[[], None]]] = field(default_factory=dict)
    evicted: int = 0

    def add(self, source: str, key: object, close: Callable[[], None]) -> None:
        """Hold ``key`` for ``source``, newest last."""
        self.held.setdefault(source, {})[key] = close

    def discard(self, source: str, key: object) -> bool:
        """Stop holding ``key``; whether it was held (not evicted already)."""
        keys = self.held.get(source)
        if keys is None or key not in keys:
            return False
        del keys[key]
        if not keys:
            del self.held[source]
        return True

    def evict_for(self, source: str, holding: int) -> str | None:
        """Close the heaviest source's oldest connection for ``source`` (holding ``holding``),
        if that source holds at least two more; the source closed, or None."""
        heaviest = max(self.held, key=lambda s: len(self.held[s]), default=None)
        if heaviest is None or heaviest == source or len(self.held[heaviest]) < holding + 2:
            return None
        keys = self.held[heaviest]
        key = next(iter(keys))
        close = keys.pop(key)
        if not keys:
            del self.held[heaviest]
        self.evicted += 1
        close()
        return heaviest


def count_down(by_source: dict[str, int], source: str) -> None:
    """One connection fewer for ``source`` in ``by_source`` (gone from it at none)."""
    left = by_source.get(source, 0) - 1
    if left > 0:
        by_source[source] = left
    else:
        by_source.pop(source, None)


@dataclass
class Descriptors:
    """Connections every device of a process holds, SSH and HTTPS, against what its open-files
    limit leaves for them (:func:`~mgmtbench.emulator.server.connection_budget`).

    Each device's caps bound its own connections, but the descriptors are the process's: with
    ``--devices 3``, 2,343 unauthenticated TLS connections took all 2,365 and every device's
    SSH and HTTPS refused everyone, unlogged. At ``total`` a new connection takes the place of
    the heaviest source's oldest one that may go (an HTTPS connection, an SSH one not logged
    in: :class:`Holders`), else it is refused at accept, before any TLS or SSH work. A logged-in
    SSH connection counts (:meth:`keep`) but is never closed for another."""

    total: int
    open: int = 0
    dropped: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    holders: Holders = field(default_factory=Holders)
    counted: dict[object, str] = field(default_factory=dict)

    def take(self, source: str, key: object, close: Callable[[], None]) -> str | None:
        """Count a new connection (``key``, closed by ``close`` if it must make room); why it
        is refused, or None."""
        if self.open >= self.total:
            evicted = self.holders.evict_for(source, self.by_source.get(source, 0))
            if evicted is None:
                self.dropped += 1
                return (f"the process holds {self.total} connections (what its open-files limit "
                        "leaves for them)")
        self.open += 1
        self.by_source[source] = self.by_source.get(source, 0) + 1
        self.counted[key] = source

        def make_room(key: object = key) -> None:
            self._forget(key)
            close()

        self.holders.add(source, key, make_room)
        return None

    def keep(self, source: str, key: object) -> None:
        """``key`` logged in: still counted, never closed to make room."""
        self.holders.discard(source, key)

    def release(self, source: str, key: object) -> None:
        """``key`` closed (counted once: one closed to make room is forgotten already)."""
        self.holders.discard(source, key)
        self._forget(key)

    def _forget(self, key: object) -> None:
        source = self.counted.pop(key, None)
        if source is None:
            return
        self.open -= 1
        count_down(self.by_source, source)


@dataclass
class Admission:
    """Unauthenticated and authenticated SSH connections of one device.

    - A new TCP connection is dropped before the SSH banner (as OpenSSH's MaxStartups does)
      when its source already has ``max_startups_per_source`` connections that have not logged
      in, or at random when ``start`` or more are unauthenticated: with probability ``rate`` %
      at ``start``, rising linearly to 100 % at ``full``.
    - Only logged-in connections count toward ``max_sessions``: connections that never log in
      cannot lock real users out; they wait at most the login grace time.
    - Fair to a new source: when the new connection would be dropped (at random, or MaxStartups
      full) but its source holds fewer unauthenticated connections than the source holding the
      most, less one, that source's oldest unauthenticated connection is closed instead and the
      new one admitted (given ``abort`` for each: :meth:`refuse`). Many sources holding the
      pre-auth slots (12 sources x 9) used to leave a user from a new address 4 logins in 20;
      now a hostile source can only push out its own kind, and a source alone among the
      holders never loses a connection to its own newer one (OpenSSH's PerSourcePenalties
      punishes sources after the fact; this keeps room in the moment).
    """

    limits: Limits
    unauthenticated: int = 0
    authenticated: int = 0
    dropped: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    chance: Callable[[], float] = random.random
    waiting: Holders = field(default_factory=Holders)  # unauthenticated, with their aborts
    budget: Descriptors | None = None  # the process's connections, every device's

    def refuse(self, source: str, key: object = None,
               abort: Callable[[], None] | None = None) -> str | None:
        """Why a new connection from ``source`` is dropped, or None (then it is counted as
        unauthenticated until :meth:`logged_in` or :meth:`closed`, called with the same
        ``key``). With ``key`` and ``abort`` (which closes the connection) it may take the place
        of the heaviest source's oldest connection instead of being dropped."""
        start, rate, full = self.limits.max_startups
        reason = None
        if self.by_source.get(source, 0) >= self.limits.max_startups_per_source:
            return self._drop(f"{self.limits.max_startups_per_source} unauthenticated "
                              "connections from this source")
        if self.unauthenticated >= full:
            reason = f"{full} unauthenticated connections (MaxStartups full)"
        elif self.unauthenticated >= start:
            chance = (rate + (100 - rate) * (self.unauthenticated - start) / max(1, full - start))
            if self.chance() * 100 < chance:
                reason = (f"{self.unauthenticated} unauthenticated connections (MaxStartups "
                          f"{start}:{rate}:{full}, dropped at random)")
        if reason is not None and not (abort is not None and self._evict_for(source)):
            return self._drop(reason)
        if self.budget is not None and key is not None and abort is not None:
            refused = self.budget.take(source, key, abort)
            if refused is not None:
                return self._drop(refused)
        self.unauthenticated += 1
        self.by_source[source] = self.by_source.get(source, 0) + 1
        if key is not None and abort is not None:
            self.waiting.add(source, key, abort)
        return None

    def _drop(self, reason: str) -> str:
        self.dropped += 1
        return reason

    def _evict_for(self, source: str) -> bool:
        """Make room for ``source`` (see :class:`Holders`); whether a connection was closed."""
        evicted = self.waiting.evict_for(source, self.by_source.get(source, 0))
        if evicted is not None:
            self._forget(evicted)
        return evicted is not None

    def sessions_full(self) -> bool:
        """Whether ``max_sessions`` connections have logged in already."""
        return self.authenticated >= self.limits.max_sessions

    def logged_in(self, source: str, key: object = None) -> None:
        """An admitted connection logged in: it counts as a session now."""
        if self._settle(source, key):
            self._forget(source)
        self.authenticated += 1
        if self.budget is not None and key is not None:
            self.budget.keep(source, key)

    def closed(self, source: str, *, authenticated: bool, key: object = None) -> None:
        """An admitted connection closed."""
        if self.budget is not None and key is not None:
            self.budget.release(source, key)
        if authenticated:
            self.authenticated -= 1
        elif self._settle(source, key):
            self._forget(source)

    def _settle(self, source: str, key: object) -> bool:
        """Stop holding ``key`` as waiting; whether it still counted (an evicted connection
        was forgotten when it was closed)."""
        return key is None or self.waiting.discard(source, key)

    def _forget(self, source: str) -> None:
        self.unauthenticated -= 1
        count_down(self.by_source, source)


@dataclass
class AuthThrottle:
    """What a failed login costs, per device, over SSH and HTTPS alike: an answer only after
    ``auth_failure_delay`` seconds, and failures from one source answered one at a time, so a
    source guesses at most one password per delay however many connections it opens. A
    successful login never waits."""

    limits: Limits
    failures: int = 0
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)
    _waiting: dict[str, int] = field(default_factory=dict)

    async def failed(self, source: str) -> None:
        """Count a failed login from ``source`` and wait its turn plus the delay."""
        self.failures += 1
        delay = self.limits.auth_failure_delay
        if delay <= 0:
            return
        lock = self._locks.get(source)
        if lock is None:
            lock = self._locks[source] = asyncio.Lock()
        self._waiting[source] = self._waiting.get(source, 0) + 1
        try:
            async with lock:
                await asyncio.sleep(delay)
        finally:
            self._waiting[source] -= 1
            if not self._waiting[source]:  # nobody else queued: forget the source
                del self._waiting[source]
                del self._locks[source]


class RateLimitFilter(logging.Filter):
    """Let through at most ``burst`` records per message template and ``interval`` seconds; the
    next one let through says how many were held back. A flood of the same event (3,000 closed
    channels, a password guesser) becomes a few lines and a count."""

    def __init__(self, burst: int = 10, interval: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.burst, self.interval, self._clock = burst, interval, clock
        self._windows: dict[tuple[str, object], list[float]] = {}  # key -> [start, count, held]

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` goes out (the count of held-back ones added to its message)."""
        key = (record.name, record.msg)
        now = self._clock()
        window = self._windows.get(key)
        if window is None or now - window[0] >= self.interval:
            held = int(window[2]) if window is not None else 0
            if len(self._windows) > 1000:  # many distinct templates: start over
                self._windows.clear()
            self._windows[key] = [now, 1, 0]
            if held:
                record.msg = f"{record.msg} ({held} similar messages held back)"
            return True
        window[1] += 1
        if window[1] <= self.burst:
            return True
        window[2] += 1
        return False


def quiet_loop_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Make the loop report errors of client connections (a reset during a TLS handshake, an
    accept() out of file descriptors) as one WARNING line each, without a traceback: they are
    the clients' doing, not the emulator's, and a misbehaving client must not fill the log.
    A loop that has a handler of its own (the caller's) keeps it."""
    if loop.get_exception_handler() is not None:
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        exc = context.get("exception")
        if isinstance(exc, asyncio.CancelledError):
            return
        if isinstance(exc, (OSError, EOFError)) or exc is None:
            detail = f": {exc}" if exc is not None else ""
            log.warning("%s%s", context.get("message", "connection error"), detail)
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
