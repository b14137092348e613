"""Raw channel throughput on SSH exec channels: a sink and a source, spelled as Unix commands so
the same exec request means the same thing on the emulator and on a real OpenSSH ``sshd``.

- ``cat > /dev/null``: read the channel's data until EOF, discard it, exit 0 (no output);
- ``head -c N /dev/zero`` (N a decimal byte count, at most :data:`MAX_SOURCE_BYTES`): write N
  zero bytes to stdout, exit 0; a larger N gets one line on stderr and exit status 1.

Only these exact strings, and only as exec requests: the CLI (shell, HTTPS) never sees them. Data
moves in large chunks with no per-byte Python work; the source waits on the channel's flow
control (``drain``) after every chunk, so it never holds more than a chunk and the window. The
source watches the client's window meanwhile (:mod:`.windows`).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import asyncssh

from mgmtbench.emulator.ssh.windows import WindowWatch

#: The sink's exec request.
SINK_COMMAND = "cat > /dev/null"
#: The largest N the source accepts (1 GiB): more is refused without allocating anything.
MAX_SOURCE_BYTES = 1 << 30
_SOURCE = re.compile(r"head -c ([0-9]{1,20}) /dev/zero")
#: How much the sink asks for per read and the source writes per chunk. Profiled on loopback
#: (64 MB, OpenSSH client, aes128-gcm): the sink's reads are ~6 % of the server's CPU time and the
#: source's writes ~2 %, the rest is asyncssh's packet layer and the cipher; 16 KiB-1 MiB reads
#: and 32 KiB-1 MiB writes measured the same within the noise. A read returns what has arrived
#: (it does not wait to fill), so the size only bounds a read; 256 KiB writes are split into
#: packets by asyncssh under the peer's window.
READ_SIZE = 1 << 16
WRITE_SIZE = 1 << 18
_ZEROS = bytes(WRITE_SIZE)



@dataclass(frozen=True)
class Transfer:
    """What one sink or source request did: its exit status, the payload bytes it read from and
    wrote to the channel, and (the source) what it saw of the client's window."""

    status: int
    received: int = 0
    sent: int = 0
    window: WindowWatch | None = None


Handler = Callable[[asyncssh.SSHServerProcess[bytes]], Awaitable[Transfer]]


def source_command(size: int) -> str:
    """The exec request that asks for ``size`` zero bytes."""
    return f"head -c {size} /dev/zero"


def bulk_handler(command: str) -> Handler | None:
    """The handler for a sink or source exec request, or None when ``command`` is neither."""
    if command == SINK_COMMAND:
        return sink
    found = _SOURCE.fullmatch(command)
    if found is None:
        return None
    size = int(found.group(1))

    async def run(process: asyncssh.SSHServerProcess[bytes]) -> Transfer:
        return await source(process, size)

    return run


async def sink(process: asyncssh.SSHServerProcess[bytes]) -> Transfer:
    """Read and discard the channel's data until EOF; exit status 0."""
    read = process.stdin.read
    received = 0
    while chunk := await read(READ_SIZE):
        received += len(chunk)
    return Transfer(0, received=received)


async def source(process: asyncssh.SSHServerProcess[bytes], size: int) -> Transfer:
    """Write ``size`` zero bytes in chunks, waiting for the window after each; exit status 0
    (1, with a line on stderr, if ``size`` is over :data:`MAX_SOURCE_BYTES`)."""
    if size > MAX_SOURCE_BYTES:
        process.stderr.write(f"head: {size} bytes: the source's limit is {MAX_SOURCE_BYTES} "
                             "bytes\n".encode())
        return Transfer(1)
    stdout = process.stdout
    watch = WindowWatch(process.channel)
    try:
        whole, rest = divmod(size, WRITE_SIZE)
        for _ in range(whole):
            stdout.write(_ZEROS)
            await stdout.drain()
        if rest:
            stdout.write(_ZEROS[:rest])
            await stdout.drain()
    finally:
        watch.stop()
    return Transfer(0, sent=size, window=watch)
