"""Soak attacks on the emulator's memory (area ``mem``): clients that make the server hold
what they do not read, each from its own address (127.0.0.60-69).

- ``mem-ssh-window``: a login that grants a 1 GiB window on 4 channels, asks each for
  ``show bulk-output 268435456`` and stops reading its socket for 20 s;
- ``mem-sftp-reads``: a 4 MiB file written over SFTP, then 400 reads of it asked for at once,
  each for a 16 MiB block, with the client's socket not read for 20 s;
- ``mem-shell-typing``: 400 KB typed into a PTY shell without pressing Enter, 4 KB at a time,
  the echo read as it comes; and 400 KB of ``?`` (each prints the help list) into another,
  its socket not read.

``python tools/soak.py --only mem-ssh-window`` runs one beside the legitimate client; its
RSS lines are the figures (idle, peak, after the settle).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import asyncssh
from soakbase import Attack, Server, Tally, quietly, ssh_login

WINDOW = 1 << 30
HOLD = 20.0


def _stop_reading(conn: asyncssh.SSHClientConnection) -> None:
    """The client's socket is no longer read: what the server sends stays in its buffers."""
    transport: Any = getattr(conn, "_transport", None)
    if transport is not None:
        transport.pause_reading()


async def ssh_window(server: Server, tally: Tally, stop: float) -> None:
    """A GiB window on 4 channels of 256 MiB output each, nothing read."""
    while time.monotonic() < stop:
        async def once() -> None:
            conn = await ssh_login(server, "127.0.0.60", window=WINDOW)
            try:
                for _ in range(4):
                    tally.tried["mem-ssh-window"] += 1
                    await conn.create_process("show bulk-output 268435456", encoding=None)
                _stop_reading(conn)
                await asyncio.sleep(min(HOLD, max(0.0, stop - time.monotonic())))
            finally:
                conn.abort()
        await quietly(once())
        await asyncio.sleep(1)


async def sftp_reads(server: Server, tally: Tally, stop: float) -> None:
    """400 outstanding 16 MiB reads of a 4 MiB file, the answers not read."""
    while time.monotonic() < stop:
        async def once() -> None:
            conn = await ssh_login(server, "127.0.0.61", window=WINDOW)
            try:
                sftp = await conn.start_sftp_client()
                async with sftp.open("flash:/soak.bin", "wb") as out:
                    await out.write(b"x" * (4 << 20))
                handle = await sftp.open("flash:/soak.bin", "rb", block_size=16 << 20)
                _stop_reading(conn)
                reads = [asyncio.ensure_future(handle.read(16 << 20, 0)) for _ in range(400)]
                tally.tried["mem-sftp-reads"] += len(reads)
                await asyncio.sleep(min(HOLD, max(0.0, stop - time.monotonic())))
                for read in reads:
                    read.cancel()
                await asyncio.gather(*reads, return_exceptions=True)
            finally:
                conn.abort()
        await quietly(once())
        await asyncio.sleep(1)
    await quietly(_remove(server, "flash:/soak.bin"))  # the device left as it was found


async def _remove(server: Server, path: str) -> None:
    conn = await ssh_login(server, "127.0.0.61")
    try:
        sftp = await conn.start_sftp_client()
        await sftp.remove(path)
    finally:
        conn.abort()


async def _typing(server: Server, tally: Tally, stop: float, name: str, source: str,
                  typed: bytes, read: bool) -> None:
    """``typed`` 100 times into a PTY shell (the echo read or not)."""
    conn = await ssh_login(server, source, window=WINDOW)
    try:
        process = await conn.create_process(term_type="vt100", encoding=None)

        async def drain() -> None:
            with contextlib.suppress(asyncssh.Error, OSError):
                while await process.stdout.read(65536):
                    pass

        reader = asyncio.ensure_future(drain()) if read else None
        if not read:
            _stop_reading(conn)
        for _ in range(100):
            if time.monotonic() >= stop:
                break
            tally.tried[name] += 1
            process.stdin.write(typed)
            await asyncio.wait_for(process.stdin.drain(), 30)
            await asyncio.sleep(0.05)
        if reader is not None:
            reader.cancel()
        else:
            await asyncio.sleep(min(HOLD, max(0.0, stop - time.monotonic())))
    finally:
        conn.abort()


async def shell_typing(server: Server, tally: Tally, stop: float) -> None:
    """400 KB typed on a line that never ends, the echo read; and 400 KB of ``?`` (a help
    list each) with nothing read."""
    while time.monotonic() < stop:
        await asyncio.gather(
            quietly(_typing(server, tally, stop, "mem-shell-typing", "127.0.0.62", b"a" * 4000,
                            True)),
            quietly(_typing(server, tally, stop, "mem-shell-typing", "127.0.0.63", b"?" * 4000,
                            False)))
        await asyncio.sleep(1)


ATTACKS: dict[str, Attack] = {
    "mem-ssh-window": ssh_window,
    "mem-sftp-reads": sftp_reads,
    "mem-shell-typing": shell_typing,
}
