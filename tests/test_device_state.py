"""Derived and dynamic device state (:mod:`mgmtbench.emulator.device.derived`, :mod:`.clock`): interface
outputs and the running-config's byte count follow the configuration, made over SSH or HTTPS;
the default configuration still prints the transcripts; the clock, uptimes and counters run, and
each device of a fleet has its own boot time, the same on every run."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.device.clock import boot_offset, clock_spec
from mgmtbench.emulator.device.identity import made_own
from mgmtbench.emulator.device.transcripts import render
from mgmtbench.emulator.oracle import expected_output, same_output, stable_output
from mgmtbench.testing.shell import configure, ssh_connect

PLATFORMS = ("cisco_ios", "cisco_asa")
# Per platform: the interface views, an interface to change, and the changes.
VIEWS = {"cisco_ios": ("show interfaces", "show ip interface brief", "show ip interface"),
         "cisco_asa": ("show interface", "show interface ip brief")}
BRIEF = {"cisco_ios": "show ip interface brief", "cisco_asa": "show interface ip brief"}
DETAIL = {"cisco_ios": "show interfaces", "cisco_asa": "show interface"}
CHANGES = {
    "cisco_ios": ["interface gi0/0/3", "no shutdown", "description now in use",
                  "ip address 10.3.3.3 255.255.255.0", "interface GigabitEthernet0/0/1",
                  "shutdown", "interface Loopback9", "ip address 10.9.9.9 255.255.255.255"],
    "cisco_asa": ["interface gi1/7", "no shutdown", "description now in use", "nameif spare",
                  "security-level 40", "ip address 10.3.3.3 255.255.255.0",
                  "interface GigabitEthernet1/1", "shutdown"],
}
CHANGED = {"cisco_ios": "GigabitEthernet0/0/3", "cisco_asa": "GigabitEthernet1/7"}
SHUT = {"cisco_ios": "GigabitEthernet0/0/1", "cisco_asa": "GigabitEthernet1/1"}


def make_device(platform: str, hostname: str = "R1") -> Device:
    return Device(load_platform(platform), DeviceFacts.for_hostname(hostname), enable_secret="x")


def show(device: Device, command: str) -> str:
    return CliSession(device, mode=Mode.PRIV).execute(command).text()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_default_configuration_prints_the_transcripts(platform: str) -> None:
    device = make_device(platform)
    for command in VIEWS[platform]:
        template = device.platform.transcripts[tuple(command.split())]
        # Its MAC addresses and module serials made the device's own (identity.made_own).
        want = render(made_own(template, device.facts.mac, device.facts.serial),
                      device.facts.as_dict())
        assert show(device, command) == want, command


def exec_over_ssh(emu: EmulatorThread, command: str) -> str:
    """``command`` as an SSH exec on the emulator's first device."""
    async def run() -> str:
        async with ssh_connect(emu.endpoints[0]) as conn:
            return str((await conn.run(command)).stdout)

    return asyncio.run(run())


