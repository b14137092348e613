"""What automation tools send before their first command, on every platform: each line is taken
with the platform's own answer (a refused one breaks the tool: Ansible's cisco.asa read only the
first page after ``no terminal pager`` failed), and saving the configuration is answered in each
platform's own words (NAPALM's nxos_ssh looks for "complete")."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import SECRET
from mgmtbench.testing.shell import Shell, ssh_connect


def session(platform: str) -> CliSession:
    device = Device(load_platform(platform), DeviceFacts.for_hostname("R1"), enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="netadmin", peer="198.18.0.10")


@pytest.mark.parametrize(("platform", "line", "answer"), [
    ("cisco_asa", "no terminal pager", ""),              # Ansible cisco.asa
    ("cisco_nxos", "terminal session-timeout 0", ""),    # pyATS
    ("cisco_nxos", "terminal dont-ask", ""),             # NAPALM nxos_ssh
    ("arista_eos", "terminal dont-ask", ""),
    ("juniper_junos", "set cli timestamp disable", ""),  # Ansible junipernetworks.junos
    ("juniper_junos", "set cli screen-width 1024", "Screen width set to 1024\n"),
    ("cisco_ios", "terminal width 512", ""),             # Ansible cisco.ios, scrapli
    ("arista_eos", "terminal width 512", "Width set to 512 columns.\n"),
])
def test_what_tools_send_first_is_taken(platform: str, line: str, answer: str) -> None:
    reply = session(platform).execute(line)
    assert reply.ok, reply.text()
    assert reply.text() == answer


def test_the_config_lines_pyats_sends_to_ios_are_taken_and_shown_as_ios_shows_them() -> None:
    cli = session("cisco_ios")
    for line in ("configure terminal", "no logging console", "line console 0", "exec-timeout 0",
                 "end"):
        reply = cli.execute(line)
        assert reply.ok, f"{line}: {reply.text()}"
    shown = cli.execute("show running-config").text()
    block = shown.split("line con 0\n", 1)[1].split("line ", 1)[0]
    assert [n for n in block.splitlines() if "exec-timeout" in n] == [" exec-timeout 0"]
    assert "line console" not in shown  # one block, as IOS keeps it


@pytest.mark.parametrize(("platform", "line", "says"), [
    ("cisco_nxos", "copy running-config startup-config", "Copy complete.\n"),
    ("arista_eos", "copy running-config startup-config", "Copy completed successfully.\n"),
    ("arista_eos", "write memory", "Copy completed successfully.\n"),
    ("cisco_ios", "write memory", "Building configuration...\n[OK]\n"),
])
def test_saving_is_answered_in_the_platforms_words(platform: str, line: str, says: str) -> None:
    reply = session(platform).execute(line)
    assert reply.ok
    assert reply.text().endswith(says)
    assert platform == "cisco_ios" or "Building configuration" not in reply.text()


def test_asa_write_memory_prints_its_checksum_and_size() -> None:
    cli = session("cisco_asa")
    text = cli.execute("write memory").text()
    assert text.startswith("Building configuration...\nCryptochecksum: ")
    assert " bytes copied in " in text
    assert text.endswith("[OK]\n")
    assert cli.device.saved.startup  # and it saved


def test_no_terminal_pager_turns_the_asa_shell_pager_off(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for("cisco_asa").endpoints[0]

    async def go() -> bytes:
        async with ssh_connect(endpoint) as conn:
            shell = await Shell.open(conn)
            await shell.enable(SECRET)
            await shell.command("no terminal pager")
            return await shell.command("show running-config")

    shown = asyncio.run(go())
    assert b"<--- More --->" not in shown
    assert shown.count(b"\r\n") > 100  # the whole configuration, not its first page
