"""The proxy's SSH side: connect to a device and run one request's commands on the connection.

asyncssh, because the proxy is one asyncio process that serves HTTPS (Hypercorn) and holds many
SSH connections at once: channels, PTYs and connection state are all on the same loop, with no
thread per connection, and asyncssh is already the emulator's SSH server and a benchmarked
client here (its login options and error translation, :mod:`mgmtbench.clients.asyncssh.connect`,
are reused as they are).

A request's commands run on one connection, as :class:`~mgmtbench.proxy.inventory.ProxyDevice`
says: an exec channel per command (the study's proxy), or one shell for all of them. A ``POST
/admin/config`` body is run in configuration mode: over exec only when every line is a ``show``
command (which the device answers the same in either mode); a body that configures goes through
a shell, ``configure terminal`` ... ``end``.

What a device sends is read a chunk at a time and handed to the caller's ``sink`` as it comes
(the API sends it on to the client, waiting while the client's connection is full, so the SSH
channel's window closes and the device waits too: backpressure end to end, the memory of a chunk
or a command's output, not of the whole answer). It is also counted against the request's
output cap (``max_output``): past it the channel is closed and :class:`OutputTooLarge` raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import asyncssh

from mgmtbench.clients.asyncssh import connect as asyncssh_connect
from mgmtbench.clients.pty import FIRST_PROMPT, AsyncPty
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.proxy.inventory import ProxyDevice
from mgmtbench.targets import Login, Target, make_target

_CHUNK = 65536
#: Where a request's output goes, a piece at a time.
Sink = Callable[[bytes], Awaitable[None]]


class OutputTooLarge(Exception):
    """A request's device output went past the proxy's cap."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"device output over {limit} bytes (the proxy's --max-output)")
        self.limit = limit


class _Budget:
    """Bytes of device output a request may still receive."""

    def __init__(self, limit: int) -> None:
        self.limit, self.left = limit, limit

    def take(self, data: bytes) -> bytes:
        self.left -= len(data)
        if self.left < 0:
            raise OutputTooLarge(self.limit)
        return data


def device_target(device: ProxyDevice, login: Login) -> Target:
    """The SSH target for ``device``, logging in as ``login``."""
    return make_target(device.address, device.port, 443, platform=device.platform, login=login)


def translating(device: ProxyDevice) -> Translator:
    """asyncssh's errors as mgmtbench's (``AuthenticationFailed``, ``ConnectionFailed``,
    ``ClientTimeout`` ...), named after the device."""
    return translate_errors(f"ssh to {device.name} ({device.address})", asyncssh_connect.ERRORS)


async def connect(device: ProxyDevice, target: Target, known_hosts: Any,
                  timeout: float) -> asyncssh.SSHClientConnection:
    """A new SSH connection to ``device`` (host key checked against ``known_hosts``: a parsed
    known_hosts, or None for no check)."""
    async with translating(device):
        options = asyncssh_connect.connect_options(target, known_hosts)
        conn: asyncssh.SSHClientConnection = await asyncssh.connect(
            **options, connect_timeout=timeout)
        return conn


def is_show(line: str) -> bool:
    """Whether a line is a ``show`` command (``sh ver`` and ``do show`` too)."""
    words = line.split()
    if words and words[0] == "do":
        words = words[1:]
    return bool(words) and len(words[0]) >= 2 and "show".startswith(words[0].lower())


async def run_commands(conn: asyncssh.SSHClientConnection, device: ProxyDevice, target: Target,
                       commands: list[str], config: bool, timeout: float,
                       max_output: int, sink: Sink) -> None:
    """Run one request's ``commands`` (``config``: a configuration body) on ``conn``; their
    outputs, in order, to ``sink`` as the device's HTTPS API answers them
    (:class:`OutputTooLarge` past ``max_output`` bytes)."""
    lines = [c for c in commands if c.strip()]
    budget = _Budget(max_output)
    async with translating(device):
        if device.uses_exec and not (config and not all(is_show(c) for c in lines)):
            for line in lines:
                await _exec(conn, line, timeout, budget, sink)
            return
        await _in_shell(conn, target, lines, config, timeout, budget, sink)


async def _exec(conn: asyncssh.SSHClientConnection, command: str, timeout: float,
                budget: _Budget, sink: Sink) -> None:
    """One exec channel's output to ``sink``, a chunk at a time within the budget (bytes that
    are not ASCII become ``?``, as the answer's charset says)."""
    async with asyncio.timeout(timeout):
        process = await conn.create_process(command, encoding=None)
        try:
            while chunk := await process.stdout.read(_CHUNK):
                await sink(budget.take(bytes(chunk)).decode("ascii", "replace")
                           .encode("ascii", "replace"))
            await process.wait_closed()
        finally:
            process.close()


async def _in_shell(conn: asyncssh.SSHClientConnection, target: Target, lines: list[str],
                    config: bool, timeout: float, budget: _Budget, sink: Sink) -> None:
    shell = await conn.create_process(term_type="vt100", term_size=(511, 24), encoding=None)

    async def send(data: bytes) -> None:
        shell.stdin.write(data)
        await shell.stdin.drain()

    async def recv() -> bytes:
        async with asyncio.timeout(timeout):
            return budget.take(bytes(await shell.stdout.read(_CHUNK)))

    pty = AsyncPty(send, recv, timeout)
    try:
        await pty.prepare(target)
        if config:
            await pty.command("configure terminal")
            pty.prompt = FIRST_PROMPT  # any host's: a body may change the hostname
        for line in lines:
            await sink((await pty.command(line)).encode("ascii", "replace"))
        if config:
            await pty.command("end")
    finally:
        shell.close()
