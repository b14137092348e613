"""asyncssh at scale: one coroutine per session, ``asyncio.gather`` on one event loop.

Phases: ``connect_exec`` ends when ``create_process`` returns (channel open, exec request
accepted); ``finish`` reads stdout to EOF and waits for the exit status and the channel's close.

The fleet's known_hosts file is read once per runner (``asyncssh.read_known_hosts``, passed to
every ``connect``), as asyncssh's documentation suggests for many connections: a path would be
parsed again by every connection (~8 ms for a 1,000-line file). Login and algorithm options
are the adapter's (:func:`.connect.connect_options`).
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh

from mgmtbench.clients.asyncssh.adapter import AsyncsshClient
from mgmtbench.clients.asyncssh.connect import ERRORS, check, connect_options
from mgmtbench.clients.fleet.base import AsyncRunner, Laps, SessionTimes
from mgmtbench.clients.translate import translate_errors
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

_TIMEOUT = 60


class AsyncsshFleet(AsyncRunner):
    """asyncssh fleet runner: ``asyncio.gather`` of one session per device."""
    name = "asyncssh"
    how = "asyncio.gather, one connection per device, known_hosts read once"
    adapter = AsyncsshClient

    async def session(self, target: Target, command: str, times: SessionTimes) -> None:
        """One session's phases, timed into ``times``."""
        check(target)
        known = (self.loaded(target.known_hosts, asyncssh.read_known_hosts)
                 if target.known_hosts is not None else None)
        laps = Laps(times)
        async with translate_errors(self.name, ERRORS), asyncio.timeout(_TIMEOUT):
            conn = await asyncssh.connect(**connect_options(target, known))
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
