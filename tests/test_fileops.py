"""File commands (copy, more, delete, startup-config, archive, configure replace) and the
questions they ask: in the SSH shell, typed answers; over SSH exec, the default answers; with
``file prompt quiet``, none. Plus the configuration comparisons of :mod:`.configdiff`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.cli.configdiff import (
    contextual_diff,
    incremental_diff,
    parse,
    replace_commands,
)
from mgmtbench.emulator.device.config import line_key
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing.shell import PROMPT, Shell, ssh_connect

FreshEmulator = Callable[..., EmulatorThread]
T = TypeVar("T")
COPIED = re.compile(r"^\d+ bytes copied in \d+\.\d{3} secs \(\d+ bytes/sec\)$", re.M)


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro
    return asyncio.run(main())


@pytest.fixture
def device(fresh_emulator: FreshEmulator) -> DeviceEndpoint:
    return fresh_emulator("cisco_ios").endpoints[0]


async def ask(shell: Shell, line: str, question: str, answer: str,
              until: re.Pattern[bytes] | bytes = PROMPT) -> str:
    """Type ``line``, wait for ``question``, answer it, read up to ``until`` (the prompt, or
    the next question); what was printed from the echo on."""
    shell.write(line.encode() + b"\r")
    asked = await shell.read_until(question.encode())
    shell.write(answer.encode() + b"\r")
    return (asked + await shell.read_until(until)).decode().replace("\r\n", "\n")


def test_copy_asks_for_the_destination_then_to_overwrite(device: DeviceEndpoint) -> None:
    async def session() -> tuple[str, str, str]:
        async with ssh_connect(device) as conn:
            shell = await Shell.open(conn)
            first = await ask(shell, "copy running-config flash:backup.cfg",
                              "Destination filename [backup.cfg]? ", "")
            again = await ask(shell, "copy run flash:backup.cfg",
                              "Destination filename [backup.cfg]? ", "", until=b"[confirm]")
            shell.write(b"\r")  # [confirm]
            again += (await shell.read_until(PROMPT)).decode().replace("\r\n", "\n")
            renamed = await ask(shell, "copy flash:backup.cfg flash:other.cfg",
                                "Destination filename [other.cfg]? ", "third.cfg")
            return first, again, renamed

    first, again, renamed = run(session())
    assert COPIED.search(first)
    assert "%Warning:There is a file already existing with this name \n" \
           "Do you want to over write? [confirm]" in again
    assert COPIED.search(again)
    assert COPIED.search(renamed)
    files = device.device.files
    running = device.device.transcript(("show", "running-config"))
    saved = files.open(files.resolve("flash:backup.cfg"))
    text = saved.read(0, saved.size).decode()
    assert text.startswith("!")
    assert text in running
    assert files.exists(files.resolve("third.cfg"))
    assert not files.exists(files.resolve("other.cfg"))


def test_delete_asks_twice_and_can_be_refused(device: DeviceEndpoint) -> None:
    async def session() -> tuple[str, str, str]:
        async with ssh_connect(device) as conn:
            shell = await Shell.open(conn)
            await ask(shell, "copy running-config flash:a.cfg", "[a.cfg]? ", "")
            kept = await ask(shell, "delete flash:a.cfg", "Delete filename [a.cfg]? ", "",
                             until=b"[confirm]")
            shell.write(b"n\r")
            kept += (await shell.read_until(PROMPT)).decode()
            listed = (await shell.command("dir")).decode()
            gone = await ask(shell, "delete a.cfg", "Delete filename [a.cfg]? ", "",
                             until=b"[confirm]")
            shell.write(b"\r")
            gone += (await shell.read_until(PROMPT)).decode()
            return kept, listed, gone + (await shell.command("dir")).decode()

    kept, listed, gone = run(session())
    assert "Delete flash:/a.cfg? [confirm]" in kept
    assert " a.cfg\r\n" in listed  # answered n: still there
    assert "Delete flash:/a.cfg? [confirm]" in gone
    assert "No files in directory" in gone


def test_file_prompt_quiet_leaves_the_questions_out(device: DeviceEndpoint) -> None:
    async def session() -> list[str]:
        async with ssh_connect(device) as conn:
            shell = await Shell.open(conn)
            outputs = []
            for line in ("configure terminal", "file prompt quiet", "end",
                         "copy running-config flash:q.cfg", "delete flash:q.cfg", "dir",
                         "more flash:q.cfg"):
                outputs.append((await shell.command(line)).decode())
            return outputs

    outputs = run(session())
    assert COPIED.fullmatch(outputs[3].strip())
    assert outputs[4] == ""
    assert "No files in directory" in outputs[5]
    assert outputs[6].strip() == "%Error opening flash:/q.cfg (No such file or directory)"


def test_exec_takes_the_default_answers(device: DeviceEndpoint) -> None:
    async def session() -> tuple[str, str, str]:
        async with ssh_connect(device) as conn:
            copy = await conn.run("copy running-config flash:exec.cfg")
            more = await conn.run("more flash:exec.cfg")
            delete = await conn.run("delete flash:exec.cfg")
            return str(copy.stdout), str(more.stdout), str(delete.stdout)

    copy, more, delete = run(session())
    assert copy.startswith("Destination filename [exec.cfg]? \n")
    assert COPIED.search(copy)
    assert f"hostname {device.hostname}\n" in more
    assert delete == "Delete filename [exec.cfg]? \nDelete flash:/exec.cfg? [confirm]\n"
    assert not device.device.files.exists(device.device.files.resolve("exec.cfg"))


def test_write_memory_saves_startup_and_archives(device: DeviceEndpoint) -> None:
    async def session() -> list[str]:
        async with ssh_connect(device) as conn:
            shell = await Shell.open(conn)
            lines = ["terminal length 0", "show archive", "configure terminal", "archive",
                     "path flash:archive", "maximum 2", "write-memory", "end", "configure terminal",
                     "interface Loopback9", "description saved", "end",
                     "write memory", "write memory", "write memory", "show archive",
                     "show startup-config", "dir"]
            return [(await shell.command(line)).decode() for line in lines]

    outputs = run(session())[1:]
    assert outputs[0] == " Archive feature not enabled\r\n"
    assert outputs[11] == "Building configuration...\r\n[OK]\r\n"
    archive = outputs[14].replace("\r\n", "\n")
    assert archive.startswith("The maximum archive configurations allowed is 2.\n"
                              "There are currently 2 archive configurations saved.\n"
                              "The next archive file will be named flash:archive-<timestamp>-3\n"
                              " Archive #  Name\n")
    rows = archive.splitlines()[4:]
    assert len(rows) == 2
    assert re.fullmatch(r"   1        flash:archive-\w{3}-\d\d-\d\d-\d\d-\d\d\.\d{3}-UTC-1", rows[0])
    assert rows[1].endswith("-UTC-2 <- Most Recent")
    assert re.match(r"Using \d+ out of 33554432 bytes\r\n", outputs[15])
    assert "interface Loopback9\r\n description saved" in outputs[15]
    assert outputs[16].count("archive-") == 2  # the oldest of 3 was deleted (maximum 2)


def test_configure_replace_asks_unless_forced(device: DeviceEndpoint) -> None:
    async def session() -> list[str]:
        async with ssh_connect(device) as conn:
            shell = await Shell.open(conn)
            outputs = [await ask(shell, "copy running-config flash:base.cfg", "? ", "")]
            outputs += [(await shell.command(line)).decode() for line in (
                "terminal length 0", "configure terminal", "interface Loopback9",
                "description added", "end")]
            outputs.append(await ask(shell, "configure replace flash:base.cfg",
                                     "Enter Y if you are sure you want to proceed. ? [no]: ",
                                     "no"))
            outputs.append((await shell.command("show running-config | include Loopback9"))
                           .decode())
            outputs.append((await shell.command("configure replace flash:base.cfg force list"))
                           .decode())
            outputs.append((await shell.command("show running-config | include Loopback9"))
                           .decode())
            return outputs

    outputs = run(session())
    assert outputs[6].endswith("? [no]: no\nR1#")
    assert "interface Loopback9" in outputs[7]  # answered no: nothing replaced
    assert outputs[8].replace("\r\n", "\n") == ("!Pass 1\n!List of Commands:\n"
                                                "no interface Loopback9\nend\n\n"
                                                "Total number of passes: 1\nRollback Done\n")
    assert "Loopback9" not in outputs[9]


def test_contextual_diff() -> None:
    old = parse("hostname R1\n!\ninterface Gi1\n description a\n shutdown\n!\nip route 0 0 1\n")
    new = parse("Building configuration...\n\nCurrent configuration : 9 bytes\n"
                "hostname R2\ninterface Gi1\n description b\n shutdown\ninterface Lo1\n"
                " ip address 1.1.1.1 255.255.255.255\nend\n")
    assert contextual_diff(old, new) == (
        "!Contextual Config Diffs:\n+hostname R2\ninterface Gi1\n +description b\n"
        "+interface Lo1\n +ip address 1.1.1.1 255.255.255.255\n"
        "-hostname R1\ninterface Gi1\n -description a\n-ip route 0 0 1\n")
    assert contextual_diff(new, new) == "!Contextual Config Diffs:\n!No changes were found\n"


def test_incremental_diff() -> None:
    running = parse("hostname R1\ninterface Gi1\n description a\n")
    merged = parse("interface gi1\n description a\n mtu 9000\nHOSTNAME R1\nend\n")
    assert incremental_diff(running, merged) == (
        "!List of Commands:\ninterface gi1\n description a\n mtu 9000\nHOSTNAME R1\nend\n")
    assert incremental_diff(running, parse("Hostname r1\n"), ignorecase=True) \
        == "!List of Commands:\nend\n!No changes were found\n"


def test_replace_commands() -> None:
    old = parse("hostname R1\ninterface Gi1\n description a\n ip address 1.1.1.1 255.0.0.0\n"
                "interface Lo9\n description gone\nntp server 1.2.3.4\n")
    new = parse("hostname R2\ninterface Gi1\n ip address 2.2.2.2 255.0.0.0\n")
    plan = [str(c) for c in replace_commands(old, new, lambda a, b: line_key(a) == line_key(b))]
    assert plan == ["interface Gi1", " no description a", "no interface Lo9",
                    "no ntp server 1.2.3.4", "hostname R2", "interface Gi1",
                    " ip address 2.2.2.2 255.0.0.0"]


def test_revert_timer_and_replace_options() -> None:
    """The revert timer at the CLI: refused without an archive, reset by ``configure revert
    timer``, run out on the device clock; ``configure replace ... revert trigger error`` puts
    the original back when a line is refused; options it does not take are refused."""
    from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
    from mgmtbench.emulator.cli.session import Mode

    dev = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"), enable_secret="x")
    cli = CliSession(dev, mode=Mode.PRIV, user="netadmin")

    def run(*lines: str) -> list[str]:
        return [cli.execute(line).output for line in lines]

    def running() -> str:
        return dev.transcript(("show", "running-config"))

    assert run("configure terminal revert timer 5") == ["%Please turn config archive on\n"]
    assert cli.mode is Mode.PRIV
    run("configure terminal", "archive", "path flash:arch", "end")
    assert run("show archive config rollback timer") == \
        ["%No Rollback Confirmed Change pending\n"]
    run("configure terminal revert timer 5", "hostname R2", "end")
    timer = run("show archive config rollback timer")[0]
    assert re.fullmatch(r"Time configured\(or reset\): \d\d:\d\d:\d\d UTC \w{3} \w{3} \d+ \d{4}\n"
                        r"Timer type: confirm timer\nTimer value: 5 min\nUser: netadmin\n", timer)
    assert "<- Most Recent" in run("show archive")[0]  # the backup went to the archive
    dev.clock.advance(240)
    run("configure revert timer 2")  # two more minutes from now
    dev.clock.advance(100)
    assert dev.hostname == "R2"
    dev.clock.advance(30)
    assert run("show clock")  # any command after the deadline reverts first
    assert dev.hostname == "R1"
    assert "hostname R1\n" in running()

    run("copy running-config flash:good.cfg")
    text = dev.files.open(dev.files.resolve("good.cfg"))
    bad = text.read(0, text.size).decode().replace("hostname R1\n", "hostname R9\nfoo bar\n")
    dev.files.open(dev.files.resolve("bad.cfg"), write=True, create=True,
                   truncate=True).write(0, bad.encode())
    out = run("configure replace flash:bad.cfg force revert trigger error")[0]
    assert "% Invalid input detected" in out
    assert out.endswith("The original configuration has been successfully restored.\n")
    assert dev.hostname == "R1"
    assert dev.saved.revert is None

    assert "^\n% Invalid input" in run("configure replace flash:good.cfg force sideways")[0]
    assert run("configure replace flash:good.cfg force timer") == ["% Incomplete command.\n\n"]
    assert run("configure confirm") == ["%No Rollback Confirmed Change pending\n"]
