"""Fleet runners made of a single-session adapter in a thread pool: for libraries whose users run
one session object per device in threads (Netmiko, Scrapli's sync drivers, ``ssh`` processes).

Each session is the adapter's mode that keeps a session (``pty-kept`` for the PTY libraries,
``reuse-conn`` for ``ssh`` processes): ``setup`` (connect, log in, prepare the session),
``run`` the command, ``run`` it again, ``teardown``. These APIs start a command and read all of
its output in one call, so ``connect_exec`` includes reading the first output (``finish`` is
``None``) and ``exec_again`` includes reading the second (``read_output`` is ``None``).
"""

from __future__ import annotations

from typing import ClassVar

from mgmtbench.clients.base import Client
from mgmtbench.clients.fleet.base import Laps, SessionTimes, ThreadedRunner
from mgmtbench.targets import Service, Target


class AdaptedFleet(ThreadedRunner):
    """A fleet runner that runs a single-session adapter per device in a thread pool."""
    adapter: ClassVar[type[Client]]
    #: The adapter's mode that keeps one session across commands.
    mode: ClassVar[str]
    merged: ClassVar[dict[str, str]] = {"finish": "connect_exec", "read_output": "exec_again"}

    @classmethod
    def service(cls) -> Service:
        """What the adapter's kept-session mode asks of a device."""
        return cls.adapter.service(cls.mode)

    def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""
        client = self.adapter(target, self.mode)
        laps = Laps(times)
        try:
            client.setup()
            first = client.run([command])
            laps.lap("connect_exec")
            laps.skip("finish")
            second = client.run([command])
            laps.lap("exec_again")
            laps.skip("read_output")
        finally:
            client.teardown()
        laps.lap("close")
        times.record(first, second)
