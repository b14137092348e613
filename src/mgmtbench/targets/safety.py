"""Keeping a benchmark gentle on real devices: show commands only, a session rate, time-outs.

- :func:`refusal`: an inventory target runs ``show`` commands only; anything else (configuration,
  file transfers, ``write``, ``reload``) is refused unless the user passed ``--allow-config``.
- :class:`Pacer`: new sessions (TCP connections) per second over all devices. A benchmark asks it
  before every round (outside the timed part, in pytest-benchmark's ``setup``), saying how many
  sessions a round opens; it sleeps until the budget allows them.
- :class:`TargetGate`: what reaches each ADDRESS, whatever the inventory calls its hosts: at
  most ``sessions`` probes or rounds at once and ``rate`` new connections per second on average
  per address (an inventory of 2,000 names for one address once opened 587 connections a second
  to it); :func:`shared_addresses` says, in one sentence, when hosts share one.
- :func:`address_refusal`: addresses that are not a device's (0.0.0.0, multicast, broadcast,
  the cloud metadata service at 169.254.169.254): refused in one sentence.
- :func:`deadline`: a per-host time-out on one round, for clients that would wait forever on a
  device that stopped answering: ``SIGALRM`` raises :class:`~mgmtbench.errors.ClientTimeout` in
  the main thread (a client blocked inside a C library notices when it returns to Python).

Ctrl-C needs nothing here: ``KeyboardInterrupt`` unwinds through the benchmark's ``finally``
blocks, which close the client, the wire tap and the fleet worker.
"""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from types import FrameType

from mgmtbench.errors import ClientTimeout

#: The first word of a command an inventory target runs without ``--allow-config``.
READ_ONLY = "show"


def is_show(command: str) -> bool:
    """Whether ``command`` is a ``show`` command (its first word abbreviates ``show``)."""
    words = command.split()
    return bool(words) and len(words[0]) >= 2 and READ_ONLY.startswith(words[0].lower())


def refusal(commands: Sequence[str], *, allow_config: bool, writes: bool = False) -> str | None:
    """Why an inventory target must not run ``commands`` (or, with ``writes``, anything that
    changes the device: configuration, files), None when it may."""
    if allow_config:
        return None
    if writes:
        return "changes the device (configuration or files): real targets need --allow-config"
    others = [c for c in commands if not is_show(c)]
    if others:
        return (f"runs {others[0]!r}, not a show command: real targets run show commands only "
                "unless --allow-config")
    return None


class Pacer:
    """At most ``rate`` new sessions per second, on average, over everything that shares it."""

    def __init__(self, rate: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if rate <= 0:
            raise ValueError("a session rate must be positive")
        self.rate = rate
        self._clock, self._sleep = clock, sleep
        self._next = 0.0  # when the next session may start
        self.waited = 0.0  # seconds slept, in total

    def wait(self, sessions: int) -> None:
        """Sleep until ``sessions`` new sessions fit the rate, then book them."""
        if sessions <= 0:
            return
        now = self._clock()
        if self._next > now:
            self._sleep(self._next - now)
            self.waited += self._next - now
            now = self._next
        self._next = now + sessions / self.rate


#: New connections per second to one address, on average, and probes at once per address:
#: a device's management plane is small (IOS has 5 VTY lines by default, ``line vty 0 4``;
#: sshd starts dropping at MaxStartups 10 unauthenticated connections), so two of our
#: sessions at a time leave room for its operators, and 5 connections a second stay far from
#: what control-plane policing or ``login block-for`` treats as an attack.
PER_TARGET_RATE = 5.0
PER_TARGET_SESSIONS = 2
#: Addresses where a cloud's instance metadata (credentials included) answers: never a device.
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254"))


def address_refusal(address: str) -> str | None:
    """Why ``address`` (a resolved IP address) is not a device to connect to, None when it may
    be one."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return None  # not an address (resolved elsewhere)
    if ip in METADATA:
        return f"{address} is a cloud metadata service, not a device"
    if ip.is_unspecified:
        return f"{address} is the unspecified address (any interface), not a device"
    if ip.is_multicast or ip == ipaddress.ip_address("255.255.255.255"):
        return f"{address} is a multicast or broadcast address, not a device"
    if ip.is_reserved:
        return f"{address} is a reserved address, not a device"
    return None


def shared_addresses(addresses: Iterable[str], *, rate: float = PER_TARGET_RATE,
                     sessions: int = PER_TARGET_SESSIONS) -> str | None:
    """One sentence when several hosts share one address (they are the same device to the
    network: :class:`TargetGate` paces them together), None when every host has its own."""
    counts = Counter(addresses)
    shared = {a: n for a, n in counts.items() if n > 1}
    if not shared:
        return None
    top, most = max(shared.items(), key=lambda item: item[1])
    hosts = sum(shared.values())
    return (f"{hosts} hosts share {len(shared)} address(es) ({most} on {top}): each address gets "
            f"at most {rate:g} new connections a second and {sessions} sessions at once, "
            "whatever the inventory calls its hosts")


class TargetGate:
    """Per address: at most ``sessions`` holders at once (:meth:`session`), and new connections
    paced to ``rate`` a second on average (booked when a session starts), as :class:`Pacer` does
    over all devices; addresses do not wait for each other."""

    def __init__(self, rate: float = PER_TARGET_RATE,
                 sessions: int = PER_TARGET_SESSIONS) -> None:
        if not rate > 0 or sessions < 1:
            raise ValueError("a per-target rate must be positive and sessions at least 1")
        self.rate, self.sessions = rate, sessions
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._next: dict[str, float] = {}  # per address: when its next connection may start

    @asynccontextmanager
    async def session(self, address: str, connections: int) -> AsyncIterator[None]:
        """Hold one of ``address``'s sessions for the block, after waiting until its
        ``connections`` new connections fit the rate."""
        slots = self._slots.setdefault(address, asyncio.Semaphore(self.sessions))
        async with slots:
            loop = asyncio.get_running_loop()
            now = loop.time()
            start = max(now, self._next.get(address, now))
            self._next[address] = start + connections / self.rate
            if start > now:
                await asyncio.sleep(start - now)
            yield


@contextmanager
def deadline(seconds: float, what: str) -> Iterator[Callable[[], None]]:
    """Within the block, ``arm()`` (re)starts a ``seconds`` time-out: when it runs out,
    :class:`~mgmtbench.errors.ClientTimeout` ("``what`` did not answer within ...") is raised in
    the main thread. Outside the main thread ``arm`` does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return

    def expired(signum: int, frame: FrameType | None) -> None:
        raise ClientTimeout(f"{what} did not answer within {seconds:g} s (its time-out)")

    def arm() -> None:
        signal.setitimer(signal.ITIMER_REAL, seconds)

    previous = signal.signal(signal.SIGALRM, expired)
    try:
        yield arm
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
