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
- 256 MiB outputs asked for and never read, over SSH exec, HTTPS and NETCONF (127.0.0.6,
  logged in);
- configuration floods: 8,000 new lines in one POST and their removal, an 11,000-line POST,
  and 20 channels on one SSH connection (127.0.0.7, logged in).

Prints requests tried, crashes (the server exiting, tracebacks or ERROR lines in its log, HTTP
5xx answers), the server's RSS idle (once warmed up by the legitimate client's untimed rounds),
at its peak and ``--settle`` seconds after the load, and the legitimate client's error rate per
transport and latency (p50, p99, and the worst 10 s window's p99, where a stall shows). It exits
1 unless the issue's acceptance holds: no crash, legitimate errors within ``--max-legit-errors``,
p99 within ``--max-legit-p99`` (1 s), RSS back within ``--max-rss-growth`` (10 %) of idle;
``--json`` keeps the figures. ``--only NAME`` runs one attack (``--list`` names them: this file's
and the attack modules' in ATTACK_MODULES). Every connection has a time-out and the run stops
itself; nothing leaves 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import importlib
import json
import os
import random
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import asyncssh
import httpx
from soakbase import (
    AUTH,
    PASSWORD,
    USER,
    Attack,
    LegitOperation,
    Server,
    Tally,
    get,
    https_request,
    post,
    quietly,
    ssh_login,
    start_server,
)

NETCONF_HELLO = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>'
                 b"<capability>urn:ietf:params:netconf:base:1.0</capability></capabilities>"
                 b"</hello>]]>]]>")
#: Rounds of the legitimate client's SSH and HTTPS work before the idle size is read.
WARM_UP_ROUNDS = 3

# Attack modules beside this file (tools/soak_<area>.py), each exporting ATTACKS.
ATTACK_MODULES: tuple[str, ...] = ("soak_loop", "soak_mem", "soak_h2")


# --- the legitimate client ------------------------------------------------------------------


async def legit(server: Server, tally: Tally, stop: float, turns: int | None = None) -> None:
    turn = 0
    while time.monotonic() < stop and (turns is None or turn < turns):
        turn += 1
        transport = "ssh" if turn % 2 else "https"
        for attempt in (1, 2):
            tally.tried["legit"] += 1
            began = login = time.monotonic()
            try:
                if turn % 2:
                    async with await ssh_login(server, "127.0.0.1") as conn:
                        login = time.monotonic()
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
                tally.legit_done.append(LegitOperation(time.monotonic() - began, began,
                                                       transport, login - began))
                break
            tally.legit_reasons[f"{transport} {reason}"] += 1
            if attempt == 1:
                tally.legit_first_try_failed[transport] += 1
            else:
                tally.legit_failed[transport] += 1
        await asyncio.sleep(0.2)


async def warm_up(server: Server, rounds: int = WARM_UP_ROUNDS) -> None:
    """The legitimate client's work, untimed, before the idle size is read: a server that has
    served once has loaded what its first SSH login and HTTPS request import (key exchange,
    TLS, the command engine); that, not a cold start, is the size its RSS must come back to."""
    scratch = Tally()
    await legit(server, scratch, time.monotonic() + 3600, turns=2 * rounds)
    if sum(scratch.legit_failed.values()):
        raise SystemExit(f"the warm-up's legitimate requests failed: {dict(scratch.legit_reasons)}")


async def first_use(server: Server) -> None:
    """Each service the attacks reach, used once as a user would, before the idle size is read.
    A first use loads what the process then keeps for its life (NETCONF's YANG module list,
    the SFTP server, HTTP/2's protocol objects, the output filters' expressions): 1.4-1.5 MiB
    in the soak on this machine, which is not memory a load took. Raises SystemExit if one fails."""
    lines = [f"ip route 10.255.0.{i} 255.255.255.255 Null0" for i in range(20)]
    try:
        async with await ssh_login(server, "127.0.0.1") as conn:
            result = await conn.run("show running-config | include ^interface", timeout=30)
            _need(result.exit_status == 0 and "interface" in str(result.stdout), "a filter")
            writer, reader, _ = await conn.open_session(subsystem="netconf", encoding=None)
            writer.write(NETCONF_HELLO + b'<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:'
                         b'netconf:base:1.0"><get-config><source><running/></source>'
                         b"</get-config></rpc>]]>]]>")
            await asyncio.wait_for(reader.readuntil(b"]]>]]>"), 30)  # the server's hello
            reply = await asyncio.wait_for(reader.readuntil(b"]]>]]>"), 30)
            _need(b"<data" in reply, "NETCONF get-config")
            writer.close()
            sftp = await conn.start_sftp_client()
            async with sftp.open("flash:/soak-first-use.txt", "wb") as out:
                await out.write(b"first use\n" * 1000)
            async with sftp.open("flash:/soak-first-use.txt", "rb") as back:
                _need(len(await back.read()) == 10_000, "an SFTP read")
            await sftp.remove("flash:/soak-first-use.txt")
        for body in ("\n".join(lines), "\n".join("no " + line for line in lines)):
            _need(await https_request(server, post(body), "127.0.0.1") == 200, "a config POST")
        context = ssl.create_default_context(cafile=server.ca_file)
        async with httpx.AsyncClient(http2=True, verify=context, auth=(USER, PASSWORD)) as h2:
            answer = await h2.get(f"https://127.0.0.1:{server.https_port}"
                                  "/admin/exec/show+version")
            _need(answer.status_code == 200 and answer.http_version == "HTTP/2", "HTTP/2 GET")
    except (OSError, asyncssh.Error, TimeoutError, asyncio.IncompleteReadError,
            httpx.HTTPError) as exc:
        raise SystemExit(f"the warm-up's first use of each service failed: {exc!r}") from None


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"the warm-up's first use of each service failed: {what}")


