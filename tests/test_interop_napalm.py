"""NAPALM's ios driver (unmodified) against the emulated IOS-XE router: getters, and the
configuration workflow it builds on SCP and the file commands (``load_merge_candidate`` /
``load_replace_candidate`` copy a file to ``flash:`` by SCP; ``compare_config`` runs ``show
archive config incremental-diffs`` / ``differences``; ``commit_config`` saves
``flash:rollback_config.txt``, runs ``copy ... running-config`` or ``configure replace``, then
``write mem``; ``rollback`` runs ``configure replace flash:rollback_config.txt force``).

Every driver writes Netmiko's session log under the test's ``tmp_path`` (``napalm.log``): when a
test fails, that file is the exact interaction to look at.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from napalm import get_network_driver
from napalm.base.exceptions import (
    CommandErrorException,
    CommitConfirmException,
    MergeConfigException,
)

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, SECRET, USERNAME

FreshEmulator = Callable[..., EmulatorThread]
MERGE = "interface Loopback77\n description merged-by-napalm\nend\n"


def driver(endpoint: DeviceEndpoint, log: Path) -> Any:
    """An open NAPALM ios driver on ``endpoint``."""
    ios = get_network_driver("ios")(
        endpoint.host, USERNAME, PASSWORD, timeout=20,
        optional_args={"port": endpoint.ssh_port, "secret": SECRET, "session_log": str(log)})
    ios.open()
    return ios


@pytest.fixture(scope="module")
def napalm_ios(emulator_for: Callable[[str], EmulatorThread],
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A NAPALM ios driver on the session's (shared, read-only) IOS device, for the module."""
    ios_driver = driver(emulator_for("cisco_ios").endpoints[0],
                        tmp_path_factory.mktemp("napalm") / "napalm.log")
    yield ios_driver
    ios_driver.close()


@pytest.fixture
def own_device(fresh_emulator: FreshEmulator) -> DeviceEndpoint:
    """A device of the test's own, for the tests that change its configuration."""
    return fresh_emulator("cisco_ios").endpoints[0]


@pytest.fixture
def napalm_own(own_device: DeviceEndpoint, tmp_path: Path) -> Iterator[Any]:
    """A NAPALM ios driver on :func:`own_device`."""
    ios_driver = driver(own_device, tmp_path / "napalm.log")
    yield ios_driver
    ios_driver.close()


def config_lines(text: str) -> list[str]:
    """A configuration's lines without comments, blank lines and the lines IOS adds when it
    renders it (what two configurations that configure the same thing share)."""
    return [line for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("!")]


def running(ios_driver: Any) -> str:
    return str(ios_driver.get_config(retrieve="running")["running"])


def test_get_facts(napalm_ios: Any, ios: DeviceEndpoint) -> None:
    facts = napalm_ios.get_facts()
    assert facts["hostname"] == ios.hostname
    assert facts["vendor"] == "Cisco"
    assert facts["serial_number"] == ios.device.facts.serial
    assert "Version 17.9" in facts["os_version"]
    assert facts["model"] == "C8300-1N1S-4T2X"
    assert facts["uptime"] > 0
    assert facts["fqdn"].startswith(f"{ios.hostname}.")  # from `show hosts`
    brief = ios.device.transcript(("show", "ip", "interface", "brief")).splitlines()[1:]
    assert facts["interface_list"] == [line.split()[0] for line in brief if line.strip()]


def test_get_interfaces(napalm_ios: Any) -> None:
    interfaces = napalm_ios.get_interfaces()
    assert len(interfaces) > 5
    uplink = interfaces["GigabitEthernet0/0/0"]
    assert uplink["is_enabled"]
    assert uplink["is_up"]
    assert uplink["description"].startswith("WAN ISP-A")
    assert uplink["speed"] == 1000.0
    assert re.fullmatch(r"([0-9A-F]{2}:){5}[0-9A-F]{2}", uplink["mac_address"])


def test_get_interfaces_ip(napalm_ios: Any, ios: DeviceEndpoint) -> None:
    addresses = napalm_ios.get_interfaces_ip()
    assert addresses["GigabitEthernet0/0/0"]["ipv4"] == {"203.0.113.10": {"prefix_length": 30}}
    configured = re.findall(r"^ ip address (\S+) \S+", running(napalm_ios), flags=re.M)
    found = {ip for entry in addresses.values() for ip in entry.get("ipv4", {})}
    assert found == set(configured)


def test_get_arp_table(napalm_ios: Any, ios: DeviceEndpoint) -> None:
    table = napalm_ios.get_arp_table()
    transcript = ios.device.transcript(("show", "ip", "arp"))
    assert len(table) == len(re.findall(r"^Internet ", transcript, flags=re.M))
    first = table[0]
    assert first["ip"] in transcript
    assert first["interface"]
    assert re.fullmatch(r"([0-9A-F]{2}:){5}[0-9A-F]{2}", first["mac"])


