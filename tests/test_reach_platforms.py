"""``ping`` and ``traceroute`` on EOS, NX-OS and Junos, from each device's routing table, in
each platform's words, through the CLI and through NAPALM's eos, nxos_ssh and junos drivers
(Junos's over NETCONF: ``<command>`` and ``<ping>``); and the NX-OS getters of NAPALM's
nxos_ssh that read the emulator's own NX-OS show commands (MAC table, VLANs, VRFs, BGP, route
lookup, optics, environment) with their JSON."""

from __future__ import annotations

import json
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from napalm import get_network_driver

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli import reach
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, USERNAME


def session(platform: str) -> CliSession:
    device = Device(load_platform(platform), DeviceFacts.for_hostname("r1"), enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="admin", peer="198.18.0.10")


def configure(cli: CliSession, *lines: str) -> None:
    for line in ("configure terminal", *lines, "end"):
        reply = cli.execute(line)
        assert reply.ok, (line, reply.text())


# --- the CLI ----------------------------------------------------------------------------------

def test_walk_follows_next_hops_and_stops_at_a_discard() -> None:
    import ipaddress
    routes = [reach.Route(ipaddress.IPv4Network("10.0.0.0/30"), (None,)),
              reach.Route(ipaddress.IPv4Network("0.0.0.0/0"), ("10.0.0.2",)),
              reach.Route(ipaddress.IPv4Network("192.0.2.0/24"), (), discard=True)]
    own = {"10.0.0.1"}.__contains__
    assert reach.walk(own, lambda: routes, "10.0.0.1") == ["10.0.0.1"]
    assert reach.walk(own, lambda: routes, "10.0.0.2") == ["10.0.0.2"]
    assert reach.walk(own, lambda: routes, "203.0.113.9") == ["10.0.0.2", "203.0.113.9"]
    assert reach.walk(own, lambda: routes, "192.0.2.7") is None


def test_eos_ping_is_iputils_and_traceroute_runs_through_bash() -> None:
    cli = session("arista_eos")
    lines = cli.execute("ping 198.19.2.7 repeat 3 size 100").text().splitlines()
    assert lines[0] == "PING 198.19.2.7 (198.19.2.7) 72(100) bytes of data."
    assert [line.split()[:4] for line in lines[1:4]] == \
        [["80", "bytes", "from", "198.19.2.7:"]] * 3
    assert "3 packets transmitted, 3 received, 0% packet loss" in lines[-2]
    assert lines[-1].startswith("rtt min/avg/max/mdev = ")
    trace = cli.execute("bash timeout 510 traceroute 198.19.2.7 -m 255 -w 2").text()
    assert trace.splitlines()[0].startswith("traceroute to 198.19.2.7 (198.19.2.7), 255 hops")
    assert [line.split()[1] for line in trace.splitlines()[1:]] == ["198.19.1.2", "198.19.2.7"]
    lost = cli.execute("ping vrf MGMT 198.19.2.7").text()
    assert "5 packets transmitted, 0 received, 100% packet loss" in lost
    assert not cli.execute("bash ls").ok
    assert not cli.execute("ping vrf NOPE 198.19.2.7").ok


def test_eos_ping_follows_the_interfaces() -> None:
    cli = session("arista_eos")
    configure(cli, "interface Ethernet1", "shutdown")
    assert "0 received, 100% packet loss" in cli.execute("ping 198.19.2.7").text()
    assert " 0% packet loss" in cli.execute("ping 198.19.3.1").text()  # via Ethernet2


def test_nxos_ping_and_traceroute() -> None:
    cli = session("cisco_nxos")
    text = cli.execute("ping 198.19.1.2 timeout 2 packet-size 100 count 5").text()
    assert text.startswith("PING 198.19.1.2 (198.19.1.2): 100 data bytes\n")
    assert text.count("108 bytes from 198.19.1.2: icmp_seq=") == 5
    assert "5 packets transmitted, 5 packets received, 0.00% packet loss" in text
    trace = cli.execute("traceroute 198.19.255.3").text().splitlines()
    assert [line.split()[1] for line in trace[1:]] == ["198.19.1.6", "198.19.255.3"]
    configure(cli, "interface Ethernet1/1", "shutdown")
    lost = cli.execute("ping 198.19.2.7 count 2").text()
    assert "Request 0 timed out" in lost
    assert "100.00% packet loss" in lost
    assert not cli.execute("ping 198.19.2.7 vrf nope").ok


def test_junos_ping_and_traceroute() -> None:
    cli = session("juniper_junos")
    text = cli.execute("ping 198.19.1.2 count 3").text()
    assert text.startswith("PING 198.19.1.2 (198.19.1.2): 56 data bytes\n")
    assert "3 packets transmitted, 3 packets received, 0% packet loss" in text
    trace = cli.execute("traceroute 198.19.100.1 ttl 5").text().splitlines()
    assert [line.split()[1] for line in trace[1:]] == ["198.19.1.6", "198.19.100.1"]
    assert not cli.execute("ping 198.19.1.2 routing-instance nope").ok


