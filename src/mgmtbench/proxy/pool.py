"""SSH connections to the devices: fresh for one request, or pooled across requests.

:meth:`SshPool.run` runs one request's work on a connection to one device:

- ``fresh``: a new connection, closed after the request (the study's ``fresh-ssh`` proxy);
- pooled: an idle connection to that device if there is one, else a new one; it goes back to the
  pool after the request. A request has its connection to itself (no two requests share one).

Limits (:class:`PoolSettings`): ``per_device`` connections to one device at once, fresh or
pooled (more requests for it wait their turn); ``size`` idle connections kept in all (one beyond
that is closed instead of kept); ``idle_timeout`` seconds an idle connection is kept (a reaper
closes older ones). Fairness: ``per_source`` of a device's connections at most (by default
all but one) for the requests of one client address (its further requests wait behind its own,
not in the device's queue, so one client's slow requests cannot take every connection to a
device), and a request that waits ``queue_timeout`` seconds for a connection gets
:class:`PoolBusy` (the API's 503 with Retry-After: nginx's ``limit_conn`` per address and the
``queue ... timeout=`` of its upstreams).
Health on reuse: an idle connection the device (or the network) closed is
dropped before use, and a request whose reused connection fails before it could run is retried
once on a new connection (a device that rebooted leaves connections that look open until used).

:meth:`SshPool.stats` counts what happened: connections opened, reuses, closes by reason, the
largest number open at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import asyncssh

from mgmtbench.errors import ConnectionFailed, UsageError
from mgmtbench.proxy import ssh
from mgmtbench.proxy.inventory import ProxyDevice
from mgmtbench.targets import Login, Target

T = TypeVar("T")
Work = Callable[[asyncssh.SSHClientConnection, Target], Awaitable[T]]


@dataclass(frozen=True)
class PoolSettings:
    """How the proxy keeps SSH connections (seconds, counts)."""

    size: int = 256  # idle connections kept, all devices together
    per_device: int = 4  # connections to one device at once (fresh or pooled)
    idle_timeout: float = 60.0  # an idle connection older than this is closed
    connect_timeout: float = 10.0
    #: Connections to one device for one client address at once (None: all but one of
    #: ``per_device``, so another client always has one).
    per_source: int | None = None
    queue_timeout: float = 10.0  # seconds a request waits for a connection, then 503

    @property
    def source_share(self) -> int:
        """Connections to one device one client address may hold at once."""
        if self.per_source is not None:
            return min(self.per_source, self.per_device)
        return max(1, self.per_device - 1)

    def check(self) -> PoolSettings:
        """The settings, or a one-line UsageError."""
        if self.size < 0 or self.per_device < 1 or self.source_share < 1:
            raise UsageError("pool size must be >= 0, connections per device and per source "
                             ">= 1")
        if not all(0 < t < float("inf") for t in (self.idle_timeout, self.connect_timeout,
                                                  self.queue_timeout)):
            raise UsageError("the idle, connect and queue time-outs must be positive numbers")
        return self


class PoolBusy(Exception):
    """No connection to a device came free within the queue time-out."""

    def __init__(self, device: str, waited: float) -> None:
        super().__init__(f"device {device} busy: no SSH connection free within {waited:g} s")


@dataclass
class _Idle:
    conn: asyncssh.SSHClientConnection
    since: float


@dataclass
class PoolStats:
    """What the pool did since it started."""

    opened: int = 0  # new connections (fresh and pooled)
    reused: int = 0  # requests served on a pooled connection
    closed_idle: int = 0  # closed by the idle time-out
    closed_full: int = 0  # not kept: the pool already held ``size`` idle connections
    stale: int = 0  # pooled connections found dead on reuse (dropped, or retried)
    peak_open: int = 0  # most connections open at once
    busy: int = 0  # requests refused after the queue time-out
    open: int = 0
    in_use: int = 0
    per_device_peak: dict[str, int] = field(default_factory=dict)


class SshPool:
    """Connections to the inventory's devices, fresh or pooled (see the module docstring)."""

    def __init__(self, settings: PoolSettings, login: Login, known_hosts: Any = None) -> None:
        self.settings = settings.check()
        self.login = login
        self.known_hosts = known_hosts
        self._idle: dict[str, list[_Idle]] = {}
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._shares: dict[tuple[str, str], asyncio.Semaphore] = {}  # (device, source)
        self._sharing: dict[tuple[str, str], int] = {}  # requests holding or awaiting a share
        self._open: dict[str, int] = {}
        self._targets: dict[str, Target] = {}
        self._stats = PoolStats()
        self._reaper: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()

    def stats(self) -> dict[str, Any]:
        """The counters, and how many connections are idle now."""
        s = self._stats
        return {"opened": s.opened, "reused": s.reused, "closed_idle": s.closed_idle,
                "closed_full": s.closed_full, "stale": s.stale, "open": s.open,
                "in_use": s.in_use, "idle": sum(len(v) for v in self._idle.values()),
                "peak_open": s.peak_open, "busy": s.busy,
                "per_device_peak": max(s.per_device_peak.values(), default=0)}

    async def run(self, device: ProxyDevice, fresh: bool, work: Work[T], source: str = "?") -> T:
        """``work(conn, target)`` on a connection to ``device``: a new one closed afterwards
        (``fresh``), or one of the pool's; for a client at ``source`` (its share, then the
        device's slot, within the queue time-out, else :class:`PoolBusy`)."""
        self._start_reaper()
        async with self._turn(device.name, source):
            return await self._run(device, fresh, work)

    @contextlib.asynccontextmanager
    async def _turn(self, name: str, source: str) -> AsyncIterator[None]:
        """Hold one of ``source``'s shares of ``name`` and one of its slots."""
        key = (name, source)
        settings = self.settings
        share = self._shares.get(key)
        if share is None:
            share = self._shares[key] = asyncio.Semaphore(settings.source_share)
        slot = self._slots.setdefault(name, asyncio.Semaphore(settings.per_device))
        self._sharing[key] = self._sharing.get(key, 0) + 1
        try:
            held: list[asyncio.Semaphore] = []
            try:
                async with asyncio.timeout(settings.queue_timeout):
                    for semaphore in (share, slot):
                        await semaphore.acquire()
                        held.append(semaphore)
            except TimeoutError:
                for semaphore in held:
                    semaphore.release()
                self._stats.busy += 1
                raise PoolBusy(name, settings.queue_timeout) from None
            try:
                yield
            finally:
                for semaphore in held:
                    semaphore.release()
        finally:
            self._sharing[key] -= 1
            if not self._sharing[key]:  # nobody from there any more: forget the source
                del self._sharing[key]
                del self._shares[key]

    async def _run(self, device: ProxyDevice, fresh: bool, work: Work[T]) -> T:
        target = self._target(device)
        if fresh:
            conn = await self._connect(device, target)
            try:
                return await work(conn, target)
            finally:
                self._close(device, conn)
        conn, reused = await self._checkout(device, target)
        try:
            result = await work(conn, target)
        except ConnectionFailed:
            self._close(device, conn)
            if not reused:
                raise
            self._stats.stale += 1  # it looked alive; the device had dropped it: once more
            conn = await self._connect(device, target)
            try:
                result = await work(conn, target)
            except BaseException:
                self._close(device, conn)
                raise
        except BaseException:
            self._close(device, conn)
            raise
        self._checkin(device, conn)
        return result

    async def close(self) -> None:
        """Close every idle connection and stop the reaper (connections in use close with
        their requests)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        for name, idle in self._idle.items():
            for entry in idle:
                self._drop(name, entry.conn)
            idle.clear()
        if self._closing:
            await asyncio.wait(self._closing, timeout=5)

    # --- inside -----------------------------------------------------------------------------

    def _target(self, device: ProxyDevice) -> Target:
        if device.name not in self._targets:
            self._targets[device.name] = ssh.device_target(device, self.login)
        return self._targets[device.name]

    async def _connect(self, device: ProxyDevice, target: Target) -> asyncssh.SSHClientConnection:
        conn = await ssh.connect(device, target, self.known_hosts, self.settings.connect_timeout)
        s = self._stats
        s.opened += 1
        s.open += 1
        s.in_use += 1
        s.peak_open = max(s.peak_open, s.open)
        count = self._open[device.name] = self._open.get(device.name, 0) + 1
        s.per_device_peak[device.name] = max(s.per_device_peak.get(device.name, 0), count)
        return conn

    async def _checkout(self, device: ProxyDevice,
                        target: Target) -> tuple[asyncssh.SSHClientConnection, bool]:
        idle = self._idle.setdefault(device.name, [])
        while idle:
            entry = idle.pop()  # the most recently used: the likeliest to be alive
            if entry.conn.is_closed():
                self._stats.stale += 1
                self._drop(device.name, entry.conn)
                continue
            self._stats.reused += 1
            self._stats.in_use += 1
            return entry.conn, True
        return await self._connect(device, target), False

    def _checkin(self, device: ProxyDevice, conn: asyncssh.SSHClientConnection) -> None:
        self._stats.in_use -= 1
        if conn.is_closed():
            self._drop(device.name, conn)
        elif sum(len(v) for v in self._idle.values()) >= self.settings.size:
            self._stats.closed_full += 1
            self._drop(device.name, conn)
        else:
            self._idle.setdefault(device.name, []).append(_Idle(conn, time.monotonic()))

    def _close(self, device: ProxyDevice, conn: asyncssh.SSHClientConnection) -> None:
        """A connection in use, closed (a fresh one after its request, or a failed one)."""
        self._stats.in_use -= 1
        self._drop(device.name, conn)

    def _drop(self, name: str, conn: asyncssh.SSHClientConnection) -> None:
        """Close ``conn`` without holding up the request; count it gone."""
        self._stats.open -= 1
        self._open[name] = self._open.get(name, 1) - 1
        conn.close()
        task = asyncio.get_running_loop().create_task(_wait_closed(conn))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        """Close idle connections older than the idle time-out, now and then."""
        period = min(max(self.settings.idle_timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(period)
            oldest = time.monotonic() - self.settings.idle_timeout
            for name, idle in self._idle.items():
                keep = [e for e in idle if e.since > oldest and not e.conn.is_closed()]
                for entry in idle:
                    if entry not in keep:
                        if entry.conn.is_closed():
                            self._stats.stale += 1
                        else:
                            self._stats.closed_idle += 1
                        self._drop(name, entry.conn)
                idle[:] = keep


async def _wait_closed(conn: asyncssh.SSHClientConnection) -> None:
    with contextlib.suppress(Exception):  # a connection that broke while closing is closed
        await conn.wait_closed()
