"""Soak the emulator with a hostile mix beside a legitimate client, then print what happened.

    python tools/soak.py                 # 60 s
    python tools/soak.py --minutes 10
    nox -s soak -- --minutes 10

Starts ``mgmtbench serve`` (default limits) on loopback and, for the given time, runs at once:

- a legitimate client from 127.0.0.1: SSH login + ``show version`` and an HTTPS GET in turn,
  each retried once on a connection error (as automation tools do), and its error rate;
- idle TCP connections to both ports, kept open (127.0.0.2);
- garbage: random bytes as SSH and as TLS, half-open TLS handshakes (127.0.0.3);
- POST bodies sent a byte a second (127.0.0.4);
- password guessing over SSH and HTTPS (127.0.0.5);
- 256 MiB outputs asked for and never read, over SSH exec and HTTPS (127.0.0.6, logged in);
- configuration floods: 8,000 new lines in one POST and their removal, an 11,000-line POST,
  and 20 channels on one SSH connection (127.0.0.7, logged in).

Prints requests tried, crashes (the server exiting, tracebacks or ERROR lines in its log, HTTP
5xx answers), the server's peak RSS and log size, and the legitimate client's error rate per
transport; exits 1 on a crash or over ``--max-legit-errors``. Every connection has a time-out
and the run stops itself; nothing leaves 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import random
import re
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

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
    peak_kib: int = 0

    def sample(self) -> None:
        try:
            status = Path(f"/proc/{self.process.pid}/status").read_text()
        except OSError:
            return
        found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.M)
        if found:
            self.peak_kib = max(self.peak_kib, int(found.group(1)))


@dataclass
class Tally:
    tried: Counter[str] = field(default_factory=Counter)
    server_errors: int = 0  # HTTP 5xx answers
    legit_ok: Counter[str] = field(default_factory=Counter)  # by transport
    legit_failed: Counter[str] = field(default_factory=Counter)  # after one retry
    legit_first_try_failed: Counter[str] = field(default_factory=Counter)
    legit_reasons: Counter[str] = field(default_factory=Counter)


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
         "--https-port", str(https_port), "--state-dir", str(workdir / "state"), *extra],
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
    context = ssl.create_default_context(cafile=str(workdir / "state" / "tls" / "ca.pem"))
    return Server(process, ssh_port, https_port, context, log)


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


# --- the legitimate client ------------------------------------------------------------------


async def legit(server: Server, tally: Tally, stop: float) -> None:
    turn = 0
    while time.monotonic() < stop:
        turn += 1
        transport = "ssh" if turn % 2 else "https"
        for attempt in (1, 2):
            tally.tried["legit"] += 1
            try:
                if turn % 2:
                    async with await ssh_login(server, "127.0.0.1") as conn:
                        result = await asyncio.wait_for(conn.run("show version"), 30)
                        ok = result.exit_status == 0 and "uptime" in str(result.stdout)
                else:
                    status = await https_request(server, get("/admin/exec/show+version"),
                                                 "127.0.0.1")
                    ok = status == 200
                    tally.server_errors += status >= 500
                reason = "" if ok else "wrong answer"
            except (OSError, asyncssh.Error, TimeoutError, asyncio.IncompleteReadError) as exc:
                ok, reason = False, type(exc).__name__
            if ok:
                tally.legit_ok[transport] += 1
                break
            tally.legit_reasons[f"{transport} {reason}"] += 1
            if attempt == 1:
                tally.legit_first_try_failed[transport] += 1
            else:
                tally.legit_failed[transport] += 1
        await asyncio.sleep(0.2)


# --- the hostile mix ------------------------------------------------------------------------


async def quietly(coro: Awaitable[object]) -> None:
    """Run a hostile step; its failures (refusals, resets, time-outs) are the point."""
    with contextlib.suppress(OSError, asyncssh.Error, TimeoutError,
                             asyncio.IncompleteReadError, ValueError):
        await coro


async def idle(server: Server, tally: Tally, stop: float) -> None:
    held: list[socket.socket] = []
    while time.monotonic() < stop:
        held = [s for s in held if _alive(s)]
        while len(held) < 200:
            tally.tried["idle"] += 1
            port = random.choice((server.ssh_port, server.https_port))
            sock = socket.socket()
            sock.setblocking(False)
            sock.bind(("127.0.0.2", 0))
            try:
                sock.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            except OSError:
                sock.close()
                break
            held.append(sock)
        await asyncio.sleep(1)
    for sock in held:
        sock.close()


def _alive(sock: socket.socket) -> bool:
    try:
        if sock.recv(4096, socket.MSG_PEEK) == b"":
            sock.close()
            return False
    except BlockingIOError:
        return True
    except OSError:
        sock.close()
        return False
    with contextlib.suppress(OSError):
        sock.recv(65536)  # discard the banner so the next peek sees a close
    return True


async def garbage(server: Server, tally: Tally, stop: float) -> None:
    while time.monotonic() < stop:
        tally.tried["garbage"] += 1
        port = random.choice((server.ssh_port, server.https_port))
        payload = random.choice([
            os.urandom(random.randint(1, 4096)),
            b"SSH-2.0-x\r\n" + os.urandom(2048),
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc" + os.urandom(100),  # a broken ClientHello
            b"GET / HTTP/1.1\r\n\r\n",
        ])

        async def one(port: int = port, payload: bytes = payload) -> None:
            async with asyncio.timeout(5):
                reader, writer = await asyncio.open_connection(
                    "127.0.0.1", port, local_addr=("127.0.0.3", 0))
                writer.write(payload)
                await writer.drain()
                await reader.read(4096)
                writer.close()

        await quietly(one())
        await asyncio.sleep(0.02)


async def slow_posts(server: Server, tally: Tally, stop: float) -> None:
    async def one() -> None:
        tally.tried["slow post"] += 1
        async with asyncio.timeout(max(1.0, stop - time.monotonic())):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", server.https_port, ssl=server.context,
                local_addr=("127.0.0.4", 0))
            writer.write(f"POST /admin/config HTTP/1.1\r\nHost: r\r\nAuthorization: {AUTH}\r\n"
                         "Content-Length: 100000\r\n\r\n".encode())
            while not reader.at_eof():
                writer.write(b"x")
                await writer.drain()
                try:
                    async with asyncio.timeout(1):
                        if await reader.read(4096):
                            break
                except TimeoutError:
                    pass
            writer.close()

    while time.monotonic() < stop:
        await asyncio.gather(*(quietly(one()) for _ in range(20)))


class _Guesser(asyncssh.SSHClient):
    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def password_auth_requested(self) -> str:
        self.tally.tried["ssh guess"] += 1
        return f"guess{random.random()}"


async def guessing(server: Server, tally: Tally, stop: float) -> None:
    async def ssh() -> None:
        while time.monotonic() < stop:
            await quietly(asyncio.wait_for(asyncssh.connect(
                "127.0.0.1", server.ssh_port, username=USER, known_hosts=None,
                preferred_auth="password", client_factory=lambda: _Guesser(tally),
                local_addr=("127.0.0.5", 0)), 30))

    async def https() -> None:
        wrong = "Basic " + base64.b64encode(b"admin:guess").decode()
        while time.monotonic() < stop:
            tally.tried["https guess"] += 1
            await quietly(https_request(server, get("/admin/exec/show+clock", wrong),
                                        "127.0.0.5"))

    await asyncio.gather(*(ssh() for _ in range(4)), *(https() for _ in range(4)))


async def unread(server: Server, tally: Tally, stop: float) -> None:
    async def ssh() -> None:
        conn = await ssh_login(server, "127.0.0.6")
        try:
            await conn.create_process("show bulk-output 268435456", encoding=None)
            await asyncio.sleep(5)
        finally:
            conn.abort()

    async def https() -> None:
        async with asyncio.timeout(15):
            _, writer = await asyncio.open_connection(
                "127.0.0.1", server.https_port, ssl=server.context, local_addr=("127.0.0.6", 0))
            writer.write(get("/admin/exec/" + "/".join(["show+bulk-output+268435456"] * 500)))
            await asyncio.sleep(5)
            writer.transport.abort()

    while time.monotonic() < stop:
        tally.tried["unread output"] += 4
        await asyncio.gather(quietly(ssh()), quietly(ssh()), quietly(https()), quietly(https()))


async def floods(server: Server, tally: Tally, stop: float) -> None:
    round_ = 0
    while time.monotonic() < stop:
        round_ += 1
        lines = [f"ip route 10.{round_ % 200}.{i // 256}.{i % 256} 255.255.255.255 Null0"
                 for i in range(8000)]
        for body in ("\n".join(lines), "\n".join("no " + line for line in lines),
                     "\n".join(lines + lines[:3000])):
            tally.tried["config flood"] += 1
            try:
                status = await https_request(server, post(body), "127.0.0.7", timeout=60)
                tally.server_errors += status >= 500
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                pass

        async def channels() -> None:
            conn = await ssh_login(server, "127.0.0.7")
            async with conn:
                for _ in range(20):
                    tally.tried["channel"] += 1
                    with contextlib.suppress(asyncssh.ChannelOpenError):
                        await conn.create_process(term_type="vt100")

        await quietly(channels())
        await asyncio.sleep(1)


async def sample(server: Server, stop: float) -> None:
    while time.monotonic() < stop + 5:
        server.sample()
        await asyncio.sleep(0.5)


async def soak(server: Server, seconds: float) -> Tally:
    tally = Tally()
    stop = time.monotonic() + seconds
    workers: list[Callable[[Server, Tally, float], Awaitable[None]]] = [
        legit, idle, garbage, slow_posts, guessing, unread, floods]
    await asyncio.gather(sample(server, stop),
                         *(asyncio.wait_for(w(server, tally, stop), seconds + 90)
                           for w in workers), return_exceptions=True)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=None)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--src", default=None,
                        help="PYTHONPATH of the mgmtbench to serve (default: the installed one)")
    parser.add_argument("--max-legit-errors", type=float, default=10.0, metavar="PERCENT",
                        help="fail over this legitimate-client error rate, after one retry "
                             "(default: %(default)s; OpenSSH-style early drop makes some SSH "
                             "logins fail while hostile connections hold MaxStartups' start)")
    parser.add_argument("--max-memory", type=int, default=4096, metavar="MIB",
                        help="address space allowed to the server (default: %(default)s MiB)")
    parser.add_argument("serve_flags", nargs="*", help="extra `mgmtbench serve` flags (after --)")
    args = parser.parse_args()
    seconds = args.minutes * 60 if args.minutes is not None else args.seconds
    workdir = Path(tempfile.mkdtemp(prefix="mgmtbench-soak-"))
    server = start_server(workdir, args.serve_flags, args.src, args.max_memory)
    started = time.monotonic()
    try:
        tally = asyncio.run(soak(server, seconds))
    finally:
        exited = server.process.poll()
        server.process.terminate()
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.process.kill()
    log = server.log.read_text(errors="replace").splitlines()
    tracebacks = sum(line.startswith("Traceback") for line in log)
    errors = sum(" ERROR " in line or " CRITICAL " in line for line in log)
    legit_total = sum(tally.legit_ok.values()) + sum(tally.legit_failed.values())
    crashes = (exited is not None) + tracebacks + errors + tally.server_errors
    print(f"soak: {time.monotonic() - started:.0f} s against mgmtbench serve "
          f"{' '.join(args.serve_flags) or '(default limits)'}"
          f"{f' from {args.src}' if args.src else ''}, loopback")
    print(f"  requests tried: {sum(tally.tried.values())} ("
          + ", ".join(f"{name} {count}" for name, count in sorted(tally.tried.items())) + ")")
    print(f"  crashes: {crashes} (server exited: {'yes' if exited is not None else 'no'}, "
          f"tracebacks in its log: {tracebacks}, ERROR lines: {errors}, HTTP 5xx: "
          f"{tally.server_errors})")
    print(f"  server peak RSS: {server.peak_kib / 1024:.0f} MiB; its log: {len(log)} lines")
    failed = sum(tally.legit_failed.values())
    rate = failed / legit_total if legit_total else 1.0
    split = ", ".join(
        f"{t} {tally.legit_failed[t]}/{tally.legit_ok[t] + tally.legit_failed[t]} "
        f"(first try {tally.legit_first_try_failed[t]})" for t in ("ssh", "https"))
    print(f"  legitimate client: {legit_total} operations, {failed} failed after one retry "
          f"({rate:.1%}): {split}"
          + (f"; {', '.join(f'{k} {v}' for k, v in sorted(tally.legit_reasons.items()))}"
             if tally.legit_reasons else ""))
    sys.exit(1 if crashes or rate * 100 > args.max_legit_errors else 0)


if __name__ == "__main__":
    main()