@pytest.mark.parametrize(("getter", "expected"), [
    ("get_lldp_neighbors", "GigabitEthernet0/0/2"),  # show lldp neighbors detail
    ("get_users", "netadmin"),  # show running-config | include username
    ("get_snmp_information", "community"),  # show running-config | include snmp-server
    ("get_environment", "cpu"),  # show processes cpu, show memory statistics ...
    ("get_ntp_servers", "198.18.0.123"),  # show running-config | include ntp server
])
def test_getters_on_filtered_output(napalm_ios: Any, getter: str, expected: str) -> None:
    """Getters built on output filters (``| include``) and further show commands: the issue
    found them empty or raising."""
    assert expected in getattr(napalm_ios, getter)()


def test_get_config(napalm_own: Any, own_device: DeviceEndpoint) -> None:
    configs = napalm_own.get_config()
    assert configs["running"].startswith("version 17.9") or "\nversion 17.9" in configs["running"]
    assert f"hostname {own_device.hostname}" in configs["running"]
    assert "Current configuration" not in configs["running"]
    # A device that has not been changed since boot starts with what it runs.
    using, startup = configs["startup"].split("\n", 1)
    assert re.fullmatch(r"Using \d+ out of 33554432 bytes", using)
    assert startup == configs["running"]
    assert configs["candidate"] == ""


def test_merge_compare_commit_rollback(napalm_own: Any) -> None:
    before = running(napalm_own)
    napalm_own.load_merge_candidate(config=MERGE)
    assert napalm_own.compare_config() == ("+interface Loopback77\n"
                                           "+ description merged-by-napalm")
    assert "Loopback77" not in running(napalm_own)  # nothing applied before the commit

    napalm_own.commit_config()
    after = napalm_own.get_config()
    assert "interface Loopback77\n description merged-by-napalm" in after["running"]
    assert "interface Loopback77" in after["startup"]  # the commit saves it (write mem)
    assert napalm_own.compare_config() == ""  # the merge file is now in the running config

    napalm_own.rollback()
    back = napalm_own.get_config()
    assert "Loopback77" not in back["running"]
    assert "Loopback77" not in back["startup"]
    # What it was, but for `file prompt quiet`: NAPALM sets it for its file operations and
    # removes it when it closes.
    assert config_lines(back["running"].replace("file prompt quiet\n", "")) \
        == config_lines(before)


def test_discard_config(napalm_own: Any) -> None:
    napalm_own.load_merge_candidate(config=MERGE)
    assert napalm_own.compare_config()
    napalm_own.discard_config()  # copy null: flash:/merge_config.txt
    assert napalm_own.compare_config() == ""
    assert "Loopback77" not in running(napalm_own)


def test_replace_compare_commit_rollback(napalm_own: Any) -> None:
    # `configure replace ... force revert trigger error` needs the archive, as on IOS.
    napalm_own.device.send_config_set(["archive", "path flash:archive", "write-memory"])
    before = running(napalm_own)
    candidate = before.replace("ntp server vrf Mgmt-intf 198.18.0.124\n", "") \
        + "\nip domain name replaced.example\n"
    assert candidate != before + "\nip domain name replaced.example\n"

    napalm_own.load_replace_candidate(config=candidate)
    diff = napalm_own.compare_config()
    assert "+ip domain name replaced.example" in diff
    assert "-ntp server vrf Mgmt-intf 198.18.0.124" in diff

    napalm_own.commit_config()
    replaced = running(napalm_own)
    assert "ip domain name replaced.example" in replaced
    assert "198.18.0.124" not in replaced
    archive = napalm_own.device.send_command("show archive")
    assert "<- Most Recent" in archive  # write mem archived it (archive write-memory)

    napalm_own.rollback()
    back = running(napalm_own)
    assert "replaced.example" not in back
    assert "ntp server vrf Mgmt-intf 198.18.0.124" in back


def test_merge_with_a_refused_line_rolls_back(napalm_own: Any) -> None:
    before = running(napalm_own)
    napalm_own.load_merge_candidate(config="interface Loopback78\n description ok\n"
                                           "foo bar baz\nend\n")
    assert "+foo bar baz" in napalm_own.compare_config()
    with pytest.raises(MergeConfigException, match="Invalid input detected"):
        napalm_own.commit_config()  # then NAPALM rolls back to flash:rollback_config.txt
    back = running(napalm_own)
    assert "Loopback78" not in back
    assert config_lines(back.replace("file prompt quiet\n", "")) == config_lines(before)


def with_archive(ios_driver: Any) -> None:
    """The archive that ``revert_in`` needs, as on IOS (``show archive`` must not say it is
    not enabled)."""
    ios_driver.device.send_config_set(["archive", "path flash:archive"])


