"""Arista EOS, Cisco NX-OS and Juniper Junos against the libraries that automate them: Netmiko
(each everyday show command, send_config_set, paging off by its own session preparation),
scrapli (the platform's definition: open, send_input, send_inputs in configuration mode) and
ntc-templates (the transcripts parse with the platform's templates). Each test runs once per
platform; the device's prompts and errors come from the platform's own folder.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from netmiko import BaseConnection, ConnectHandler
from ntc_templates.parse import parse_output
from scrapli import (
    AuthOptions,
    Cli,
    LookupKeyValue,
    SessionOptions,
    TransportBinOptions,
    TransportSsh2Options,
)

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.oracle import stable_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME

FreshEmulator = Callable[..., EmulatorThread]
NEW_PLATFORMS = ("arista_eos", "cisco_nxos", "juniper_junos")

# What each platform's configuration change is, and the line it must leave in the configuration
# (show running-config, or Junos's show configuration after commit).
CHANGES = {
    "arista_eos": (["interface Loopback42", "description set-by-netmiko"],
                   ["interface Loopback42", "   description set-by-netmiko"]),
    "cisco_nxos": (["interface loopback42", "description set-by-netmiko"],
                   ["interface loopback42", "  description set-by-netmiko"]),
    "juniper_junos": (["set interfaces et-0/0/2 description set-by-netmiko",
                       "set interfaces et-0/0/2 unit 0 family inet address 198.19.9.1/30"],
                      ["    et-0/0/2 {", "        description set-by-netmiko;"]),
}
# ntc-templates templates for the transcripts, and a field each parsed row must have.
TEMPLATES = {
    "arista_eos": {"show version": "image", "show clock": "time",
                   "show interfaces status": "port", "show ip route": "network",
                   "show lldp neighbors": "neighbor_name", "show ip arp": "ip_address",
                   "show inventory": "pid", "show ip interface brief": "interface"},
    "cisco_nxos": {"show version": "os", "show clock": "time", "show interface brief": "interface",
                   "show interface status": "port", "show ip route": "network",
                   "show lldp neighbors": "neighbor_name", "show ip arp": "ip_address",
                   "show inventory": "name", "show interface": "interface"},
    "juniper_junos": {"show version": "junos_version", "show system uptime": "boot_time",
                      "show chassis hardware": "chassis_serial_number",
                      "show lldp neighbors": "local_interface", "show arp no-resolve": "ip_address"},
}


@pytest.fixture(params=NEW_PLATFORMS)
def platform(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def prompt_of(endpoint: DeviceEndpoint, mode: Mode = Mode.PRIV) -> str:
    """The device's prompt (its last line, no trailing space) in ``mode``."""
    return CliSession(endpoint.device, mode=mode, user=USERNAME).prompt.rstrip().split("\n")[-1]


def commits(endpoint: DeviceEndpoint) -> bool:
    """Whether the platform's configuration changes need a commit (Junos)."""
    return endpoint.device.platform.style.dialect == "junos"


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]


def stable_lines(platform: str, text: str) -> list[str]:
    """:func:`lines` of ``text`` with the clock and uptimes masked (they run on between the
    device's answer and the expected one)."""
    return lines(stable_output(platform, "\n".join(lines(text))))


def netmiko(endpoint: DeviceEndpoint, log: Path) -> BaseConnection:
    return ConnectHandler(device_type=endpoint.device.platform.style.clients.netmiko_device_type,
                          host=endpoint.host, port=endpoint.ssh_port, username=USERNAME,
                          password=PASSWORD, secret=SECRET, session_log=str(log))


def test_netmiko_show_commands(platform: str, emulator_for: Callable[[str], EmulatorThread],
                               tmp_path: Path) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    conn = netmiko(endpoint, tmp_path / "netmiko.log")
    try:
        conn.enable()
        assert conn.find_prompt() == prompt_of(endpoint)
        style = endpoint.device.platform.style
        for command in style.show_commands:
            output = conn.send_command(command)
            expected = endpoint.device.transcript(tuple(command.split()))
            assert isinstance(output, str)
            assert stable_lines(platform, output) == stable_lines(platform, expected), command
    finally:
        conn.disconnect()
    log = (tmp_path / "netmiko.log").read_text()
    # Netmiko's session preparation turned paging off: no --More-- prompt anywhere.
    assert style.more_prompt.strip() not in log
    assert style.paging_off.split()[0] in log


