"""OpenConfig: openconfig-interfaces with openconfig-if-ip (``/interfaces/interface``, its
``config`` and ``state`` containers, subinterface 0 carrying the interface's IPv4 addresses and
a dotted CLI name such as ``Te0/0/5.100`` being subinterface 100 of its parent), and
openconfig-system (``/system``: hostname, the clock's time zone, the current time and the boot
time)."""

from __future__ import annotations

from collections.abc import Iterator
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
from mgmtbench.emulator.yang.families.ietf import date_time
from mgmtbench.emulator.yang.state import Address, DeviceState, IfSettings, IfState

OC_IF = "http://openconfig.net/yang/interfaces"
OC_IP = "http://openconfig.net/yang/interfaces/ip"
OC_SYS = "http://openconfig.net/yang/system"


def _split(name: str) -> tuple[str, int]:
    """A CLI name as (parent interface, subinterface index): ``Te0/0/5.100`` -> 100."""
    parent, dot, index = name.rpartition(".")
    if dot and index.isdigit():
        return parent, int(index)
    return name, 0


def _addresses(parent: etree._Element, addresses: tuple[Address, ...], with_state: bool) -> None:
    if not addresses:
        return
    ipv4 = etree.SubElement(parent, qname(OC_IP, "ipv4"), nsmap=default_ns(OC_IP))
    table = child(ipv4, "addresses")
    for address, length in addresses:
        node = child(table, "address")
        leaf(node, "ip", address)
        for part in ("config", "state") if with_state else ("config",):
            box = child(node, part)
            leaf(box, "ip", address)
            leaf(box, "prefix-length", length)


class OpenconfigInterfaces(Family):
    """openconfig-interfaces and openconfig-if-ip."""

    modules = ("openconfig-interfaces", "openconfig-if-ip", "iana-if-type")
    lists: ClassVar = {qname(OC_IF, "interface"): (qname(OC_IF, "name"),),
                       qname(OC_IF, "subinterface"): (qname(OC_IF, "index"),),
                       qname(OC_IP, "address"): (qname(OC_IP, "ip"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(OC_IF, "interfaces"), nsmap=default_ns(OC_IF))
        subs: dict[str, list[tuple[int, IfState]]] = {}
        for one in state.interfaces:
            parent, index = _split(one.name)
            subs.setdefault(parent, []).append((index, one))
        by_name = {one.name: one for one in state.interfaces}
        for parent, members in subs.items():
            top = by_name.get(parent)
            entry = child(root, "interface")
            leaf(entry, "name", parent)
            for part in ("config", "state") if with_state else ("config",):
                box = child(entry, part)
                leaf(box, "name", parent)
                type_leaf(box, parent)
                if top is not None:
                    if top.settings.mtu or part == "state":
                        leaf(box, "mtu", top.settings.mtu or top.mtu)
                    if top.settings.description is not None:
                        leaf(box, "description", top.settings.description)
                    leaf(box, "enabled", top.settings.enabled)
                if part == "state" and top is not None:
                    leaf(box, "admin-status", "UP" if top.admin_up else "DOWN")
                    leaf(box, "oper-status", "UP" if top.oper_up else "DOWN")
                    counters = child(box, "counters")
                    leaf(counters, "in-octets", top.in_octets)
                    leaf(counters, "in-unicast-pkts", top.in_packets)
                    leaf(counters, "out-octets", top.out_octets)
                    leaf(counters, "out-unicast-pkts", top.out_packets)
            table = child(entry, "subinterfaces")
            for index, one in sorted(members, key=lambda m: m[0]):
                sub = child(table, "subinterface")
                leaf(sub, "index", index)
                for part in ("config", "state") if with_state else ("config",):
                    box = child(sub, part)
                    leaf(box, "index", index)
                    if index and one.settings.description is not None:
                        leaf(box, "description", one.settings.description)
                    if index:
                        leaf(box, "enabled", one.settings.enabled)
                    if part == "state":
                        leaf(box, "admin-status", "UP" if one.admin_up else "DOWN")
                        leaf(box, "oper-status", "UP" if one.oper_up else "DOWN")
                _addresses(sub, one.settings.addresses, with_state)
        return [root]

    def missing(self, data: etree._Element) -> list[str]:
        """Interfaces without their mandatory ``config/type``."""
        return interfaces_lacking(data, OC_IF, "openconfig-interfaces", ("config", "type"))

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        root = data.find(qname(OC_IF, "interfaces"))
        if root is None:
            return Read(None, None)
        found: dict[str, IfSettings] = {}
        for entry in root.findall(qname(OC_IF, "interface")):
            name = text_of(entry, "name")
            if not name:
                continue
            conf = entry.find(qname(OC_IF, "config"))
            main = IfSettings(description=text_of(conf, "description"),
                              enabled=flag(text_of(conf, "enabled")))
            for index, sub in _subinterfaces(entry):
                sub_conf = sub.find(qname(OC_IF, "config"))
                addresses = tuple(_read_addresses(sub))
                if index == 0:
                    main = IfSettings(description=main.description, enabled=main.enabled,
                                      addresses=addresses)
                else:
                    found[f"{name}.{index}"] = IfSettings(
                        description=text_of(sub_conf, "description"),
                        enabled=flag(text_of(sub_conf, "enabled")), addresses=addresses)
            found[name] = main
        return Read(None, found)


def _subinterfaces(entry: etree._Element) -> Iterator[tuple[int, etree._Element]]:
    table = entry.find(qname(OC_IF, "subinterfaces"))
    for sub in () if table is None else table.findall(qname(OC_IF, "subinterface")):
        index = text_of(sub, "index")
        if index is not None and index.isdigit():
            yield int(index), sub


def _read_addresses(sub: etree._Element) -> Iterator[Address]:
    for node in sub.iterfind(f"{qname(OC_IP, 'ipv4')}/{qname(OC_IP, 'addresses')}/"
                             f"{qname(OC_IP, 'address')}"):
        conf = node.find(qname(OC_IP, "config"))
        ip = text_of(conf, "ip") or text_of(node, "ip")
        length = text_of(conf, "prefix-length")
        if ip and length and length.isdigit():
            yield ip, int(length)


class OpenconfigSystem(Family):
    """openconfig-system: the hostname, the clock's time zone, the current and boot times."""

    modules = ("openconfig-system",)
    lists: ClassVar = {}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(OC_SYS, "system"), nsmap=default_ns(OC_SYS))
        for part in ("config", "state") if with_state else ("config",):
            box = child(root, part)
            leaf(box, "hostname", state.settings.hostname)
            if part == "state":
                leaf(box, "current-datetime", date_time(state.now))
                leaf(box, "boot-time", int(state.boot.timestamp()) * 1_000_000_000)
        clock = child(root, "clock")
        for part in ("config", "state") if with_state else ("config",):
            leaf(child(clock, part), "timezone-name", state.timezone)
        return [root]

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        root = data.find(qname(OC_SYS, "system"))
        if root is None:
            return Read(None, None)
        return Read(text_of(root.find(qname(OC_SYS, "config")), "hostname"), None)
