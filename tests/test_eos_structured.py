"""Arista EOS as its own tools expect it: ``show ... | json`` over the CLI, eAPI (JSON-RPC
``runCmds`` at ``/command-api``) over HTTPS, and NAPALM's eos driver (unmodified, on pyeapi)
reading both from the same device state as the text CLI."""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import MergeConfigException

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, USERNAME
from mgmtbench.testing.shell import https_client


def session(platform: str = "arista_eos") -> CliSession:
    device = Device(load_platform(platform), DeviceFacts.for_hostname("leaf1"),
                    enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="netadmin", peer="198.18.0.10")


def as_json(cli: CliSession, line: str) -> dict[str, Any]:
    reply = cli.execute(f"{line} | json")
    assert reply.ok, reply.text()
    value: dict[str, Any] = json.loads(reply.text())
    return value


# --- | json -----------------------------------------------------------------------------------

def test_show_version_json_says_what_the_text_says() -> None:
    cli = session()
    text = cli.execute("show version").text()
    value = as_json(cli, "show version")
    assert value["version"] == re.search(r"Software image version: (\S+)", text)[1]  # type: ignore[index]
    assert value["serialNumber"] in text
    assert value["modelName"] == text.splitlines()[0].removeprefix("Arista ")
    assert value["memTotal"] == int(re.search(r"Total memory: +(\d+)", text)[1])  # type: ignore[index]
    mac = re.search(r"System MAC address: +(\S+)", text)[1].replace(".", "")  # type: ignore[index]
    assert value["systemMacAddress"].replace(":", "") == mac
    # The boot time and uptime are the device clock's (NAPALM: uptime = now - boot).
    assert value["uptime"] == pytest.approx(cli.device.clock.uptime(), abs=2)


def test_show_interfaces_json_has_every_interface_of_the_text_with_its_counters() -> None:
    cli = session()
    text = cli.execute("show interfaces").text()
    value = as_json(cli, "show interfaces")["interfaces"]
    names = re.findall(r"^(\S+) is ", text, re.M)
    assert list(value) == names
    first = value["Ethernet1"]
    assert first["lineProtocolStatus"] == "up"
    assert first["interfaceStatus"] == "connected"
    assert first["interfaceAddress"][0]["primaryIp"] == {"address": "198.19.1.1", "maskLen": 30}
    assert first["bandwidth"] == 25_000_000_000
    assert first["mtu"] == 9214
    inbound = re.search(r"(\d+) packets input, (\d+) bytes", text)
    assert inbound is not None
    assert first["interfaceCounters"]["inTotalPkts"] == int(inbound[1])
    assert first["interfaceCounters"]["inOctets"] == int(inbound[2])
    assert value["Ethernet9"]["interfaceStatus"] == "notconnect"


def test_tables_as_json_name_interfaces_whole() -> None:
    cli = session()
    neighbors = as_json(cli, "show lldp neighbors")["lldpNeighbors"]
    assert {n["port"] for n in neighbors} >= {"Ethernet1", "Ethernet2", "Management1"}
    status = as_json(cli, "show interfaces status")["interfaceStatuses"]
    assert status["Ethernet3"]["vlanInformation"]["vlanId"] == 10
    assert status["Ethernet1"]["description"] == "R2 Ethernet1"
    brief = as_json(cli, "show ip interface brief")["interfaces"]
    assert brief["Loopback0"]["interfaceAddress"]["ipAddr"] == {"address": "198.19.255.1",
                                                               "maskLen": 32}
    arp = as_json(cli, "show ip arp")
    assert arp["totalEntries"] == len(arp["ipV4Neighbors"]) > 0


def test_json_follows_the_configuration() -> None:
    cli = session()
    for line in ("configure", "hostname spine7", "end"):
        assert cli.execute(line).ok
    assert as_json(cli, "show hostname")["hostname"] == "spine7"


def test_a_command_without_json_is_refused_as_eos_refuses_it() -> None:
    cli = session()
    reply = cli.execute("show running-config | json")
    assert not reply.ok
    assert reply.text() == "% This is an unconverted command\n"
    assert not cli.execute("show nonsense | json").ok


def test_platforms_without_json_refuse_the_pipe() -> None:
    reply = session("cisco_ios").execute("show version | json")
    assert not reply.ok
    assert "Invalid input" in reply.text()


