"""Cisco-IOS-XE-native, the part of it the emulator models: ``/native/hostname`` and
``/native/interface/<type>[name]`` with its description, ``shutdown`` and IPv4 addresses
(``ip/address/primary`` and the ``secondary`` list), as IOS-XE writes them: the interface's
type is the list (``GigabitEthernet``), its number the key (``0/0/0``, ``0/0/5.100``)."""

from __future__ import annotations

import re
from typing import ClassVar

from lxml import etree

from mgmtbench.emulator.device.derived import prefix_length
from mgmtbench.emulator.yang.families.base import Family, Read, child, default_ns, leaf, qname, text_of
from mgmtbench.emulator.yang.state import Address, DeviceState, IfSettings, network

NATIVE = "http://cisco.com/ns/yang/Cisco-IOS-XE-native"
#: The interface types the model has lists for (the CLI's names).
TYPES = ("GigabitEthernet", "TenGigabitEthernet", "FortyGigabitEthernet", "HundredGigE",
         "FastEthernet", "Loopback", "Tunnel", "Vlan", "Port-channel", "Serial")
_NAME = re.compile(r"^([A-Za-z-]+?)(\d.*)$")


def split_name(name: str) -> tuple[str, str] | None:
    """``GigabitEthernet0/0/0`` -> ("GigabitEthernet", "0/0/0"); None for a type the model
    has no list for."""
    found = _NAME.match(name)
    if found is None or found.group(1) not in TYPES:
        return None
    return found.group(1), found.group(2)


class IosXeNative(Family):
    """Cisco-IOS-XE-native's hostname and interfaces."""

    modules = ("Cisco-IOS-XE-native",)
    lists: ClassVar = {**{qname(NATIVE, kind): (qname(NATIVE, "name"),) for kind in TYPES},
                       qname(NATIVE, "secondary"): (qname(NATIVE, "address"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(NATIVE, "native"), nsmap=default_ns(NATIVE))
        leaf(root, "hostname", state.settings.hostname)
        table = child(root, "interface")
        by_type: dict[str, list[tuple[str, IfSettings]]] = {}
        for name, conf in state.settings.interfaces.items():
            parts = split_name(name)
            if parts is not None:
                by_type.setdefault(parts[0], []).append((parts[1], conf))
        for kind in TYPES:  # the model's order
            for number, conf in by_type.get(kind, ()):
                entry = child(table, kind)
                leaf(entry, "name", number)
                if conf.description is not None:
                    leaf(entry, "description", conf.description)
                if conf.vlan is not None:
                    dot1q = child(child(entry, "encapsulation"), "dot1Q")
                    leaf(dot1q, "vlan-id", conf.vlan)
                if not conf.enabled:
                    child(entry, "shutdown")
                if conf.addresses:
                    address = child(child(entry, "ip"), "address")
                    primary = child(address, "primary")
                    leaf(primary, "address", conf.addresses[0][0])
                    leaf(primary, "mask", network(conf.addresses[0]).netmask)
                    for ip, length in conf.addresses[1:]:
                        second = child(address, "secondary")
                        leaf(second, "address", ip)
                        leaf(second, "mask", network((ip, length)).netmask)
                        child(second, "secondary")
        return [root]

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        root = data.find(qname(NATIVE, "native"))
        if root is None:
            return Read(None, None)
        table = root.find(qname(NATIVE, "interface"))
        found: dict[str, IfSettings] = {}
        for entry in () if table is None else table:
            if not isinstance(entry.tag, str):
                continue  # a comment
            kind = etree.QName(entry).localname
            number = text_of(entry, "name")
            if kind not in TYPES or not number:
                continue
            addresses: list[Address] = []
            address = entry.find(f"{qname(NATIVE, 'ip')}/{qname(NATIVE, 'address')}")
            if address is not None:
                primary = address.find(qname(NATIVE, "primary"))
                ip, mask = text_of(primary, "address"), text_of(primary, "mask")
                if ip and mask:
                    addresses.append((ip, prefix_length(mask)))
                for second in address.findall(qname(NATIVE, "secondary")):
                    ip, mask = text_of(second, "address"), text_of(second, "mask")
                    if ip and mask:
                        addresses.append((ip, prefix_length(mask)))
            found[kind + number] = IfSettings(
                description=text_of(entry, "description"),
                enabled=entry.find(qname(NATIVE, "shutdown")) is None,
                addresses=tuple(addresses))
        return Read(text_of(root, "hostname"), found if table is not None else None)
