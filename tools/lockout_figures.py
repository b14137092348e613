"""Before/after figures for issue 33's lock-out lines, against a ``mgmtbench serve`` this script
starts on loopback from a tree (``--src``; see ``tools/soakbase.py``):

    python tools/lockout_figures.py https-fill --src SRC    # 4 sources x 250 idle TLS, then a 5th
    python tools/lockout_figures.py ssh-preauth --src SRC   # 12 sources x 9 silent SSH, then a 13th
    python tools/lockout_figures.py unsent-body --src SRC   # 401 to a POST whose body never comes

Each prints one line. Every connection has a time-out; nothing leaves 127.0.0.0/8.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import resource
import socket
import tempfile
import time
from pathlib import Path

import asyncssh
from soakbase import PASSWORD, USER, Server, get, https_request, start_server


def hold(port: int, sources: list[str], each: int) -> list[socket.socket]:
    """``each`` silent TCP connections to ``port`` from every source (nothing sent)."""
    held = []
    for source in sources:
        for _ in range(each):
            with contextlib.suppress(OSError):
                held.append(socket.create_connection(("127.0.0.1", port), timeout=5,
                                                     source_address=(source, 0)))
    return held


async def https_tries(server: Server, tries: int) -> int:
    ok = 0
    for _ in range(tries):
        with contextlib.suppress(OSError, TimeoutError, asyncio.IncompleteReadError,
                                 IndexError, ValueError):
            ok += await https_request(server, get("/admin/exec/show+clock"), "127.0.0.90",
                                      timeout=10) == 200
    return ok


async def ssh_tries(server: Server, tries: int) -> int:
    ok = 0
    for _ in range(tries):
        with contextlib.suppress(OSError, asyncssh.Error, TimeoutError):
            async with asyncio.timeout(15):
                conn = await asyncssh.connect(
                    "127.0.0.1", server.ssh_port, username=USER, password=PASSWORD,
                    known_hosts=None, local_addr=("127.0.0.91", 0))
                async with conn:
                    ok += (await conn.run("show clock")).exit_status == 0
    return ok


async def unsent_body(server: Server, limit: float) -> float:
    """Seconds until the server closes a connection whose POST got a 401 and never its body."""
    wrong = "Basic " + base64.b64encode(b"admin:wrong").decode()
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", server.https_port, ssl=server.context, local_addr=("127.0.0.92", 0))
    began = time.monotonic()
    writer.write(f"POST /admin/config HTTP/1.1\r\nHost: r\r\nAuthorization: {wrong}\r\n"
                 "Content-Length: 100000\r\n\r\n".encode())
    with contextlib.suppress(TimeoutError, OSError):
        async with asyncio.timeout(limit):
            while await reader.read(4096):
                pass
    writer.close()
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("attack", choices=("https-fill", "ssh-preauth", "unsent-body"))
    parser.add_argument("--src", default=None, help="PYTHONPATH of the mgmtbench to serve")
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    workdir = Path(tempfile.mkdtemp(prefix="mgmtbench-lockout-"))
    server = start_server(workdir, [], args.src, 4096)
    try:
        if args.attack == "https-fill":
            held = hold(server.https_port, [f"127.0.0.{60 + i}" for i in range(4)], 250)
            time.sleep(1)
            ok = asyncio.run(https_tries(server, 10))
            print(f"https-fill: {len(held)} idle connections held from 4 sources; a 5th "
                  f"address: {ok} of 10 requests answered 200")
        elif args.attack == "ssh-preauth":
            held = hold(server.ssh_port, [f"127.0.0.{60 + i}" for i in range(12)], 9)
            time.sleep(1)
            ok = asyncio.run(ssh_tries(server, 20))
            print(f"ssh-preauth: {len(held)} silent connections held from 12 sources; a 13th "
                  f"address: {ok} of 20 logins ran show clock")
        else:
            seconds = asyncio.run(unsent_body(server, 300))
            print(f"unsent-body: the connection closed {seconds:.1f} s after the 401 "
                  "(300 s: still open)")
    finally:
        server.process.terminate()
        server.process.wait(timeout=20)


if __name__ == "__main__":
    main()