@pytest.mark.parametrize("transport", ["shell", "https"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_interface_outputs_follow_the_configuration(
        platform: str, transport: str, fresh_emulator: Callable[..., EmulatorThread]) -> None:
    emu = fresh_emulator(platform)
    device = emu.endpoints[0].device
    before = show(device, BRIEF[platform])
    assert configure(emu, transport, CHANGES[platform]) == ""
    brief = exec_over_ssh(emu, BRIEF[platform])  # what a client sees, over another transport
    width = brief.splitlines()[0].index("IP-Address")
    rows = {line.split()[0]: line for line in brief.splitlines()[1:]}
    assert rows[CHANGED[platform]] == f"{CHANGED[platform]:<{width}}10.3.3.3        YES manual " \
                                      f"up                    up"
    assert re.search(r"administratively down +down$", rows[SHUT[platform]])
    unchanged = [line for line in before.splitlines() if line.split()[0] not in
                 (CHANGED[platform], SHUT[platform])]
    assert all(line in brief.splitlines() for line in unchanged)  # the others as they were
    if platform == "cisco_ios":  # a new interface appears after the others of its type
        names = list(rows)
        assert names.index("Loopback9") == names.index("Loopback1") + 1
        assert rows["Loopback9"].split()[1] == "10.9.9.9"
    one = show(device, f"{DETAIL[platform]} {CHANGED[platform]}")
    assert "Description: now in use" in one
    assert ("Internet address is 10.3.3.3/24" in one) if platform == "cisco_ios" else \
        ('"spare", is up, line protocol is up' in one and
         "IP address 10.3.3.3, subnet mask 255.255.255.0" in one)
    assert "administratively down" in show(device, f"{DETAIL[platform]} {SHUT[platform]}")
    running = show(device, f"show running-config interface {CHANGED[platform]}")
    assert f"interface {CHANGED[platform]}\n description now in use\n" in running
    assert " ip address 10.3.3.3 255.255.255.0\n" in running


def test_ios_show_ip_interface_and_an_unknown_interface() -> None:
    device = make_device("cisco_ios")
    session = CliSession(device, mode=Mode.CONFIG)
    for line in ("interface Loopback9", "ip address 10.9.9.9 255.255.255.255",
                 "ip address 10.8.8.8 255.255.255.0 secondary", "ip access-group ACL-VTY in"):
        assert session.execute(line).ok, line
    detail = show(device, "show ip interface Loopback9")
    assert detail.startswith("Loopback9 is up, line protocol is up\n"
                             "  Internet address is 10.9.9.9/32\n")
    assert "  Secondary address 10.8.8.8/24\n" in detail
    assert "  Inbound  access list is ACL-VTY\n" in detail
    assert "  Secondary address 10.8.8.8/24\n" in show(device, "show interfaces lo9")
    missing = CliSession(device, mode=Mode.PRIV).execute("show interfaces Gi9/9/9")
    assert not missing.ok
    assert "% Invalid input detected at '^' marker." in missing.output


def test_the_byte_count_follows_the_configuration() -> None:
    device = make_device("cisco_ios")
    count = re.compile(r"^Current configuration : (\d+) bytes$", re.M)
    before = show(device, "show running-config")
    first = int(count.search(before).group(1))  # type: ignore[union-attr]
    session = CliSession(device, mode=Mode.CONFIG)
    session.execute("interface Loopback0")
    session.execute("description a longer description than before")
    after = show(device, "show running-config")
    grown = len(after) - len(before)
    assert grown == len("a longer description than before") - len("Router-ID / OSPF / BGP")
    assert int(count.search(after).group(1)) == first + grown  # type: ignore[union-attr]
    block = show(device, "show running-config interface Loopback0")
    body = block.split(" bytes\n", 1)[1]
    assert int(count.search(block).group(1)) == len(body) - 1  # type: ignore[union-attr]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_clock_uptime_and_counters_run(platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    device = make_device(platform)
    clock0, version0 = show(device, "show clock"), show(device, "show version")
    counters0 = show(device, DETAIL[platform])
    monkeypatch.setattr(device.clock, "_made", device.clock._made - 3600 * 5 - 60)  # 5 h 1 min ago
    clock1, version1 = show(device, "show clock"), show(device, "show version")
    counters1 = show(device, DETAIL[platform])
    hours = [int(text.split(":")[0]) for text in (clock0, clock1)]
    assert (hours[1] - hours[0]) % 24 == 5  # five hours and a minute on
    assert version1 != version0
    assert same_output(platform, version1, version0)  # only the uptimes moved
    assert counters1 != counters0
    assert same_output(platform, counters1, counters0)
    packets = re.compile(r"(\d+) packets input")
    assert int(packets.findall(counters1)[0]) > int(packets.findall(counters0)[0])


def test_fleet_devices_have_their_own_stable_boot_times(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    # The transcripts' moment: boot times that do not depend on when a device was made.
    emu = fresh_emulator("cisco_ios", devices=3, clock_start="transcript")
    over_ssh = exec_over_ssh(emu, "show version")
    lines = {re.search(r"^\S+ uptime is (.+)$", show(e.device, "show version"), re.M)
             .group(1) for e in emu.endpoints}  # type: ignore[union-attr]
    assert len(lines) == 3  # booted at different times
    spread = clock_spec(load_platform("cisco_ios")).spread
    offsets = [boot_offset(e.hostname, spread) for e in emu.endpoints]
    assert offsets == [boot_offset(e.hostname, spread) for e in emu.endpoints]  # stable
    restarted = [re.search(r"System restarted at (.+)$", show(e.device, "show version"), re.M)
                 .group(1) for e in emu.endpoints]  # type: ignore[union-attr]
    assert restarted == [re.search(r"System restarted at (.+)$", expected_output(  # the oracle's
        "cisco_ios", e.hostname, e.device.facts.mgmt_ip, ["show version"],
        clock_start="transcript"), re.M)
        .group(1) for e in emu.endpoints]  # type: ignore[union-attr]
    assert same_output("cisco_ios", over_ssh, expected_output(
        "cisco_ios", emu.endpoints[0].hostname, emu.endpoints[0].device.facts.mgmt_ip,
        ["show version"]))


@pytest.mark.parametrize("platform", PLATFORMS)
def test_stable_form_masks_only_what_moves(platform: str) -> None:
    device = make_device(platform)
    version = show(device, "show version")
    assert stable_output(platform, version) != version  # the uptime is masked ...
    assert "R1" in stable_output(platform, version)  # ... the rest is kept
    other = make_device(platform, "R2")
    assert not same_output(platform, show(other, "show version"), version)
