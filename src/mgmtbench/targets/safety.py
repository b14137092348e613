"""Keeping a benchmark gentle on real devices: show commands only, a session rate, time-outs.

- :func:`refusal`: an inventory target runs ``show`` commands only; anything else (configuration,
  file transfers, ``write``, ``reload``) is refused unless the user passed ``--allow-config``.
- :class:`Pacer`: new sessions (TCP connections) per second over all devices. A benchmark asks it
  before every round (outside the timed part, in pytest-benchmark's ``setup``), saying how many
  sessions a round opens; it sleeps until the budget allows them.
- :func:`deadline`: a per-host time-out on one round, for clients that would wait forever on a
  device that stopped answering: ``SIGALRM`` raises :class:`~mgmtbench.errors.ClientTimeout` in
  the main thread (a client blocked inside a C library notices when it returns to Python).

Ctrl-C needs nothing here: ``KeyboardInterrupt`` unwinds through the benchmark's ``finally``
blocks, which close the client, the wire tap and the fleet worker.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