def test_commit_revert_in_then_confirm(napalm_own: Any, own_device: DeviceEndpoint) -> None:
    """``commit_config(revert_in=60)``: ``configure terminal revert timer 1``, the merge, no
    save; ``confirm_commit()``: ``configure confirm`` and ``write mem``; the timer then no
    longer reverts anything."""
    with_archive(napalm_own)
    napalm_own.load_merge_candidate(config=MERGE)
    assert not napalm_own.has_pending_commit()
    napalm_own.commit_config(revert_in=60)
    assert napalm_own.has_pending_commit()
    pending = napalm_own._get_pending_commits()
    assert pending["user"] == USERNAME
    assert pending["timer"] == "1 min"
    configs = napalm_own.get_config()
    assert "interface Loopback77" in configs["running"]
    assert "Loopback77" not in configs["startup"]  # not saved while it may revert

    napalm_own.confirm_commit()
    assert not napalm_own.has_pending_commit()
    own_device.device.clock.advance(120)  # past the timer: nothing to revert any more
    configs = napalm_own.get_config()
    assert "interface Loopback77" in configs["running"]
    assert "interface Loopback77" in configs["startup"]  # confirm_commit saves it


def test_commit_revert_in_expires(napalm_own: Any, own_device: DeviceEndpoint) -> None:
    """Unconfirmed, the change reverts when the device clock passes the timer, not before."""
    with_archive(napalm_own)
    before = running(napalm_own)
    napalm_own.load_merge_candidate(config=MERGE)
    napalm_own.commit_config(revert_in=60)
    clock = own_device.device.clock
    clock.advance(50)
    assert napalm_own.has_pending_commit()
    assert "interface Loopback77" in running(napalm_own)

    clock.advance(15)
    assert not napalm_own.has_pending_commit()
    back = running(napalm_own)
    assert "Loopback77" not in back
    assert config_lines(back.replace("file prompt quiet\n", "")) == config_lines(before)
    with pytest.raises(CommitConfirmException, match="No pending"):
        napalm_own.confirm_commit()


def test_replace_revert_in_then_rollback(napalm_own: Any) -> None:
    """A replace with ``revert_in`` (``configure replace ... force revert trigger error timer
    2``), then ``rollback()`` while it is pending: ``configure revert now``."""
    with_archive(napalm_own)
    before = running(napalm_own)
    napalm_own.load_replace_candidate(config=before + "\nip domain name pending.example\n")
    napalm_own.commit_config(revert_in=120)
    assert napalm_own._get_pending_commits()["timer"] == "2 min"
    assert "ip domain name pending.example" in running(napalm_own)
    with pytest.raises(CommandErrorException, match="already in progress"):
        napalm_own.commit_config()  # one pending change at a time

    napalm_own.rollback()
    assert not napalm_own.has_pending_commit()
    assert "pending.example" not in running(napalm_own)


def test_get_interfaces_follows_speed(napalm_own: Any) -> None:
    """``speed 100`` under an interface: NAPALM's speed (from ``show interfaces``' BW) follows,
    and ``no speed`` gives the negotiated one back."""
    napalm_own.device.send_config_set(["interface GigabitEthernet0/0/0", "speed 100",
                                       "duplex full"])
    assert napalm_own.get_interfaces()["GigabitEthernet0/0/0"]["speed"] == 100.0
    napalm_own.device.send_config_set(["interface GigabitEthernet0/0/0", "no speed",
                                       "no duplex"])
    assert napalm_own.get_interfaces()["GigabitEthernet0/0/0"]["speed"] == 1000.0


def test_replace_and_merge_of_nested_blocks(napalm_own: Any) -> None:
    """A line two levels deep (``router bgp`` / ``address-family ipv4``) changed by
    ``load_replace_candidate``: the diff shows it under both parents, the commit changes
    exactly that line, ``rollback()`` gives the configuration back; a merge of a nested line
    adds it once, where it belongs."""
    napalm_own.device.send_config_set(["archive", "path flash:archive"])
    before = running(napalm_own)
    old = "  neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n"
    new = "  neighbor 203.0.113.9 route-map RM-ISP-A-NEW in\n"
    napalm_own.load_replace_candidate(config=before.replace(old, new))
    diff = napalm_own.compare_config()
    assert "router bgp 64500\n address-family ipv4\n  +neighbor 203.0.113.9 route-map " \
           "RM-ISP-A-NEW in" in diff
    assert "  -neighbor 203.0.113.9 route-map RM-ISP-A-IN in" in diff
    napalm_own.commit_config()
    replaced = running(napalm_own)
    assert replaced.replace(new, old) == before
    napalm_own.rollback()  # NAPALM sets `file prompt quiet` first: the rollback file has it
    assert running(napalm_own).replace("file prompt quiet\n!\n", "") == before

    merge = "router bgp 64500\n address-family ipv4\n  neighbor 203.0.113.9 activate\n" \
            "  neighbor 203.0.113.9 next-hop-self\n exit-address-family\nend\n"
    napalm_own.load_merge_candidate(config=merge)
    napalm_own.commit_config()
    merged = running(napalm_own)
    assert merged.count("neighbor 203.0.113.9 activate") == 1
    assert "  neighbor 203.0.113.9 route-map RM-ISP-A-IN in\n" \
           "  neighbor 203.0.113.9 next-hop-self\n exit-address-family\n" in merged
