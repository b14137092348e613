"""paramiko at scale: a thread per session (``ThreadPoolExecutor``), as its users scale out.

Phases: ``connect_exec`` ends when ``exec_command`` returns (channel open, exec request accepted);
``finish`` reads stdout to EOF, takes the exit status and closes the channel.
"""

from __future__ import annotations

from typing import Any

from mgmtbench.clients.base import Target
from mgmtbench.clients.fleet.base import Laps, SessionTimes, ThreadedRunner
from mgmtbench.clients.paramiko_client import ParamikoClient

_TIMEOUT = 60


class ParamikoFleet(ThreadedRunner):
    name = "paramiko"
    how = "ThreadPoolExecutor, one thread and one SSHClient per device"
    adapter = ParamikoClient

    def session(self, target: Target, command: str, times: SessionTimes) -> None:
        import paramiko

        laps = Laps(times)
        client = paramiko.SSHClient()
        try:
            if target.known_hosts is not None:
                client.load_host_keys(str(target.known_hosts))
                client.set_missing_host_key_policy(paramiko.RejectPolicy())
            else:
                client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            client.connect(target.host, port=target.ssh_port, username=target.username,
                           password=target.password, look_for_keys=False, allow_agent=False,
                           timeout=_TIMEOUT, banner_timeout=_TIMEOUT, auth_timeout=_TIMEOUT)
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
