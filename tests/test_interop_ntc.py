"""ntc-templates (TextFSM) on what the emulator prints: every transcript command of every
platform that ntc-templates has a template for is run over SSH (Netmiko) and parsed, and the
records must hold what the output says (every captured value is text of the output; key fields
are the device's own: hostname, serial, interfaces)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from netmiko import BaseConnection, ConnectHandler
from ntc_templates.parse import _get_template_dir, parse_output
from textfsm import clitable

from mgmtbench.emulator import EmulatorThread, load_platform
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME
from mgmtbench.testing.fixtures import PLATFORMS

_INDEX = clitable.CliTable("index", _get_template_dir())
# Known mismatches, each with what would fix it (strict: the test fails once it passes).
KNOWN: dict[tuple[str, str], str] = {
    ("cisco_asa", "show xlate"): "ntc-templates' cisco_asa_show_xlate rejects the indented "
                                 "second 'Flags:' line the transcript prints",
    ("juniper_junos", "show interfaces"): "ntc-templates' juniper_junos_show_interfaces rejects "
                                          "'Link type      : Full-Duplex', which a management "
                                          "interface (fxp0) prints",
}


def has_template(platform: str, command: str) -> bool:
    """Whether ntc-templates' index names a template for the whole of ``command`` on
    ``platform`` (its index matches prefixes: ``show interfaces terse`` would find the
    template of ``show interfaces``)."""
    row = _INDEX.index.GetRowMatch({"Platform": platform, "Command": command})
    return bool(row) and bool(_INDEX.index.compiled[row]["Command"].fullmatch(command))


def cases() -> Iterator[Any]:
    for platform in PLATFORMS:
        for words in sorted(load_platform(platform).transcripts):
            command = " ".join(words)
            if not has_template(platform, command):
                continue
            reason = KNOWN.get((platform, command))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(platform, command, marks=marks, id=f"{platform}:{command}")


@pytest.fixture(scope="module")
def connections(emulator_for: Callable[[str], EmulatorThread],
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        Callable[[str], tuple[BaseConnection, DeviceEndpoint]]]:
    """``connections(platform)``: one privileged Netmiko session per platform (read-only)."""
    opened: dict[str, tuple[BaseConnection, DeviceEndpoint]] = {}
    logs = tmp_path_factory.mktemp("ntc")

    def get(platform: str) -> tuple[BaseConnection, DeviceEndpoint]:
        if platform not in opened:
            endpoint = emulator_for(platform).endpoints[0]
            conn = ConnectHandler(
                device_type=endpoint.device.platform.style.clients.netmiko_device_type,
                host=endpoint.host, port=endpoint.ssh_port, username=USERNAME,
                password=PASSWORD, secret=SECRET, session_log=str(logs / f"{platform}.log"))
            conn.enable()
            opened[platform] = (conn, endpoint)
        return opened[platform]

    yield get
    for conn, _ in opened.values():
        conn.disconnect()


def values(record: dict[str, Any]) -> Iterator[str]:
    """The values a record captured (an optional group that took no part in a match of a
    List value comes out as "None": not captured)."""
    for value in record.values():
        for item in value if isinstance(value, list) else [value]:
            if item not in (None, "None"):
                yield item


def test_every_platform_has_parsed_commands() -> None:
    for platform in PLATFORMS:
        commands = [" ".join(w) for w in load_platform(platform).transcripts]
        assert sum(has_template(platform, c) for c in commands) >= 5, platform


@pytest.mark.parametrize(("platform", "command"), list(cases()))
def test_template_parses_transcript(platform: str, command: str, connections: Callable[
        [str], tuple[BaseConnection, DeviceEndpoint]], tmp_path: Path) -> None:
    conn, endpoint = connections(platform)
    output = str(conn.send_command(command))
    records = parse_output(platform=platform, command=command, data=output)
    assert records, "no records"
    for record in records:
        assert any(values(record)), record
        for value in values(record):
            assert value in output, f"{value!r} is not in the output"
    facts = endpoint.device.facts
    if command == "show version":
        version = records[0]
        assert version.get("hostname", facts.hostname) == facts.hostname
        serials = version.get("serial", [facts.serial])
        assert facts.serial in (serials if isinstance(serials, list) else [serials])
    if command == "show inventory" and "sn" in records[0]:
        assert records[0]["sn"] == facts.serial
    if command.endswith(("ip interface brief", "interface ip brief")):
        starts = {line.split()[0] for line in output.splitlines() if line.strip()}
        assert len(records) > 1
        assert {r["interface"] for r in records} <= starts
