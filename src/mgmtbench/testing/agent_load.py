"""N agent clients signing at once: does one ``ssh-agent`` scale past one client?

A :class:`ClientPool` keeps up to ``size`` signing clients, each a worker with a
:class:`~mgmtbench.testing.signers.Signer` of its own (its own agent connection), in **processes**
(so no client waits for another's GIL: the agent is what is measured) or in **threads** (one
interpreter, as a threaded Python program would sign). Workers are started once (untimed) and
kept across benchmarks; processes come from a ``forkserver`` that has imported this module, so a
new worker costs a fork, not an interpreter start.

One measurement is :meth:`ClientPool.prepare` (untimed: each of the first ``n`` workers connects
its signer if the job changed and builds its messages) and then :meth:`ClientPool.burst` (timed):
all ``n`` told to go, each signs its messages back to back, each reports when it started and
ended (``time.perf_counter``, CLOCK_MONOTONIC: one clock for every process), so a test can check
that the ``n`` clients really ran at once.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import struct
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mgmtbench.errors import ClientError, UsageError
from mgmtbench.testing.keys import ClientKeys

#: How the pool runs its clients.
HOW = ("processes", "threads")


@dataclass(frozen=True)
class SignJob:
    """What each client of a burst does: ``count`` signatures of ``size``-byte messages with the
    signer ``signer`` and key ``keys`` (``unique``: every message different; else one message,
    the same for every client and every signature)."""

    signer: str
    agent_socket: Path
    keys: ClientKeys
    size: int
    unique: bool
    count: int

    def connection(self) -> tuple[str, Path, Path]:
        """What a worker's signer depends on (a new one is made only when this changes)."""
        return self.signer, self.agent_socket, self.keys.private


@dataclass(frozen=True)
class ClientTimes:
    """One client's part of a burst: when it started and ended, and how many it signed."""

    start: float
    end: float
    signatures: int


@dataclass(frozen=True)
class Burst:
    """A burst's clients (in worker order) and its wall time as the pool saw it."""

    clients: list[ClientTimes]
    wall: float

    @property
    def signatures(self) -> int:
        """Signatures made by every client together."""
        return sum(c.signatures for c in self.clients)

    def overlapped(self) -> bool:
        """True if every client was signing at one moment (the last to start started before the
        first to end ended)."""
        return max(c.start for c in self.clients) < min(c.end for c in self.clients)


def messages(size: int, unique: bool, count: int, client: int, burst: int) -> list[bytes]:
    """``count`` messages of ``size`` bytes: all different (a client/burst/index header, then
    a fixed random body: no message repeats across clients or bursts) or all the same."""
    body = _BODY * (size // len(_BODY) + 1)
    if not unique:
        return [body[:size]] * count
    header = struct.Struct(">IIQ")
    return [(header.pack(client, burst, i) + body)[:size] for i in range(count)]


_BODY = os.urandom(4096)


def worker(conn: Connection) -> None:
    """A client's loop: ``("prepare", job, client, burst)`` -> ``("ready",)``; ``("go",)`` ->
    ``(start, end, signatures)``; ``("stop",)`` ends it. A failure is answered with
    ``("error", message)`` and ends the worker."""
    from mgmtbench.testing.signers import Signer, signer

    made: Signer | None = None
    connection: tuple[str, Path, Path] | None = None
    todo: list[bytes] = []
    try:
        while True:
            request = conn.recv()
            if request[0] == "stop":
                break
            if request[0] == "prepare":
                job, client, burst = request[1:]
                if job.connection() != connection:
                    if made is not None:
                        made.close()
                    made, connection = None, None
                    made = signer(job.signer, job.agent_socket, job.keys)
                    connection = job.connection()
                todo = messages(job.size, job.unique, job.count, client, burst)
                conn.send(("ready",))
            elif request[0] == "go":
                assert made is not None
                sign = made.sign
                start = time.perf_counter()
                for data in todo:
                    sign(data)
                conn.send((start, time.perf_counter(), len(todo)))
    except Exception as exc:  # reported to the pool, which raises it there
        with contextlib.suppress(OSError):
            conn.send(("error", f"{exc.__class__.__name__}: {exc}"))
    finally:
        if made is not None:
            made.close()
        conn.close()


class ClientPool:
    """Up to ``size`` signing clients in processes or threads (:data:`HOW`)."""

    def __init__(self, size: int, how: str = "processes") -> None:
        if how not in HOW:
            raise UsageError(f"agent clients run in {' or '.join(HOW)}, not {how!r}")
        self.size = size
        self.how = how
        self._conns: list[Connection] = []
        self._workers: list[Any] = []
        self._bursts = 0
        self._ready = 0
        if how == "processes":
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload([__name__, "mgmtbench.testing.signers"])
        for _ in range(size):
            mine, theirs = multiprocessing.Pipe()
            if how == "processes":
                started: Any = context.Process(target=worker, args=(theirs,), daemon=True)
            else:
                started = threading.Thread(target=worker, args=(theirs,), daemon=True)
            started.start()
            if how == "processes":
                theirs.close()
            self._conns.append(mine)
            self._workers.append(started)

    def pids(self, n: int | None = None) -> list[int]:
        """The process ids of the first ``n`` workers (processes only; threads: this one)."""
        if self.how == "threads":
            return [os.getpid()]
        return [int(w.pid) for w in self._workers[:n]]

    def prepare(self, n: int, job: SignJob) -> None:
        """Make the first ``n`` workers ready for a burst of ``job`` (untimed)."""
        if not 1 <= n <= self.size:
            raise UsageError(f"a pool of {self.size} clients cannot run {n}")
        self._bursts += 1
        for client, conn in enumerate(self._conns[:n]):
            conn.send(("prepare", job, client, self._bursts))
        for conn in self._conns[:n]:
            self._answer(conn)
        self._ready = n

    def burst(self) -> Burst:
        """Every prepared worker signs its messages, all at once; their times (timed part)."""
        conns = self._conns[:self._ready]
        start = time.perf_counter()
        for conn in conns:
            conn.send(("go",))
        answers = [self._answer(conn) for conn in conns]
        wall = time.perf_counter() - start
        return Burst([ClientTimes(*a) for a in answers], wall)

    def close(self) -> None:
        """Stop every worker."""
        for conn in self._conns:
            with contextlib.suppress(OSError, ValueError):
                conn.send(("stop",))
        for started in self._workers:
            started.join(timeout=10)
            if self.how == "processes" and started.is_alive():
                started.kill()
                started.join()
        for conn in self._conns:
            conn.close()
        self._conns, self._workers = [], []

    def __enter__(self) -> ClientPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _answer(conn: Connection) -> Any:
        try:
            answer = conn.recv()
        except EOFError:
            raise ClientError("a signing client died without a word") from None
        if answer[0] == "error":
            raise ClientError(f"signing client: {answer[1]}")
        return answer
