"""CLI exec requests answered in the turn they arrive in (:mod:`mgmtbench.emulator.ssh.exec`), and
what they hand to an asyncssh process: each path against a real asyncssh client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import asyncssh
import pytest

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.cli.engine import CHUNK, bulk_output
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.emulator.ssh.bulk import source_command
from mgmtbench.testing.shell import Shell, ssh_connect

FreshEmulator = Callable[..., EmulatorThread]


def clock(endpoint: DeviceEndpoint) -> str:
    return endpoint.device.transcript(("show", "clock"))


def test_short_long_short_in_one_request(ios: DeviceEndpoint) -> None:
    """A reply longer than a chunk between two short ones: the first goes out at once, the long
    one from a task a chunk at a time, and the third after it, in order."""
    size = 3 * CHUNK + 17

    async def go() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(ios) as conn:
            return await conn.run(f"show clock\nshow bulk-output {size}\nshow clock",
                                  encoding=None)

    result = asyncio.run(go())
    out = result.stdout
    assert isinstance(out, bytes)
    first = clock(ios).encode()
    assert result.exit_status == 0
    assert len(out) == 2 * len(first) + size
    assert same_output("cisco_ios", out[:len(first)].decode(), first.decode())
    assert same_output("cisco_ios", out[-len(first):].decode(), first.decode())
    assert out[len(first):-len(first)] == bulk_output(size).encode()


def test_a_window_smaller_than_the_output(ios: DeviceEndpoint) -> None:
    """The client's window takes 1 KiB at a time: the output still arrives whole, then the
    exit status."""
    expected = ios.device.transcript(("show", "running-config"))

    async def go() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(ios) as conn:
            return await conn.run("show running-config", window=1024, max_pktsize=512)

    result = asyncio.run(go())
    assert result.exit_status == 0
    assert len(str(result.stdout)) == len(expected) > 1024
    assert str(result.stdout).splitlines()[-3:] == expected.splitlines()[-3:]


def test_a_failed_command_and_too_many_commands_set_the_exit_status(
        fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(https=False, limits=Limits(max_commands=3)).endpoints[0]

    async def go() -> list[tuple[int | None, str]]:
        async with ssh_connect(endpoint) as conn:
            return [((r := await conn.run(command)).exit_status, str(r.stdout))
                    for command in ("show clock\nshow nothing-here", "show clock\n" * 4)]

    (failed, failed_out), (refused, refused_out) = asyncio.run(go())
    assert failed == 1
    assert "% Invalid input" in failed_out
    assert refused == 1
    assert refused_out == "% Too many commands in one request: 4 (limit 3)\n"


def test_input_and_eof_from_the_client_do_not_cut_the_output(ios: DeviceEndpoint) -> None:
    """A CLI exec reads no stdin: what the client sends is dropped, its EOF ends nothing."""
    size = 2 * CHUNK

    async def go() -> tuple[bytes, int | None]:
        async with ssh_connect(ios) as conn:
            process = await conn.create_process(f"show bulk-output {size}", encoding=None)
            process.stdin.write(b"show version\n" * 100)
            process.stdin.write_eof()
            out = await process.stdout.read()
            await process.wait()
            return out, process.exit_status

    out, status = asyncio.run(go())
    assert (len(out), status) == (size, 0)


def test_concurrent_execs_on_one_connection(ios: DeviceEndpoint) -> None:
    async def go() -> list[str]:
        async with ssh_connect(ios) as conn:
            results = await asyncio.gather(*(conn.run("show version") for _ in range(8)))
            return [str(r.stdout) for r in results]

    expected = ios.device.transcript(("show", "version"))
    assert all(same_output("cisco_ios", out, expected) for out in asyncio.run(go()))


def test_every_kind_of_session_gives_its_channel_back(fresh_emulator: FreshEmulator) -> None:
    """With 2 sessions per connection, one after another: CLI execs, the bulk source (an
    asyncssh process), shells, SFTP and a refused exec request each free their slot when they
    close, and the execs are counted."""
    endpoint = fresh_emulator(https=False, limits=Limits(max_channels=2)).endpoints[0]

    async def go() -> None:
        async with ssh_connect(endpoint) as conn:
            for _ in range(5):
                assert (await conn.run("show clock")).exit_status == 0
                assert (await conn.run(source_command(1000), encoding=None)).exit_status == 0
                shell = await Shell.open(conn)
                shell.process.close()
                await shell.process.wait_closed()
                async with conn.start_sftp_client() as sftp:
                    await sftp.listdir(".")
            # Two at once still fit: nothing was left counted.
            both = await asyncio.gather(conn.run("show clock"), conn.run("show clock"))
            assert [r.exit_status for r in both] == [0, 0]

    asyncio.run(go())
    assert endpoint.ssh_counts.refused_channels == 0
    assert endpoint.ssh_counts.execs == 12  # 5 CLI + 5 bulk + 2 CLI
    assert endpoint.ssh_counts.shells == 5


def test_asyncssh_debug_log_still_has_the_server_side(
        fresh_emulator: FreshEmulator, caplog: pytest.LogCaptureFixture) -> None:
    """asyncssh's log lines are only left unformatted while nothing prints them: at its debug
    level 3 the server's packets (and its exec's command) are logged."""
    endpoint = fresh_emulator(https=False).endpoints[0]
    asyncssh.set_debug_level(3)
    try:
        with caplog.at_level(logging.DEBUG, logger="asyncssh"):
            async def go() -> None:
                async with ssh_connect(endpoint) as conn:
                    await conn.run("show clock", check=True)

            asyncio.run(go())
    finally:
        asyncssh.set_debug_level(1)
        logging.getLogger("asyncssh").setLevel(logging.WARNING)
    text = caplog.text
    assert "Command: show clock" in text  # the server channel's own line
    assert "Sent MSG_CHANNEL_OPEN_CONFIRMATION" in text  # a server connection's packet
    assert "Sent MSG_CHANNEL_SUCCESS" in text  # a server channel's packet


def test_a_channel_closed_is_free_for_the_very_next_open(fresh_emulator: FreshEmulator) -> None:
    """One session per connection: each exec's channel opens right after the client's close of
    the one before (often in the same read); the slot is free by then, as on a device."""
    endpoint = fresh_emulator(https=False, limits=Limits(max_channels=1)).endpoints[0]

    async def go() -> list[int | None]:
        async with ssh_connect(endpoint) as conn:
            return [(await conn.run("show clock")).exit_status for _ in range(100)]

    assert asyncio.run(go()) == [0] * 100
    assert endpoint.ssh_counts.refused_channels == 0
