"""Cisco NX-OS as its own tools expect it: ``show ... | json`` over the CLI, NX-API (JSON-RPC
and ``ins_api`` at ``/ins``) over HTTPS, and NAPALM's nxos (NX-API) and nxos_ssh (SSH) drivers,
unmodified, reading both from the same device state as the text CLI."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from napalm import get_network_driver

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing import PASSWORD, USERNAME
from mgmtbench.testing.shell import https_client


def session() -> CliSession:
    device = Device(load_platform("cisco_nxos"), DeviceFacts.for_hostname("leaf1"),
                    enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="admin", peer="198.18.0.10")


def as_json(cli: CliSession, line: str) -> dict[str, Any]:
    reply = cli.execute(f"{line} | json")
    assert reply.ok, reply.text()
    value: dict[str, Any] = json.loads(reply.text())
    return value


def rows(value: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """A table's rows, one row or many (NX-OS gives a single row as itself)."""
    found = value[f"TABLE_{name}"][f"ROW_{name}"]
    return found if isinstance(found, list) else [found]


# --- | json -----------------------------------------------------------------------------------

def test_show_version_json_says_what_the_text_says() -> None:
    cli = session()
    text = cli.execute("show version").text()
    value = as_json(cli, "show version")
    assert value["nxos_ver_str"] == re.search(r"NXOS: version (\S+)", text)[1]  # type: ignore[index]
    assert value["chassis_id"] == "Nexus9000 C93180YC-FX Chassis"
    assert value["host_name"] == "leaf1"
    assert value["proc_board_id"] == cli.device.facts.serial
    assert (value["memory"], value["mem_type"]) == (24565104, "kB")
    assert value["header_str"].startswith("Cisco Nexus Operating System (NX-OS) Software\n")
    days = int(re.search(r"uptime is (\d+) day", text)[1])  # type: ignore[index]
    assert value["kern_uptm_days"] == days


def test_show_interface_json_has_every_interface_with_its_counters() -> None:
    cli = session()
    text = cli.execute("show interface").text()
    found = rows(as_json(cli, "show interface"), "interface")
    assert [row["interface"] for row in found] == re.findall(r"^(\S+) is ", text, re.M)
    by_name = {row["interface"]: row for row in found}
    first = by_name["Ethernet1/1"]
    assert (first["state"], first["admin_state"], first["desc"]) == ("up", "up",
                                                                     "R2 Ethernet1/1")
    assert (first["eth_mtu"], first["eth_bw"]) == ("9216", 25000000)
    assert (first["eth_ip_addr"], first["eth_ip_mask"]) == ("198.19.1.1", 30)
    inbound = re.search(r"(\d+) input packets\s+(\d+) bytes", text)
    assert inbound is not None
    assert (first["eth_inpkts"], first["eth_inbytes"]) == (int(inbound[1]), int(inbound[2]))
    assert by_name["Ethernet1/9"]["state_rsn_desc"] == "Link not connected"
    assert by_name["Vlan10"]["svi_ip_addr"] == "192.0.2.1"
    assert by_name["loopback0"]["eth_ip_mask"] == 32
    one = as_json(cli, "show interface Eth1/2")["TABLE_interface"]["ROW_interface"]
    assert one["interface"] == "Ethernet1/2"


def test_tables_as_json_name_interfaces_whole() -> None:
    cli = session()
    lldp = rows(as_json(cli, "show lldp neighbors"), "nbor")
    assert [(n["l_port_id"], n["chassis_id"]) for n in lldp] == [
        ("Ethernet1/1", "R2"), ("Ethernet1/2", "R3"), ("mgmt0", "oob-sw1.lab")]
    status = {r["interface"]: r for r in rows(as_json(cli, "show interface status"),
                                                "interface")}
    assert status["Ethernet1/3"]["vlan"] == "10"
    assert status["Ethernet1/11"]["state"] == "xcvrAbsen"
    brief = rows(as_json(cli, "show ip interface brief"), "intf")
    assert ("loopback0", "198.19.255.1") in {(r["intf-name"], r["prefix"]) for r in brief}
    arp = rows(as_json(cli, "show ip arp"), "vrf")[0]
    assert arp["cnt-total"] == len(rows(arp, "adj")) == 8
    inventory = rows(as_json(cli, "show inventory"), "inv")
    assert inventory[0]["name"] == "Chassis"
    assert inventory[0]["serialnum"] == cli.device.facts.serial
    assert as_json(cli, "show clock")["time_source"] == "NTP"
    all_vrfs = {r["intf-name"]: r["vrf-name-out"]
                for r in rows(as_json(cli, "show ip interface vrf all"), "intf")}
    assert all_vrfs["mgmt0"] == "management"
    assert all_vrfs["Vlan10"] == "default"