def test_netmiko_config_set(platform: str, fresh_emulator: FreshEmulator,
                            tmp_path: Path) -> None:
    endpoint = fresh_emulator(platform).endpoints[0]
    commands, expected = CHANGES[platform]
    conn = netmiko(endpoint, tmp_path / "netmiko.log")
    try:
        conn.enable()
        output = conn.send_config_set(commands)
        if commits(endpoint):  # Junos: the change is active once committed
            output += conn.commit()
            conn.exit_config_mode()
        assert not conn.check_config_mode()
        shown = conn.send_command(
            "show configuration" if commits(endpoint) else "show running-config")
    finally:
        conn.disconnect()
    assert "Invalid" not in output
    assert "error" not in output
    assert isinstance(shown, str)
    got = lines(shown)
    assert expected[0] in got
    assert got[got.index(expected[0]) + 1] == expected[1]


def scrapli_cli(endpoint: DeviceEndpoint, known_hosts: Path, recording: Path,
                transport: str) -> Cli:
    """A session over ``transport``: ``bin`` (the OpenSSH client) or ``ssh2`` (libssh2); both
    check the emulator's host key."""
    ssh = shutil.which("ssh")
    assert ssh is not None, "scrapli's bin transport needs the OpenSSH client"
    options: TransportBinOptions | TransportSsh2Options = (
        TransportBinOptions(bin=ssh, known_hosts_path=str(known_hosts), enable_strict_key=True,
                            ssh_config_path="/dev/null") if transport == "bin"
        else TransportSsh2Options(known_hosts_path=str(known_hosts)))
    return Cli(endpoint.host, port=endpoint.ssh_port,
               definition_file_or_name=endpoint.device.platform.style.clients.scrapli_platform,
               auth_options=AuthOptions(username=USERNAME, password=PASSWORD,
                                        lookups=[LookupKeyValue(key="enable", value=SECRET)]),
               session_options=SessionOptions(operation_timeout_s=10,
                                              recorder_path=str(recording)),
               transport_options=options)


@pytest.mark.parametrize("transport", ["bin", "ssh2"])
def test_scrapli_open_show_and_configure(platform: str, transport: str,
                                         fresh_emulator: FreshEmulator, tmp_path: Path) -> None:
    emu = fresh_emulator(platform)
    endpoint = emu.endpoints[0]
    commands, expected = CHANGES[platform]
    conn = scrapli_cli(endpoint, emu.emulator.known_hosts, tmp_path / "scrapli.log", transport)
    conn.open()
    try:
        default = "exec" if commits(endpoint) else "privileged_exec"
        assert conn.get_prompt().result.strip() == prompt_of(endpoint)
        shown = conn.send_input("show version")
        bad = conn.send_input("show bogus-command")
        configured = conn.send_inputs(commands, requested_mode="configuration")
        if commits(endpoint):
            commit = conn.send_input("commit", requested_mode="configuration")
            assert "commit complete" in commit.result
        config = conn.send_input("show configuration" if commits(endpoint)
                                 else "show running-config", requested_mode=default)
    finally:
        conn.close()
    assert stable_lines(platform, shown.result) == stable_lines(
        platform, endpoint.device.transcript(("show", "version")))
    assert bad.failed, "the definition's failure indicators should match the device's error"
    assert not configured.failed
    got = lines(config.result)
    assert got[got.index(expected[0]) + 1] == expected[1]


@pytest.mark.parametrize("platform_name", NEW_PLATFORMS)
def test_ntc_templates_parse_transcripts(platform_name: str,
                                         emulator_for: Callable[[str], EmulatorThread]) -> None:
    device = emulator_for(platform_name).endpoints[0].device
    for command, field in TEMPLATES[platform_name].items():
        rows = parse_output(platform=platform_name, command=command,
                            data=device.transcript(tuple(command.split())))
        assert rows, command
        assert rows[0].get(field), (command, rows[:2])


@pytest.mark.parametrize(("platform_name", "line", "expected"), [
    ("arista_eos", "show bogus", "% Invalid input (at token 1: 'bogus')\n"),
    ("arista_eos", "show", "% Incomplete command\n"),
    ("cisco_nxos", "show bogus", "          ^\n% Invalid command at '^' marker.\n"),
    ("juniper_junos", "show bogus", "                ^\nsyntax error, expecting <command>.\n"),
    ("juniper_junos", "bogus", "          ^\nunknown command.\n"),
])
def test_errors_as_the_device_prints_them(platform_name: str, line: str, expected: str,
                                          emulator_for: Callable[[str], EmulatorThread]) -> None:
    device = emulator_for(platform_name).endpoints[0].device
    reply = CliSession(device, mode=Mode.PRIV, user=USERNAME).execute(line)
    assert not reply.ok
    assert reply.text() == expected


