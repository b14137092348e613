"""Each emulated device is a device of its own: the MAC addresses its transcripts print are its
own (two routers of a fleet shared 13 of 17 interface MACs), the same in every output of one
device, in its vendor's OUI; so are its modules' serials in a Cisco inventory."""

from __future__ import annotations

import re

import pytest

from mgmtbench.emulator import Device, DeviceFacts, load_platform
from mgmtbench.emulator.device.identity import unique_macs
from mgmtbench.emulator.device.transcripts import available_platforms

MAC = re.compile(r"\b[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\.[0-9a-fA-F]{4}\b"
                 r"|\b(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}\b")


def macs(platform: str, hostname: str) -> tuple[set[str], dict[str, set[str]]]:
    """Every MAC address the device prints, and per address the commands that print it."""
    loaded = load_platform(platform)
    device = Device(loaded, DeviceFacts.for_hostname(hostname, form=loaded.style.identity.facts),
                    enable_secret="x")
    where: dict[str, set[str]] = {}
    for words in loaded.transcripts:
        for found in MAC.findall(device.transcript(words)):
            where.setdefault(found.lower(), set()).add(" ".join(words))
    return set(where), where


@pytest.mark.parametrize("platform", available_platforms())
def test_two_devices_share_no_mac_address(platform: str) -> None:
    first, _ = macs(platform, "R1-001")
    second, _ = macs(platform, "R1-002")
    assert first
    assert not first & second
    # The vendors' prefixes (OUI) stay: the same ones on both devices.
    def ouis(found: set[str]) -> set[str]:
        return {m[:7] if "." in m else m[:8] for m in found}

    assert ouis(first) == ouis(second)
    # One device prints an address the same way wherever it shows it, and again tomorrow.
    assert macs(platform, "R1-001")[0] == first


def test_an_address_shown_by_two_commands_stays_one_address() -> None:
    _, where = macs("cisco_ios", "R1-001")
    assert any(len(commands) > 1 for commands in where.values())


def test_group_addresses_are_left_as_they_are() -> None:
    text = "ffff.ffff.ffff 0100.5e00.0001 01:80:c2:00:00:0e 0000.0000.0000 00a7.4201.1a2b"
    made = unique_macs(text, "key").split()
    assert made[:4] == text.split()[:4]
    assert made[4].startswith("00a7.42")
    assert made[4] != "00a7.4201.1a2b"
    upper = unique_macs("00:05:86:71:1A:2B", "key")
    assert upper.startswith("00:05:86:")
    assert upper[9:] == upper[9:].upper()  # written in the case it was


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_nxos", "cisco_asa"])
def test_two_devices_share_no_module_serial(platform: str) -> None:
    loaded = load_platform(platform)
    serials = []
    for hostname in ("R1-001", "R1-002"):
        device = Device(loaded, DeviceFacts.for_hostname(hostname,
                                                         form=loaded.style.identity.facts),
                        enable_secret="x")
        shown = device.transcript(("show", "inventory"))
        found = {line.split("SN:")[1].strip() for line in shown.splitlines()
                 if "SN:" in line} - {"", "N/A"}
        assert device.facts.serial in found  # the chassis's own
        serials.append(found - {device.facts.serial})  # the modules'
    assert serials[0]
    assert not serials[0] & serials[1]
    # Factory, year and week kept: the same seven first characters.
    assert sorted(s[:7] for s in serials[0]) == sorted(s[:7] for s in serials[1])


@pytest.mark.parametrize(("platform", "command"), [
    ("juniper_junos", ("show", "chassis", "hardware")),
    ("arista_eos", ("show", "inventory")),
])
def test_every_module_serial_is_the_devices_own_on_other_vendors(
        platform: str, command: tuple[str, ...]) -> None:
    loaded = load_platform(platform)
    first, second = (Device(loaded, DeviceFacts.for_hostname(name),
                            enable_secret="en").transcript(command) for name in ("R1", "R2"))
    patterns = loaded.style.identity.facts.module_serials
    assert patterns

    def serials(text: str) -> list[str]:
        return [m.group("sn") for p in patterns for m in re.finditer(p, text, re.M)]

    assert len(serials(first)) == len(serials(second)) >= 2
    assert not set(serials(first)) & set(serials(second))
    assert len(first.splitlines()) == len(second.splitlines())