# --- NAPALM -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def eos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("arista_eos")


@pytest.fixture(scope="module")
def nxos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("cisco_nxos")


@pytest.fixture(scope="module")
def junos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("juniper_junos")


@pytest.fixture(scope="module")
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


@pytest.fixture(scope="module")
def napalm_nxos_ssh(nxos: EmulatorThread) -> Iterator[Any]:
    endpoint = nxos.endpoints[0]
    driver = get_network_driver("nxos_ssh")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                            optional_args={"port": endpoint.ssh_port})
    driver.open()
    yield driver
    driver.close()


@pytest.fixture(scope="module")
def napalm_junos(junos: EmulatorThread) -> Iterator[Any]:
    endpoint = junos.endpoints[0]
    driver = get_network_driver("junos")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                         optional_args={"port": endpoint.netconf_port})
    driver.open()
    yield driver
    driver.close()


def check_ping_and_traceroute(driver: Any, near: str, far: str, hops: list[str]) -> None:
    ping = driver.ping(near)["success"]
    assert (ping["probes_sent"], ping["packet_loss"]) == (5, 0)
    assert 0 < ping["rtt_min"] <= ping["rtt_avg"] <= ping["rtt_max"]
    assert {result["ip_address"] for result in ping["results"]} == {near}
    trace = driver.traceroute(far)["success"]
    assert [trace[hop]["probes"][1]["ip_address"] for hop in sorted(trace)] == hops


def test_napalm_eos_ping_traceroute(napalm_eos: Any) -> None:
    check_ping_and_traceroute(napalm_eos, "198.19.1.2", "198.19.2.7",
                              ["198.19.1.2", "198.19.2.7"])


def test_napalm_nxos_ssh_ping_traceroute(napalm_nxos_ssh: Any) -> None:
    check_ping_and_traceroute(napalm_nxos_ssh, "198.19.1.2", "198.19.3.1",
                              ["198.19.1.6", "198.19.3.1"])


def test_napalm_junos_ping_traceroute(napalm_junos: Any) -> None:
    check_ping_and_traceroute(napalm_junos, "198.19.1.2", "198.19.2.7",
                              ["198.19.1.2", "198.19.2.7"])


def test_junos_ping_rpc(napalm_junos: Any) -> None:
    from lxml import etree
    rpc = etree.fromstring("<ping><host>198.19.1.2</host><count>2</count></ping>")
    reply = napalm_junos.device._conn.rpc(rpc)._NCElement__doc
    summary = reply.find(".//probe-results-summary")
    assert summary.findtext("probes-sent") == "2"
    assert summary.findtext("packet-loss") == "0"


def test_napalm_nxos_ssh_getters(nxos: EmulatorThread, napalm_nxos_ssh: Any) -> None:
    driver = napalm_nxos_ssh
    macs = driver.get_mac_address_table()
    assert macs
    assert {m["vlan"] for m in macs} == {10}
    assert all(m["interface"].startswith("Ethernet1/") and m["active"] for m in macs)
    vlans = driver.get_vlans()
    assert vlans["10"]["name"] == "servers"
    assert "Ethernet1/3" in vlans["10"]["interfaces"]
    instances = driver.get_network_instances()
    assert set(instances) == {"default", "management"}
    assert "mgmt0" in instances["management"]["interfaces"]["interface"]
    assert driver.get_bgp_neighbors() == {}
    routes = driver.get_route_to("198.19.2.0/24")
    assert [r["next_hop"] for r in routes["198.19.2.0/24"]] == ["198.19.1.2"]
    optics = driver.get_optics()
    assert "Ethernet1/3" in optics
    assert "Ethernet1/11" not in optics
    environment = driver.get_environment()
    assert environment["memory"]["available_ram"] > 0
    assert environment["temperature"]


def test_nxos_hardware_json_for_ansible() -> None:
    cli = session("cisco_nxos")
    fans = json.loads(cli.execute("show environment fan | json").text())
    assert fans["fandetails"]["TABLE_faninfo"]["ROW_faninfo"][0]["fanstatus"] == "Ok"
    power = json.loads(cli.execute("show environment power | json").text())
    assert len(power["powersup"]["TABLE_psinfo"]["ROW_psinfo"]) == 2
    module = json.loads(cli.execute("show module | json").text())
    assert module["TABLE_modinfo"]["ROW_modinfo"]["model"] == "N9K-C93180YC-FX"


def test_nxos_bgp_summary_from_the_configuration() -> None:
    cli = session("cisco_nxos")
    assert not cli.execute("show bgp all summary vrf all").ok  # no feature bgp
    config = cli.device.config
    assert config is not None
    configure(cli, "feature bgp")
    assert cli.execute("show bgp all summary vrf all").text() == ""
