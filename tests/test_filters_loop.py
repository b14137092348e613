"""Output filters cannot hold the event loop (issue 33): an expression a backtracking engine takes
seconds on is answered at once (RE2), one RE2 refuses is invalid input, and a long output a
filter keeps nothing of leaves other clients served while it is worked. Each test runs
``mgmtbench serve`` on loopback ports; every wait is bounded."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import asyncssh
import httpx

from tests.serve_support import Served, serve

CREDENTIALS = ("admin", "admin")  # `mgmtbench serve`'s defaults


async def _login(served: Served) -> asyncssh.SSHClientConnection:
    return await asyncio.wait_for(asyncssh.connect(
        "127.0.0.1", served.ssh_port, username=CREDENTIALS[0], password=CREDENTIALS[1],
        known_hosts=None), 30)


async def _run(conn: asyncssh.SSHClientConnection, command: str) -> tuple[str, float]:
    began = time.monotonic()
    result = await asyncio.wait_for(conn.run(command), 60)
    return str(result.stdout), time.monotonic() - began


def test_expressions_run_in_linear_time_and_re2_refusals_are_invalid_input(
        tmp_path: Path) -> None:
    """``.*`` nine times then a character the line lacks, on one 32-character line: Python's
    ``re`` took 13.7 s here, with every client of the server waiting; RE2 answers at once.
    A backreference (which RE2 cannot run in linear time) is refused as invalid input, and an
    ordinary filter keeps what it kept."""

    async def check(served: Served) -> None:
        async with await _login(served) as conn:
            out, seconds = await _run(conn, "show bulk-output 33 | include " + ".*" * 9 + "!")
            assert out == ""
            assert seconds < 5  # generous: the fix makes it milliseconds, before it was 13 s
            out, _ = await _run(conn, "show bulk-output 33 | include ^00000000 mgm")
            assert out.startswith("00000000 mgm")
            assert out.count("\n") == 1
            out, _ = await _run(conn, r"show bulk-output 640 | include (0)\1")
            assert "% Invalid input" in out
            # ^ and $ are a line's ends; no match crosses a newline
            out, _ = await _run(conn, r"show bulk-output 640 | include v\s00")
            assert out == ""
            out, _ = await _run(conn, "show bulk-output 640 | count stuv$")
            assert "Number of lines which match regexp = 10" in out

    with serve(tmp_path) as served:
        asyncio.run(check(served))
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_other_clients_are_served_while_a_filter_works_through_a_long_output(
        tmp_path: Path) -> None:
    """``show bulk-output 67108864 | section ZZZZ`` (64 MiB, nothing kept, so the channel's
    window never stops the work): another client logs in and gets ``show version`` while it
    runs, over SSH exec and in a paged shell (before, the whole output was filtered in one go
    on the event loop: 7.2 s for 256 MiB, every client waiting)."""
    command = "show bulk-output 67108864 | section ZZZZ"

    async def shell_bulk(conn: asyncssh.SSHClientConnection) -> str:
        process = await conn.create_process(term_type="vt100")
        process.stdin.write(command + "\nexit\n")
        return str(await asyncio.wait_for(process.stdout.read(), 60))

    async def check(served: Served) -> None:
        for attack in ("exec", "shell"):
            async with await _login(served) as hostile:
                bulk = asyncio.ensure_future(
                    _run(hostile, command) if attack == "exec" else shell_bulk(hostile))
                await asyncio.sleep(0.3)
                async with await _login(served) as legit:
                    out, _ = await _run(legit, "show version")
                assert "uptime" in out
                assert not bulk.done(), f"{attack}: the legit client waited for the filter"
                await asyncio.wait_for(bulk, 60)

    with serve(tmp_path) as served:
        asyncio.run(check(served))
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


def test_other_clients_are_served_while_a_long_configuration_post_runs(tmp_path: Path) -> None:
    """Three POSTs of 9,000 configuration lines at once take the device seconds: another
    client logs in and gets ``show version`` meanwhile (each POST lets the loop run every 20 ms
    of its work; one POST, made faster since, once ended before the login on a busy machine).
    Then their removals, 9,000 lines a POST, answer 200, without a traceback (the soak's flood:
    they failed once removed lines were compacted away under the separator check)."""
    routes = [f"ip route 10.7.{i // 256}.{i % 256} 255.255.255.255 Null0" for i in range(27000)]
    parts = [routes[at:at + 9000] for at in range(0, len(routes), 9000)]

    async def post(served: Served, lines: list[str]) -> httpx.Response:
        async with httpx.AsyncClient(verify=served.context, auth=CREDENTIALS,
                                     timeout=120) as client:
            return await client.post(f"https://127.0.0.1:{served.https_port}/admin/config",
                                     content="\n".join(lines))

    async def check(served: Served) -> None:
        adding = [asyncio.ensure_future(post(served, part)) for part in parts]
        await asyncio.sleep(0.3)
        async with await _login(served) as legit:
            out, _ = await _run(legit, "show version")
        assert "uptime" in out
        assert not all(task.done() for task in adding), "the legit client waited for the POSTs"
        assert [(await task).status_code for task in adding] == [200] * len(parts)
        for part in parts:
            removing = await post(served, ["no " + line for line in part])
            assert removing.status_code == 200, removing.text[-500:]
        async with await _login(served) as legit:
            out, _ = await _run(legit, "show running-config | include ip route 10.7.")
        assert "ip route 10.7." not in out

    with serve(tmp_path) as served:
        asyncio.run(check(served))
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
