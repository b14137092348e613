"""Hostile probes of the edge proxy (``mgmtbench proxy``), one function per attack.

``python tools/hostile/proxy.py ATTACK [--src PYTHONPATH] [--seconds N]`` starts ``mgmtbench
serve`` (one device) and ``mgmtbench proxy`` in front of it from the tree ``--src`` on loopback,
runs ATTACK from 127.0.0.20-29 beside a legitimate client (``GET .../show+clock`` from 127.0.0.1
every 0.25 s) and prints one line: the attack's own figures, legit p99 / errors, proxy RSS idle /
peak / after, log bytes and tracebacks. The proxy does not fit the soak's ``Attack`` shape (that
serves the emulator alone), hence a script of its own; each ``attack_*`` takes host, port and
seconds and returns a dict, for the soak to import.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import os
import re
import resource
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

USER, PASSWORD = "admin", "s3cret-proxy"
AUTH = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
BAD_AUTH = "Basic " + base64.b64encode(f"{USER}:wrong".encode()).decode()
PYTHON = "/work/main/.nox/tests/bin/python"


@functools.cache
def _context() -> ssl.SSLContext:
    """One client context for every connection: making one loads the system's CA store (tens
    of ms of the probe's loop each, which would count in the legit client's latency)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


async def request(host: str, port: int, path: str, *, auth: str = AUTH, source: str = "127.0.0.1",
                  timeout: float = 10.0, method: str = "GET", body: bytes = b"") -> tuple[int, int]:
    """One HTTP/1.1 request on a new TLS connection: (status, body bytes)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(
            host, port, ssl=_context(), local_addr=(source, 0), server_hostname="proxy")
        try:
            writer.write(f"{method} {path} HTTP/1.1\r\nHost: proxy\r\nAuthorization: {auth}\r\n"
                         f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                         + body)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split()[1])
            size = 0
            while chunk := await reader.read(1 << 16):
                size += len(chunk)
            return status, size
        finally:
            writer.close()


@dataclass
class Legit:
    """A legitimate client beside the attack: latencies and failures."""

    host: str
    port: int
    latencies: list[float] = field(default_factory=list)
    errors: int = 0

    async def run(self, stop: float) -> None:
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                status, _ = await request(self.host, self.port, "/device/R1/admin/exec/show+clock",
                                          timeout=30)
                if status != 200:
                    self.errors += 1
            except (OSError, TimeoutError, asyncio.IncompleteReadError, ValueError, IndexError):
                self.errors += 1
            self.latencies.append(time.monotonic() - started)
            if self.latencies[-1] > 0.3 and os.environ.get("PROBE_DEBUG"):
                print(f"slow legit request at {started:.1f}: {self.latencies[-1]:.2f} s",
                      file=sys.stderr)
            await asyncio.sleep(0.25)

    def figures(self) -> str:
        ordered = sorted(self.latencies) or [0.0]
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        return (f"legit n={len(ordered)} p50={ordered[len(ordered) // 2]:.3f}s p99={p99:.3f}s "
                f"max={ordered[-1]:.3f}s errors={self.errors}")


async def attack_flood(host: str, port: int, seconds: float, count: int = 1100) -> dict[str, Any]:
    """Open ``count`` TCP connections (127.0.0.20) and hold them, sending nothing."""
    held: list[socket.socket] = []
    failed = 0
    loop = asyncio.get_running_loop()
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.bind(("127.0.0.20", 0))
        try:
            async with asyncio.timeout(2):
                await loop.sock_connect(sock, (host, port))
            held.append(sock)
        except (OSError, TimeoutError):
            failed += 1
            sock.close()
    await asyncio.sleep(seconds)
    alive = 0
    for sock in held:
        try:
            alive += sock.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
        sock.close()
    return {"connected": len(held), "failed": failed, "still_open": alive}


async def attack_guess(host: str, port: int, seconds: float, workers: int = 16) -> dict[str, Any]:
    """Wrong passwords from 127.0.0.21 as fast as the proxy answers, ``workers`` connections
    with keep-alive."""
    answered = 0
    stop = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal answered
        while time.monotonic() < stop:
            try:
                async with asyncio.timeout(stop - time.monotonic() + 1):
                    reader, writer = await asyncio.open_connection(
                        host, port, ssl=_context(), local_addr=("127.0.0.21", 0),
                        server_hostname="proxy")
                    try:
                        while time.monotonic() < stop:
                            writer.write(f"GET /device/R1/admin/exec/show+clock HTTP/1.1\r\n"
                                         f"Host: proxy\r\nAuthorization: {BAD_AUTH}\r\n\r\n"
                                         .encode())
                            head = await reader.readuntil(b"\r\n\r\n")
                            length = re.search(rb"content-length: (\d+)", head, re.I)
                            await reader.readexactly(int(length.group(1)) if length else 0)
                            answered += 1
                    finally:
                        writer.close()
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                await asyncio.sleep(0.05)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return {"guesses": answered, "per_s": round(answered / seconds, 1)}


async def attack_bigoutput(host: str, port: int, seconds: float,
                           size: int = 64 * 1024 * 1024) -> dict[str, Any]:
    """``show bulk-output SIZE`` through the proxy, read at full speed (127.0.0.22)."""
    started = time.monotonic()
    try:
        status, got = await request(host, port, f"/device/R1/admin/exec/show+bulk-output+{size}",
                                    source="127.0.0.22", timeout=max(seconds, 60))
    except (OSError, TimeoutError, asyncio.IncompleteReadError) as exc:
        return {"status": type(exc).__name__}
    return {"status": status, "bytes": got, "s": round(time.monotonic() - started, 2)}


async def attack_pool(host: str, port: int, seconds: float, slow: int = 4) -> dict[str, Any]:
    """``slow`` long requests (1,000 commands each on a device with a processing delay) from
    127.0.0.23, holding the pool's sessions to the device."""
    path = "/device/R1/admin/exec/" + "/".join(["show+clock"] * 1000)
    results = await asyncio.gather(*(
        request(host, port, path, source="127.0.0.23", timeout=seconds + 40)
        for _ in range(slow)), return_exceptions=True)
    return {"statuses": [r[0] if isinstance(r, tuple) else type(r).__name__ for r in results]}


