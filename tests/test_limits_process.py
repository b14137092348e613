"""Limits seen from outside the emulator's process (issue 17): its memory with output nobody reads
and with idle TLS connections, its open-files limit, its log when descriptors run out. Each test
runs ``mgmtbench serve`` on loopback ports and stops it; every wait is bounded."""

from __future__ import annotations

import asyncio
import base64
import resource
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import asyncssh
import pytest

from mgmtbench.emulator import EmulatorOptions, Limits
from mgmtbench.emulator.server import open_files_needed
from mgmtbench.loopthread import new_event_loop
from tests.serve_support import Served, serve, tls

CREDENTIALS = ("admin", "admin")  # `mgmtbench serve`'s defaults


def test_output_nobody_reads_is_not_made(tmp_path: Path) -> None:
    """256 MiB asked for and never read, on 3 SSH channels and 3 HTTPS connections: the server
    stops at what the windows and socket buffers take (it held 320-510 MiB per request, and
    kept it after the close)."""
    auth = base64.b64encode(":".join(CREDENTIALS).encode()).decode()
    with serve(tmp_path) as served, ExitStack() as stack:
        before = served.settled_rss_kib()
        loop = asyncio.new_event_loop()
        stack.callback(loop.close)
        conns = []
        for _ in range(3):
            conn = loop.run_until_complete(asyncssh.connect(
                "127.0.0.1", served.ssh_port, username=CREDENTIALS[0], password=CREDENTIALS[1],
                known_hosts=None))
            loop.run_until_complete(conn.create_process("show bulk-output 268435456"))
            conns.append(conn)
        for _ in range(3):
            sock = stack.enter_context(tls(served))
            sock.sendall(f"GET /admin/exec/show+bulk-output+268435456 HTTP/1.1\r\nHost: r\r\n"
                         f"Authorization: Basic {auth}\r\n\r\n".encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        held = served.settled_rss_kib(3)
        for conn in conns:
            conn.abort()
        loop.run_until_complete(asyncio.sleep(0.2))
        stack.close()
        closed = served.settled_rss_kib(2)
    assert held - before < 48 * 1024, (before, held)
    assert closed - before < 48 * 1024, (before, closed)


NETCONF_HELLO = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>'
                 b"<capability>urn:ietf:params:netconf:base:1.0</capability></capabilities>"
                 b"</hello>]]>]]>")


def _netconf_get(command: str, message_id: str = "1") -> bytes:
    return (f'<rpc message-id="{message_id}" xmlns="urn:ietf:params:xml:ns:netconf:base:1.0">'
            f'<get><filter type="cli">{command}</filter></get></rpc>]]>]]>').encode()


def test_netconf_output_nobody_reads_is_not_made_and_holds_no_one(tmp_path: Path) -> None:
    """A NETCONF CLI get of 256 MiB on 2 sessions whose client reads nothing: the reply is made
    as the channel takes it (it was joined whole on the loop: about 1 GiB and seconds of every
    device's time), so the server's memory stays flat and another session is answered."""
    async def run(served: Served) -> tuple[int, int, float]:
        before = served.settled_rss_kib()
        conns = []
        for _ in range(2):
            conn = await asyncssh.connect("127.0.0.1", served.ssh_port, username=CREDENTIALS[0],
                                          password=CREDENTIALS[1], known_hosts=None)
            writer, _reader, _ = await conn.open_session(subsystem="netconf", encoding=None)
            writer.write(NETCONF_HELLO + _netconf_get("show bulk-output 268435456"))
            conns.append(conn)  # its reader is never read: the client's window fills
        await asyncio.sleep(2)
        held = served.settled_rss_kib(2)
        legit = await asyncssh.connect("127.0.0.1", served.ssh_port, username=CREDENTIALS[0],
                                       password=CREDENTIALS[1], known_hosts=None)
        async with legit:
            writer, reader, _ = await legit.open_session(subsystem="netconf", encoding=None)
            began = time.monotonic()
            writer.write(NETCONF_HELLO + _netconf_get("show clock", "legit"))
            answer = await asyncio.wait_for(reader.readuntil(b'message-id="legit"'), 30)
            answered = time.monotonic() - began
        assert b"<hello" in answer
        for conn in conns:
            conn.abort()
        return before, held, answered

    with serve(tmp_path) as served:
        before, held, answered = asyncio.run(run(served))
    assert held - before < 48 * 1024, (before, held)
    assert answered < 5, f"a NETCONF get waited {answered:.1f} s behind unread outputs"


