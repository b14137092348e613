"""A PTY shell working through keys already typed lets the event loop run (issue 33): reading
waiting keys never suspends while the channel takes the output, and the soak's shell-typing
attack (400,000 ``?``, a help list each) held every client of the server 4.7-5.9 s. The shell
here reads from a client that typed everything at once and takes all output at once."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.ssh.shell import Terminal


class _Typed:
    """A client's keys, all typed already: a read never waits."""

    def __init__(self, keys: bytes) -> None:
        self.keys = keys

    async def read(self, size: int) -> bytes:
        chunk, self.keys = self.keys[:size], self.keys[size:]
        return chunk


class _TakesAll:
    """A channel that takes every write at once."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, data: bytes) -> None:
        self.size += len(data)

    async def drain(self) -> None:
        return None


class _Process:
    def __init__(self, keys: bytes) -> None:
        self.stdin, self.stdout = _Typed(keys), _TakesAll()


def test_a_burst_of_typed_keys_lets_the_loop_run() -> None:
    """20,000 ``?`` then Enter: the line comes back, every ``?`` answered with its help list,
    and a task beside the shell ran while it worked (before: not once until the line ended)."""
    device = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"), enable_secret="x")
    session = CliSession(device, mode=Mode.PRIV)
    process = _Process(b"?" * 20_000 + b"\r")
    terminal = Terminal(cast(Any, process), max_line=4096)

    async def check() -> tuple[str | None, int]:
        reading = asyncio.ensure_future(terminal.read_line(assist=session))
        turns = 0
        while not reading.done():
            turns += 1
            await asyncio.sleep(0)
        return reading.result(), turns

    line, turns = asyncio.run(check())
    terminal.flush()
    assert line == ""
    assert process.stdout.size > 20_000 * 100  # a help list for each ?
    assert turns > 1, "the shell never let the loop run while it worked"
