"""Descriptors are the process's, shared by every device it serves: connections held on all of
them together stop at what the open-files limit leaves (``Descriptors``), a newcomer from
another address takes the place of the heaviest source's oldest, and the server stays up and
answers everyone else. Runs ``mgmtbench serve --devices 3`` with a low open-files limit."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from contextlib import ExitStack
from pathlib import Path

import asyncssh

from tests.serve_support import Served, serve

CREDENTIALS = ("admin", "admin")
DEVICES = 3
OPEN_FILES = 700
FLAGS = ("--devices", str(DEVICES), "--max-https-connections", "250",
         "--max-https-connections-per-source", "250", "--max-sessions", "100",
         "--max-startups", "10:30:50")


def _hold(port: int, source: str, count: int, stack: ExitStack) -> int:
    """Open ``count`` TCP connections to ``port`` from ``source`` and keep them (no TLS: the
    HTTPS server counts a connection from accept); how many opened."""
    opened = 0
    for _ in range(count):
        sock = socket.socket()
        sock.bind((source, 0))
        try:
            sock.connect(("127.0.0.1", port))
        except OSError:
            sock.close()
            break
        stack.callback(sock.close)
        opened += 1
    return opened


def _https_ok(served: Served, port: int, source: str) -> bool:
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=10,
                                       source_address=(source, 0))
        with served.context.wrap_socket(raw, server_hostname="127.0.0.1") as sock:
            sock.sendall(b"GET /admin/exec/show+clock HTTP/1.1\r\nHost: r\r\n"
                         b"Authorization: Basic YWRtaW46YWRtaW4=\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except (OSError, ssl.SSLError):
        return False


async def _ssh_ok(port: int, source: str) -> bool:
    try:
        async with asyncssh.connect("127.0.0.1", port, username=CREDENTIALS[0],
                                    password=CREDENTIALS[1], known_hosts=None,
                                    local_addr=(source, 0), connect_timeout=10) as conn:
            result = await asyncio.wait_for(conn.run("show clock"), 10)
            return result.exit_status == 0
    except (OSError, asyncssh.Error, TimeoutError):
        return False


def _listening(served: Served) -> None:
    """Wait (bounded) until every device's ports take connections: serve() waits for the
    first device's."""
    deadline = time.monotonic() + 30
    for port in (p + index for p in (served.ssh_port, served.https_port)
                 for index in range(DEVICES)):
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, f"port {port} is not listening"
                time.sleep(0.1)


def test_connections_on_every_device_stop_at_the_process_budget(tmp_path: Path) -> None:
    with serve(tmp_path, *FLAGS, open_files=OPEN_FILES) as served, ExitStack() as stack:
        _listening(served)
        held = sum(_hold(served.https_port + index % DEVICES, f"127.0.0.{80 + index % 3}",
                         220, stack) for index in range(DEVICES))
        time.sleep(1)
        assert served.process.poll() is None
        https = [_https_ok(served, served.https_port + index, "127.0.0.89")
                 for index in range(DEVICES)]
        ssh = [asyncio.run(_ssh_ok(served.ssh_port + index, "127.0.0.89"))
               for index in range(DEVICES)]
        stack.close()
        time.sleep(1)
        after = asyncio.run(_ssh_ok(served.ssh_port, "127.0.0.88"))
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert held == 3 * 220  # accepted by the kernel; the server closes what is over budget
    assert https == [True] * DEVICES, https
    assert ssh == [True] * DEVICES, ssh
    assert after
    assert "Too many open files" not in log
    assert "what its open-files limit leaves" in log
    assert len(log.splitlines()) < 200, "the drops are logged at a bounded rate"
