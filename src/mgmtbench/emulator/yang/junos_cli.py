"""The modelled settings of a Junos device, read from its active configuration (the one its
CLI's ``show configuration`` prints), and a change of them as the ``set`` and ``delete``
commands that make it, committed in configuration mode (:mod:`.apply`)."""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Iterator

from mgmtbench.emulator.cli.dialects.junos import Statement, config_of, find
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.yang.state import Address, IfSettings, Settings


def _leaf(statements: list[Statement], keyword: str) -> str | None:
    return next((" ".join(st.words[1:]) for st in statements
                 if st.children is None and st.words[:1] == [keyword] and len(st.words) >= 2),
                None)


def _flag(statements: list[Statement], keyword: str) -> bool:
    return any(st.children is None and st.words == [keyword] for st in statements)


def _addresses(unit: list[Statement]) -> tuple[Address, ...]:
    inet = find(unit, ["family", "inet"]) or []
    found: list[Address] = []
    for st in inet:
        if st.words[:1] == ["address"] and len(st.words) >= 2:
            try:
                parsed = ipaddress.IPv4Interface(st.words[1])
            except ValueError:
                continue
            found.append((str(parsed.ip), parsed.network.prefixlen))
    return tuple(found)


def junos_settings(device: Device) -> Settings:
    """The hostname and interfaces (unit 0 as the interface, unit N as ``name.N``) of the
    device's active configuration."""
    config = config_of(device)
    hostname = config.active_hostname() or device.hostname
    found: dict[str, IfSettings] = {}
    for entry in find(config.active, ["interfaces"]) or []:
        if entry.children is None or len(entry.words) != 1:
            continue
        name, body = entry.words[0], entry.children
        mtu = _leaf(body, "mtu")
        main = IfSettings(description=_leaf(body, "description"),
                          enabled=not _flag(body, "disable"),
                          mtu=int(mtu) if mtu and mtu.isdigit() else None)
        for unit in body:
            if unit.children is None or unit.words[:1] != ["unit"] or len(unit.words) != 2:
                continue
            if unit.words[1] == "0":
                main = IfSettings(main.description, main.enabled, _addresses(unit.children),
                                  main.mtu)
            else:
                found[f"{name}.{unit.words[1]}"] = IfSettings(
                    description=_leaf(unit.children, "description"),
                    enabled=not _flag(unit.children, "disable"),
                    addresses=_addresses(unit.children))
        found[name] = main
    return Settings(hostname, found)


def junos_version(device: Device) -> int:
    """How many commits the device's active configuration has had."""
    return config_of(device).version


def junos_lines(hostname: str | None, removed: list[str],
                interfaces: dict[str, tuple[IfSettings | None, IfSettings]]) -> Iterator[str]:
    """The configuration-mode commands that make a change (``commit`` and leaving are the
    caller's)."""
    if hostname:
        yield f"set system host-name {hostname}"
    for name in removed:
        parent, _, unit = name.partition(".")
        yield f"delete interfaces {parent}" + (f" unit {unit}" if unit else "")
    for name, (old, new) in interfaces.items():
        parent, _, unit = name.partition(".")
        at = f"interfaces {parent}" + (f" unit {unit}" if unit else "")
        if old is None or old.description != new.description:
            yield (f"delete {at} description" if new.description is None
                   else f"set {at} description {shlex.quote(new.description)}")
        if old is None or old.enabled != new.enabled:
            yield f"delete {at} disable" if new.enabled else f"set {at} disable"
        if old is None or old.addresses != new.addresses:
            inet = at + ("" if unit else " unit 0") + " family inet"
            if old is not None and old.addresses:
                yield f"delete {inet}"
            for address, length in new.addresses:
                yield f"set {inet} address {address}/{length}"
