"""paramiko at scale: a thread per session (``ThreadPoolExecutor``), as its users scale out.

Phases: ``connect_exec`` ends when ``exec_command`` returns (channel open, exec request accepted);
``finish`` reads stdout to EOF, takes the exit status and closes the channel. Connecting is the
adapter's (:func:`.connect.connect`), with the fleet's longer time-outs, and the knobs of the
runner's adapter: ``paramiko+tuned``'s runner connects with ``TCP_NODELAY`` as its adapter does.
"""

from __future__ import annotations

from typing import Any

from mgmtbench.clients.fleet.base import Laps, SessionTimes, ThreadedRunner
from mgmtbench.clients.paramiko.adapter import ParamikoClient, ParamikoClientTuned
from mgmtbench.clients.paramiko.connect import ERRORS, connect
from mgmtbench.clients.paramiko.knobs import TCP_NODELAY
from mgmtbench.clients.translate import translate_errors
from mgmtbench.targets import Target

_TIMEOUT = 60


class ParamikoFleet(ThreadedRunner):
    """paramiko fleet runner: one SSHClient per device in a thread pool."""
    name = "paramiko"
    how = "ThreadPoolExecutor, one thread and one SSHClient per device"
    adapter = ParamikoClient

    def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""
        laps = Laps(times)
        with translate_errors(self.name, ERRORS):
            client = connect(target, timeout=_TIMEOUT, banner_timeout=_TIMEOUT,
                             auth_timeout=_TIMEOUT,
                             nodelay=self.adapter.tuned_with(TCP_NODELAY.name))
            try:
                transport = client.get_transport()
                assert transport is not None
                channel = _exec(transport, command)
                laps.lap("connect_exec")
                times.record(_finish(channel))
                laps.lap("finish")
                channel = _exec(transport, command)
                laps.lap("exec_again")
                times.record(_finish(channel))
                laps.lap("read_output")
            finally:
                client.close()
        laps.lap("close")


class ParamikoFleetTuned(ParamikoFleet):
    """paramiko fleet runner with every knob of ``paramiko+tuned``."""
    name = ParamikoClientTuned.name
    adapter = ParamikoClientTuned


def _exec(transport: Any, command: str) -> Any:
    channel = transport.open_session(timeout=_TIMEOUT)
    channel.settimeout(_TIMEOUT)
    channel.exec_command(command)
    return channel


def _finish(channel: Any) -> bytes:
    chunks = []
    while data := channel.recv(65536):
        chunks.append(data)
    channel.recv_exit_status()
    channel.close()
    return b"".join(chunks)
