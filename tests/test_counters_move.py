"""Interface outputs of Arista EOS, Cisco NX-OS and Juniper Junos that follow the clock and the
configuration (:mod:`mgmtbench.emulator.device.derived`, Junos's through its dialect): counters
move at each interface's rates, the default configuration at the clock's start prints the
transcripts byte for byte, a description and a shutdown (``disable``) show, a new loopback
appears with its counters at zero."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, load_platform
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.device.identity import made_own
from mgmtbench.emulator.device.transcripts import render
from mgmtbench.emulator.oracle import expected_output, same_output, stable_output
from mgmtbench.testing import USERNAME

PLATFORMS = ("arista_eos", "cisco_nxos", "juniper_junos")


@dataclass(frozen=True)
class Case:
    """A platform's interfaces output, an interface to change and what the change shows."""

    command: str  # the interfaces output
    views: tuple[str, ...]  # every output that follows the configuration
    name: str  # the interface changed
    typed: str  # its name as typed after the command (abbreviated where the CLI takes it)
    changes: tuple[str, ...]  # configuration lines: description "now in use", shut down
    head: str  # its first line once shut down
    packets: str  # a counter of packets (group 1) that moves, the first match


CASES = {
    "arista_eos": Case(
        "show interfaces", ("show interfaces",), "Ethernet3", "Et3",
        ("interface Ethernet3", "description now in use", "shutdown"),
        "Ethernet3 is administratively down, line protocol is down (disabled)",
        r"(\d+) packets input"),
    "cisco_nxos": Case(
        "show interface", ("show interface",), "Ethernet1/3", "Eth1/3",
        ("interface Ethernet1/3", "description now in use", "shutdown"),
        "Ethernet1/3 is down (Administratively down)", r"(\d+) input packets"),
    "juniper_junos": Case(
        "show interfaces", ("show interfaces", "show interfaces terse"), "xe-0/1/0", "xe-0/1/0",
        ('set interfaces xe-0/1/0 description "now in use"', "set interfaces xe-0/1/0 disable"),
        "Physical interface: xe-0/1/0, Administratively down, Physical link is Down",
        r"Logical interface et-0/0/0\.0 .*\n.*\n    Input packets : (\d+)"),
}
# A new loopback, its address, and the lines its block starts with.
LOOPBACKS = {
    "arista_eos": (("interface Loopback9", "ip address 10.9.9.9/32"), "Loopback0",
                   ["Loopback9 is up, line protocol is up (connected)", "  Hardware is Loopback",
                    "  Internet address is 10.9.9.9/32"]),
    "cisco_nxos": (("interface loopback9", "ip address 10.9.9.9/32"), "loopback0",
                   ["loopback9 is up", "admin state is up,", "  Hardware: Loopback",
                    "  Internet Address is 10.9.9.9/32"]),
}


def make_device(platform: str, hostname: str = "R1") -> Device:
    loaded = load_platform(platform)
    return Device(loaded, DeviceFacts.for_hostname(hostname, form=loaded.style.identity.facts),
                  enable_secret="x")


def show(device: Device, command: str) -> str:
    reply = CliSession(device, mode=Mode.PRIV, user=USERNAME).execute(command)
    return reply.text()


def configure(device: Device, lines: tuple[str, ...]) -> None:
    """``lines`` in configuration mode (Junos: committed)."""
    if device.platform.style.dialect == "junos":
        session = CliSession(device, mode=Mode.PRIV, user=USERNAME)
        session.execute("configure")
        lines = (*lines, "commit")
    else:
        session = CliSession(device, mode=Mode.CONFIG, user=USERNAME)
    for line in lines:
        reply = session.execute(line)
        assert reply.ok, (line, reply.text())


