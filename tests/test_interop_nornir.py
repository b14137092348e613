"""Nornir with nornir_netmiko over a fleet of emulated devices: four IOS routers and an ASA,
from a SimpleInventory written to files (hosts, groups, defaults) the way a user keeps one.
Tasks run in Nornir's threaded runner, one Netmiko session per host."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from nornir import InitNornir
from nornir.core import Nornir
from nornir_netmiko.tasks import netmiko_save_config, netmiko_send_command, netmiko_send_config

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, ClientKeys
from mgmtbench.testing.fixtures import emulator_options

ROUTERS = 4


@pytest.fixture(scope="module")
def fleet(client_keys: ClientKeys, emulator_for: Callable[[str], EmulatorThread]) -> Iterator[
        list[DeviceEndpoint]]:
    """Four IOS routers of the module's own (their configuration changes) and the session's
    ASA (read-only)."""
    routers = EmulatorThread(emulator_options("cisco_ios", client_keys,
                                              devices=ROUTERS)).start()
    try:
        yield [*routers.endpoints, emulator_for("cisco_asa").endpoints[0]]
    finally:
        routers.stop()


def inventory(fleet: list[DeviceEndpoint]) -> dict[str, dict[str, Any]]:
    """The fleet as SimpleInventory's three files hold it: hosts, groups, defaults."""
    hosts = {endpoint.hostname: {
        "hostname": endpoint.host, "port": endpoint.ssh_port,
        "groups": [endpoint.device.platform.name],
        "data": {"role": "firewall" if endpoint.device.platform.name == "cisco_asa"
                 else "router"},
    } for endpoint in fleet}
    groups = {name: {"platform": name} for name in ("cisco_ios", "cisco_asa")}
    defaults = {"username": USERNAME, "password": PASSWORD,
                "connection_options": {"netmiko": {"extras": {"secret": SECRET,
                                                              "fast_cli": True}}}}
    return {"hosts": hosts, "groups": groups, "defaults": defaults}


@pytest.fixture
def nornir(fleet: list[DeviceEndpoint], tmp_path: Path) -> Iterator[Nornir]:
    """Nornir on the fleet, from inventory files in ``tmp_path`` (JSON is YAML)."""
    files = {}
    for name, content in inventory(fleet).items():
        files[name] = tmp_path / f"{name}.yaml"
        files[name].write_text(json.dumps(content, indent=2))
    nr = InitNornir(
        runner={"plugin": "threaded", "options": {"num_workers": len(fleet)}},
        inventory={"plugin": "SimpleInventory", "options": {
            "host_file": str(files["hosts"]), "group_file": str(files["groups"]),
            "defaults_file": str(files["defaults"])}},
        logging={"enabled": False})
    yield nr
    nr.close_connections()


def test_send_command_across_the_fleet(nornir: Nornir, fleet: list[DeviceEndpoint]) -> None:
    results = nornir.run(task=netmiko_send_command, command_string="show version", enable=True)
    assert not results.failed, {h: r.exception for h, r in results.items() if r.failed}
    assert sorted(results) == sorted(e.hostname for e in fleet)
    for endpoint in fleet:
        output = results[endpoint.hostname][0].result
        assert endpoint.device.facts.serial in output
        assert (f"{endpoint.hostname} uptime is" in output
                or f"{endpoint.hostname} up " in output)  # IOS / ASA


def test_textfsm_parsed_across_routers(nornir: Nornir, fleet: list[DeviceEndpoint]) -> None:
    routers = nornir.filter(role="router")
    results = routers.run(task=netmiko_send_command, command_string="show ip interface brief",
                          use_textfsm=True)
    assert not results.failed
    assert len(results) == ROUTERS
    for result in results.values():
        parsed = result[0].result
        assert isinstance(parsed, list)
        assert {"interface": "GigabitEthernet0/0/0", "ip_address": "203.0.113.10",
                "status": "up", "proto": "up"} in parsed


def test_send_config_and_save_across_routers(nornir: Nornir,
                                             fleet: list[DeviceEndpoint]) -> None:
    routers = nornir.filter(role="router")
    lines = ["interface Loopback42", "description set-by-nornir"]
    results = routers.run(task=netmiko_send_config, config_commands=lines)
    assert not results.failed
    saved = routers.run(task=netmiko_save_config)
    assert not saved.failed
    for endpoint in fleet[:ROUTERS]:
        device = endpoint.device
        assert "interface Loopback42\n description set-by-nornir" in device.transcript(
            ("show", "running-config"))
        assert "interface Loopback42\n description set-by-nornir" in device.saved.startup
        assert "[OK]" in saved[endpoint.hostname][0].result
