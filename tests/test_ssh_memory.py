"""What an SSH client can make the emulator hold is the server's to decide, not the client's:
a huge window on channels whose output is not read, SFTP reads asked for by the hundred and not
taken, ``?`` typed by the hundred thousand. Each test runs ``mgmtbench serve`` as a process on
loopback, reads its peak resident size (VmHWM) and checks what a reader that does read gets."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncssh

from tests.serve_support import Served, serve

CREDENTIALS = ("admin", "admin")  # `mgmtbench serve`'s defaults
WINDOW = 1 << 30
#: What the attacks may add to the server's peak: each made it hold hundreds of MiB to a GiB.
BOUND_KIB = 48 * 1024


def peak_kib(served: Served) -> int:
    status = Path(f"/proc/{served.process.pid}/status").read_text()
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
    assert found is not None
    return int(found.group(1))


@asynccontextmanager
async def login(served: Served, **options: Any) -> AsyncIterator[asyncssh.SSHClientConnection]:
    conn = await asyncssh.connect("127.0.0.1", served.ssh_port, username=CREDENTIALS[0],
                                  password=CREDENTIALS[1], known_hosts=None, **options)
    try:
        yield conn
    finally:
        conn.abort()


def stop_reading(conn: asyncssh.SSHClientConnection) -> None:
    """The client's socket is not read from now on."""
    transport: Any = conn.get_extra_info("transport") or vars(conn)["_transport"]
    transport.pause_reading()


async def settle(seconds: float) -> None:
    await asyncio.sleep(seconds)


def test_a_huge_window_on_unread_channels_holds_little(tmp_path: Path) -> None:
    """4 channels of ``show bulk-output 268435456`` with a 1 GiB window, the socket not read:
    the server held 1.1 GB (asyncssh writes whatever the window allows into the socket's
    buffer); a reader on another connection gets its whole output meanwhile."""
    async def run(served: Served) -> tuple[int, int, int]:
        before = peak_kib(served)
        async with login(served, window=WINDOW) as hostile:
            for _ in range(4):
                await hostile.create_process("show bulk-output 268435456", encoding=None)
            stop_reading(hostile)
            await settle(3)
            async with login(served) as reader:
                got = await asyncio.wait_for(reader.run("show bulk-output 3000000",
                                                        encoding=None), 30)
            assert isinstance(got.stdout, bytes)
            return before, peak_kib(served), len(got.stdout)

    with serve(tmp_path) as served:
        before, peak, read = asyncio.run(run(served))
    assert read >= 3_000_000
    assert peak - before < BOUND_KIB, (before, peak)


def test_sftp_reads_nobody_takes_are_not_made(tmp_path: Path) -> None:
    """400 reads of 16 MiB blocks asked at once, the answers not read: the server answered them
    all into the channel (100 MiB held); now each waits for the one before to leave. A reader
    that reads gets the file whole."""
    content = bytes(range(256)) * (4 * 4096)  # 4 MiB

    async def run(served: Served) -> tuple[int, int, bytes]:
        async with login(served, window=WINDOW) as writer:
            sftp = await writer.start_sftp_client()
            async with sftp.open("flash:/big.bin", "wb") as out:
                await out.write(content)
        before = peak_kib(served)
        async with login(served, window=WINDOW) as hostile:
            sftp = await hostile.start_sftp_client()
            handle = await sftp.open("flash:/big.bin", "rb", block_size=16 << 20)
            stop_reading(hostile)
            reads = [asyncio.ensure_future(handle.read(16 << 20, 0)) for _ in range(400)]
            await settle(3)
            peak = peak_kib(served)
            for read in reads:
                read.cancel()
            await asyncio.gather(*reads, return_exceptions=True)
        async with login(served) as reader:
            sftp = await reader.start_sftp_client()
            async with sftp.open("flash:/big.bin", "rb") as source:
                back = await source.read()
        assert isinstance(back, bytes)
        return before, peak, back

    with serve(tmp_path) as served:
        before, peak, back = asyncio.run(run(served))
    assert back == content
    assert peak - before < BOUND_KIB, (before, peak)


def test_help_typed_to_a_shell_that_is_not_read_waits(tmp_path: Path) -> None:
    """200,000 ``?`` typed (each prints the help list) by a client that reads nothing: the
    shell worked through every key, so the lists piled up in the server (240 MiB for 400,000);
    now the keys wait while the output does. The same shell answers once read again."""
    async def run(served: Served) -> tuple[int, int, bytes]:
        before = peak_kib(served)
        async with login(served, window=WINDOW) as hostile:
            process = await hostile.create_process(term_type="vt100", encoding=None)
            stop_reading(hostile)
            for _ in range(50):
                process.stdin.write(b"?" * 4000)
            await settle(3)
            peak = peak_kib(served)
        async with login(served) as typist:
            shell = await typist.create_process(term_type="vt100", encoding=None)
            shell.stdin.write(b"?")
            seen = await asyncio.wait_for(shell.stdout.readuntil(b"show"), 10)
        assert isinstance(seen, bytes)
        return before, peak, seen

    with serve(tmp_path) as served:
        before, peak, seen = asyncio.run(run(served))
    assert b"show" in seen
    assert peak - before < BOUND_KIB, (before, peak)
