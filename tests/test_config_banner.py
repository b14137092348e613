"""IOS banners of several lines (:mod:`mgmtbench.emulator.device.banner`): ``banner motd #`` and the
lines to the delimiter, kept and shown between ``^C`` and ``^C``, removed by ``no banner motd``;
typed in the SSH shell (Netmiko's ``send_config_set``), posted over HTTPS, and read back from a
configuration file (``copy``, ``configure replace``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from netmiko import ConnectHandler

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, SECRET, USERNAME
from mgmtbench.testing.shell import configure

FreshEmulator = Callable[..., EmulatorThread]
MOTD = ["banner motd #", "Authorized users only.", "", "end", "! not a comment",
        "Call 555-0100#ignored"]
SHOWN = "banner motd ^C\nAuthorized users only.\n\nend\n! not a comment\nCall 555-0100^C\n"


def device() -> Device:
    return Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"), enable_secret="x")


def running(dev: Device) -> str:
    return dev.transcript(("show", "running-config"))


def type_lines(session: CliSession, lines: list[str]) -> list[str]:
    return [session.execute(line).output for line in lines]


def test_lines_to_the_delimiter_are_the_text_shown_between_caret_cs() -> None:
    dev = device()
    session = CliSession(dev, mode=Mode.CONFIG)
    printed = type_lines(session, ["interface Loopback5", MOTD[0]])
    assert printed[1] == "Enter TEXT message.  End with the character '#'.\n"
    assert session.prompt == ""  # no prompt while the text is typed
    assert type_lines(session, MOTD[1:]) == [""] * 5
    assert session.prompt == "R1(config)#"  # the banner left the interface's sub-mode
    assert SHOWN in running(dev)
    assert session.mode is Mode.CONFIG  # `end` was text, not the command

    type_lines(session, ["banner exec %one line% trailing", "banner login ^Cnew login^C"])
    assert "banner exec ^Cone line^C\n" in running(dev)
    assert running(dev).count("banner login") == 1  # a new banner replaces the old
    assert "banner login ^Cnew login^C\n" in running(dev)

    type_lines(session, ["no banner motd", "no banner exec"])
    text = running(dev)
    assert "banner motd" not in text
    assert "Authorized users only" not in text
    assert "banner exec" not in text


def test_section_filter_keeps_all_the_lines_of_a_banner() -> None:
    dev = device()
    type_lines(CliSession(dev, mode=Mode.CONFIG), MOTD)
    show = CliSession(dev, mode=Mode.PRIV)
    assert show.execute("show running-config | section banner motd").output == SHOWN
    both = show.execute("show running-config | section banner").output
    assert both == "banner login ^CAuthorized access only. All activity is monitored and " \
                   "logged.^C\n" + SHOWN
    # A line of the text that matches selects the whole banner, and nothing after it.
    assert show.execute("show running-config | section 555-0100").output == SHOWN


def test_a_banner_read_back_from_a_file_is_the_same_banner() -> None:
    dev = device()
    session = CliSession(dev, mode=Mode.CONFIG)
    type_lines(session, MOTD)
    session.end_config()
    type_lines(session, ["copy running-config flash:saved.cfg", "configure terminal",
                         "no banner motd", "end"])
    assert "banner motd" not in running(dev)
    merged = session.execute("copy flash:saved.cfg running-config").output
    assert SHOWN in running(dev)
    assert "Authorized users only.\n" not in merged  # no text line was taken as a command
    diff = session.execute("show archive config differences flash:saved.cfg "
                           "system:running-config").output
    assert "banner" not in diff
    assert "Authorized" not in diff

    type_lines(session, ["configure terminal", "banner motd ^C", "other", "^C", "end"])
    assert "banner motd ^C\nother\n^C\n" in running(dev)
    replaced = session.execute("configure replace flash:saved.cfg force").output
    assert replaced.endswith("Rollback Done\n")
    assert SHOWN in running(dev)
    assert "\nother\n" not in running(dev)


def test_ctrl_c_or_end_of_config_mode_drops_the_text() -> None:
    dev = device()
    session = CliSession(dev, mode=Mode.CONFIG)
    type_lines(session, ["banner motd #", "half typed"])
    session.end_config()  # what the shell does on Ctrl-C
    assert session.prompt == "R1#"
    assert "half typed" not in running(dev)


def test_netmiko_send_config_set_with_a_banner(fresh_emulator: FreshEmulator,
                                               tmp_path: Path) -> None:
    endpoint = fresh_emulator("cisco_ios").endpoints[0]
    conn = ConnectHandler(device_type="cisco_ios", host=endpoint.host, port=endpoint.ssh_port,
                          username=USERNAME, password=PASSWORD, secret=SECRET,
                          session_log=str(tmp_path / "netmiko.log"))
    try:
        output = conn.send_config_set([*MOTD, "hostname R7"])
        shown = str(conn.send_command("show running-config | begin banner motd"))
    finally:
        conn.disconnect()
    assert "Enter TEXT message.  End with the character '#'." in output
    assert "Invalid input" not in output
    assert shown.startswith(SHOWN.rstrip("\n"))
    assert endpoint.device.hostname == "R7"  # the line after the banner was a command again


@pytest.mark.parametrize("transport", ["https", "shell-single-line"])
def test_banner_over_https_and_on_one_line(fresh_emulator: FreshEmulator,
                                           transport: str) -> None:
    emu = fresh_emulator("cisco_ios")
    if transport == "https":
        printed = configure(emu, "https", [*MOTD, "hostname R8"])
        assert "Enter TEXT message.  End with the character '#'." in printed
        assert SHOWN in running(emu.endpoints[0].device)
        assert emu.endpoints[0].device.hostname == "R8"
    else:
        printed = configure(emu, "shell", ["banner motd #Authorized users only.#"])
        assert "Invalid input" not in printed
        assert "banner motd ^CAuthorized users only.^C\n" in running(emu.endpoints[0].device)
