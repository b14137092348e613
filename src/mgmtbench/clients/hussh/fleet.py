"""Hussh at scale: a thread per session (``ThreadPoolExecutor``), one ``hussh.Connection`` each.

hussh's own multi-host helper, ``hussh.multi_conn.MultiConnection``, is built on its
``AsyncConnection`` (russh), which shares no key exchange with the emulated devices (see
:mod:`.adapter`), so its users' other way is used: threads of blocking ``Connection``s. hussh holds
the GIL for every network wait, so these threads take turns: 10 sessions at regional (30 ms) took
5.15 s against 0.86 s for paramiko's threads and 0.81 s for asyncssh; 100 sessions took 49.9 s
against 9.4 s and 3.3 s (one run each; at local, 12.0 s against 9.4 s and 6.0 s).

``hussh+tuned``'s runner (:class:`HusshFleetTuned`) connects as its adapter does, through socat
with ``TCP_NODELAY``: each connection's 100 ms proxy start-up sleep holds the GIL too, so what the
second channel gains the connects lose: 100 sessions at regional 43.7 s against 48.1 s as
shipped, 10 sessions 4.36 s against 4.69 s; at local, 10 sessions 1.45 s against 1.26 s (one
run each).

Phases: ``execute`` opens the channel, runs the command and reads all of it, so ``connect_exec``
includes reading the first output (``finish`` is None) and ``exec_again`` the second
(``read_output`` is None).
"""

from __future__ import annotations

from typing import ClassVar

from mgmtbench.clients.fleet.base import Laps, SessionTimes, ThreadedRunner
from mgmtbench.clients.hussh.adapter import (
    HusshClient,
    HusshClientTuned,
    check,
    connect,
    translating,
)
from mgmtbench.clients.hussh.knobs import PROXY_NODELAY
from mgmtbench.targets import Target

_TIMEOUT_MS = 60_000


class HusshFleet(ThreadedRunner):
    """hussh fleet runner: one ``Connection`` per device in a thread pool."""
    name = "hussh"
    how = "ThreadPoolExecutor, one thread and one hussh.Connection per device"
    adapter = HusshClient
    merged: ClassVar[dict[str, str]] = {"finish": "connect_exec", "read_output": "exec_again"}

    def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""
        check(target)
        laps = Laps(times)
        with translating(self.name):
            conn = connect(target, _TIMEOUT_MS,
                           proxy_nodelay=self.adapter.tuned_with(PROXY_NODELAY.name))
            try:
                first = conn.execute(command).stdout
                laps.lap("connect_exec")
                laps.skip("finish")
                second = conn.execute(command).stdout
                laps.lap("exec_again")
                laps.skip("read_output")
            finally:
                conn.close()
        laps.lap("close")
        times.record(first, second)


class HusshFleetTuned(HusshFleet):
    """hussh fleet runner with every knob of ``hussh+tuned`` (its connections through socat)."""
    name = HusshClientTuned.name
    adapter = HusshClientTuned
