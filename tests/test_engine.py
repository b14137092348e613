"""The command engine on the bundled platforms: transcripts, abbreviations, errors, modes, config."""

from __future__ import annotations

from pathlib import Path

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
from mgmtbench.emulator.cli.engine import bulk_output
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.device.identity import made_own
from mgmtbench.emulator.device.transcripts import available_platforms, render
from mgmtbench.emulator.oracle import stable_output
from mgmtbench.errors import TranscriptError

PLATFORMS = ("cisco_ios", "cisco_asa")
REQUIRED = {
    "cisco_ios": ["show version", "show running-config", "show interfaces", "show ip route",
                  "show inventory", "show clock"],
    "cisco_asa": ["show version", "show running-config", "show interface", "show route",
                  "show inventory", "show clock"],
}


def make_device(platform: str, hostname: str = "edge1") -> Device:
    return Device(load_platform(platform), DeviceFacts.for_hostname(hostname), enable_secret="en")


def priv(device: Device) -> CliSession:
    return CliSession(device, mode=Mode.PRIV)


def test_bundled_platforms_are_found() -> None:
    assert set(PLATFORMS) <= set(available_platforms())


@pytest.mark.parametrize("platform", PLATFORMS)
def test_required_commands_exist(platform: str) -> None:
    session = priv(make_device(platform))
    for command in REQUIRED[platform]:
        reply = session.execute(command)
        assert reply.ok, command
        assert len(reply.output) > 20, command


@pytest.mark.parametrize("platform", PLATFORMS)
def test_every_transcript_answers_its_command(platform: str) -> None:
    device = make_device(platform)
    session = priv(device)
    for words, template in device.platform.transcripts.items():
        reply = session.execute(" ".join(words))
        assert reply.ok, words
        # The clock's placeholders as of now; stable forms: the clock ran on in between.
        want = render(made_own(template, device.facts.mac, device.facts.serial),
                      {**device.facts.as_dict(), **device.clock.values()})
        assert stable_output(platform, reply.output) == stable_output(platform, want), words
        assert "{{" not in reply.output


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_26k_output_exists(platform: str) -> None:
    device = make_device(platform)
    sizes = [len(device.transcript(w)) for w in device.platform.transcripts]
    assert any(25_000 <= size <= 27_500 for size in sizes), sorted(sizes)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_hostname_and_facts_are_templated(platform: str) -> None:
    device = make_device(platform, "core-sw-9")
    version = priv(device).execute("show version").output
    assert "core-sw-9" in version
    assert device.facts.serial in version
    assert "hostname core-sw-9" in priv(device).execute("show running-config").output


@pytest.mark.parametrize("platform", PLATFORMS)
def test_abbreviations_match_full_commands(platform: str) -> None:
    session = priv(make_device(platform))
    assert session.execute("sh ver").output == session.execute("show version").output
    assert session.execute("sh run").output == session.execute("show running-config").output


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("cisco_ios", " " * 8 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_asa", " " * 9 + "^\nERROR: % Invalid input detected at '^' marker.\n"),
    ],
    ids=["cisco_ios", "cisco_asa"],
)
def test_invalid_input_caret_under_the_bad_word(platform: str, expected: str) -> None:
    session = priv(make_device(platform, "R1"))  # prompt "R1#" (+ " " on ASA)
    reply = session.execute("show zzz")  # no show command starts with "z": caret under it
    assert not reply.ok
    assert reply.output == expected


@pytest.mark.parametrize("platform", PLATFORMS)
def test_ambiguous_and_incomplete(platform: str) -> None:
    session = priv(make_device(platform))
    ambiguous = session.execute("sh i")
    assert not ambiguous.ok
    assert 'Ambiguous command:  "sh i"' in ambiguous.output
    incomplete = session.execute("show")
    assert not incomplete.ok
    assert incomplete.output == {  # IOS hints at `show ?` where an ASA says incomplete
        "cisco_ios": '% Type "show ?" for a list of subcommands\n',
        "cisco_asa": "ERROR: % Incomplete command\n"}[platform]
    assert "Incomplete command" in session.execute("show ip" if platform == "cisco_ios"
                                                   else "terminal").output


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(
    "line", ["show ../../etc/passwd", "show version/../../../etc/passwd", "show /etc/passwd",
             "show running-config; cat /etc/passwd"]
)
def test_a_command_never_becomes_a_path(platform: str, line: str) -> None:
    reply = priv(make_device(platform)).execute(line)
    assert not reply.ok
    assert "Invalid input" in reply.output
    assert "root:" not in reply.output


def test_overlong_line_is_invalid() -> None:
    session = CliSession(make_device("cisco_ios"), mode=Mode.PRIV, max_line=100)
    reply = session.execute("show version " + "x" * 200)
    assert not reply.ok
    assert "Invalid input" in reply.output


