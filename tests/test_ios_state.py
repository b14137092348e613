"""IOS state that follows the configuration and what happens on the device
(:mod:`mgmtbench.emulator.cli.dialects.ios`, :mod:`mgmtbench.emulator.device.iproute`,
:mod:`mgmtbench.emulator.device.activity`, :mod:`mgmtbench.emulator.cli.reach`): BGP, VRFs,
``show ip route``, ``show logging``, ``show users``, ``ping`` and ``traceroute`` from the CLI,
and NAPALM's ios getters over SSH."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver

from mgmtbench.emulator import EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.testing import PASSWORD, SECRET, USERNAME


def session(user: str = "netadmin", peer: str = "198.18.0.10") -> CliSession:
    device = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"),
                    enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user=user, peer=peer)


def configure(cli: CliSession, *lines: str) -> None:
    for line in ("configure terminal", *lines, "end"):
        reply = cli.execute(line)
        assert reply.ok, (line, reply.output)


def rows(cli: CliSession, command: str) -> list[str]:
    return cli.execute(command).text().splitlines()


# --- BGP ---------------------------------------------------------------------------------------

def neighbor_row(cli: CliSession, address: str) -> str:
    return next(r for r in rows(cli, "show ip bgp summary") if r.startswith(address + " "))


def test_bgp_summary_from_the_configuration() -> None:
    cli = session()
    lines = rows(cli, "show ip bgp summary")
    assert lines[0] == "BGP router identifier 198.19.255.1, local AS number 64500"
    assert "Neighbor        V           AS MsgRcvd MsgSent   TblVer  InQ OutQ Up/Down  " \
           "State/PfxRcd" in lines
    established = neighbor_row(cli, "203.0.113.9").split()
    assert established[:3] == ["203.0.113.9", "4", "64496"]
    assert established[-1].isdigit()
    assert 2 <= int(established[-1]) <= 8
    assert established[-2].count(":") == 2  # up since the clock started
    assert neighbor_row(cli, "203.0.113.9") == neighbor_row(cli, "203.0.113.9")
    everything = cli.execute("show bgp all summary").text()
    assert everything.startswith("For address family: IPv4 Unicast\nBGP router identifier")
    assert cli.execute("show bgp ipv4 unicast summary").text() == "\n".join(lines) + "\n"


def test_bgp_follows_shutdown_new_neighbors_and_interfaces() -> None:
    cli = session()
    configure(cli, "router bgp 64500", "neighbor 203.0.113.9 shutdown",
              "neighbor 192.0.2.30 remote-as 64510", "neighbor 10.99.0.1 remote-as 64511",
              "exit", "interface GigabitEthernet0/0/1", "shutdown")
    assert neighbor_row(cli, "203.0.113.9").endswith("never    Idle (Admin)")
    assert neighbor_row(cli, "198.51.100.5").endswith("never    Active")  # its link is down
    assert neighbor_row(cli, "10.99.0.1").endswith("never    Active")  # not connected
    assert neighbor_row(cli, "192.0.2.30").split()[-1].isdigit()  # in Te0/0/5.100's subnet
    detail = cli.execute("show ip bgp neighbors 203.0.113.9").text()
    assert "  Administratively shut down\n" in detail
    assert "  BGP state = Idle\n" in detail
    configure(cli, "no router bgp 64500")
    assert cli.execute("show ip bgp summary").text() == "% BGP not active\n\n"


def test_bgp_neighbor_block() -> None:
    cli = session()
    text = cli.execute("show ip bgp neighbors 203.0.113.9").text()
    lines = text.splitlines()
    assert lines[0] == "BGP neighbor is 203.0.113.9,  remote AS 64496, external link"
    assert " Description: ISP-A" in lines
    assert any(line.startswith("  BGP state = Established, up for ") for line in lines)
    assert "  Route map for incoming advertisements is RM-ISP-A-IN" in lines
    assert "Local host: 203.0.113.10, Local port: 179" in lines
    assert cli.execute("show ip bgp ipv4 unicast neighbors 203.0.113.9").text() == text
    both = cli.execute("show ip bgp neighbors").text()
    assert both.count("BGP neighbor is ") == 2
    assert not cli.execute("show ip bgp neighbors 192.0.2.99").ok


# --- VRFs --------------------------------------------------------------------------------------

def test_show_vrf_follows_the_configuration() -> None:
    cli = session()
    assert rows(cli, "show vrf")[1].split() == ["Mgmt-intf", "<not", "set>", "ipv4,ipv6", "Gi0"]
    configure(cli, "vrf definition CUST", "rd 64500:7", "address-family ipv4",
              "route-target export 64500:7", "exit-address-family", "exit",
              "interface Loopback20", "vrf forwarding CUST", "ip address 10.20.0.1 255.255.255.0",
              "exit", "interface Loopback21", "vrf forwarding CUST")
    vrf = rows(cli, "show vrf")
    assert vrf[2] == f"  {'CUST':<32} {'64500:7':<21} {'ipv4':<11} Lo20"
    assert vrf[3] == " " * 69 + "Lo21"
    assert rows(cli, "show ip vrf")[2].split() == ["CUST", "64500:7", "Lo20"]
    detail = cli.execute("show vrf detail CUST").text()
    assert detail.startswith("VRF CUST (VRF Id = 2); default RD 64500:7; default VPNID")
    assert "    RT:64500:7" in detail
    assert "Address family ipv6 unicast not active" in detail
    routes = cli.execute("show ip route vrf CUST").text()
    assert "C        10.20.0.0/24 is directly connected, Loopback20" in routes
    assert "10.20.0.0/24" not in cli.execute("show ip route").text()


# --- show ip route -----------------------------------------------------------------------------

def test_route_table_is_the_transcript_by_default() -> None:
    cli = session()
    device = cli.device
    assert cli.execute("show ip route").text() == device._static(("show", "ip", "route"))


def test_routes_follow_addresses_shutdown_and_static_routes() -> None:
    cli = session()
    configure(cli, "interface Loopback9", "ip address 10.9.9.1 255.255.255.0", "exit",
              "ip route 172.16.0.0 255.255.0.0 10.9.9.2",
              "ip route 172.17.0.0 255.255.0.0 10.255.255.1",  # unresolvable: not installed
              "no ip route 198.19.100.0 255.255.255.0 198.19.20.10",
              "interface Vlan20", "shutdown")
    text = cli.execute("show ip route").text()
    assert "      10.0.0.0/8 is variably subnetted, 2 subnets, 2 masks\n" \
           "C        10.9.9.0/24 is directly connected, Loopback9\n" \
           "L        10.9.9.1/32 is directly connected, Loopback9\n" in text
    assert "S     172.16.0.0/16 [1/0] via 10.9.9.2\n" in text
    assert "172.17.0.0" not in text
    assert "198.19.100.0/24" not in text
    assert "198.19.101.0/24 [1/0]" in text
    assert "Vlan20" not in text
    assert "      192.0.2.0/24 is variably subnetted, 6 subnets, 2 masks" in text
    configure(cli, "no interface Loopback9", "no ip route 172.16.0.0 255.255.0.0 10.9.9.2",
              "ip route 198.19.100.0 255.255.255.0 198.19.20.10 name LAB-NET",
              "interface Vlan20", "no shutdown")
    assert cli.execute("show ip route").text() == cli.device._static(("show", "ip", "route"))


def test_route_lookup() -> None:
    cli = session()
    ospf = cli.execute("show ip route 198.19.30.7").text()
    assert ospf.startswith("Routing entry for 198.19.30.0/24\n"
                           '  Known via "ospf 1", distance 110, metric 20')
    assert "  * 198.19.20.2, from 198.19.20.2, 2w0d ago, via TenGigabitEthernet0/0/5.200" in ospf
    connected = cli.execute("show ip route 198.19.20.0 255.255.255.0").text()
    assert '  Known via "connected", distance 0, metric 0 (connected, via interface)' in connected
    assert cli.execute("show ip route 198.19.99.0 255.255.255.0").text() == \
        "% Subnet not in table\n"
    assert cli.execute("show ip route 8.8.8.8").text() == "% Network not in table\n"
    static = cli.execute("show ip route static").text()
    assert "S        203.0.113.128/25 is directly connected, Null0" in static
    assert not any(line.startswith("O ") for line in static.splitlines())


# --- show logging ------------------------------------------------------------------------------

def test_logging_gains_a_line_per_configuration_session() -> None:
    cli = session()
    before = cli.execute("show logging").text()
    assert "348 messages logged" in before
    configure(cli, "snmp-server location Lab")
    cli.execute("configure terminal")
    cli.execute("exit")  # leaving configuration mode by `exit` counts too
    after = cli.execute("show logging").text()
    assert after.startswith(before.split("Log Buffer")[0].replace("348 messages", "350 messages")
                            .replace("361 message lines", "363 message lines"))
    new = after.splitlines()[-2:]
    for number, line in zip(("000349", "000350"), new, strict=True):
        assert line.startswith(f"{number}: ")
        assert line.endswith(": %SYS-5-CONFIG_I: Configured from console by netadmin on vty0 "
                             "(198.18.0.10)")
        stamp = line.split(": ")[1]  # Nov 22 14:05:00.123 UTC
        assert stamp.endswith(" UTC")
        assert stamp.split()[2].count(":") == 2
    configure(cli, "logging buffered 4096 informational")
    bounded = cli.execute("show logging").text()
    assert "Log Buffer (4096 bytes):" in bounded
    assert len(bounded.split("Log Buffer (4096 bytes):\n\n")[1]) <= 4096
    assert bounded.splitlines()[-1].startswith("000351: ")


# --- show users --------------------------------------------------------------------------------

def test_show_users_lists_every_open_session() -> None:
    cli = session()
    activity = cli.device.activity
    other = CliSession(cli.device, mode=Mode.PRIV, user="backup-admin", peer="198.18.0.77")
    first = activity.open_session(other, "shell", other.user, other.peer)
    mine = activity.open_session(cli, "exec", cli.user, cli.peer)
    lines = rows(cli, "show users")
    assert lines[1] == "   2 vty 0     backup-admin idle                 00:00:00 198.18.0.77"
    assert lines[2] == "*  3 vty 1     netadmin   idle                 00:00:00 198.18.0.10"
    activity.close_session(first)
    activity.close_session(mine)
    assert rows(cli, "show users")[1].startswith("*  2 vty 0     netadmin")
    assert any("%SYS-6-LOGOUT: User backup-admin has exited tty session 2(198.18.0.77)" in line
               for line in rows(cli, "show logging"))


# --- ping and traceroute -----------------------------------------------------------------------

def test_ping() -> None:
    cli = session()
    ok = cli.execute("ping 198.19.30.5 repeat 7 size 200 source Loopback0").text().splitlines()
    assert ok[:4] == ["Type escape sequence to abort.",
                      "Sending 7, 200-byte ICMP Echos to 198.19.30.5, timeout is 2 seconds:",
                      "Packet sent with a source address of 198.19.255.1 ", "!!!!!!!"]
    assert ok[4].startswith("Success rate is 100 percent (7/7), round-trip min/avg/max = ")
    lost = cli.execute("ping 203.0.113.200").text().splitlines()  # the Null0 aggregate
    assert lost[2:] == [".....", "Success rate is 0 percent (0/5)"]
    assert cli.execute("ping vrf Mgmt-intf 198.18.0.50").text().count("!!!!!") == 1
    assert cli.execute("ping 198.19.30.5 source 10.1.1.1").text().startswith("% Invalid source")
    assert not cli.execute("ping 198.19.30.5 repeat x").ok
    configure(cli, "no router ospf 1", "interface TenGigabitEthernet0/0/5.200", "shutdown")
    assert "Success rate is 0 percent" not in cli.execute("ping 198.19.30.5").text()  # default
    configure(cli, "router bgp 64500", "neighbor 203.0.113.9 shutdown", "exit",
              "interface GigabitEthernet0/0/0", "shutdown")
    assert "Success rate is 0 percent (0/5)" in cli.execute("ping 198.19.30.5").text()


def test_traceroute_follows_next_hops() -> None:
    cli = session()
    lines = cli.execute("traceroute 198.19.30.5").text().splitlines()
    assert lines[:3] == ["Type escape sequence to abort.", "Tracing the route to 198.19.30.5",
                         "VRF info: (vrf in name/id, vrf out name/id)"]
    assert [line.split()[:2] for line in lines[3:]] == [["1", "198.19.20.2"],
                                                       ["2", "198.19.30.5"]]
    assert lines[3].endswith(" msec")
    near = cli.execute("traceroute 198.19.1.2").text().splitlines()
    assert [line.split()[:2] for line in near[3:]] == [["1", "198.19.1.2"]]
    lost = cli.execute("traceroute 203.0.113.200 ttl 1 3").text().splitlines()
    assert lost[3:] == ["  1  *  *  * ", "  2  *  *  * ", "  3  *  *  * "]


# --- NAPALM over SSH ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def napalm_ios(emulator_for: Callable[[str], EmulatorThread],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    endpoint = emulator_for("cisco_ios").endpoints[0]
    log: Path = tmp_path_factory.mktemp("napalm-state") / "napalm.log"
    driver = get_network_driver("ios")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.ssh_port, "secret": SECRET, "session_log": str(log)})
    driver.open()
    yield driver
    driver.close()


def test_napalm_bgp_neighbors(napalm_ios: Any) -> None:
    found = napalm_ios.get_bgp_neighbors()
    peers = found["global"]["peers"]
    assert found["global"]["router_id"] == "198.19.255.1"
    assert set(peers) == {"198.51.100.5", "203.0.113.9"}
    isp_a = peers["203.0.113.9"]
    assert isp_a["is_up"]
    assert isp_a["is_enabled"]
    assert isp_a["remote_as"] == 64496
    assert isp_a["local_as"] == 64500
    assert isp_a["description"] == "ISP-A"
    assert isp_a["address_family"]["ipv4 unicast"]["accepted_prefixes"] > 0
    detail = napalm_ios.get_bgp_neighbors_detail()
    [neighbor] = detail["global"][64496]
    assert neighbor["up"]
    assert neighbor["connection_state"] == "Established"
    assert neighbor["local_address"] == "203.0.113.10"
    assert neighbor["import_policy"] == \
        "RM-ISP-A-IN"


def test_napalm_network_instances(napalm_ios: Any) -> None:
    instances = napalm_ios.get_network_instances()
    assert instances["Mgmt-intf"]["type"] == "L3VRF"
    assert list(instances["Mgmt-intf"]["interfaces"]["interface"]) == ["GigabitEthernet0"]
    assert "GigabitEthernet0" not in instances["default"]["interfaces"]["interface"]
    assert "Loopback0" in instances["default"]["interfaces"]["interface"]


def test_napalm_route_to(napalm_ios: Any) -> None:
    ospf = napalm_ios.get_route_to("198.19.30.0/24")["198.19.30.0/24"]
    assert ospf[0]["protocol"] == "ospf"
    assert ospf[0]["next_hop"] == "198.19.20.2"
    assert ospf[0]["outgoing_interface"] == "TenGigabitEthernet0/0/5.200"
    connected = napalm_ios.get_route_to("198.19.20.5")
    [(prefix, entries)] = connected.items()
    assert prefix == "198.19.20.0/24"
    assert entries[0]["protocol"] == "connected"


def test_napalm_ping_and_traceroute(napalm_ios: Any) -> None:
    ping = napalm_ios.ping("198.19.30.5")["success"]
    assert ping["probes_sent"] == 5
    assert ping["packet_loss"] == 0
    assert ping["rtt_min"] >= 1
    assert napalm_ios.ping("203.0.113.200")["success"]["packet_loss"] == 5
    trace = napalm_ios.traceroute("198.19.30.5")["success"]
    assert trace[1]["probes"][1]["ip_address"] == "198.19.20.2"
    assert trace[2]["probes"][3]["ip_address"] == "198.19.30.5"


def test_ssh_login_is_logged_and_listed(napalm_ios: Any) -> None:
    output = napalm_ios.cli(["show logging", "show users"])
    assert f"%SEC_LOGIN-5-LOGIN_SUCCESS: Login Success [user: {USERNAME}] [Source: 127.0.0.1]" \
        in output["show logging"]
    mine = [line for line in output["show users"].splitlines() if line.startswith("*")]
    assert len(mine) == 1
    assert USERNAME in mine[0]
    assert "127.0.0.1" in mine[0]
