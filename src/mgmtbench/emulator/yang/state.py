"""What the YANG models of a device say, read from the state its CLI shows.

Nothing here is stored apart from the device: a modelled reply is made from the running
configuration (:func:`~mgmtbench.emulator.derived.interfaces`: descriptions, shutdown,
addresses, MTU), the show commands that follow it (``show ip interface brief`` for each
interface's status, ``show interfaces`` for its MAC address, speed and counters) and the clock.
So a description set over NETCONF is in ``show running-config``, and a CLI ``shutdown`` is an
``enabled false`` with ``oper-status down``, with no second copy to keep in step.

:class:`Settings` is the configuration part as the models write it (hostname, each interface's
description, enabled and IPv4 addresses); :func:`settings_of` reads it from a device and
:mod:`~mgmtbench.emulator.yang.apply` writes a change of it back through the CLI.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from mgmtbench.emulator.device.derived import interfaces, prefix_length
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.device.ifconfig import IfConfig

#: An IPv4 address with its prefix length.
Address = tuple[str, int]

_BRIEF = ("show", "ip", "interface", "brief")
_INTERFACES = ("show", "interfaces")
_IOS_HEAD = re.compile(r"^(\S+) is (.+?), line protocol is (\S+)")
_MAC = re.compile(r"address is ([0-9a-f]{4})\.([0-9a-f]{4})\.([0-9a-f]{4})")
_MTU_BW = re.compile(r"MTU (\d+) bytes, BW (\d+) Kbit")
_COUNTS = re.compile(r"(\d+) packets (input|output), (\d+) bytes")


@dataclass(frozen=True)
class IfSettings:
    """One interface's configuration as the models write it."""

    description: str | None = None
    enabled: bool = True
    addresses: tuple[Address, ...] = ()  # the primary first
    mtu: int | None = None
    vlan: int | None = None  # a subinterface's ``encapsulation dot1Q`` VLAN (read, not written)


@dataclass(frozen=True)
class Settings:
    """The configuration the models cover: the hostname and the interfaces, by CLI name."""

    hostname: str
    interfaces: Mapping[str, IfSettings] = field(default_factory=dict)


@dataclass(frozen=True)
class IfState:
    """One interface's operational state."""

    name: str
    settings: IfSettings
    admin_up: bool
    oper_up: bool
    mac: str | None = None
    speed_bps: int | None = None
    mtu: int = 1500
    in_octets: int = 0
    out_octets: int = 0
    in_packets: int = 0
    out_packets: int = 0


@dataclass(frozen=True)
class DeviceState:
    """Everything the models read: settings, interfaces' state and the clock."""

    settings: Settings
    interfaces: tuple[IfState, ...]
    now: datetime
    boot: datetime
    timezone: str
    software: str
    vendor: str
    #: A show command's output as the device prints it now ("" if it has no such command).
    output: Callable[[str], str]

    def show(self, command: str) -> str:
        """``command``'s output, as the device prints it now."""
        return self.output(command)


def if_settings(config: IfConfig, lines: tuple[str, ...] = ()) -> IfSettings:
    """An interface's settings from its configuration (and its lines, for the VLAN)."""
    addresses: list[Address] = []
    if config.address is not None:
        addresses.append((config.address[0], prefix_length(config.address[1])))
    addresses += [(a, prefix_length(m)) for a, m in config.secondaries]
    vlan = next((int(words[2]) for words in (line.split() for line in lines)
                 if len(words) >= 3 and words[:2] == ["encapsulation", "dot1Q"]
                 and words[2].isdigit()), None)
    return IfSettings(description=config.description, enabled=not config.shutdown,
                      addresses=tuple(addresses), mtu=config.mtu, vlan=vlan)


def settings_of(device: Device) -> Settings:
    """The device's hostname and configured interfaces, as of now."""
    lines: dict[str, tuple[str, ...]] = {}
    if device.derived is not None:
        configured, lines = device.derived.current()
    elif device.config is not None:
        configured = interfaces(device.config)
    else:
        configured = {}
    return Settings(device.hostname, {name: if_settings(cfg, lines.get(name, ()))
                                      for name, cfg in configured.items()})


def state_of(device: Device, vendor: str = "", with_state: bool = True,
             settings: Callable[[Device], Settings] = settings_of) -> DeviceState:
    """The device's modelled state, as of now (the show commands' own caches make repeated
    reads within a second cheap); without ``with_state``, the configuration only (no show
    command is made for it). ``settings`` reads the configuration where the platform's CLI
    keeps it (:data:`mgmtbench.emulator.yang.datastore.SETTINGS`)."""
    configured = settings(device)
    status = (_brief_status(device.transcript(_BRIEF))
              if with_state and _has(device, _BRIEF) else {})
    details = (_details(device.transcript(_INTERFACES))
               if with_state and _has(device, _INTERFACES) else {})
    found: list[IfState] = []
    for name, conf in configured.interfaces.items():
        admin, oper = status.get(name, (conf.enabled, conf.enabled))
        info = details.get(name, {})
        found.append(IfState(name=name, settings=conf, admin_up=admin and conf.enabled,
                             oper_up=oper and conf.enabled, **info))  # type: ignore[arg-type]
    clock = device.clock
    return DeviceState(settings=configured, interfaces=tuple(found), now=clock.now(),
                       boot=clock.boot, timezone=clock.spec.timezone,
                       software=_software(device), vendor=vendor,
                       output=lambda command: _show(device, command))


def _show(device: Device, command: str) -> str:
    words = tuple(command.split())
    return device.transcript(words) if _has(device, words) else ""


def _has(device: Device, words: tuple[str, ...]) -> bool:
    return (device.derived is not None and device.derived.has(words)) or \
        words in device.platform.transcripts


def _brief_status(text: str) -> dict[str, tuple[bool, bool]]:
    """``show ip interface brief``: each interface's (admin up, line protocol up)."""
    out: dict[str, tuple[bool, bool]] = {}
    for line in text.splitlines()[1:]:
        words = line.split()
        if len(words) < 6:
            continue
        admin = not line.rstrip().endswith(("administratively down down",))
        out[words[0]] = (admin, words[-1] == "up")
    return out


def _details(text: str) -> dict[str, dict[str, object]]:
    """``show interfaces``: each interface's MAC address, MTU, speed and counters."""
    out: dict[str, dict[str, object]] = {}
    info: dict[str, object] = {}
    for line in text.splitlines():
        head = _IOS_HEAD.match(line)
        if head:
            info = {}
            out[head.group(1)] = info
            continue
        mac = _MAC.search(line)
        if mac:
            hexes = "".join(mac.groups())
            info["mac"] = ":".join(hexes[i:i + 2] for i in range(0, 12, 2))
        sizes = _MTU_BW.search(line)
        if sizes:
            info["mtu"] = int(sizes.group(1))
            info["speed_bps"] = int(sizes.group(2)) * 1000
        for packets, way, octets in _COUNTS.findall(line):
            side = "in" if way == "input" else "out"
            info[f"{side}_packets"] = int(packets)
            info[f"{side}_octets"] = int(octets)
    return out


_VERSION = re.compile(r"Version ([\w.()]+)")


def _software(device: Device) -> str:
    """The software version ``show version`` names (empty if it names none)."""
    words = ("show", "version")
    if words not in device.platform.transcripts:
        return ""
    found = _VERSION.search(device.transcript(words))
    return found.group(1).rstrip(",") if found else ""


def network(address: Address) -> ipaddress.IPv4Interface:
    """``("10.0.0.1", 24)`` as an interface address (for checks and masks)."""
    return ipaddress.IPv4Interface(f"{address[0]}/{address[1]}")
