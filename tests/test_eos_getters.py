"""NAPALM's eos getters beyond the basics, read from the emulated EOS switch: environment,
optics, LLDP neighbour details, BGP neighbours (from the configuration's ``router bgp``) and
routes, over eAPI and over SSH, each agreeing with what the CLI prints for the same state."""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from napalm import get_network_driver

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, SECRET, USERNAME

BGP = """router bgp 65001
   router-id 198.19.255.1
   neighbor 198.19.1.2 remote-as 65002
   neighbor 198.19.1.2 description R2 Ethernet1
   neighbor 198.19.1.6 remote-as 65003
   neighbor 198.19.1.6 shutdown
   neighbor 203.0.113.9 remote-as 65009
   network 198.19.255.1/32
"""


def session() -> CliSession:
    device = Device(load_platform("arista_eos"), DeviceFacts.for_hostname("leaf1"),
                    enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="netadmin", peer="198.18.0.10")


def as_json(cli: CliSession, line: str) -> dict[str, Any]:
    reply = cli.execute(f"{line} | json")
    assert reply.ok, reply.text()
    value: dict[str, Any] = json.loads(reply.text())
    return value


def eapi_driver(emu: EmulatorThread) -> Any:
    endpoint = emu.endpoints[0]
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    return get_network_driver("eos")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.https_port, "transport": "https", "context": context})


@pytest.fixture(scope="module")
def eos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("arista_eos")


@pytest.fixture(scope="module")
def driver(eos: EmulatorThread) -> Iterator[Any]:
    opened = eapi_driver(eos)
    opened.open()
    yield opened
    opened.close()


def cli_text(eos: EmulatorThread, line: str) -> str:
    reply = CliSession(eos.endpoints[0].device, mode=Mode.PRIV).execute(line)
    assert reply.ok, reply.text()
    return reply.text()


# --- the CLI ----------------------------------------------------------------------------------

def test_show_ipv6_interface_prints_nothing_and_its_json_is_empty() -> None:
    cli = session()
    reply = cli.execute("show ipv6 interface")
    assert reply.ok
    assert reply.text() == ""
    assert as_json(cli, "show ipv6 interface") == {"interfaces": {}}


def test_environment_text_and_json() -> None:
    cli = session()
    cooling = as_json(cli, "show system environment cooling")
    assert [slot["label"] for slot in cooling["fanTraySlots"]] == ["1", "2", "3", "4"]
    assert len(cooling["powerSupplySlots"]) == 2
    text = cli.execute("show system environment cooling").text()
    # Uptimes from the device clock, as EOS words them (Python's timedelta).
    assert re.search(r"^1/1 +Ok +39% +39% \d+ days?, \d+:\d\d:\d\d Stable ", text, re.M)
    power = as_json(cli, "show system environment power")["powerSupplies"]
    assert sorted(power) == ["1", "2"]
    assert power["1"]["capacity"] == 500.0
    temperature = as_json(cli, "show system environment temperature")
    assert temperature["tempSensors"][0]["name"] == "TempSensor1"
    assert len(temperature["powerSupplySlots"]) == 2


def test_processes_top_has_the_clock_and_show_versions_memory() -> None:
    cli = session()
    top = cli.execute("show processes top once").text().splitlines()
    now = cli.device.clock.now()
    assert top[0].startswith(f"top - {now:%H:%M}")
    days = cli.device.clock.uptime() // 86400
    assert f" up {days} days, " in top[0]
    version = cli.execute("show version").text()
    total = int(re.search(r"Total memory: +(\d+)", version)[1])  # type: ignore[index]
    free = int(re.search(r"Free memory: +(\d+)", version)[1])  # type: ignore[index]
    memory = re.match(r"MiB Mem : +([\d.]+) total, +([\d.]+) free, +([\d.]+) used, +([\d.]+) "
                      r"buff/cache", top[3])
    assert memory is not None
    assert float(memory[1]) == round(total / 1024, 1)
    assert float(memory[2]) == round(free / 1024, 1)
    assert float(memory[3]) + float(memory[2]) + float(memory[4]) == pytest.approx(
        total / 1024, abs=0.2)


