"""What the soak (``tools/soak.py``) and its attack modules (``tools/soak_*.py``) share: the
served emulator, the tally, and raw HTTPS and SSH helpers that talk only to 127.0.0.0/8.

An attack module exports ``ATTACKS``: a name -> ``Attack`` mapping. An attack runs until the
monotonic time ``stop``, counts what it tried in ``tally.tried[...]`` and never raises for what
the server does to it (refusals, resets and time-outs are the point: wrap steps in ``quietly``).
``python tools/soak.py --only NAME`` runs one attack beside the legitimate client, for a
before/after figure; without ``--only`` every attack runs at once.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import resource
import socket
import ssl
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import asyncssh

USER, PASSWORD = "admin", "admin"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    ssh_port: int
    https_port: int
    context: ssl.SSLContext
    log: Path
    ca_file: str
    peak_kib: int = 0
    rss_kib: int = 0

    def sample(self) -> None:
        """Read the server's peak (VmHWM) and current (VmRSS) resident size."""
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return
        peak = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        now = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        if peak:
            self.peak_kib = max(self.peak_kib, int(peak.group(1)))
        if now:
            self.rss_kib = int(now.group(1))


class LegitOperation(NamedTuple):
    """One successful operation of the legitimate client."""

    seconds: float  # how long it took
    started: float  # when it began (monotonic)
    transport: str  # "ssh" or "https"
    login: float  # seconds its SSH login took (0 over HTTPS)


@dataclass
class Tally:
    tried: Counter[str] = field(default_factory=Counter)
    server_errors: int = 0  # HTTP 5xx answers
    legit_ok: Counter[str] = field(default_factory=Counter)  # by transport
    legit_failed: Counter[str] = field(default_factory=Counter)  # after one retry
    legit_first_try_failed: Counter[str] = field(default_factory=Counter)
    legit_reasons: Counter[str] = field(default_factory=Counter)
    legit_done: list[LegitOperation] = field(default_factory=list)  # each successful one


Attack = Callable[[Server, Tally, float], Awaitable[None]]
"""An attack: runs against the server until the monotonic time ``stop``."""

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(workdir: Path, extra: list[str], src: str | None, max_memory: int) -> Server:
    """``mgmtbench serve`` (from ``src``, a PYTHONPATH, or the installed one), its address space
    capped at ``max_memory`` MiB so that a server without limits fails alone, not the machine."""
    ssh_port, https_port = free_port(), free_port()
    log = workdir / "serve.log"
    env = dict(os.environ, PYTHONPATH=src) if src else None

    def cap() -> None:
        limit = max_memory * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", str(ssh_port),
         "--https-port", str(https_port), "--netconf-port", "0", "--gnmi-port", "0",
         "--state-dir", str(workdir / "state"), *extra],
        stdout=subprocess.DEVNULL, stderr=log.open("wb"), cwd=workdir, env=env,
        preexec_fn=cap)
    deadline = time.monotonic() + 30
    while True:
        try:
            for port in (ssh_port, https_port):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("mgmtbench serve did not start: "
                                 f"{log.read_text()[-2000:]}") from None
            time.sleep(0.2)
    ca_file = str(workdir / "state" / "tls" / "ca.pem")
    context = ssl.create_default_context(cafile=ca_file)
    return Server(process, ssh_port, https_port, context, log, ca_file)


async def https_request(server: Server, request: bytes, source: str, timeout: float = 15,
                        read_body: bool = True) -> int:
    """Send one raw HTTPS request on a new connection; the status code (0: none)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", server.https_port, ssl=server.context, local_addr=(source, 0))
        try:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split(b" ", 2)[1])
            length = re.search(rb"content-length: (\d+)", head, re.I)
            if read_body and length:
                await reader.readexactly(int(length.group(1)))
            return status
        finally:
            writer.close()


def get(path: str, auth: str = AUTH) -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: r\r\nAuthorization: {auth}\r\n"
            "Connection: close\r\n\r\n").encode()


def post(body: str, auth: str = AUTH) -> bytes:
    data = body.encode()
    return (f"POST /admin/config HTTP/1.1\r\nHost: r\r\nAuthorization: {auth}\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode() + data


async def ssh_login(server: Server, source: str, **options: object) -> asyncssh.SSHClientConnection:
    return await asyncio.wait_for(asyncssh.connect(
        "127.0.0.1", server.ssh_port, username=USER, password=PASSWORD, known_hosts=None,
        local_addr=(source, 0), **options), 30)


async def quietly(coro: Awaitable[object]) -> None:
    """Run a hostile step; its failures (refusals, resets, time-outs) are the point."""
    with contextlib.suppress(OSError, asyncssh.Error, TimeoutError,
                             asyncio.IncompleteReadError, ValueError):
        await coro
