"""Before/after figures for the emulator's limits (issue 17), against a ``mgmtbench serve`` this
script starts on loopback, from this tree or another one (``--src /tmp/before/src``):

    python tools/limits_figures.py idle-tls --count 2000
    python tools/limits_figures.py closed --tls 900 --ssh 100 --rounds 3
    python tools/limits_figures.py config --lines 8000
    python tools/limits_figures.py config-size --posts 30 --lines 10000
    python tools/limits_figures.py lockout --idle 1100
    python tools/limits_figures.py guesses --seconds 10
    python tools/limits_figures.py unread --channels 4

Each prints one line of figures; every step is bounded (a time-out or a count) and talks only to
127.0.0.0/8. Only the flags every version of ``serve`` has are used, so the same command measures
an older tree (``--src``) and this one.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import asyncssh

USER, PASSWORD = "admin", "admin"


@dataclass
class Served:
    pid: int
    ssh_port: int
    https_port: int
    ca: Path

    def rss_kib(self, field: str = "VmRSS") -> int:
        status = Path(f"/proc/{self.pid}/status").read_text()
        found = re.search(rf"^{field}:\s+(\d+) kB", status, re.M)
        return int(found.group(1)) if found else 0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve(src: str | None, *extra: str) -> Iterator[Served]:
    """A ``mgmtbench serve`` from ``src`` (None: this tree) on two free loopback ports."""
    state = Path(tempfile.mkdtemp(prefix="limits-figures-"))
    ssh_port, https_port = free_port(), free_port()
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", str(ssh_port),
         "--https-port", str(https_port), "--state-dir", str(state / "state"), *extra],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=state)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", https_port), timeout=1).close()
                socket.create_connection(("127.0.0.1", ssh_port), timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("mgmtbench serve did not start") from None
                time.sleep(0.2)
        yield Served(process.pid, ssh_port, https_port, state / "state" / "tls" / "ca.pem")
    finally:
        process.terminate()
        try:
            _, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            _, err = process.communicate()
        lines = err.decode(errors="replace").splitlines()
        tracebacks = sum(line.startswith("Traceback") for line in lines)
        print(f"  (server log: {len(lines)} lines, {tracebacks} tracebacks)")
        if os.environ.get("LIMITS_FIGURES_LOG"):
            print("\n".join(lines[-40:]))


def tls_context(served: Served) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(served.ca))


def settle(served: Served, seconds: float = 1.5) -> int:
    time.sleep(seconds)
    return served.rss_kib()


# --- idle TLS connections -------------------------------------------------------------------


def idle_tls(args: argparse.Namespace) -> None:
    with serve(args.src) as served:
        context = tls_context(served)
        warm = context.wrap_socket(socket.create_connection(("127.0.0.1", served.https_port)),
                                   server_hostname="127.0.0.1")
        warm.close()
        before = settle(served)
        socks = []
        for _ in range(args.count):
            raw = socket.create_connection(("127.0.0.1", served.https_port), timeout=10)
            socks.append(context.wrap_socket(raw, server_hostname="127.0.0.1"))
        after = settle(served, 3)
        for sock in socks:
            sock.close()
        closed = settle(served, 5)  # the trim of freed memory follows within ~4 s of the close
        print(f"idle TLS connections: {args.count}: server RSS {before} -> {after} KiB, "
              f"{(after - before) / args.count:.1f} KiB per connection; after closing them "
              f"{closed} KiB")


# --- memory after many connections closed ---------------------------------------------------


def closed(args: argparse.Namespace) -> None:
    """Idle TLS and unauthenticated SSH connections from several loopback addresses (under the
    per-source caps), all closed, ``--rounds`` times: RSS before, with them open, 5 s after the
    close and 12 s after (the trim of freed memory waits 10 s after the last one)."""
    sources = [f"127.0.0.{i}" for i in range(2, 2 + max(1, -(-args.tls // 200)))]
    ssh_sources = [f"127.0.1.{i}" for i in range(2, 2 + max(1, -(-args.ssh // 8)))]
    with serve(args.src) as served:
        context = tls_context(served)
        before = settle(served)
        figures = []
        for _ in range(args.rounds):
            socks: list[socket.socket] = []
            for i in range(args.tls):
                raw = socket.create_connection(("127.0.0.1", served.https_port), timeout=10,
                                               source_address=(sources[i % len(sources)], 0))
                socks.append(context.wrap_socket(raw, server_hostname="127.0.0.1"))
            for i in range(args.ssh):
                sock = socket.create_connection(("127.0.0.1", served.ssh_port), timeout=10,
                                                source_address=(ssh_sources[i % len(ssh_sources)], 0))
                sock.sendall(b"SSH-2.0-limits-figures\r\n")
                sock.recv(256)
                socks.append(sock)
            held = settle(served)
            for sock in socks:
                sock.close()
            figures.append((held, settle(served, 5), settle(served, 7)))
        rounds = "; ".join(f"open {held} -> closed {after} (5 s), {later} (12 s)"
                           for held, after, later in figures)
        print(f"{args.tls} idle TLS + {args.ssh} unauthenticated SSH connections, "
              f"{args.rounds} round(s): server RSS {before} KiB before; {rounds} KiB")


# --- 8,000 configuration lines in one POST --------------------------------------------------


def config(args: argparse.Namespace) -> None:
    import httpx

    with serve(args.src) as served, httpx.Client(verify=tls_context(served),
                                                 auth=(USER, PASSWORD), timeout=900) as client:
        url = f"https://127.0.0.1:{served.https_port}"
        for name, body in (
            ("routes", "\n".join(f"ip route 10.{i // 256}.{i % 256}.0 255.255.255.0 Null0"
                                 for i in range(args.lines))),
            ("interfaces", "\n".join(f"interface Loopback{i // 2}" if i % 2 == 0 else
                                     f" description loop {i // 2}" for i in range(args.lines))),
        ):
            started = time.perf_counter()
            answer = client.post(f"{url}/admin/config", content=body)
            took = time.perf_counter() - started
            started = time.perf_counter()
            client.get(f"{url}/admin/exec/show+clock")
            print(f"{args.lines} new configuration lines ({name}) in one POST: HTTP "
                  f"{answer.status_code} in {took:.2f} s; the next request "
                  f"{(time.perf_counter() - started) * 1000:.0f} ms")


# --- a running configuration grown by many POSTs ------------------------------------------


def config_size(args: argparse.Namespace) -> None:
    """``--posts`` POSTs of ``--lines`` new lines each (unique static routes, ~45 bytes): how
    many the device took, its RSS, and the time of ``show running-config | count route`` after."""
    import httpx

    with serve(args.src) as served, httpx.Client(verify=tls_context(served),
                                                 auth=(USER, PASSWORD), timeout=900) as client:
        url = f"https://127.0.0.1:{served.https_port}"
        client.get(f"{url}/admin/exec/show+clock")
        before = settle(served)
        refused = 0
        for post in range(args.posts):
            base = post * args.lines
            body = "\n".join(f"ip route 10.{(base + i) // 65536 % 256}.{(base + i) // 256 % 256}."
                             f"{(base + i) % 256} 255.255.255.255 Null0 name r{base + i}"
                             for i in range(args.lines))
            answer = client.post(f"{url}/admin/config", content=body)
            refused += answer.text.count("% Configuration full")
        grown = settle(served, 3)
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            counted = client.get(f"{url}/admin/exec/show+running-config+%7C+count+route").text
            timings.append(time.perf_counter() - started)
        total = args.posts * args.lines
        print(f"{total} configuration lines in {args.posts} POSTs: {total - refused} taken, "
              f"{refused} refused; server RSS {before} -> {grown} KiB "
              f"(+{(grown - before) / 1024:.0f} MiB); `show running-config | count route` "
              f"{min(timings) * 1000:.0f} ms ({counted.strip()[-40:]!r})")


# --- logins while idle connections are held -------------------------------------------------


async def login(served: Served, timeout: float) -> bool:
    try:
        async with asyncio.timeout(timeout):
            conn = await asyncssh.connect("127.0.0.1", served.ssh_port, username=USER,
                                          password=PASSWORD, known_hosts=None,
                                          local_addr=("127.0.0.1", 0))
            async with conn:
                status = (await conn.run("show clock")).exit_status
    except (OSError, asyncssh.Error, TimeoutError):
        return False
    return status == 0


def lockout(args: argparse.Namespace) -> None:
    with serve(args.src) as served:
        idle = []
        for _ in range(args.idle):
            try:  # from 127.0.0.2: the legitimate client is 127.0.0.1
                idle.append(socket.create_connection(("127.0.0.1", served.ssh_port), timeout=5,
                                                     source_address=("127.0.0.2", 0)))
            except OSError:
                break
        time.sleep(2)
        open_now = 0
        for sock in idle:
            sock.setblocking(False)
            try:
                open_now += sock.recv(64) != b""
            except BlockingIOError:
                open_now += 1
            except OSError:
                pass
        ok = asyncio.run(_logins(served, args.tries))
        for sock in idle:
            sock.close()
        print(f"{len(idle)} idle TCP connections from 127.0.0.2 ({open_now} still open after "
              f"2 s): {ok}/{args.tries} logins from 127.0.0.1 succeeded")


async def _logins(served: Served, tries: int) -> int:
    return sum([await login(served, 10) for _ in range(tries)])


# --- password guessing ----------------------------------------------------------------------


class Guesser(asyncssh.SSHClient):
    def __init__(self, count: list[int]) -> None:
        self.count = count

    def password_auth_requested(self) -> str:
        self.count[0] += 1
        return f"guess-{self.count[0]}"


async def ssh_guesses(served: Served, seconds: float, workers: int) -> int:
    count = [0]
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    await asyncssh.connect("127.0.0.1", served.ssh_port, username=USER,
                                           known_hosts=None, preferred_auth="password",
                                           client_factory=lambda: Guesser(count))
            except (OSError, asyncssh.Error, TimeoutError):
                pass

    await asyncio.gather(*(worker() for _ in range(workers)))
    return count[0]


async def https_guesses(served: Served, seconds: float, workers: int) -> int:
    context = tls_context(served)
    wrong = base64.b64encode(b"admin:wrong").decode()
    request = (f"GET /admin/exec/show+clock HTTP/1.1\r\nHost: r\r\n"
               f"Authorization: Basic {wrong}\r\n\r\n").encode()
    count = 0
    deadline = time.monotonic() + seconds

    async def worker() -> None:
        nonlocal count
        while time.monotonic() < deadline:
            try:
                async with asyncio.timeout(max(0.1, deadline - time.monotonic())):
                    reader, writer = await asyncio.open_connection(
                        "127.0.0.1", served.https_port, ssl=context)
                    try:
                        while time.monotonic() < deadline:
                            writer.write(request)
                            head = await reader.readuntil(b"\r\n\r\n")
                            length = re.search(rb"content-length: (\d+)", head, re.I)
                            await reader.readexactly(int(length.group(1)) if length else 0)
                            count += 1
                    finally:
                        writer.close()
            except (OSError, TimeoutError, asyncio.IncompleteReadError):
                pass

    await asyncio.gather(*(worker() for _ in range(workers)))
    return count


def guesses(args: argparse.Namespace) -> None:
    with serve(args.src) as served:
        ssh = asyncio.run(ssh_guesses(served, args.seconds, args.workers))
        https = asyncio.run(https_guesses(served, args.seconds, args.workers))
        ok = asyncio.run(login(served, 10))
    print(f"password guesses from one address, {args.workers} connections at a time, "
          f"{args.seconds:.0f} s each: SSH {ssh / args.seconds:.1f}/s, HTTPS "
          f"{https / args.seconds:.1f}/s; a good login afterwards: {'ok' if ok else 'FAILED'}")


# --- output nobody reads --------------------------------------------------------------------


async def unread_ssh(served: Served, channels: int) -> list[asyncssh.SSHClientConnection]:
    conns = []
    for _ in range(channels):
        conn = await asyncssh.connect("127.0.0.1", served.ssh_port, username=USER,
                                      password=PASSWORD, known_hosts=None)
        await conn.create_process("show bulk-output 268435456", encoding=None)
        conns.append(conn)
    return conns


def unread(args: argparse.Namespace) -> None:
    with serve(args.src) as served:
        context = tls_context(served)
        before = settle(served)
        loop = asyncio.new_event_loop()
        conns = loop.run_until_complete(unread_ssh(served, args.channels))
        ssh_peak = settle(served, args.wait)
        auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        socks = []
        for _ in range(args.channels):
            sock = context.wrap_socket(socket.create_connection(
                ("127.0.0.1", served.https_port), timeout=10), server_hostname="127.0.0.1")
            sock.sendall(f"GET /admin/exec/show+bulk-output+268435456 HTTP/1.1\r\nHost: r\r\n"
                         f"Authorization: Basic {auth}\r\n\r\n".encode())
            socks.append(sock)
        both_peak = settle(served, args.wait)
        for sock in socks:
            sock.close()
        for conn in conns:
            conn.abort()
        loop.run_until_complete(asyncio.sleep(0.5))
        loop.close()
        closed = settle(served, 3)
        print(f"256 MiB asked for and not read on {args.channels} SSH channels: server RSS "
              f"{before} -> {ssh_peak} KiB (+{(ssh_peak - before) / 1024 / args.channels:.1f} "
              f"MiB each); and on {args.channels} HTTPS connections: -> {both_peak} KiB "
              f"(+{(both_peak - ssh_peak) / 1024 / args.channels:.1f} MiB each); all closed: "
              f"{closed} KiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", default=None, help="PYTHONPATH of the mgmtbench to serve "
                        "(default: the installed one)")
    sub = parser.add_subparsers(dest="figure", required=True)
    p = sub.add_parser("idle-tls")
    p.add_argument("--count", type=int, default=2000)
    p.set_defaults(run=idle_tls)
    p = sub.add_parser("closed")
    p.add_argument("--tls", type=int, default=900)
    p.add_argument("--ssh", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.set_defaults(run=closed)
    p = sub.add_parser("config")
    p.add_argument("--lines", type=int, default=8000)
    p.set_defaults(run=config)
    p = sub.add_parser("config-size")
    p.add_argument("--posts", type=int, default=30)
    p.add_argument("--lines", type=int, default=10000)
    p.set_defaults(run=config_size)
    p = sub.add_parser("lockout")
    p.add_argument("--idle", type=int, default=1100)
    p.add_argument("--tries", type=int, default=20)
    p.set_defaults(run=lockout)
    p = sub.add_parser("guesses")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--workers", type=int, default=4)
    p.set_defaults(run=guesses)
    p = sub.add_parser("unread")
    p.add_argument("--channels", type=int, default=4)
    p.add_argument("--wait", type=float, default=4)
    p.set_defaults(run=unread)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
