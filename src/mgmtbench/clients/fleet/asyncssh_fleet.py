"""asyncssh at scale: one coroutine per session, ``asyncio.gather`` on one event loop.

Phases: ``connect_exec`` ends when ``create_process`` returns (channel open, exec request
accepted); ``finish`` reads stdout to EOF and waits for the exit status and the channel's close.

The fleet's known_hosts file is read once per runner (``asyncssh.read_known_hosts``, passed to
every ``connect``), as asyncssh's documentation suggests for many connections: a path would be
parsed again by every connection (~8 ms for a 1,000-line file).
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
    how = "asyncio.gather, one connection per device, known_hosts read once"
    adapter = AsyncsshClient

    async def session(self, target: Target, command: str, times: SessionTimes) -> None:
        import asyncssh

        laps = Laps(times)
        async with asyncio.timeout(_TIMEOUT):
            conn = await asyncssh.connect(
                target.host, port=target.ssh_port, username=target.username,
                password=target.password, client_keys=None, agent_path=None,
                known_hosts=(self.loaded(target.known_hosts, asyncssh.read_known_hosts)
                             if target.known_hosts is not None else None))
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
