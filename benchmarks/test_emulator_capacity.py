"""How many SSH sessions one emulator process holds, and what an idle session costs in memory.

The emulator runs as ``mgmtbench serve`` in its own process, so its RSS is its own. Each round
opens N connections concurrently, each with an interactive shell waiting at the prompt, runs
``show version`` on every one, and holds them all open while the emulator's RSS is read.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.testing import record
from mgmtbench.testing.shell import PROMPT


def rss_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert found is not None
    return int(found.group(1))


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[int, int]]:
    """(pid, ssh port) of a ``mgmtbench serve`` process."""
    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0",
         "--password", "pw",
         # 200 logins at once from one address: beyond OpenSSH's MaxStartups 10:30:100 and
         # the per-source limit, which would drop most of them as a real sshd does.
         "--max-startups", "400:30:400", "--max-startups-per-source", "400"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    port = 0
    for line in process.stdout:
        found = re.search(r"ssh -p (\d+)", line)
        port = int(found.group(1)) if found else port
        if line.startswith("Press Ctrl-C"):
            break
    assert port, "mgmtbench serve did not start"
    yield process.pid, port
    process.terminate()
    process.wait(timeout=15)
    process.stdout.close()


Held = list[tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[bytes]]]


async def open_sessions(port: int, count: int) -> tuple[Held, int]:
    """Open ``count`` shells at once and run ``show version`` on each; (held, errors)."""

    async def one() -> tuple[asyncssh.SSHClientConnection, asyncssh.SSHClientProcess[bytes]]:
        conn = await asyncssh.connect("127.0.0.1", port, username="admin", password="pw",
                                      known_hosts=None)
        process = await conn.create_process(term_type="vt100", encoding=None)
        buffer = b""
        process.stdin.write(b"terminal length 0\rshow version\r")
        while not (PROMPT.search(buffer) and b"uptime" in buffer):
            chunk = await process.stdout.read(65536)
            if not chunk:
                raise EOFError("session closed")
            buffer += chunk
        return conn, process

    results = await asyncio.gather(*(one() for _ in range(count)), return_exceptions=True)
    held = [r for r in results if not isinstance(r, BaseException)]
    return held, len(results) - len(held)


async def close_sessions(held: Held) -> None:
    for conn, _ in held:
        conn.close()
    await asyncio.gather(*(conn.wait_closed() for conn, _ in held))


@pytest.mark.parametrize("sessions", [1, 200])
def test_concurrent_idle_sessions(benchmark: BenchmarkFixture, served: tuple[int, int],
                                  sessions: int, capsys: pytest.CaptureFixture[str]) -> None:
    pid, port = served
    baseline = rss_kib(pid)
    loop = asyncio.new_event_loop()
    held: Held = []
    errors = 0
    peak = baseline

    def release() -> None:
        """Untimed, between rounds: read the emulator's RSS with every session idle, then close."""
        nonlocal peak
        if held:
            loop.run_until_complete(asyncio.sleep(0.3))
            peak = max(peak, rss_kib(pid))
            loop.run_until_complete(close_sessions(held))
            held.clear()

    def open_round() -> None:
        nonlocal errors
        opened, failed = loop.run_until_complete(open_sessions(port, sessions))
        held.extend(opened)
        errors += failed

    benchmark.group = "emulator: open N shells at once and run show version on each"
    try:
        benchmark.pedantic(open_round, setup=release, rounds=3, warmup_rounds=1)
        count = len(held)
        release()
    finally:
        loop.run_until_complete(close_sessions(held))
        loop.close()
    per_session = (peak - baseline) / sessions
    record(benchmark, "emulator-capacity", sessions=sessions, errors=errors,
           emulator_rss_kib_idle=baseline, emulator_rss_kib_with_sessions=peak,
           rss_kib_per_session=round(per_session, 1))
    with capsys.disabled():
        print(f"\n{sessions} concurrent shells: held {count}, errors {errors}, emulator RSS "
              f"{baseline} -> {peak} KiB ({per_session:.1f} KiB per idle session)")
    assert errors == 0
    assert count == sessions
