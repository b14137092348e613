"""An ASA's ``copy`` and ``delete`` (:mod:`mgmtbench.emulator.cli.asafileops`): the questions in the
SSH shell, ``/noconfirm``, the default answers over SSH exec, and a copy to the running
configuration that merges."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import SECRET
from mgmtbench.testing.shell import PROMPT, Shell, ssh_connect

FreshEmulator = Callable[..., EmulatorThread]
T = TypeVar("T")
COPIED = re.compile(r"^\d+ bytes copied in \d+\.\d{3} secs$", re.M)
CHECKSUM = re.compile(r"^Cryptochecksum: [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8} $", re.M)


def run(coro: Awaitable[T]) -> T:
    async def main() -> T:
        return await coro
    return asyncio.run(main())


@pytest.fixture
def asa_device(fresh_emulator: FreshEmulator) -> DeviceEndpoint:
    return fresh_emulator("cisco_asa").endpoints[0]


async def privileged(shell: Shell) -> Shell:
    await shell.enable(SECRET)
    return shell


async def ask(shell: Shell, line: str, question: str, answer: str,
              until: re.Pattern[bytes] | bytes = PROMPT) -> str:
    """Type ``line``, wait for ``question``, answer it, read up to ``until``."""
    shell.write(line.encode() + b"\r")
    asked = await shell.read_until(question.encode())
    shell.write(answer.encode() + b"\r")
    return (asked + await shell.read_until(until)).decode().replace("\r\n", "\n")


def file_text(endpoint: DeviceEndpoint, path: str) -> str:
    files = endpoint.device.files
    handle = files.open(files.resolve(path))
    return handle.read(0, handle.size).decode()


def test_copy_asks_source_destination_then_to_overwrite(asa_device: DeviceEndpoint) -> None:
    async def session() -> tuple[str, str]:
        async with ssh_connect(asa_device) as conn:
            shell = await privileged(await Shell.open(conn))
            first = await ask(shell, "copy running-config disk0:/backup.cfg",
                              "Source filename [running-config]? ", "",
                              until=b"Destination filename [backup.cfg]? ")
            shell.write(b"\r")
            first += (await shell.read_until(PROMPT)).decode().replace("\r\n", "\n")
            again = await ask(shell, "copy running-config flash:/backup.cfg",
                              "Source filename [running-config]? ", "",
                              until=b"Destination filename [backup.cfg]? ")
            shell.write(b"renamed.cfg\r")
            again += (await shell.read_until(PROMPT)).decode().replace("\r\n", "\n")
            return first, again

    first, again = run(session())
    assert "copy running-config disk0:/backup.cfg\n\nSource filename [running-config]? \n\n" \
           "Destination filename [backup.cfg]? " in first
    assert CHECKSUM.search(first)
    assert COPIED.search(first)
    assert COPIED.search(again)
    assert "over write" not in again  # renamed: a new file, nothing to overwrite
    running = asa_device.device.transcript(("show", "running-config"))
    assert file_text(asa_device, "disk0:/backup.cfg") == running
    assert file_text(asa_device, "renamed.cfg") == running


def test_copy_over_a_file_asks_to_overwrite_and_can_be_refused(
        asa_device: DeviceEndpoint) -> None:
    files = asa_device.device.files
    files.open(files.resolve("old.cfg"), write=True, create=True).write(0, b"old\n")

    async def session() -> str:
        async with ssh_connect(asa_device) as conn:
            shell = await privileged(await Shell.open(conn))
            out = await ask(shell, "copy running-config disk0:/old.cfg",
                            "Source filename [running-config]? ", "",
                            until=b"Destination filename [old.cfg]? ")
            shell.write(b"\r")
            out += (await shell.read_until(b"[confirm]")).decode()
            shell.write(b"n\r")
            return out + (await shell.read_until(PROMPT)).decode()

    out = run(session())
    assert "Do you want to over write? [confirm]" in out
    assert "bytes copied" not in out
    assert file_text(asa_device, "old.cfg") == "old\n"


def test_noconfirm_and_exec_default_answers(asa_device: DeviceEndpoint) -> None:
    async def session() -> list[str]:
        async with ssh_connect(asa_device) as conn:
            shell = await privileged(await Shell.open(conn))
            quiet = [(await shell.command(line)).decode().replace("\r\n", "\n") for line in (
                "copy /noconfirm running-config disk0:/q.cfg",
                "delete /noconfirm disk0:/q.cfg",
                "delete /noconfirm disk0:/q.cfg")]
            copy = await conn.run("copy running-config disk0:/e.cfg")  # exec: privileged
            listed = await conn.run("dir")
            delete = await conn.run("delete disk0:/e.cfg")
            return [*quiet, str(copy.stdout), str(listed.stdout), str(delete.stdout)]

    quiet_copy, deleted, again, copy, listed, delete = run(session())
    assert CHECKSUM.search(quiet_copy)
    assert COPIED.search(quiet_copy)
    assert "Source filename" not in quiet_copy
    assert deleted == ""
    assert again.strip() == "%Error deleting disk0:/q.cfg (No such file or directory)"
    # Over SSH exec, no terminal answers: the questions are printed and their defaults taken.
    assert copy.startswith("\nSource filename [running-config]? \n\n"
                           "Destination filename [e.cfg]? \nCryptochecksum: ")
    assert " e.cfg\n" in listed
    assert delete == "\nDelete filename [e.cfg]? \n\nDelete disk0:/e.cfg? [confirm]\n"
    files = asa_device.device.files
    assert not files.exists(files.resolve("e.cfg"))


def test_delete_asks_twice(asa_device: DeviceEndpoint) -> None:
    files = asa_device.device.files
    files.open(files.resolve("a.cfg"), write=True, create=True).write(0, b"x\n")

    async def session() -> str:
        async with ssh_connect(asa_device) as conn:
            shell = await privileged(await Shell.open(conn))
            out = await ask(shell, "delete disk0:/a.cfg", "Delete filename [a.cfg]? ", "",
                            until=b"[confirm]")
            shell.write(b"\r")
            return out + (await shell.read_until(PROMPT)).decode()

    out = run(session())
    assert "Delete filename [a.cfg]? \n\nDelete disk0:/a.cfg? [confirm]" in out
    assert not files.exists(files.resolve("a.cfg"))


def test_copy_file_to_running_config_merges(asa_device: DeviceEndpoint) -> None:
    files = asa_device.device.files
    text = ": a saved part\ninterface Management0/0\n description merged-from-disk\n" \
           "Cryptochecksum:00000000000000000000000000000000\nnot-a-command here\n"
    files.open(files.resolve("part.cfg"), write=True, create=True).write(0, text.encode())

    async def session() -> str:
        async with ssh_connect(asa_device) as conn:
            shell = await privileged(await Shell.open(conn))
            return (await shell.command(
                "copy /noconfirm disk0:/part.cfg running-config")).decode()

    out = run(session())
    assert out.count("Invalid input detected") == 1  # the one line that is no command
    assert COPIED.search(out.replace("\r\n", "\n"))
    running = asa_device.device.transcript(("show", "running-config"))
    assert "interface Management0/0\n description merged-from-disk\n" in running
