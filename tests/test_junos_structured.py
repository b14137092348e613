"""Junos as its own tools expect it: ``| display xml`` / ``| display json`` on the CLI, Junos's
RPCs over NETCONF (``get-software-information``, ``<command>``, ``get-configuration`` ...),
PyEZ (junos-eznc) opening the device and gathering its facts, and NAPALM's junos driver
(unmodified, on PyEZ) reading it and changing its configuration, all from the same state as the
text CLI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jnpr.junos import Device as PyEZDevice  # type: ignore[import-untyped]
from lxml import etree
from napalm import get_network_driver
from napalm.base.exceptions import LockError
from ncclient import manager

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, USERNAME


def session(device: Device | None = None) -> CliSession:
    if device is None:
        device = Device(load_platform("juniper_junos"), DeviceFacts.for_hostname("R1"),
                        enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="admin", peer="198.18.0.10")


def xml_of(cli: CliSession, line: str) -> etree._Element:
    reply = cli.execute(f"{line} | display xml")
    assert reply.ok, reply.text()
    root = etree.fromstring(reply.text().encode())
    assert root.tag == "rpc-reply"
    assert root.nsmap["junos"] == "http://xml.juniper.net/junos/22.4R3/junos"
    return root


def local(element: etree._Element) -> str:
    return etree.QName(element).localname


def find_all(element: etree._Element, path: str) -> list[etree._Element]:
    """``path`` (slash-separated local names) under ``element``, whatever the namespaces."""
    found = [element]
    for step in path.split("/"):
        found = [child for node in found for child in node if isinstance(child.tag, str)
                 and local(child) == step]
    return found


def text_at(element: etree._Element, path: str) -> str:
    found = find_all(element, path)
    assert found, f"no {path}"
    return found[0].text or ""


# --- | display xml, | display json ------------------------------------------------------------

def test_show_version_as_xml_says_what_the_text_says() -> None:
    cli = session()
    text = cli.execute("show version").text()
    root = xml_of(cli, "show version")
    body, tail = [c for c in root if isinstance(c.tag, str)]
    assert local(body) == "software-information"
    assert text_at(body, "host-name") == "R1"
    assert text_at(body, "product-model") == "mx204"
    assert text_at(body, "junos-version") == re.search(r"^Junos: (\S+)", text, re.M)[1]  # type: ignore[index]
    comments = [c.text for c in find_all(body, "package-information/comment")]
    assert comments[0] == "JUNOS OS Kernel 64-bit  [20231103.a0c6e4c_builder_stable_12_224]"
    # The CLI's trailer, as Junos prints it.
    assert local(tail) == "cli"
    assert "<cli>\n        <banner></banner>\n    </cli>\n</rpc-reply>" in \
        cli.execute("show version | display xml").text()


def test_interfaces_as_xml_follow_the_text_and_the_configuration() -> None:
    cli = session()
    text = cli.execute("show interfaces terse").text()
    terse = find_all(xml_of(cli, "show interfaces terse"), "interface-information")[0]
    assert terse.get("{http://xml.juniper.net/junos/22.4R3/junos}style") == "terse"
    names = [n.text for n in find_all(terse, "physical-interface/name")]
    assert names == re.findall(r"^([a-z]+[\w/-]*)\s+(?:up|down)\s", text, re.M)[:len(names)]
    assert "et-0/0/0" in names
    assert "lo0" in names
    addresses = [a.text for a in find_all(
        terse, "physical-interface/logical-interface/address-family/interface-address/ifa-local")]
    assert "198.19.1.1/30" in addresses
    one = xml_of(cli, "show interfaces et-0/0/0")
    (ifd,) = find_all(one, "interface-information/physical-interface")
    assert text_at(ifd, "description") == "R2 et-0/0/0"
    assert text_at(ifd, "mtu") == "9192"
    assert text_at(ifd, "speed") == "100Gbps"
    assert text_at(ifd, "admin-status") == "up"
    assert text_at(ifd, "oper-status") == "up"
    assert text_at(ifd, "logical-interface/address-family/interface-address/ifa-local") == \
        "198.19.1.1"
    # A commit changes the text and the XML alike.
    for line in ("configure", "set interfaces et-0/0/0 description to-R2-new",
                 "set interfaces et-0/0/0 disable", "commit and-quit"):
        assert cli.execute(line).ok
    (ifd,) = find_all(xml_of(cli, "show interfaces et-0/0/0"),
                      "interface-information/physical-interface")
    assert text_at(ifd, "description") == "to-R2-new"
    assert text_at(ifd, "admin-status") == "down"


@pytest.mark.parametrize(("line", "element", "child"), [
    ("show chassis hardware", "chassis-inventory", "chassis/serial-number"),
    ("show lldp neighbors", "lldp-neighbors-information",
     "lldp-neighbor-information/lldp-remote-system-name"),
    ("show arp", "arp-table-information", "arp-table-entry/hostname"),
    ("show arp no-resolve", "arp-table-information", "arp-table-entry/mac-address"),
    ("show route", "route-information", "route-table/rt/rt-entry/nh/to"),
    ("show system uptime", "system-uptime-information", "system-booted-time/time-length"),
    ("show configuration", "configuration", "system/host-name"),
])
def test_each_command_has_its_rpc_element(line: str, element: str, child: str) -> None:
    root = xml_of(session(), line)
    (body,) = find_all(root, element)
    assert find_all(body, child)


def test_tables_as_xml_have_a_row_for_each_line() -> None:
    cli = session()
    root = xml_of(cli, "show chassis hardware")
    assert text_at(root, "chassis-inventory/chassis/serial-number") == cli.device.facts.serial
    xcvrs = find_all(root, "chassis-inventory/chassis/chassis-module/chassis-sub-module/"
                           "chassis-sub-sub-module/serial-number")
    text = cli.execute("show chassis hardware").text()
    assert [x.text for x in xcvrs] == re.findall(r"^\s+Xcvr \d+\s+REV \d+\s+\S+\s+(\S+)", text,
                                                 re.M)
    lldp = find_all(xml_of(cli, "show lldp neighbors"),
                    "lldp-neighbors-information/lldp-neighbor-information")
    assert [(text_at(n, "lldp-local-port-id"), text_at(n, "lldp-remote-system-name"))
            for n in lldp] == [("et-0/0/0", "R2"), ("et-0/0/1", "R3"), ("fxp0", "oob-sw1.lab")]
    arp = xml_of(cli, "show arp no-resolve")
    assert len(find_all(arp, "arp-table-information/arp-table-entry")) == 9
    assert text_at(arp, "arp-table-information/arp-entry-count") == "9"
    routes = find_all(xml_of(cli, "show route"), "route-information/route-table/rt")
    default = next(r for r in routes if text_at(r, "rt-destination") == "0.0.0.0/0")
    assert text_at(default, "rt-entry/protocol-name") == "OSPF"
    assert text_at(default, "rt-entry/nh/via") == "et-0/0/0.0"
    uptime = xml_of(cli, "show system uptime")
    booted = find_all(uptime, "system-uptime-information/system-booted-time/time-length")[0]
    seconds = int(booted.get("{http://xml.juniper.net/junos/22.4R3/junos}seconds", "0"))
    assert seconds == pytest.approx(cli.device.clock.uptime(), abs=120)


def test_display_json_is_junos_json() -> None:
    cli = session()
    reply = cli.execute("show lldp neighbors | display json")
    assert reply.ok
    value: dict[str, Any] = json.loads(reply.text())
    (info,) = value["lldp-neighbors-information"]
    assert info["attributes"] == {"junos:style": "brief"}
    first = info["lldp-neighbor-information"][0]
    assert first["lldp-local-port-id"] == [{"data": "et-0/0/0"}]
    assert first["lldp-remote-system-name"] == [{"data": "R2"}]
    version = json.loads(cli.execute("show version | display json").text())
    assert version["software-information"][0]["host-name"][0]["data"] == "R1"
    interfaces = json.loads(cli.execute("show interfaces et-0/0/0 | display json").text())
    (info,) = interfaces["interface-information"]
    assert info["attributes"]["xmlns"].endswith("/junos-interface")
    flapped = info["physical-interface"][0]["interface-flapped"][0]
    assert flapped["attributes"]["junos:seconds"].isdigit()
    config = json.loads(cli.execute("show configuration system | display json").text())
    assert config["configuration"]["system"]["host-name"] == "R1"


def test_display_combines_with_the_other_pipes() -> None:
    cli = session()
    cli.term_length = 24
    paged = cli.execute("show version | display xml")
    assert paged.paged
    plain = cli.execute("show version | display xml | no-more")
    assert not plain.paged
    assert plain.text() == paged.text()
    matched = cli.execute("show version | display xml | match host-name").text()
    assert matched == "        <host-name>R1</host-name>\n"
    assert cli.execute("show configuration | display xml | no-more").text().startswith(
        '<rpc-reply xmlns:junos="http://xml.juniper.net/junos/22.4R3/junos">\n'
        "    <configuration junos:commit-seconds=")
    rpc = cli.execute("show interfaces terse | display xml rpc").text()
    assert re.search(r"<rpc>\s*<get-interface-information>\s*<terse/>", rpc)
    # Other platforms have no such pipe.
    ios = CliSession(Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("r1"),
                            enable_secret="en"),
                     mode=Mode.PRIV)
    assert not ios.execute("show version | display xml").ok


# --- NETCONF: Junos's RPCs, PyEZ, NAPALM ------------------------------------------------------

@pytest.fixture
def junos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("juniper_junos")


def pyez(emu: EmulatorThread, **options: Any) -> PyEZDevice:
    endpoint = emu.endpoints[0]
    return PyEZDevice(endpoint.host, port=endpoint.netconf_port, user=USERNAME,
                      passwd=PASSWORD, **options)


def test_pyez_opens_gathers_facts_and_runs_rpcs(junos: EmulatorThread) -> None:
    device = junos.endpoints[0].device
    with pyez(junos) as dev:
        assert dev.facts["hostname"] == device.hostname
        assert dev.facts["model"] == "MX204"
        assert dev.facts["version"] == "22.4R3.25"
        assert dev.facts["serialnumber"] == device.facts.serial  # the device's own
        assert dev.facts["domain"] == "lab.example.net"
        assert dev.facts["RE0"]["mastership_state"] == "master"
        assert dev.uptime == pytest.approx(device.clock.uptime(), abs=120)
        software = dev.rpc.get_software_information()
        assert software.tag == "software-information"
        assert software.findtext("host-name") == device.hostname
        text = session(device).execute("show version").text()
        assert dev.cli("show version", warning=False).strip() == text.strip()
        terse = dev.rpc.get_interface_information(terse=True, interface_name="et-0/0/0")
        assert [n.text for n in terse.iter("name")] == ["et-0/0/0", "et-0/0/0.0"]
        routes = dev.rpc.get_route_information(destination="0.0.0.0/0")
        assert [r.text for r in routes.iter("rt-destination")] == ["0.0.0.0/0"]
        as_json = dev.rpc.get_lldp_neighbors_information({"format": "json"})
        assert as_json["lldp-neighbors-information"][0]["lldp-neighbor-information"]
        xml = dev.rpc.cli("show chassis hardware", format="xml")
        assert xml.tag == "chassis-inventory"
        assert dev.display_xml_rpc("show version", format="text") == \
            "<get-software-information/>"


def test_pyez_over_the_ssh_port_too(junos: EmulatorThread) -> None:
    endpoint = junos.endpoints[0]
    with PyEZDevice(endpoint.host, port=endpoint.ssh_port, user=USERNAME, passwd=PASSWORD,
                    gather_facts=False) as dev:
        assert dev.rpc.get_chassis_inventory().findtext("chassis/serial-number") == \
            endpoint.device.facts.serial


def test_junos_rpcs_over_ncclient(junos: EmulatorThread) -> None:
    endpoint = junos.endpoints[0]
    with manager.connect(host=endpoint.host, port=endpoint.netconf_port, username=USERNAME,
                         password=PASSWORD, hostkey_verify=False, allow_agent=False,
                         look_for_keys=False, device_params={"name": "junos"}) as m:
        assert "http://xml.juniper.net/netconf/junos/1.0" in m.server_capabilities
        reply = m.rpc(etree.fromstring("<get-system-uptime-information/>"))
        assert reply.xpath("//system-booted-time/time-length")
        text = m.command("show system uptime", format="text")
        assert "System booted:" in str(text)
        config = m.rpc(etree.fromstring('<get-configuration format="text"/>'))
        assert "host-name" in config.xpath("string(//configuration-text)")
        missing = etree.fromstring("<get-interface-information><interface-name>xe-9/9/9"
                                   "</interface-name></get-interface-information>")
        with pytest.raises(Exception, match="not found"):
            m.rpc(missing)


@pytest.fixture
def napalm_junos(junos: EmulatorThread) -> Iterator[Any]:
    endpoint = junos.endpoints[0]
    driver = get_network_driver("junos")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                         optional_args={"port": endpoint.netconf_port})
    driver.open()
    yield driver
    driver.close()


def test_napalm_junos_getters_read_the_device(junos: EmulatorThread, napalm_junos: Any) -> None:
    device = junos.endpoints[0].device
    facts = napalm_junos.get_facts()
    assert facts["hostname"] == device.hostname
    assert facts["vendor"] == "Juniper"
    assert facts["model"] == "MX204"
    assert facts["os_version"] == "22.4R3.25"
    assert facts["fqdn"] == f"{device.hostname}.lab.example.net"
    assert "et-0/0/0" in facts["interface_list"]
    assert facts["uptime"] == pytest.approx(device.clock.uptime(), abs=120)
    interfaces = napalm_junos.get_interfaces()
    assert interfaces["et-0/0/0"]["description"] == "R2 et-0/0/0"
    assert interfaces["et-0/0/0"]["speed"] == 100000.0
    assert interfaces["et-0/0/2"]["is_up"] is False
    assert interfaces["et-0/0/0.0"]["is_up"] is True
    counters = napalm_junos.get_interfaces_counters()
    # NAPALM asks for the interfaces named like [vmfgxe][mlet]* (not fxp0).
    assert set(counters) >= {"et-0/0/0", "et-0/0/0.0", "xe-0/1/0"}
    assert "fxp0" not in counters
    assert counters["et-0/0/0"]["rx_errors"] == 0
    lldp = napalm_junos.get_lldp_neighbors()
    assert lldp["et-0/0/0"] == [{"hostname": "R2", "port": "et-0/0/0"}]
    arp = napalm_junos.get_arp_table()
    assert len(arp) == 9
    assert {"interface": "et-0/0/0.0", "ip": "198.19.1.2"}.items() <= \
        next(e for e in arp if e["ip"] == "198.19.1.2").items()
    config = napalm_junos.get_config()
    assert "host-name" in config["running"]
    assert config["running"] == config["candidate"].replace("## Last changed", "## Last commit")


@pytest.fixture
def own_junos(fresh_emulator: Callable[..., EmulatorThread]) -> Iterator[tuple[Any, Device]]:
    emu = fresh_emulator("juniper_junos")
    endpoint = emu.endpoints[0]
    driver = get_network_driver("junos")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                         optional_args={"port": endpoint.netconf_port})
    driver.open()
    yield driver, endpoint.device
    driver.close()


def test_napalm_junos_merge_compare_commit_discard_rollback(
        own_junos: tuple[Any, Device]) -> None:
    driver, device = own_junos
    cli = session(device)
    driver.load_merge_candidate(config="interfaces {\n    xe-0/1/0 {\n"
                                       "        description napalm-set;\n    }\n}\n")
    assert driver.compare_config() == ("[edit interfaces xe-0/1/0]\n"
                                       "-   description servers;\n"
                                       "+   description napalm-set;")
    driver.commit_config(message="from napalm")
    assert driver.compare_config() == ""
    # The CLI sees the NETCONF commit.
    shown = cli.execute("show configuration interfaces xe-0/1/0").text()
    assert "description napalm-set;" in shown
    assert "Description: napalm-set" in cli.execute("show interfaces xe-0/1/0").text()
    # set commands, then discarded.
    driver.load_merge_candidate(config="set system host-name R9\nset snmp location rack-1")
    assert "+   host-name R9;" in driver.compare_config()
    driver.discard_config()
    assert driver.compare_config() == ""
    assert device.hostname != "R9"
    # rollback: the configuration before the last commit, committed.
    driver.rollback()
    assert "description servers;" in cli.execute(
        "show configuration interfaces xe-0/1/0").text()
    # A bad line is refused, and the candidate is left as it was.
    with pytest.raises(Exception, match="syntax"):
        driver.load_merge_candidate(config="set nonsense here")
    assert driver.compare_config() == ""


def test_the_configuration_lock_keeps_other_sessions_out(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator("juniper_junos")
    endpoint = emu.endpoints[0]
    locked = get_network_driver("junos")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                         optional_args={"port": endpoint.netconf_port,
                                                        "config_lock": True})
    with pyez(emu, gather_facts=False) as first, pyez(emu, gather_facts=False) as second:
        first.rpc.lock_configuration()
        with pytest.raises(Exception, match="locked"):
            second.rpc.load_configuration({"action": "set", "format": "text"},
                                          configuration_set="set system host-name X")
        with pytest.raises(LockError):
            locked.open()
        locked.device.close()
        first.rpc.unlock_configuration()
        second.rpc.load_config("set system host-name R7", action="set", format="text")
        second.rpc.commit_configuration()
    assert endpoint.device.hostname == "R7"