def test_prompts_per_platform(emulator_for: Callable[[str], EmulatorThread]) -> None:
    eos = emulator_for("arista_eos").endpoints[0]
    nxos = emulator_for("cisco_nxos").endpoints[0]
    junos = emulator_for("juniper_junos").endpoints[0]
    assert [prompt_of(eos, m) for m in Mode] == ["R1>", "R1#", "R1(config)#"]
    assert CliSession(nxos.device, mode=Mode.CONFIG).prompt == "R1(config)# "
    session = CliSession(junos.device, mode=Mode.USER, user=USERNAME)
    assert session.prompt == "\nadmin@R1> "
    assert session.execute("configure").text() == "Entering configuration mode\n"
    assert session.prompt == "\n[edit]\nadmin@R1# "
    assert session.execute("exit configuration-mode").text() == "Exiting configuration mode\n"
    assert session.prompt == "\nadmin@R1> "


def test_junos_candidate_commit_and_rollback(fresh_emulator: FreshEmulator) -> None:
    device = fresh_emulator("juniper_junos").endpoints[0].device
    session = CliSession(device, mode=Mode.USER, user=USERNAME)
    session.execute("configure")
    for line in ["set interfaces xe-0/1/3 unit 0 family inet address 192.0.2.65/26",
                 'set interfaces xe-0/1/3 description "to lab 3"',
                 "set system host-name R5", "delete snmp community mgmtbench-ro"]:
        assert session.execute(line).ok, line
    assert session.execute("set bogus 1").text().endswith("^\nsyntax error.\n")
    candidate = session.execute("show interfaces xe-0/1/3").text()
    assert candidate == ('description "to lab 3";\nunit 0 {\n    family inet {\n'
                         '        address 192.0.2.65/26;\n    }\n}\n')
    active = session.execute("run show configuration").text()
    assert "xe-0/1/3" not in active  # not committed yet
    assert session.execute("commit").text() == "commit complete\n"
    assert device.hostname == "R5"
    assert session.prompt == "\n[edit]\nadmin@R5# "
    active = session.execute("run show configuration").text()
    assert "    xe-0/1/3 {\n        description \"to lab 3\";\n" in active
    assert "mgmtbench-ro" not in active
    assert active.startswith("## Last commit: ")
    session.execute("delete interfaces xe-0/1/3")
    assert session.execute("rollback").text() == "load complete\n"
    assert session.execute("show interfaces xe-0/1/3").text() == candidate
    assert session.execute("exit").text() == "Exiting configuration mode\n"
    assert session.mode is not Mode.CONFIG


def test_netmiko_junos_pipes_and_edit(fresh_emulator: FreshEmulator, tmp_path: Path) -> None:
    """Junos's pipes (`| display set`, `| match`, `| count`, `| no-more`) and `edit` with relative
    `set` lines, through Netmiko's own prompt handling ([edit interfaces ...] above the
    prompt)."""
    endpoint = fresh_emulator("juniper_junos").endpoints[0]
    conn = netmiko(endpoint, tmp_path / "netmiko.log")
    try:
        as_set = conn.send_command("show configuration | display set | no-more")
        count = conn.send_command("show interfaces terse | match et- | count")
        output = conn.send_config_set(["edit interfaces et-0/0/3", "set description via-edit",
                                       "edit unit 0", "set family inet address 198.19.9.5/30",
                                       "top"])
        output += conn.commit()
        conn.exit_config_mode()
        shown = conn.send_command("show configuration interfaces et-0/0/3 | display set")
    finally:
        conn.disconnect()
    assert isinstance(as_set, str)
    assert isinstance(count, str)
    assert isinstance(shown, str)
    assert "set system host-name R1" in lines(as_set)
    terse = endpoint.device.transcript(("show", "interfaces", "terse"))
    assert lines(count) == [f"Count: {sum('et-' in line for line in terse.splitlines())} lines"]
    assert "[edit interfaces et-0/0/3 unit 0]" in output
    assert "error" not in output
    assert lines(shown) == ["set interfaces et-0/0/3 description via-edit",
                            "set interfaces et-0/0/3 unit 0 family inet address 198.19.9.5/30"]


def test_scrapli_junos_edit(fresh_emulator: FreshEmulator, tmp_path: Path) -> None:
    emu = fresh_emulator("juniper_junos")
    endpoint = emu.endpoints[0]
    conn = scrapli_cli(endpoint, emu.emulator.known_hosts, tmp_path / "scrapli.log", "bin")
    conn.open()
    try:
        configured = conn.send_inputs(["edit system", "set location rack-7", "up",
                                       "show system location", "commit"],
                                      requested_mode="configuration")
        shown = conn.send_input("show configuration system | match location | no-more",
                                requested_mode="exec")
    finally:
        conn.close()
    assert not configured.failed
    assert lines(shown.result) == ["location rack-7;"]