async def attack_body(host: str, port: int, seconds: float) -> dict[str, Any]:
    """A POST declaring 1,000 body bytes that sends 10 and waits (127.0.0.24): how long the
    proxy keeps the connection (up to ``seconds``)."""
    reader, writer = await asyncio.open_connection(host, port, ssl=_context(),
                                                   local_addr=("127.0.0.24", 0),
                                                   server_hostname="proxy")
    started = time.monotonic()
    writer.write(f"POST /device/R1/admin/config HTTP/1.1\r\nHost: proxy\r\nAuthorization: {AUTH}"
                 "\r\nContent-Length: 1000\r\n\r\nshow clock".encode())
    status = None
    try:
        async with asyncio.timeout(seconds):
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head.split()[1])
            while await reader.read(4096):
                pass
    except (TimeoutError, asyncio.IncompleteReadError, OSError):
        pass
    writer.close()
    return {"status": status, "held_s": round(time.monotonic() - started, 1)}


ATTACKS: dict[str, Callable[[str, int, float], Awaitable[dict[str, Any]]]] = {
    "flood": attack_flood, "guess": attack_guess, "bigoutput": attack_bigoutput,
    "pool": attack_pool, "body": attack_body}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_kib(pid: int) -> int:
    found = re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M)
    return int(found.group(1)) if found else 0