def test_ntp_answers_from_the_configuration() -> None:
    cli = session()
    text = cli.execute("show ntp peers").text()
    assert "198.19.255.100" in text
    assert "%" not in text
    peers = rows(as_json(cli, "show ntp peers"), "peers")
    assert peers == [{"PeerIPAddress": "198.19.255.100", "serv_peer": "Server",
                      "prefer": "yes", "keyid": "None", "vrf": "management"}]
    status = rows(as_json(cli, "show ntp peer-status"), "peersstatus")
    assert (status[0]["syncmode"], status[0]["remote"]) == ("*", "198.19.255.100")
    for line in ("configure terminal", "ntp server 198.19.255.101 use-vrf management", "end"):
        assert cli.execute(line).ok
    assert len(rows(as_json(cli, "show ntp peers"), "peers")) == 2


def test_json_follows_the_configuration() -> None:
    cli = session()
    for line in ("configure terminal", "hostname spine7", "interface loopback9",
                 "ip address 10.9.9.9/32", "end"):
        assert cli.execute(line).ok, line
    assert as_json(cli, "show hostname") == {"hostname": "spine7"}
    names = [r["intf-name"] for r in rows(as_json(cli, "show ip interface"), "intf")]
    assert "loopback9" in names


def test_a_command_without_json_is_refused() -> None:
    cli = session()
    reply = cli.execute("show running-config | json")
    assert not reply.ok
    assert reply.text() == "% Structured output unsupported\n"
    assert not cli.execute("show nonsense | json").ok


def test_checkpoint_diff_and_rollback() -> None:
    cli = session()
    assert cli.execute("checkpoint file before").ok
    for line in ("configure terminal", "interface loopback77", "description added", "end"):
        assert cli.execute(line).ok
    assert cli.execute("checkpoint file after").ok
    diff = cli.execute("show diff rollback-patch file before file after").text()
    assert "interface loopback77\n  description added\n" in diff
    reply = cli.execute("rollback running-config file before")
    assert reply.ok
    assert "Rollback completed successfully." in reply.text()
    assert "loopback77" not in cli.execute("show running-config").text()
    assert cli.execute("delete after").ok
    assert "No such file" in cli.execute("show file after").text()


# --- NX-API -----------------------------------------------------------------------------------