def transcript(device: Device, command: str) -> str:
    """The transcript as the device's facts fill it (its MAC addresses its own)."""
    template = device.platform.transcripts[tuple(command.split())]
    return render(made_own(template, device.facts.mac, device.facts.serial),
                  device.facts.as_dict())


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_counters_move_with_time(platform: str) -> None:
    device, case = make_device(platform), CASES[platform]
    before = show(device, case.command)
    device.clock.advance(2)
    after = show(device, case.command)
    assert after != before
    assert same_output(platform, after, before)  # only what the masks mask moved
    first = [int(re.findall(case.packets, text)[0]) for text in (before, after)]
    assert first[1] > first[0]
    moved = sum(a != b for a, b in zip(numbers(before), numbers(after), strict=True))
    assert moved >= 6
    device.clock.advance(3)
    later = [int(n) for n in re.findall(case.packets, show(device, case.command))]
    assert later[0] > first[1]  # and on
    assert all(n >= 0 for n in later)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_default_configuration_prints_the_transcripts(platform: str) -> None:
    device = make_device(platform)
    for command in CASES[platform].views:
        got = show(device, command)
        assert got == transcript(device, command), command
        oracle = expected_output(platform, device.hostname, device.facts.mgmt_ip, [command])
        assert stable_output(platform, got) == stable_output(platform, oracle), command
    device.clock.advance(7)
    for command in CASES[platform].views:
        oracle = expected_output(platform, device.hostname, device.facts.mgmt_ip, [command])
        assert same_output(platform, show(device, command), oracle), command


@pytest.mark.parametrize("platform", PLATFORMS)
def test_description_and_shutdown_follow_the_configuration(platform: str) -> None:
    device, case = make_device(platform), CASES[platform]
    before = stable_output(platform, show(device, case.command))
    configure(device, case.changes)
    output = show(device, case.command)
    one = show(device, f"{case.command} {case.typed}")
    assert one.startswith(case.head + "\n")
    assert "  Description: now in use\n" in one
    assert one.rstrip("\n") in output
    added = set(stable_output(platform, output).splitlines()) - set(before.splitlines())
    assert added <= {case.head, "  Description: now in use", "admin state is down, Dedicated "
                     "Interface"}  # nothing else changed
    device.clock.advance(3)  # the counters of an interface changed by configuration move on
    assert same_output(platform, show(device, case.command), output)


def test_junos_terse_follows_disable_and_addresses() -> None:
    device = make_device("juniper_junos")
    configure(device, ("set interfaces et-0/0/0 disable",
                       "set interfaces et-0/0/1 unit 0 family inet address 10.1.1.1/24",
                       "delete interfaces et-0/0/1 unit 0 family inet address 198.19.1.5/30"))
    rows = {line.split()[0]: line for line in show(device, "show interfaces terse").splitlines()
            if line[:1].strip()}
    assert rows["et-0/0/0"] == "et-0/0/0                down  down"
    assert rows["et-0/0/0.0"] == "et-0/0/0.0              up    down inet     198.19.1.1/30"
    assert rows["et-0/0/1.0"] == "et-0/0/1.0              up    up   inet     10.1.1.1/24"
    one = show(device, "show interfaces et-0/0/1")
    assert "        Destination: 10.1.1/24, Local: 10.1.1.1, Broadcast: 10.1.1.255\n" in one
    missing = CliSession(device, mode=Mode.PRIV).execute("show interfaces et-9/9/9")
    assert not missing.ok
    assert missing.text() == "error: device et-9/9/9 not found\n"


@pytest.mark.parametrize("platform", sorted(LOOPBACKS))
def test_a_new_loopback_appears_with_zero_counters(platform: str) -> None:
    device, case = make_device(platform), CASES[platform]
    lines, after, head = LOOPBACKS[platform]
    device.clock.advance(60)
    configure(device, lines)
    output = show(device, case.command)
    names = [line.split()[0] for line in output.splitlines() if re.match(r"^\S+ is ", line)]
    assert names.index(head[0].split()[0]) == names.index(after) + 1
    name = head[0].split()[0]
    one = show(device, f"{case.command} {name}")
    assert one.splitlines()[:len(head)] == head
    assert all(n == "0" for line in one.splitlines() if "packets" in line
               for n in numbers(line))
    assert one.rstrip("\n") in output
    unknown = CliSession(device, mode=Mode.PRIV).execute(f"{case.command} Loopback77")
    assert not unknown.ok
