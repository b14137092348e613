"""asyncssh at scale: one coroutine per session, ``asyncio.gather`` on one event loop.

Phases: ``connect_exec`` ends when ``create_process`` returns (channel open, exec request
accepted); ``finish`` reads stdout to EOF and waits for the exit status and the channel's close.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mgmtbench.clients.asyncssh_client import AsyncsshClient
from mgmtbench.clients.base import ClientError, Target
from mgmtbench.clients.fleet.base import AsyncRunner, Laps, SessionTimes

_TIMEOUT = 60


class AsyncsshFleet(AsyncRunner):
    name = "asyncssh"
    how = "asyncio.gather, one connection per device"
    adapter = AsyncsshClient

    async def session(self, target: Target, command: str, times: SessionTimes) -> None:
        import asyncssh

        laps = Laps(times)
        async with asyncio.timeout(_TIMEOUT):
            conn = await asyncssh.connect(
                target.host, port=target.ssh_port, username=target.username,
                password=target.password, client_keys=None, agent_path=None,
                known_hosts=str(target.known_hosts) if target.known_hosts else None)
            try:
                process = await conn.create_process(command, encoding=None)
                laps.lap("connect_exec")
                times.record(await _finish(process))
                laps.lap("finish")
                process = await conn.create_process(command, encoding=None)
                laps.lap("exec_again")
                times.record(await _finish(process))
                laps.lap("read_output")
            finally:
                conn.close()
                await conn.wait_closed()
        laps.lap("close")


async def _finish(process: Any) -> bytes:
    """The rest of the output, the exit status, the channel closed."""
    data = bytes(await process.stdout.read())
    await process.wait()
    if process.exit_status is None:
        raise ClientError("asyncssh: the channel closed without an exit status")
    process.close()
    await process.wait_closed()
    return data
