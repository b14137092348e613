"""Netmiko (unmodified) against the emulator: each bundled platform with the Netmiko driver
its ``platform.toml`` names (``cisco_ios``, ``cisco_asa``), so each test runs once per platform.
Every connection writes a Netmiko ``session_log`` under the test's ``tmp_path``: when a test
fails, that file is the exact interaction to look at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from netmiko import BaseConnection, ConnectHandler

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.oracle import same_output, stable_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME
from mgmtbench.testing.fixtures import PLATFORMS

FreshEmulator = Callable[..., EmulatorThread]

CONFIG_LINES = ["interface Loopback42", "description set-by-netmiko"]


def content_lines(text: str) -> list[str]:
    """The lines of an output, whatever its line endings, without leading/trailing blank space."""
    return text.replace("\r\n", "\n").strip().split("\n")


def connect(endpoint: DeviceEndpoint, session_log: Path) -> BaseConnection:
    """Log in with Netmiko's defaults (fast_cli included) and the platform's Netmiko driver."""
    return ConnectHandler(
        device_type=endpoint.device.platform.style.clients.netmiko_device_type,
        host=endpoint.host,
        port=endpoint.ssh_port,
        username=USERNAME,
        password=PASSWORD,
        secret=SECRET,
        session_log=str(session_log),
    )


@pytest.fixture
def connection(endpoint: DeviceEndpoint, tmp_path: Path) -> Iterator[BaseConnection]:
    """A privileged Netmiko session on the shared emulator (read-only use)."""
    conn = connect(endpoint, tmp_path / "netmiko.log")
    try:
        conn.enable()
        yield conn
    finally:
        conn.disconnect()


@pytest.fixture(params=PLATFORMS)
def fresh_endpoint(request: pytest.FixtureRequest,
                   fresh_emulator: FreshEmulator) -> DeviceEndpoint:
    """A device of its own, for a test that changes configuration."""
    return fresh_emulator(request.param).endpoints[0]


def test_connect_enable_disconnect(endpoint: DeviceEndpoint, tmp_path: Path) -> None:
    conn = connect(endpoint, tmp_path / "netmiko.log")
    try:
        # The device's own privileged prompt ("R1#", Junos's "admin@R1>"), its last line.
        prompt = CliSession(endpoint.device, mode=Mode.PRIV, user=USERNAME).prompt
        prompt = prompt.rstrip().split("\n")[-1]
        assert conn.base_prompt == prompt[:-1]
        conn.enable()
        assert conn.check_enable_mode() or prompt.endswith(">")  # Junos has no enable
        assert conn.find_prompt().rstrip() == prompt
        assert conn.is_alive()
    finally:
        conn.disconnect()
    assert not conn.is_alive()


def test_show_version_matches_transcript(connection: BaseConnection,
                                         endpoint: DeviceEndpoint) -> None:
    output = connection.send_command("show version")
    assert isinstance(output, str)
    assert same_output(endpoint.device.platform.name, "\n".join(content_lines(output)),
                       "\n".join(content_lines(endpoint.device.transcript(("show", "version")))))


def test_long_output_round_trips(connection: BaseConnection, endpoint: DeviceEndpoint) -> None:
    transcripts = endpoint.device.platform.transcripts
    words = max(transcripts, key=lambda w: len(transcripts[w]))  # the ~26 KB interface listing
    expected = endpoint.device.transcript(words)
    assert len(expected) > 16_000, "the interface listing is expected to be a long output"
    output = connection.send_command(" ".join(words))
    assert isinstance(output, str)
    # Counters and uptimes move between the two reads: compared in their stable form.
    platform = endpoint.device.platform.style.name
    assert content_lines(stable_output(platform, output)) == content_lines(
        stable_output(platform, expected))


def test_config_set_shows_in_running_config(fresh_endpoint: DeviceEndpoint,
                                            tmp_path: Path) -> None:
    style = fresh_endpoint.device.platform.style
    if style.dialect:  # Junos: set ... commit
        pytest.skip("configured its own way: tests/test_new_platforms.py")
    conn = connect(fresh_endpoint, tmp_path / "netmiko.log")
    try:
        conn.enable()
        conn.send_config_set(CONFIG_LINES)
        assert not conn.check_config_mode(), "send_config_set should leave configuration mode"
        running = conn.send_command("show running-config")
    finally:
        conn.disconnect()
    assert isinstance(running, str)
    lines = content_lines(running)
    lowered = [line.lower() for line in lines]  # NX-OS stores it as "interface loopback42"
    assert CONFIG_LINES[0].lower() in lowered
    at = lowered.index(CONFIG_LINES[0].lower())
    assert lines[at + 1] == " " * style.config_indent + CONFIG_LINES[1]
    assert content_lines(running) == content_lines(
        fresh_endpoint.device.transcript(("show", "running-config")))