@pytest.mark.parametrize("platform", PLATFORMS)
def test_user_mode_enable_and_privileges(platform: str) -> None:
    device = make_device(platform, "R1")
    session = CliSession(device)
    assert session.prompt.rstrip() == "R1>"
    assert not session.execute("show running-config").ok
    assert session.execute("show version").ok
    reply = session.execute("enable")
    assert reply.ask_secret
    assert not session.enable("wrong").ok
    assert session.mode is Mode.USER
    assert session.enable("en").ok
    assert session.prompt.rstrip() == "R1#"
    assert session.execute("show running-config").ok
    session.execute("disable")
    assert session.prompt.rstrip() == "R1>"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_configuration_changes_show_in_running_config(platform: str) -> None:
    device = make_device(platform, "R1")
    session = priv(device)
    session.execute("configure terminal")
    assert session.prompt.rstrip() == "R1(config)#"
    session.execute("interface Loopback42")
    assert session.prompt.rstrip() == "R1(config-if)#"
    session.execute("description first")
    session.execute("description set by test")
    session.execute("ip address 198.18.42.1 255.255.255.255")
    session.execute("exit")
    session.execute("int lo43")
    assert session.prompt.rstrip() == "R1(config-if)#"
    session.execute("end")
    assert session.mode is Mode.PRIV
    config = session.execute("show running-config").output
    block = "interface Loopback42\n description set by test\n ip address 198.18.42.1 " \
            "255.255.255.255\n"
    assert block in config
    assert "description first" not in config
    assert "interface Loopback43\n" in config
    session.execute("configure terminal")
    session.execute("interface Loopback42")
    session.execute("no description")
    session.execute("exit")
    session.execute("no interface Loopback43")
    session.execute("end")
    config = session.execute("show running-config").output
    assert "description set by test" not in config
    assert "interface Loopback42\n ip address" in config
    assert "Loopback43" not in config


@pytest.mark.parametrize("platform", PLATFORMS)
def test_hostname_change_changes_prompt_and_outputs(platform: str) -> None:
    device = make_device(platform, "R1")
    session = priv(device)
    other = priv(device)  # a second session on the same device shares its state
    session.execute("conf t")
    session.execute("hostname Edge-2")
    assert session.prompt.rstrip() == "Edge-2(config)#"
    assert other.prompt.rstrip() == "Edge-2#"
    assert "hostname Edge-2\n" in other.execute("show running-config").output
    assert "Edge-2" in other.execute("show version").output
    assert not session.execute("hostname bad/name").ok


@pytest.mark.parametrize("platform", PLATFORMS)
def test_devices_keep_their_own_state(platform: str) -> None:
    first, second = make_device(platform, "a1"), make_device(platform, "b2")
    session = priv(first)
    session.execute("conf t")
    session.execute("hostname changed")
    assert second.hostname == "b2"
    assert "hostname b2" in priv(second).execute("show running-config").output


@pytest.mark.parametrize("platform", PLATFORMS)
def test_exec_commands_from_config_mode(platform: str) -> None:
    session = priv(make_device(platform))
    clock = stable_output(platform, session.execute("show clock").output)
    session.execute("configure terminal")
    assert stable_output(platform, session.execute("do show clock").output) == clock
    assert stable_output(platform, session.execute("show clock").output) == clock
    assert session.mode is Mode.CONFIG


@pytest.mark.parametrize("platform", PLATFORMS)
def test_terminal_settings(platform: str) -> None:
    session = priv(make_device(platform))
    assert session.term_length == 24
    paging = {"cisco_ios": [("terminal length 0", 0), ("terminal length 30", 30)],
              "cisco_asa": [("terminal pager 0", 0), ("terminal pager lines 30", 30)]}
    for line, length in paging[platform]:
        assert session.execute(line).ok
        assert session.term_length == length
    other = "terminal pager 0" if platform == "cisco_ios" else "terminal length 0"
    assert not session.execute(other).ok  # each platform has only its own paging command
    assert session.execute("terminal width 511").ok
    assert session.term_width == 511


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 26_000, 1_000_003])
def test_bulk_output_has_the_asked_size(size: int) -> None:
    assert len(bulk_output(size)) == size
    session = priv(make_device("cisco_ios"))
    assert len(session.execute(f"show bulk-output {size}").text().encode()) == size


def test_unknown_platform_is_one_clear_error() -> None:
    with pytest.raises(TranscriptError, match=r"unknown platform 'junos'.*cisco_asa"):
        load_platform("junos")
    with pytest.raises(TranscriptError, match="unknown platform"):
        load_platform("../cisco_ios")


def test_bad_placeholder_in_a_transcript_is_reported(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    folder.mkdir()
    source = Path(__file__).parents[1] / "transcripts" / "cisco_ios" / "platform.toml"
    (folder / "platform.toml").write_text(source.read_text())
    (folder / "show_version.txt").write_text("{{hostnme}} uptime\n")
    with pytest.raises(TranscriptError, match="unknown placeholder"):
        load_platform("mini", tmp_path)
