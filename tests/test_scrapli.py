"""scrapli (the libscrapli FFI generation) against the emulator: the ``cisco_iosxe`` definition.

Every test runs over each SSH transport the installed scrapli offers: ``bin`` (the system OpenSSH
client in a PTY) and ``ssh2`` (libssh2, built into libscrapli). Both check the emulator's host key
against its known_hosts file. Each session is recorded under the test's ``tmp_path``
(``scrapli.log``): when a test fails, that file is the exact interaction to look at.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from scrapli import (
    AuthOptions,
    Cli,
    LookupKeyValue,
    SessionOptions,
    TransportBinOptions,
    TransportSsh2Options,
)
from scrapli.transport import Options as TransportOptions
from scrapli.transport import TransportKind

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import same_output, stable_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME

FreshEmulator = Callable[..., EmulatorThread]

SSH_TRANSPORTS = ("bin", "ssh2")
NOT_SSH = {TransportKind.TELNET, TransportKind.TEST}
CONFIG_LINES = ["interface Loopback42", "description set-by-scrapli"]


def content_lines(text: str) -> list[str]:
    """The lines of an output, whatever its line endings, without leading/trailing blank space."""
    return text.replace("\r\n", "\n").strip().split("\n")


def transport_options(kind: str, known_hosts: Path) -> TransportOptions:
    """Strict host-key checking against the emulator's known_hosts, whatever the transport."""
    if kind == "bin":
        ssh = shutil.which("ssh")
        if ssh is None:
            pytest.fail("scrapli's 'bin' transport needs the OpenSSH client (ssh) on PATH")
        # An empty ssh_config keeps the user's ~/.ssh/config out of the test.
        return TransportBinOptions(bin=ssh, known_hosts_path=str(known_hosts),
                                   enable_strict_key=True, ssh_config_path=os.devnull)
    if kind == "ssh2":
        return TransportSsh2Options(known_hosts_path=str(known_hosts))
    raise AssertionError(f"no options for scrapli transport {kind!r}")


def make_cli(emu: EmulatorThread, kind: str, recording: Path) -> Cli:
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port is not None
    return Cli(
        endpoint.host,
        port=endpoint.ssh_port,
        definition_file_or_name="cisco_iosxe",
        auth_options=AuthOptions(username=USERNAME, password=PASSWORD,
                                 lookups=[LookupKeyValue(key="enable", value=SECRET)]),
        session_options=SessionOptions(operation_timeout_s=10, recorder_path=str(recording)),
        transport_options=transport_options(kind, emu.emulator.known_hosts),
    )


@pytest.fixture(params=SSH_TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cli(emulator_for: Callable[[str], EmulatorThread], transport: str,
        tmp_path: Path) -> Iterator[Cli]:
    """An opened scrapli session on the shared IOS emulator (read-only use)."""
    conn = make_cli(emulator_for("cisco_ios"), transport, tmp_path / "scrapli.log")
    conn.open()
    try:
        yield conn
    finally:
        conn.close()


def test_every_ssh_transport_is_covered() -> None:
    offered = {kind.value for kind in TransportKind if kind not in NOT_SSH}
    assert offered == set(SSH_TRANSPORTS), "a scrapli SSH transport is not tested"


def test_open_reaches_privileged_exec(cli: Cli, ios: DeviceEndpoint) -> None:
    # On open the definition enables if the login lands at '>' (answering 'Password:' with the
    # 'enable' lookup) and turns paging off.
    assert cli.get_prompt().result.strip() == f"{ios.hostname}#"


def test_show_version_matches_transcript(cli: Cli, ios: DeviceEndpoint) -> None:
    expected = ios.device.transcript(("show", "version"))
    result = cli.send_input("show version")
    assert not result.failed
    assert same_output("cisco_ios", "\n".join(content_lines(result.result)),
                       "\n".join(content_lines(expected)))
    # On the wire the device ends its lines with CR LF, as a terminal's ONLCR does.
    assert stable_output("cisco_ios", expected.replace("\n", "\r\n")) in stable_output(
        "cisco_ios", result.result_raw.decode("ascii"))  # the running uptime masked


def test_long_output_round_trips(cli: Cli, ios: DeviceEndpoint) -> None:
    expected = ios.device.transcript(("show", "interfaces"))
    result = cli.send_input("show interfaces")
    assert not result.failed
    assert same_output("cisco_ios", "\n".join(content_lines(result.result)),
                       "\n".join(content_lines(expected)))  # counters move: stable forms


def test_invalid_command_is_flagged_failed(cli: Cli) -> None:
    result = cli.send_input("show bogus")
    assert result.failed, "the definition's failure indicators should match the device's error"
    assert "% Invalid input detected at '^' marker." in result.result


def test_config_change_shows_in_running_config(fresh_emulator: FreshEmulator, transport: str,
                                               tmp_path: Path) -> None:
    emu = fresh_emulator("cisco_ios")
    conn = make_cli(emu, transport, tmp_path / "scrapli.log")
    conn.open()
    try:
        configured = conn.send_inputs(CONFIG_LINES, requested_mode="configuration")
        running = conn.send_input("show running-config", requested_mode="privileged_exec")
    finally:
        conn.close()
    assert not configured.failed
    assert configured.inputs == CONFIG_LINES
    lines = content_lines(running.result)
    assert CONFIG_LINES[0] in lines
    assert lines[lines.index(CONFIG_LINES[0]) + 1] == f" {CONFIG_LINES[1]}"
    device = emu.endpoints[0].device
    assert lines == content_lines(device.transcript(("show", "running-config")))