# --- the hostile mix ------------------------------------------------------------------------


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

    async def netconf() -> None:
        conn = await ssh_login(server, "127.0.0.6")
        try:
            writer, _, _ = await conn.open_session(subsystem="netconf", encoding=None)
            writer.write(NETCONF_HELLO + b'<rpc message-id="1" xmlns="urn:ietf:params:xml:ns:'
                         b'netconf:base:1.0"><get><filter type="cli">show bulk-output 268435456'
                         b"</filter></get></rpc>]]>]]>")
            await asyncio.sleep(5)
        finally:
            conn.abort()

    while time.monotonic() < stop:
        tally.tried["unread output"] += 5
        await asyncio.gather(quietly(ssh()), quietly(ssh()), quietly(https()), quietly(https()),
                             quietly(netconf()))


async def floods(server: Server, tally: Tally, stop: float) -> None:
    round_ = 0
    while time.monotonic() < stop:
        round_ += 1
        lines = [f"ip route 10.{round_ % 200}.{i // 256}.{i % 256} 255.255.255.255 Null0"
                 for i in range(8000)]
        # the 11,000-line body is refused whole (over max_config_lines); the removal is sent
        # even past ``stop``, so that the device is left with the configuration it had
        for body in ("\n".join(lines + lines[:3000]), "\n".join(lines),
                     "\n".join("no " + line for line in lines)):
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


def attacks() -> dict[str, Attack]:
    """Every attack by name: this file's and the attack modules'."""
    found: dict[str, Attack] = {
        "idle": idle, "garbage": garbage, "slow-posts": slow_posts, "guessing": guessing,
        "unread": unread, "floods": floods}
    for name in ATTACK_MODULES:
        module = importlib.import_module(name)
        found.update(module.ATTACKS)
    return found


async def soak(server: Server, seconds: float, chosen: list[Attack]) -> Tally:
    # The attackers' own failures (an SFTP read cancelled as its connection is cut) are the
    # point, not news: the server's log is what is checked.
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)
    tally = Tally()
    stop = time.monotonic() + seconds
    await asyncio.gather(sample(server, stop),
                         *(asyncio.wait_for(w(server, tally, stop), seconds + 90)
                           for w in [legit, *chosen]), return_exceptions=True)
    return tally


async def settle(server: Server, seconds: float) -> None:
    """Let the server return what the load took (closed connections, trimmed heap)."""
    await asyncio.sleep(seconds)
    server.sample()