@pytest.fixture
def nxos(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("cisco_nxos")


def ins_url(emu: EmulatorThread) -> str:
    endpoint = emu.endpoints[0]
    return f"https://{endpoint.host}:{endpoint.https_port}/ins"


def test_nxapi_json_rpc_batch_in_one_response(nxos: EmulatorThread) -> None:
    device = nxos.endpoints[0].device
    calls = [{"jsonrpc": "2.0", "method": "cli", "params": {"cmd": cmd, "version": 1},
              "id": index} for index, cmd in enumerate(
                  ["show version", "show hostname", "show ip arp", "show inventory",
                   "show interface status"], 1)]
    with https_client(nxos) as client:
        response = client.post(ins_url(nxos), json=calls,
                               headers={"content-type": "application/json-rpc"})
        assert response.status_code == 200
        replies = response.json()
        assert [r["id"] for r in replies] == [1, 2, 3, 4, 5]
        assert replies[0]["result"]["body"]["proc_board_id"] == device.facts.serial
        assert replies[1]["result"]["body"] == {"hostname": device.hostname}
        text = client.post(ins_url(nxos), headers={"content-type": "application/json-rpc"},
                           json={"jsonrpc": "2.0", "method": "cli_ascii", "id": 9,
                                 "params": {"cmd": "show lldp neighbors", "version": 1}}).json()
        assert text["result"]["msg"] == device.transcript(("show", "lldp", "neighbors"))


def test_nxapi_json_rpc_errors(nxos: EmulatorThread) -> None:
    headers = {"content-type": "application/json-rpc"}
    with https_client(nxos) as client:
        calls = [{"jsonrpc": "2.0", "method": "cli", "params": {"cmd": cmd, "version": 1},
                  "id": index} for index, cmd in enumerate(
                      ["show version", "show nonsense", "show clock"], 1)]
        replies = client.post(ins_url(nxos), json=calls, headers=headers).json()
        assert len(replies) == 2  # stop-on-error: the third did not run
        error = replies[1]["error"]
        assert (error["code"], error["message"]) == (-32602, "Invalid params")
        assert "% Invalid command at '^' marker." in error["data"]["msg"]
        unsupported = client.post(ins_url(nxos), headers=headers, json={
            "jsonrpc": "2.0", "method": "cli", "id": 1,
            "params": {"cmd": "show running-config", "version": 1}}).json()
        assert unsupported["error"]["data"]["msg"] == "Structured output unsupported"
        method = client.post(ins_url(nxos), headers=headers, json={
            "jsonrpc": "2.0", "method": "bash", "id": 2, "params": {"cmd": "ls"}}).json()
        assert method["error"]["code"] == -32601
        assert client.post(ins_url(nxos), headers=headers,
                           content=b"{nope").json()["error"]["code"] == -32700
        assert client.get(ins_url(nxos)).status_code == 405
    with https_client(nxos, auth=False) as anonymous:
        assert anonymous.post(ins_url(nxos), json={}).status_code == 401


def ins_api(kind: str, commands: str, **extra: str) -> dict[str, Any]:
    return {"ins_api": {"version": "1.0", "type": kind, "chunk": "0", "sid": "1",
                        "input": commands, "output_format": "json", **extra}}


def test_nxapi_ins_api_show_and_ascii(nxos: EmulatorThread) -> None:
    device = nxos.endpoints[0].device
    with https_client(nxos) as client:
        value = client.post(ins_url(nxos), json=ins_api(
            "cli_show", "show version ;show ip interface brief ;show clock")).json()["ins_api"]
        outputs = value["outputs"]["output"]
        assert [o["input"] for o in outputs] == ["show version", "show ip interface brief",
                                                 "show clock"]
        assert {o["code"] for o in outputs} == {"200"}
        assert outputs[0]["body"]["chassis_id"] == "Nexus9000 C93180YC-FX Chassis"
        one = client.post(ins_url(nxos), json=ins_api(
            "cli_show_ascii", "show inventory")).json()["ins_api"]["outputs"]["output"]
        assert one["body"] == device.transcript(("show", "inventory"))
        bad = client.post(ins_url(nxos), json=ins_api(
            "cli_show", "show clock ;show bogus")).json()["ins_api"]["outputs"]["output"]
        assert (bad[1]["code"], bad[1]["msg"]) == ("400", "Input CLI command error")
        assert "Invalid command" in bad[1]["clierror"]
        unsupported = client.post(ins_url(nxos), json=ins_api(
            "cli_show", "show running-config")).json()["ins_api"]["outputs"]["output"]
        assert unsupported["code"] == "501"
        assert client.post(ins_url(nxos), json=ins_api("cli_bogus", "show clock")
                           ).status_code == 400


def test_nxapi_configures_and_the_cli_sees_it(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator("cisco_nxos")
    device = emu.endpoints[0].device
    with https_client(emu) as client:
        out = client.post(ins_url(emu), json=ins_api(
            "cli_conf", "interface loopback42 ;description set-by-nxapi")).json()
        assert [o["code"] for o in out["ins_api"]["outputs"]["output"]] == ["200", "200"]
        assert "interface loopback42\n  description set-by-nxapi\n" in device.transcript(
            ("show", "running-config"))
        # JSON-RPC mixes configuration and show commands in one request.
        calls = [{"jsonrpc": "2.0", "method": "cli", "params": {"cmd": cmd, "version": 1},
                  "id": index} for index, cmd in enumerate(
                      ["interface loopback43", "ip address 10.43.0.1/32", "show ip interface"],
                      1)]
        replies = client.post(ins_url(emu), json=calls,
                              headers={"content-type": "application/json-rpc"}).json()
        assert replies[0]["result"] is None
        names = [r["intf-name"] for r in rows(replies[2]["result"]["body"], "intf")]
        assert "loopback43" in names
        # rollback-on-error puts the configuration back.
        out = client.post(ins_url(emu), json=ins_api(
            "cli_conf", "interface loopback44 ;bogus words", rollback="rollback-on-error")).json()
        assert out["ins_api"]["outputs"]["output"][1]["code"] == "400"
        assert "loopback44" not in device.transcript(("show", "running-config"))


# --- NAPALM -----------------------------------------------------------------------------------

@pytest.fixture
def napalm_nxos(nxos: EmulatorThread) -> Iterator[Any]:
    endpoint = nxos.endpoints[0]
    assert nxos.emulator.tls is not None
    driver = get_network_driver("nxos")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.https_port, "transport": "https",
                       "ssl_verify": str(nxos.emulator.tls.ca)})
    driver.open()
    yield driver
    driver.close()


@pytest.fixture
def napalm_nxos_ssh(nxos: EmulatorThread) -> Iterator[Any]:
    endpoint = nxos.endpoints[0]
    driver = get_network_driver("nxos_ssh")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.ssh_port})
    driver.open()
    yield driver
    driver.close()


