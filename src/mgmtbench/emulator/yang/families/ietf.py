"""ietf-interfaces (RFC 8343) with ietf-ip (RFC 8344): ``/interfaces/interface``, its
``ipv4/address`` list and, under ``get``, the NMDA state leaves (admin and oper status, MAC
address, speed, statistics) beside the configuration, and each interface's IPv4 neighbors as
``show ip arp`` lists them (the learned ones: the interface's own addresses are not
neighbors)."""

from __future__ import annotations

import re
from typing import ClassVar

from lxml import etree

from mgmtbench.emulator.yang.families.base import (
    Family,
    Read,
    child,
    default_ns,
    flag,
    interfaces_lacking,
    leaf,
    qname,
    text_of,
    type_leaf,
)
from mgmtbench.emulator.yang.state import Address, DeviceState, IfSettings

IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
_ARP = re.compile(r"^Internet\s+(\S+)\s+(\d+)\s+([0-9a-f]{4})\.([0-9a-f]{4})\.([0-9a-f]{4})"
                  r"\s+\S+\s+(\S+)\s*$")


def neighbors(text: str) -> dict[str, list[tuple[str, str]]]:
    """``show ip arp``'s learned entries: interface -> [(address, MAC address)]."""
    found: dict[str, list[tuple[str, str]]] = {}
    for line in text.splitlines():
        entry = _ARP.match(line.strip())
        if entry:
            hexes = "".join(entry.group(3, 4, 5))
            mac = ":".join(hexes[i:i + 2] for i in range(0, 12, 2))
            found.setdefault(entry.group(6), []).append((entry.group(1), mac))
    return found


def date_time(moment: object) -> str:
    """A ``yang:date-and-time`` (RFC 6991) from a timezone-aware datetime."""
    text = moment.isoformat(timespec="seconds")  # type: ignore[attr-defined]
    return str(text).replace("+00:00", "Z")


class IetfInterfaces(Family):
    """ietf-interfaces and ietf-ip."""

    modules = ("ietf-interfaces", "ietf-ip", "iana-if-type")
    lists: ClassVar = {qname(IF, "interface"): (qname(IF, "name"),),
                       qname(IP, "address"): (qname(IP, "ip"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(IF, "interfaces"), nsmap=default_ns(IF))
        booted = date_time(state.boot)
        learned = neighbors(state.show("show ip arp")) if with_state else {}
        for index, one in enumerate(state.interfaces, start=1):
            conf = one.settings
            entry = child(root, "interface")
            leaf(entry, "name", one.name)
            if conf.description is not None:
                leaf(entry, "description", conf.description)
            type_leaf(entry, one.name)
            leaf(entry, "enabled", conf.enabled)
            if with_state:
                leaf(entry, "admin-status", "up" if one.admin_up else "down")
                leaf(entry, "oper-status", "up" if one.oper_up else "down")
                leaf(entry, "if-index", index)  # the if-mib feature's ifIndex
                if one.mac:
                    leaf(entry, "phys-address", one.mac)
                if one.speed_bps:
                    leaf(entry, "speed", one.speed_bps)
                stats = child(entry, "statistics")
                leaf(stats, "discontinuity-time", booted)
                leaf(stats, "in-octets", one.in_octets)
                leaf(stats, "in-unicast-pkts", one.in_packets)
                leaf(stats, "out-octets", one.out_octets)
                leaf(stats, "out-unicast-pkts", one.out_packets)
            near = learned.get(one.name, [])
            if conf.addresses or with_state:
                ipv4 = etree.SubElement(entry, qname(IP, "ipv4"), nsmap=default_ns(IP))
                if with_state:
                    leaf(ipv4, "mtu", conf.mtu or one.mtu)
                for address, length in conf.addresses:
                    node = child(ipv4, "address")
                    leaf(node, "ip", address)
                    leaf(node, "prefix-length", length)
                    if with_state:
                        leaf(node, "origin", "static")
                for address, mac in near:
                    node = child(ipv4, "neighbor")
                    leaf(node, "ip", address)
                    leaf(node, "link-layer-address", mac)
                    leaf(node, "origin", "dynamic")
        return [root]

    def missing(self, data: etree._Element) -> list[str]:
        """Interfaces without their mandatory ``type``."""
        return interfaces_lacking(data, IF, "ietf-interfaces", ("type",))

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        root = data.find(qname(IF, "interfaces"))
        if root is None:
            return Read(None, None)
        found: dict[str, IfSettings] = {}
        for entry in root.findall(qname(IF, "interface")):
            name = text_of(entry, "name")
            if not name:
                continue
            addresses: list[Address] = []
            ipv4 = entry.find(qname(IP, "ipv4"))
            if ipv4 is not None:
                for node in ipv4.findall(qname(IP, "address")):
                    ip, length = text_of(node, "ip"), text_of(node, "prefix-length")
                    if ip and length and length.isdigit():
                        addresses.append((ip, int(length)))
            found[name] = IfSettings(description=text_of(entry, "description"),
                                     enabled=flag(text_of(entry, "enabled")),
                                     addresses=tuple(addresses))
        return Read(None, found)