# --- eAPI -------------------------------------------------------------------------------------

@pytest.fixture
def eos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("arista_eos")


@pytest.fixture
def eapi(eos: EmulatorThread) -> Iterator[Callable[..., dict[str, Any]]]:
    endpoint = eos.endpoints[0]
    url = f"https://{endpoint.host}:{endpoint.https_port}/command-api"
    with https_client(eos) as client:
        def call(cmds: list[Any], form: str = "json", **extra: Any) -> dict[str, Any]:
            body = {"jsonrpc": "2.0", "method": "runCmds", "id": "t1",
                    "params": {"version": 1, "cmds": cmds, "format": form, **extra}}
            response = client.post(url, json=body)
            assert response.status_code == 200
            assert response.headers["content-type"] == "application/json"
            value: dict[str, Any] = response.json()
            assert value["jsonrpc"] == "2.0"
            assert value["id"] == "t1"
            return value
        yield call


def test_eapi_runs_commands_in_json_and_text(eos: EmulatorThread,
                                            eapi: Callable[..., dict[str, Any]]) -> None:
    device = eos.endpoints[0].device
    value = eapi(["enable", "show version", "show hostname"])
    enable, version, hostname = value["result"]
    assert enable == {}
    assert version["serialNumber"] == device.facts.serial
    assert hostname["hostname"] == device.hostname
    text = eapi(["show clock", "show lldp neighbors"], "text")["result"]
    assert text[1] == {"output": device.transcript(("show", "lldp", "neighbors"))}
    assert "Timezone: UTC" in text[0]["output"]


def test_eapi_gives_eos_errors(eapi: Callable[..., dict[str, Any]]) -> None:
    error = eapi(["show version", "show nonsense", "show clock"])["error"]
    assert error["code"] == 1002
    assert error["message"] == "CLI command 2 of 3 'show nonsense' failed: invalid command"
    assert len(error["data"]) == 2  # the first command's result, then the failure's
    assert error["data"][0]["version"]
    assert error["data"][1] == {"errors": ["Invalid input (at token 1: 'nonsense')"]}
    unconverted = eapi(["show running-config"])["error"]
    assert unconverted["code"] == 1003
    assert unconverted["data"] == [{"errors": ["This is an unconverted command"]}]
    # In text form the same command answers.
    assert "hostname" in eapi(["show running-config"], "text")["result"][0]["output"]


def test_eapi_configures_and_the_cli_sees_it(eos: EmulatorThread,
                                             eapi: Callable[..., dict[str, Any]]) -> None:
    result = eapi(["enable", "configure", "interface Loopback42",
                   "description set-by-eapi", "end"])["result"]
    assert result == [{}, {}, {}, {}, {}]
    running = eos.endpoints[0].device.transcript(("show", "running-config"))
    assert "interface Loopback42\n   description set-by-eapi\n" in running


def test_eapi_refuses_what_is_no_runcmds_request(eos: EmulatorThread) -> None:
    endpoint = eos.endpoints[0]
    url = f"https://{endpoint.host}:{endpoint.https_port}/command-api"
    with https_client(eos) as client:
        parse = client.post(url, content=b"{not json").json()
        assert parse["error"]["code"] == -32700
        method = client.post(url, json={"jsonrpc": "2.0", "method": "runShell", "id": 1,
                                        "params": {}}).json()
        assert method["error"]["code"] == -32601
        assert method["id"] == 1
        params = client.post(url, json={"jsonrpc": "2.0", "method": "runCmds", "id": 2,
                                        "params": {"version": 1, "cmds": [7]}}).json()
        assert params["error"]["code"] == -32602
        assert client.get(url).status_code == 405
    with https_client(eos, auth=False) as anonymous:
        assert anonymous.post(url, json={}).status_code == 401


def test_eapi_is_only_where_the_platform_has_it(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    ios = emulator_for("cisco_ios")
    endpoint = ios.endpoints[0]
    with https_client(ios) as client:
        response = client.post(f"https://{endpoint.host}:{endpoint.https_port}/command-api",
                               json={"jsonrpc": "2.0", "method": "runCmds", "id": 1,
                                     "params": {"version": 1, "cmds": ["show version"]}})
    assert response.status_code == 404


# --- NAPALM eos over eAPI ---------------------------------------------------------------------

@pytest.fixture
def napalm_eos(eos: EmulatorThread) -> Iterator[Any]:
    endpoint = eos.endpoints[0]
    assert eos.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(eos.emulator.tls.ca))
    driver = get_network_driver("eos")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.https_port, "transport": "https", "context": context})
    driver.open()
    yield driver
    driver.close()