def test_idle_tls_connections_hold_little_memory(tmp_path: Path) -> None:
    """asyncio gives each TLS connection a 256 KiB read buffer; the emulator shares one."""
    count = 200
    with serve(tmp_path) as served, ExitStack() as stack:
        stack.enter_context(tls(served))  # the first connection's one-off costs
        before = served.settled_rss_kib()
        for _ in range(count):
            stack.enter_context(tls(served))
        after = served.settled_rss_kib()
    per_connection = (after - before) / count
    assert per_connection < 128, f"{per_connection:.0f} KiB per idle TLS connection"


@pytest.mark.parametrize("outcome", ["raised", "refused", "kept"])
def test_open_files_limit_is_sized_to_the_sessions(outcome: str) -> None:
    """In a child process: the limit is process-wide and a lowered hard limit is for good."""
    needed = open_files_needed(EmulatorOptions())
    hard_now = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if outcome != "refused" and hard_now < needed:
        pytest.skip(f"this machine's hard limit ({hard_now}) is below {needed}")
    soft, hard = {"raised": (256, hard_now), "refused": (256, 300),
                  "kept": (hard_now, hard_now)}[outcome]
    code = f"""
import resource
from mgmtbench.emulator import EmulatorOptions
from mgmtbench.emulator.server import open_files_for
from mgmtbench.errors import UsageError
resource.setrlimit(resource.RLIMIT_NOFILE, ({soft}, {hard}))
try:
    print(open_files_for(EmulatorOptions()), resource.getrlimit(resource.RLIMIT_NOFILE)[0])
except UsageError as exc:
    print("refused:", exc)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout.strip()
    expected = {"raised": f"{needed} {needed}", "kept": f"{hard_now} {hard_now}"}.get(outcome)
    if expected is not None:
        assert out == expected
    else:
        assert out.startswith(f"refused: the open-files limit is 300 (ulimit -Hn) and 1 "
                              f"device(s) with --max-sessions 1000 need {needed}")


def test_running_out_of_descriptors_is_quiet_and_passes(tmp_path: Path) -> None:
    """Idle HTTPS connections take every descriptor the server may open: it logs a few lines
    (no traceback) while accepting fails, and serves again once they are gone (it wrote
    278,796 tracebacks in 60 s and refused logins for a minute)."""
    flags = ("--max-sessions", "20", "--max-startups", "10:30:50")
    limits = Limits(max_sessions=20, max_startups=(10, 30, 50))
    open_files = open_files_needed(EmulatorOptions(limits=limits))
    with serve(tmp_path, *flags, open_files=open_files) as served, ExitStack() as stack:
        for i in range(open_files + 50):
            try:
                stack.enter_context(socket.create_connection(
                    ("127.0.0.1", served.https_port), timeout=2,
                    source_address=(f"127.0.1.{i % 200 + 1}", 0)))
            except OSError:
                break
        time.sleep(3)  # accept() fails meanwhile, about once a second
        stack.close()
        time.sleep(1.5)
        ok = asyncio.run(_login(served))
    log = (tmp_path / "serve.log").read_text()
    assert ok, log[-2000:]
    assert "Traceback" not in log
    if _serve_loop_is_asyncio():  # uvloop's (libuv's) accept drops what it cannot take, silently
        assert "out of system resource" in log
    assert len(log.splitlines()) < 40, log[-3000:]


def _serve_loop_is_asyncio() -> bool:
    """Whether ``mgmtbench serve`` runs on asyncio's own loop (not uvloop's)."""
    loop = new_event_loop()
    loop.close()
    return isinstance(loop, asyncio.BaseEventLoop)


async def _login(served: Served) -> bool:
    async with asyncssh.connect("127.0.0.1", served.ssh_port, username=CREDENTIALS[0],
                                password=CREDENTIALS[1], known_hosts=None) as conn:
        return (await conn.run("show clock")).exit_status == 0