def test_lldp_detail_for_one_interface_and_a_wrong_one() -> None:
    cli = session()
    one = as_json(cli, "show lldp neighbors Et1 detail")["lldpNeighbors"]
    assert list(one) == ["Ethernet1"]
    assert one["Ethernet1"]["lldpNeighborInfo"][0]["systemName"] == "R2"
    refused = cli.execute("show lldp neighbors Et99 detail")
    assert not refused.ok
    assert "Invalid input" in refused.text()


def test_bgp_outputs_are_empty_without_router_bgp() -> None:
    cli = session()
    for line in ("show ip bgp summary vrf all", "show ip bgp neighbors vrf all",
                 "show ipv6 bgp summary vrf all", "show ipv6 bgp peers vrf all"):
        assert cli.execute(line).text() == ""
        assert as_json(cli, line) == {"vrfs": {}}


def test_route_with_a_prefix_is_the_longest_match() -> None:
    cli = session()
    routes = as_json(cli, "show ip route 198.19.1.9")["vrfs"]["default"]["routes"]
    assert list(routes) == ["198.19.1.8/30"]
    assert [via["interface"] for via in routes["198.19.1.8/30"]["vias"]] == ["Ethernet1",
                                                                             "Ethernet2"]
    longer = as_json(cli, "show ip route 198.19.1.0/24 longer-prefixes")["vrfs"]["default"]
    assert sorted(longer["routes"]) == ["198.19.1.0/30", "198.19.1.4/30", "198.19.1.8/30"]
    assert not cli.execute("show ip route vrf NOPE").ok
    everything = as_json(cli, "show ip route")["vrfs"]["default"]["routes"]
    assert everything["0.0.0.0/0"]["routeType"] == "OSPF external type 2"


# --- NAPALM eos over eAPI ---------------------------------------------------------------------

def test_get_interfaces_ip_has_no_ipv6(driver: Any) -> None:
    addresses = driver.get_interfaces_ip()
    assert addresses["Ethernet1"]["ipv4"] == {"198.19.1.1": {"prefix_length": 30}}
    assert all(value["ipv6"] == {} for value in addresses.values())


def test_get_environment_agrees_with_the_cli(eos: EmulatorThread, driver: Any) -> None:
    environment = driver.get_environment()
    assert environment["fans"] == {label: {"status": True} for label in "1234"}
    assert environment["power"]["1"] == {"status": True, "capacity": 500.0, "output": 91.5}
    assert environment["temperature"]["TempSensor1"]["temperature"] == 47.6
    assert not environment["temperature"]["TempSensorP2/3"]["is_alert"]
    assert environment["cpu"][0]["%usage"] == 5.4
    version = cli_text(eos, "show version")
    total = int(re.search(r"Total memory: +(\d+)", version)[1])  # type: ignore[index]
    free = int(re.search(r"Free memory: +(\d+)", version)[1])  # type: ignore[index]
    memory = environment["memory"]
    # top prints MiB with one decimal: the same memory to 0.05 MiB.
    assert memory["available_ram"] == pytest.approx(total, abs=52)
    assert 0 < memory["used_ram"] < total - free


def test_get_optics_has_a_row_per_connected_port_with_optics(eos: EmulatorThread,
                                                             driver: Any) -> None:
    status = cli_text(eos, "show interfaces status")
    connected = [f"Ethernet{m[1]}" for m in re.finditer(
        r"^Et(\S+) .*\bconnected .*BASE-[SL]R", status, re.M)]
    optics = driver.get_optics()
    assert list(optics) == connected
    text = cli_text(eos, "show interfaces transceiver")
    row = re.search(r"^Et1 +\S+ +\S+ +(\S+) +(\S+) +(\S+) ", text, re.M)
    assert row is not None
    state = optics["Ethernet1"]["physical_channels"]["channel"][0]["state"]
    assert state["laser_bias_current"]["instant"] == float(row[1])
    assert state["output_power"]["instant"] == float(row[2])
    assert state["input_power"]["instant"] == float(row[3])
    assert driver.get_optics() == optics  # the same readings every time