def worst_window(tally: Tally, began: float, width: float = 10.0) -> tuple[float, float]:
    """The highest p99 of the legitimate client's latency over ``width``-second windows, and
    the window's start (seconds into the run): a stall shows here when the run's p99 hides it."""
    windows: dict[int, list[float]] = {}
    for done in tally.legit_done:
        windows.setdefault(int((done.started - began) // width), []).append(done.seconds)
    if not windows:
        return float("nan"), 0.0
    index, values = max(windows.items(), key=lambda item: percentile(item[1], 0.99))
    return percentile(values, 0.99), index * width


def percentile(values: list[float], fraction: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


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
    parser.add_argument("--max-legit-p99", type=float, default=1.0, metavar="SECONDS",
                        help="fail when the legitimate client's p99 latency, over the run or "
                             "any 10 s of it, is above this (default: %(default)s)")
    parser.add_argument("--max-rss-growth", type=float, default=10.0, metavar="PERCENT",
                        help="fail when the server's RSS after --settle is more than this above "
                             "its idle size (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write the figures to PATH as JSON")
    parser.add_argument("--max-memory", type=int, default=4096, metavar="MIB",
                        help="address space allowed to the server (default: %(default)s MiB)")
    parser.add_argument("--only", default=None, metavar="NAME[,NAME]",
                        help="run only these attacks beside the legitimate client "
                             "(default: all; --list names them)")
    parser.add_argument("--list", action="store_true", help="name the attacks and exit")
    parser.add_argument("--settle", type=float, default=40.0, metavar="SECONDS",
                        help="wait after the load before reading the server's RSS "
                             "(default: %(default)s)")
    parser.add_argument("serve_flags", nargs="*", help="extra `mgmtbench serve` flags (after --)")
    args = parser.parse_args()
    seconds = args.minutes * 60 if args.minutes is not None else args.seconds
    known = attacks()
    if args.list:
        print("\n".join(sorted(known)))
        return
    names = args.only.split(",") if args.only else sorted(known)
    unknown = [name for name in names if name not in known]
    if unknown:
        parser.error(f"unknown attack {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    workdir = Path(tempfile.mkdtemp(prefix="mgmtbench-soak-"))
    server = start_server(workdir, args.serve_flags, args.src, args.max_memory)
    asyncio.run(warm_up(server))
    time.sleep(2)
    server.sample()
    legit_idle_kib = server.rss_kib
    asyncio.run(first_use(server))
    time.sleep(2)
    server.sample()
    idle_kib = server.rss_kib
    started = time.monotonic()
    try:
        tally = asyncio.run(soak(server, seconds, [known[name] for name in names]))
        asyncio.run(settle(server, args.settle))
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
    grown = (server.rss_kib - idle_kib) / idle_kib if idle_kib else float("nan")
    print(f"  attacks: {', '.join(names)}")
    print(f"  server RSS: idle {idle_kib / 1024:.0f} MiB (after {WARM_UP_ROUNDS} untimed rounds of "
          f"the legitimate client: {legit_idle_kib / 1024:.0f} MiB, then each service used "
          f"once), peak {server.peak_kib / 1024:.0f} MiB, "
          f"{args.settle:.0f} s after the load {server.rss_kib / 1024:.0f} MiB ({grown:+.0%} of "
          f"idle); its log: {len(log)} lines")
    times = [done.seconds for done in tally.legit_done]
    p99, (window_p99, window_at) = percentile(times, 0.99), worst_window(tally, started)
    print(f"  legitimate latency: p50 {percentile(times, 0.5) * 1000:.0f} ms, "
          f"p99 {p99 * 1000:.0f} ms, max {max(times, default=float('nan')) * 1000:.0f} ms "
          f"({len(times)} answered); worst 10 s: p99 {window_p99 * 1000:.0f} ms at "
          f"{window_at:.0f} s")
    slowest = sorted(tally.legit_done, reverse=True)[:3]
    print("  slowest legitimate operations: " + ", ".join(
        f"{done.transport} {done.seconds * 1000:.0f} ms"
        + (f" (login {done.login * 1000:.0f} ms)" if done.transport == "ssh" else "")
        + f" at {done.started - started:.0f} s" for done in slowest))
    failed = sum(tally.legit_failed.values())
    rate = failed / legit_total if legit_total else 1.0
    split = ", ".join(
        f"{t} {tally.legit_failed[t]}/{tally.legit_ok[t] + tally.legit_failed[t]} "
        f"(first try {tally.legit_first_try_failed[t]})" for t in ("ssh", "https"))
    print(f"  legitimate client: {legit_total} operations, {failed} failed after one retry "
          f"({rate:.1%}): {split}"
          + (f"; {', '.join(f'{k} {v}' for k, v in sorted(tally.legit_reasons.items()))}"
             if tally.legit_reasons else ""))
    verdicts = {
        "no crash": crashes == 0,
        f"legit errors <= {args.max_legit_errors:g} %": rate * 100 <= args.max_legit_errors,
        f"legit p99 <= {args.max_legit_p99:g} s": max(p99, window_p99) <= args.max_legit_p99,
        f"RSS after <= idle + {args.max_rss_growth:g} %": grown * 100 <= args.max_rss_growth,
    }
    print("  " + "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in verdicts.items()))
    if args.json:
        args.json.write_text(json.dumps({
            "seconds": seconds, "attacks": names, "serve_flags": args.serve_flags,
            "tried": dict(tally.tried), "crashes": crashes, "tracebacks": tracebacks,
            "rss_idle_mib": idle_kib / 1024,
            "rss_legit_idle_mib": legit_idle_kib / 1024, "rss_peak_mib": server.peak_kib / 1024,
            "rss_after_mib": server.rss_kib / 1024, "settle_s": args.settle,
            "legit_operations": legit_total, "legit_failed": failed,
            "legit_p50_ms": percentile(times, 0.5) * 1000, "legit_p99_ms": p99 * 1000,
            "legit_worst_window_p99_ms": window_p99 * 1000,
            "verdicts": verdicts}, indent=2) + "\n")
    sys.exit(0 if all(verdicts.values()) else 1)


if __name__ == "__main__":
    main()