def test_napalm_eos_getters_read_the_device(eos: EmulatorThread, napalm_eos: Any) -> None:
    device = eos.endpoints[0].device
    facts = napalm_eos.get_facts()
    assert facts["hostname"] == device.hostname
    assert facts["vendor"] == "Arista"
    assert facts["model"] == "DCS-7050SX3-48YC8-R"
    assert facts["serial_number"] == device.facts.serial
    assert "Ethernet1" in facts["interface_list"]
    interfaces = napalm_eos.get_interfaces()
    assert interfaces["Ethernet1"]["is_up"]
    assert interfaces["Ethernet1"]["speed"] == 25000.0
    assert interfaces["Ethernet1"]["description"] == "R2 Ethernet1"
    assert not interfaces["Ethernet9"]["is_up"]
    assert interfaces["Ethernet9"]["is_enabled"]
    lldp = napalm_eos.get_lldp_neighbors()
    assert lldp["Ethernet1"] == [{"hostname": "R2", "port": "Ethernet1"}]
    counters = napalm_eos.get_interfaces_counters()
    assert counters["Ethernet1"]["rx_octets"] > 0
    assert list(napalm_eos.get_ntp_servers()) == ["198.19.255.100"]


# --- configuration sessions: NAPALM eos's configuration workflow ------------------------------

@pytest.fixture
def own_eos(fresh_emulator: Callable[..., EmulatorThread]) -> Iterator[tuple[Any, Device]]:
    """A NAPALM eos driver on a device of the test's own (its configuration changes)."""
    emu = fresh_emulator("arista_eos")
    endpoint = emu.endpoints[0]
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    driver = get_network_driver("eos")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.https_port, "transport": "https", "context": context})
    driver.open()
    yield driver, endpoint.device
    driver.close()


def running(device: Device) -> str:
    return device.transcript(("show", "running-config"))


def test_napalm_eos_merge_compare_commit_rollback(own_eos: tuple[Any, Device]) -> None:
    driver, device = own_eos
    before = running(device)
    driver.load_merge_candidate(config="interface Loopback77\n   description merged\n")
    assert running(device) == before  # a session changes nothing until committed
    diff = driver.compare_config()
    assert [line for line in diff.splitlines() if line[:1] in "+-"] == [
        "+!", "+interface Loopback77", "+   description merged"]
    driver.commit_config()
    assert "interface Loopback77\n   description merged\n" in running(device)
    assert "interface Loopback77" in device.saved.startup  # commit_config writes memory
    assert driver.compare_config() == ""
    driver.rollback()  # configure replace flash:rollback-0 (the startup before the commit)
    assert "Loopback77" not in running(device)


def test_napalm_eos_discard_and_a_refused_line(own_eos: tuple[Any, Device]) -> None:
    driver, device = own_eos
    before = running(device)
    driver.load_merge_candidate(config="ntp server 198.19.255.102\n")
    driver.discard_config()
    assert driver.compare_config() == ""
    with pytest.raises(MergeConfigException, match="invalid command"):
        driver.load_merge_candidate(config="interface Loopback5\n   bogus words\n")
    assert running(device) == before
    sessions = driver._run_commands(["show configuration sessions"])[0]["sessions"]
    assert sessions == {}  # the refused session was aborted


def test_napalm_eos_replace_changes_only_what_differs(own_eos: tuple[Any, Device]) -> None:
    driver, device = own_eos
    config = driver.get_config()["running"]
    driver.load_replace_candidate(config=config.replace("lab-rack-12", "rack-99"))
    diff = [line for line in driver.compare_config().splitlines() if line[:1] in "+-"]
    assert diff == ["-snmp-server location lab-rack-12", "+snmp-server location rack-99"]
    driver.commit_config()
    after = running(device)
    assert "snmp-server location rack-99\n" in after
    # What a replace typed line by line cannot keep (EOS's `no` lines) stays as it was.
    assert "no aaa root\n" in after
    assert "   no passive-interface Ethernet1\n" in after