def check_getters(driver: Any, device: Device, *, ssh: bool) -> None:
    facts = driver.get_facts()
    assert facts["hostname"] == device.hostname
    assert facts["vendor"] == "Cisco"
    assert facts["model"] == "Nexus9000 C93180YC-FX Chassis"
    assert facts["serial_number"] == device.facts.serial
    assert facts["os_version"] == "10.2(5)"
    assert facts["uptime"] > 0
    assert "Ethernet1/1" in facts["interface_list"]
    interfaces = driver.get_interfaces()
    assert interfaces["Ethernet1/1"]["is_up"]
    assert interfaces["Ethernet1/1"]["is_enabled"]
    assert interfaces["Ethernet1/1"]["speed"] == 25000.0
    assert interfaces["Ethernet1/1"]["mtu"] == 9216
    assert interfaces["Ethernet1/1"]["description"] == "R2 Ethernet1/1"
    assert not interfaces["Ethernet1/9"]["is_up"]
    assert interfaces["Vlan10"]["description"] == "servers"
    lldp = driver.get_lldp_neighbors()
    assert lldp["Ethernet1/1"] == [{"hostname": "R2", "port": "Ethernet1/1"}]
    # NAPALM names the local port as netutils does (mgmt0 -> Management0).
    assert lldp["Management0"] == [{"hostname": "oob-sw1.lab", "port": "Gi1/0/12"}]
    addresses = driver.get_interfaces_ip()
    assert addresses["Ethernet1/1"]["ipv4"] == {"198.19.1.1": {"prefix_length": 30}}
    assert addresses["Vlan10"]["ipv4"] == {"192.0.2.1": {"prefix_length": 26}}
    arp = driver.get_arp_table()
    assert {"interface": "Ethernet1/1", "ip": "198.19.1.2", "age": 12.0} in [
        {k: e[k] for k in ("interface", "ip", "age")} for e in arp]
    assert len(arp) == 8
    config = driver.get_config()
    assert f"hostname {device.hostname}" in config["running"]
    assert "!Time:" not in config["running"]
    assert list(driver.get_ntp_servers()) == ["198.19.255.100"]
    users = driver.get_users()
    assert users["admin"]["level"] == 15
    snmp = driver.get_snmp_information()
    assert snmp["location"] == "lab-rack-12"
    assert snmp["community"]["mgmtbench-ro"]["mode"] == "network-operator"
    if ssh:
        # The counters move on the device clock: read the text first, the getter after.
        text = CliSession(device, mode=Mode.PRIV).execute("show interface Ethernet1/1").text()
        counters = driver.get_interfaces_counters()
        inbound = re.search(r"(\d+) input packets\s+(\d+) bytes", text)
        assert inbound is not None
        assert counters["Ethernet1/1"]["rx_octets"] >= int(inbound[2]) > 0
        assert counters["mgmt0"]["rx_octets"] > 0
        assert counters["Ethernet1/1"]["tx_errors"] == 0


def test_napalm_nxos_over_nxapi(nxos: EmulatorThread, napalm_nxos: Any) -> None:
    check_getters(napalm_nxos, nxos.endpoints[0].device, ssh=False)


def test_napalm_nxos_ssh(nxos: EmulatorThread, napalm_nxos_ssh: Any) -> None:
    check_getters(napalm_nxos_ssh, nxos.endpoints[0].device, ssh=True)


def test_napalm_nxos_ssh_merge_compare_commit_discard(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator("cisco_nxos")
    endpoint = emu.endpoints[0]
    device = endpoint.device
    driver = get_network_driver("nxos_ssh")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                            optional_args={"port": endpoint.ssh_port})
    driver.open()
    try:
        driver.load_merge_candidate(config="interface loopback77\n  description merged\n")
        assert "loopback77" not in device.transcript(("show", "running-config"))
        assert driver.compare_config() == "interface loopback77\n  description merged"
        driver.commit_config()
        running = device.transcript(("show", "running-config"))
        assert "interface loopback77\n  description merged\n" in running
        assert "interface loopback77" in device.saved.startup  # commit saves
        driver.load_merge_candidate(config="ntp server 198.19.255.102\n")
        driver.discard_config()
        assert driver.compare_config() == ""
        driver.rollback()  # rollback running-config file rollback_config.txt (the checkpoint)
        assert "loopback77" not in device.transcript(("show", "running-config"))
    finally:
        driver.close()


def test_napalm_nxos_ssh_replace_copies_by_scp_and_changes_only_what_differs(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator("cisco_nxos")
    endpoint = emu.endpoints[0]
    device = endpoint.device
    driver = get_network_driver("nxos_ssh")(endpoint.host, USERNAME, PASSWORD, timeout=20,
                                            optional_args={"port": endpoint.ssh_port})
    driver.open()
    try:
        config = driver.get_config()["running"]
        # The file goes to bootflash: by SCP and is checked with `show file X md5sum`.
        driver.load_replace_candidate(config=config.replace("lab-rack-12", "rack-99"))
        assert driver.compare_config().splitlines() == ["snmp-server location rack-99"]
        driver.commit_config()
        running = device.transcript(("show", "running-config"))
        assert "snmp-server location rack-99\n" in running
        assert "lab-rack-12" not in running
    finally:
        driver.close()