def test_get_lldp_neighbors_detail_agrees_with_the_neighbor_table(driver: Any) -> None:
    table = driver.get_lldp_neighbors()
    detail = driver.get_lldp_neighbors_detail()
    assert set(detail) == set(table)
    for port, neighbors in table.items():
        assert [n["remote_system_name"] for n in detail[port]] == [n["hostname"]
                                                                   for n in neighbors]
        assert [n["remote_port"] for n in detail[port]] == [n["port"] for n in neighbors]
    first = detail["Ethernet1"][0]
    assert re.fullmatch(r"00:1C:73(:[0-9A-F]{2}){3}", first["remote_chassis_id"])
    assert first["remote_system_enable_capab"] == ["bridge", "router"]
    assert "Arista Networks EOS" in first["remote_system_description"]
    assert list(driver.get_lldp_neighbors_detail("Management1")) == ["Management1"]


def test_get_route_to_reads_the_routing_table(driver: Any) -> None:
    routes = driver.get_route_to(destination="198.19.2.0/24")
    assert list(routes) == ["198.19.2.0/24"]
    (route,) = routes["198.19.2.0/24"]
    assert route["next_hop"] == "198.19.1.2"
    assert route["outgoing_interface"] == "Ethernet1"
    assert route["protocol"] == "OSPF"
    assert route["preference"] == 110
    assert route["routing_table"] == "default"


def test_bgp_neighbors_follow_the_configuration(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator("arista_eos")
    own = eapi_driver(emu)
    own.open()
    try:
        assert own.get_bgp_neighbors() == {}
        own.load_merge_candidate(config=BGP)
        own.commit_config()
        peers = own.get_bgp_neighbors()["global"]
        assert peers["router_id"] == "198.19.255.1"
        up = peers["peers"]["198.19.1.2"]  # on Ethernet1's subnet: Established
        assert up["is_up"]
        assert up["is_enabled"]
        assert (up["local_as"], up["remote_as"]) == (65001, 65002)
        assert up["description"] == "R2 Ethernet1"
        assert up["uptime"] >= 0
        received = up["address_family"]["ipv4"]["received_prefixes"]
        assert received > 0
        assert up["address_family"]["ipv4"]["sent_prefixes"] == 1
        shut = peers["peers"]["198.19.1.6"]
        assert not shut["is_up"]
        assert not shut["is_enabled"]
        away = peers["peers"]["203.0.113.9"]  # in no connected subnet: Active
        assert not away["is_up"]
        assert away["is_enabled"]
        again = own.get_bgp_neighbors()["global"]["peers"]["198.19.1.2"]
        assert again["address_family"] == up["address_family"]  # the same every time
        summary = own.cli(["show ip bgp summary"])["show ip bgp summary"]
        assert re.search(rf"^  R2 Ethernet1 +198\.19\.1\.2 +4 65002 .* Estab +{received} ",
                         summary, re.M)
        assert re.search(r"198\.19\.1\.6 +4 65003 .* Idle\(Admin\)$", summary, re.M)
        detail = own.get_bgp_neighbors_detail()["default"]
        assert detail[65002][0]["connection_state"] == "Established"
        assert detail[65002][0]["local_address"] == "198.19.1.1"
        assert detail[65002][0]["received_prefix_count"] == received
        assert detail[65003][0]["connection_state"] == "Idle"
        assert detail[65009][0]["connection_state"] == "Active"
    finally:
        own.close()


# --- NAPALM eos over SSH ----------------------------------------------------------------------

def test_napalm_eos_over_ssh(eos: EmulatorThread) -> None:
    endpoint = eos.endpoints[0]
    over_ssh = get_network_driver("eos")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"transport": "ssh", "port": endpoint.ssh_port, "secret": SECRET})
    over_ssh.open()
    try:
        addresses = over_ssh.get_interfaces_ip()
        assert addresses["Loopback0"] == {"ipv4": {"198.19.255.1": {"prefix_length": 32}},
                                          "ipv6": {}}
        environment = over_ssh.get_environment()
        assert environment["fans"]["1"] == {"status": True}
        assert environment["power"]["2"]["capacity"] == 500.0
        assert environment["memory"]["available_ram"] > 0
    finally:
        over_ssh.close()
