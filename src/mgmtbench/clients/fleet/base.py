"""The fleet-runner interface: one command, twice, on each of N sessions to N distinct devices,
all at once, the way a library's users run it at scale.

Per session, the phases of the classic paramiko-vs-libssh2 concurrency study:

- ``connect_exec``: connect, authenticate, open a channel and start a command that prints ~26 KB;
- ``finish``: read the rest of that command's output, get its exit status, close the channel;
- ``exec_again``: start the same command again on the same session (connection);
- ``read_output``: read all of its output (and its exit status);
- ``close``: disconnect.

A runner whose library does not separate two phases (a shell's ``send_command`` starts a command
and reads its output in one call) records the time in the first and ``None`` in the other, and
says so in :attr:`FleetRunner.merged`. A fleet-level API (parallel-ssh's ``ParallelSSHClient``)
times each phase for the whole fleet at once: every session gets the fleet's phase time.

Outputs are checked in the worker (:mod:`mgmtbench.clients.fleet.worker`) against the digest of
what each device must answer; a wrong or missing answer is an error of that session.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from mgmtbench.clients.base import ClientError, Target, _Common
from mgmtbench.targets import Service

T = TypeVar("T")
# The job's platform, whose stable form of an output is digested (set by the worker).
_PLATFORM: list[str] = []


def set_platform(platform: str | None) -> None:
    """Digest outputs in ``platform``'s stable form (None: whole outputs): a device's clock,
    uptimes and counters move (:func:`mgmtbench.emulator.oracle.stable_output`)."""
    _PLATFORM[:] = [platform] if platform else []

PHASES = ("connect_exec", "finish", "exec_again", "read_output", "close")


@dataclass
class SessionTimes:
    """One session's phase times in seconds (None: not separable in this library's API)."""

    connect_exec: float | None = None
    finish: float | None = None
    exec_again: float | None = None
    read_output: float | None = None
    close: float | None = None
    digests: list[str] = field(default_factory=list)  # sha256 of each command's output
    output_bytes: int = 0
    error: str | None = None

    def record(self, *outputs: bytes | str) -> None:
        """Add the digest and size of each output (the digest of its stable form once the
        worker has set the job's platform: :func:`set_platform`)."""
        for out in outputs:
            data = out.encode("ascii", "replace") if isinstance(out, str) else out
            if _PLATFORM:
                from mgmtbench.emulator.oracle import output_digest

                self.digests.append(output_digest(_PLATFORM[0], data.decode("ascii", "replace")))
            else:
                self.digests.append(hashlib.sha256(data).hexdigest())
            self.output_bytes += len(data)

    def as_dict(self) -> dict[str, Any]:
        """The times as a JSON-ready dict."""
        return asdict(self)


class Laps:
    """``laps.lap("connect_exec")`` stores the time since the previous lap in ``times``."""

    def __init__(self, times: SessionTimes) -> None:
        self.times = times
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        """Store the time since the previous lap as ``phase``."""
        now = time.perf_counter()
        setattr(self.times, phase, now - self._last)
        self._last = now

    def skip(self, phase: str) -> None:
        """The library's API does not end this phase on its own (its time is in the next lap)."""
        setattr(self.times, phase, None)


class FleetRunner(ABC):
    """Runs ``command`` twice per session on one session per target, all targets at once."""

    name: ClassVar[str]
    #: How the library is driven at scale, for the results (e.g. "asyncio.gather").
    how: ClassVar[str]
    #: Phases whose time another phase includes: {"finish": "connect_exec", ...}.
    merged: ClassVar[dict[str, str]] = {}
    #: The single-session adapter whose library (and install hint) this runner uses.
    adapter: ClassVar[type[_Common]]
    #: Runs other processes (their CPU and memory count as the client's).
    spawns: ClassVar[bool] = False

    def __init__(self) -> None:
        self._loaded: dict[tuple[Callable[[str], Any], str], Any] = {}

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the client cannot run here, else None."""
        return cls.adapter.missing()

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of what this client drives (for the results)."""
        return cls.adapter.versions()

    @classmethod
    def service(cls) -> Service:
        """What the runner's sessions ask of a device (exec requests unless a runner says
        otherwise): a device runtime may not serve it (``lab.unsupported(service)``)."""
        return cls.adapter.service("reuse-conn")

    @abstractmethod
    def run(self, targets: list[Target], command: str) -> list[SessionTimes]:
        """All sessions at once; never raises for a session's failure (its ``error`` says)."""

    def close(self) -> None:  # noqa: B027 - most runners keep nothing
        """Release what the runner keeps between runs."""

    def loaded(self, path: Path, load: Callable[[str], T]) -> T:
        """``load(path)`` once per runner (trust files: known_hosts, a CA bundle), so reading
        them is configuration done in the untimed warm-up round, not part of every run."""
        key = (load, str(path))
        if key not in self._loaded:
            self._loaded[key] = load(str(path))
        found: T = self._loaded[key]
        return found


class AsyncRunner(FleetRunner):
    """An asyncio library: one coroutine per session, gathered on one event loop that lives as
    long as the runner (its set-up is not timed)."""

    def __init__(self) -> None:
        super().__init__()
        self._loop = asyncio.new_event_loop()

    def run(self, targets: list[Target], command: str) -> list[SessionTimes]:
        """One iteration: the commands' outputs, concatenated in order."""
        async def fleet() -> list[SessionTimes]:
            return list(await asyncio.gather(
                *(guarded_async(self.session, t, command) for t in targets)))

        return self._loop.run_until_complete(fleet())

    @abstractmethod
    async def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""

    def close(self) -> None:
        """Release what the runner keeps between runs."""
        self._loop.close()


class ThreadedRunner(FleetRunner):
    """A blocking library in a thread pool, one thread per session (as users of paramiko,
    Netmiko and Scrapli's sync drivers scale out)."""

    def run(self, targets: list[Target], command: str) -> list[SessionTimes]:
        """One iteration: the commands' outputs, concatenated in order."""
        with ThreadPoolExecutor(max_workers=len(targets), thread_name_prefix=self.name) as pool:
            return list(pool.map(lambda t: guarded(self.session, t, command), targets))

    @abstractmethod
    def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""


def guarded(session: Any, target: Target, command: str) -> SessionTimes:
    """Run one session; a failure becomes the session's ``error``, never an exception."""
    times = SessionTimes()
    try:
        session(target, command, times)
    except ClientError as exc:
        times.error = str(exc)
    except Exception as exc:  # a library's own error is this session's result
        times.error = f"{type(exc).__name__}: {exc}"
    return times


async def guarded_async(session: Any, target: Target, command: str) -> SessionTimes:
    """Run one asyncio session; a failure becomes the session's ``error``."""
    times = SessionTimes()
    try:
        await session(target, command, times)
    except ClientError as exc:
        times.error = str(exc)
    except Exception as exc:  # a library's own error is this session's result
        times.error = f"{type(exc).__name__}: {exc}"
    return times