def _usual_open_files() -> None:
    """A soft open-files limit of 1,024, most systems' default (the hard one as it is)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(1024, hard), hard))


def _wait_port(port: int, process: subprocess.Popen[bytes], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.2)
    raise SystemExit(f"port {port} not open after {seconds} s")


def _headend_bigoutput(work: Path, env: dict[str, str], proxy_port: int, new: bool,
                       size: int) -> int:
    """``mgmtbench headend`` in front of the proxy; one SSH exec of ``show bulk-output SIZE``
    read at full speed; the head-end's RSS idle / peak / after."""
    import asyncssh

    port = _free_port()
    argv = [PYTHON, "-m", "mgmtbench.cli", "headend", "--proxy", f"https://127.0.0.1:{proxy_port}",
            "--proxy-ca", str(work / "proxy" / "tls" / "ca.pem"), "--device", "R1", "--port",
            str(port), "--state-dir", str(work / "headend"), "--proxy-username", USER]
    if not new:
        argv += ["--proxy-password", PASSWORD]
    log = work / "headend.log"
    headend = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"))
    try:
        _wait_port(port, headend)
        time.sleep(1)
        idle = peak = _rss_kib(headend.pid)

        async def run() -> tuple[int, str]:
            nonlocal peak
            async with asyncssh.connect("127.0.0.1", port, username="admin", password="admin",
                                        known_hosts=None) as conn:
                task = asyncio.ensure_future(conn.run(f"show bulk-output {size}", encoding=None,
                                                      timeout=120))
                while not task.done():
                    peak = max(peak, _rss_kib(headend.pid))
                    if peak > 2_000_000:
                        raise SystemExit("head-end RSS over 2 GB: stopped")
                    await asyncio.sleep(0.1)
                result = task.result()
                out = result.stdout or b""
                err = result.stderr or b""
                return len(out), (err.decode() if isinstance(err, bytes) else err)[:90]

        got, err = asyncio.run(run())
        time.sleep(15)
        after = _rss_kib(headend.pid)
        text = log.read_bytes()
        print(f"headend-bigoutput: {size} B asked, {got} B got, stderr={err.strip()!r} | "
              f"headend RSS idle={idle // 1024} MiB peak={peak // 1024} MiB after="
              f"{after // 1024} MiB ({100 * (after - idle) / max(idle, 1):+.0f} %) | "
              f"tracebacks={text.count(b'Traceback')}")
        return 0
    finally:
        headend.terminate()
        try:
            headend.wait(5)
        except subprocess.TimeoutExpired:
            headend.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("attack", choices=[*ATTACKS, "argv", "headend-bigoutput"])
    parser.add_argument("--src", default=str(Path(__file__).resolve().parents[2] / "src"))
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--settle", type=float, default=8,
                        help="seconds after the attack before RSS 'after' (default: 8)")
    parser.add_argument("--size", type=int, default=64 * 1024 * 1024,
                        help="bigoutput's bytes (default: 64 MiB)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="proxy-hostile-"))
    env = {**os.environ, "PYTHONPATH": args.src, "MGMTBENCH_PROXY_PASSWORD": PASSWORD}
    ssh_port, https_port, proxy_port = _free_port(), _free_port(), _free_port()
    delay = ["--processing-delay", "0.02"] if args.attack == "pool" else []
    serve = subprocess.Popen(
        [PYTHON, "-m", "mgmtbench.cli", "serve", "--ssh-port", str(ssh_port), "--https-port",
         str(https_port), "--netconf-port", "0", "--gnmi-port", "0", "--state-dir",
         str(work / "serve"), *delay], env=env, stdout=subprocess.DEVNULL,
        stderr=(work / "serve.log").open("wb"))
    proxy_log = work / "proxy.log"
    proxy_cmd = [PYTHON, "-m", "mgmtbench.cli", "proxy", "--port", str(proxy_port),
                 "--no-http3", "--device", f"R1=127.0.0.1:{ssh_port}", "--username", USER,
                 "--device-password", "admin", "--state-dir", str(work / "proxy")]
    new = "--password-file" in subprocess.run(
        [PYTHON, "-m", "mgmtbench.cli", "proxy", "--help"], env=env, capture_output=True,
        text=True, check=False).stdout
    if not new:
        proxy_cmd += ["--password", PASSWORD]  # the tree before the fix takes it only in argv
    proxy = subprocess.Popen(proxy_cmd, env=env, stdout=(work / "proxy.out").open("wb"),
                             stderr=proxy_log.open("wb"), preexec_fn=_usual_open_files)
    try:
        _wait_port(ssh_port, serve)
        _wait_port(proxy_port, proxy)
        if args.attack == "argv":
            time.sleep(1)
            cmdline = Path(f"/proc/{proxy.pid}/cmdline").read_bytes()
            stdout = (work / "proxy.out").read_bytes()
            print(f"argv: password in cmdline={PASSWORD.encode() in cmdline} "
                  f"in stdout={PASSWORD.encode() in stdout}")
            return 0
        if args.attack == "headend-bigoutput":
            return _headend_bigoutput(work, env, proxy_port, new, args.size)
        asyncio.run(request("127.0.0.1", proxy_port, "/device/R1/admin/exec/show+clock"))
        time.sleep(1)
        idle = _rss_kib(proxy.pid)
        peak = idle
        legit = Legit("127.0.0.1", proxy_port)

        async def both() -> dict[str, Any]:
            nonlocal peak
            stop = time.monotonic() + args.seconds
            chosen = ATTACKS[args.attack]
            attack = asyncio.ensure_future(
                attack_bigoutput("127.0.0.1", proxy_port, args.seconds, args.size)
                if chosen is attack_bigoutput else chosen("127.0.0.1", proxy_port, args.seconds))
            legit_task = asyncio.ensure_future(legit.run(stop))
            while not (attack.done() and legit_task.done()):
                peak = max(peak, _rss_kib(proxy.pid))
                if peak > 2_000_000:
                    raise SystemExit(f"proxy RSS over 2 GB ({peak} KiB): stopped")
                await asyncio.sleep(0.1)
            return attack.result()

        found = asyncio.run(both())
        time.sleep(args.settle)
        after = _rss_kib(proxy.pid)
        text = proxy_log.read_bytes()
        print(f"{args.attack}: {found} | {legit.figures()} | proxy RSS idle={idle // 1024} MiB "
              f"peak={peak // 1024} MiB after={after // 1024} MiB "
              f"({100 * (after - idle) / max(idle, 1):+.0f} %) | log={len(text)} B "
              f"tracebacks={text.count(b'Traceback')} bad-credential lines="
              f"{text.lower().count(b'credentials')}")
        return 0
    finally:
        for process in (proxy, serve):
            process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
        if not os.environ.get("PROBE_DEBUG"):  # keep the logs to look at when debugging
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
