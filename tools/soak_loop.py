"""Soak attacks on the event loop (area ``loop``): output filters a client types that would hold
the loop every client of every device shares.

- ``loop-regex-include``: ``show bulk-output 33 | include .*.*.*.*.*.*.*.*!`` over SSH exec, again
  and again: one 32-character line and an expression a backtracking engine takes seconds on
  (polynomial in the line's length: ``.*`` eight times, then a character the line lacks);
- ``loop-bulk-section``: ``show bulk-output 268435456 | section ZZZZ`` over SSH exec: 256 MiB
  made and filtered, nothing printed (so the channel's window never stops the work);
- ``loop-bulk-section-https``: the same through ``GET /admin/exec/...``.

Sources 127.0.0.30-39 (this area's). ``python tools/soak.py --only loop-regex-include``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from urllib.parse import quote_plus

import asyncssh
from soakbase import Attack, Server, Tally, get, https_request, quietly, ssh_login

#: ``.*`` this many times: about 2 s per 32-character line for Python's ``re`` here.
REGEX_REPEAT = 8
REGEX_COMMAND = f"show bulk-output 33 | include {'.*' * REGEX_REPEAT}!"
BULK_COMMAND = "show bulk-output 268435456 | section ZZZZ"


async def exec_until(server: Server, tally: Tally, stop: float, name: str, command: str,
                     source: str, timeout: float = 60) -> None:
    """Log in once from ``source`` and run ``command`` as SSH exec requests until ``stop`` (a
    new login when the server drops the connection)."""
    while time.monotonic() < stop:
        async def session() -> None:
            async with await ssh_login(server, source) as conn:
                while time.monotonic() < stop:
                    tally.tried[name] += 1
                    with contextlib.suppress(asyncssh.ChannelOpenError):
                        await asyncio.wait_for(conn.run(command), timeout)
        await quietly(session())
        await asyncio.sleep(0.1)


async def regex_include(server: Server, tally: Tally, stop: float) -> None:
    """A backtracking expression on a short line, over SSH exec."""
    await exec_until(server, tally, stop, "loop-regex-include", REGEX_COMMAND, "127.0.0.30")


async def bulk_section(server: Server, tally: Tally, stop: float) -> None:
    """256 MiB of output through ``| section`` that keeps none of it, over SSH exec."""
    await exec_until(server, tally, stop, "loop-bulk-section", BULK_COMMAND, "127.0.0.31")


async def bulk_section_https(server: Server, tally: Tally, stop: float) -> None:
    """256 MiB of output through ``| section`` that keeps none of it, over HTTPS."""
    request = get("/admin/exec/" + quote_plus(BULK_COMMAND))
    while time.monotonic() < stop:
        tally.tried["loop-bulk-section-https"] += 1
        await quietly(https_request(server, request, "127.0.0.32", timeout=60))
        await asyncio.sleep(0.1)


ATTACKS: dict[str, Attack] = {
    "loop-regex-include": regex_include,
    "loop-bulk-section": bulk_section,
    "loop-bulk-section-https": bulk_section_https,
}
