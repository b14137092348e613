"""The Junos configuration in Juniper's published YANG (junos-conf-root, -system,
-interfaces): ``/configuration/system/host-name`` and ``/configuration/interfaces/interface``
with its description, ``disable``, MTU and each unit's ``family inet`` addresses, as a Junos
device writes them in its YANG form. A unit other than 0 is the CLI's dotted name
(``ge-0/0/1.100``), as in the settings of the other families."""

from __future__ import annotations

import ipaddress
from typing import ClassVar

from lxml import etree

from mgmtbench.emulator.yang.families.base import Family, Read, child, default_ns, leaf, qname, text_of
from mgmtbench.emulator.yang.state import Address, DeviceState, IfSettings

ROOT = "http://yang.juniper.net/junos/conf/root"
SYSTEM = "http://yang.juniper.net/junos/conf/system"
INTERFACES = "http://yang.juniper.net/junos/conf/interfaces"


def _unit_of(name: str) -> tuple[str, str]:
    parent, dot, unit = name.rpartition(".")
    return (parent, unit) if dot and unit.isdigit() else (name, "0")


class JunosConfiguration(Family):
    """junos-conf-root with -system's host-name and -interfaces' interfaces."""

    modules = ("junos-conf-root", "junos-conf-system", "junos-conf-interfaces")
    lists: ClassVar = {qname(INTERFACES, "interface"): (qname(INTERFACES, "name"),),
                       qname(INTERFACES, "unit"): (qname(INTERFACES, "name"),),
                       qname(INTERFACES, "address"): (qname(INTERFACES, "name"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(ROOT, "configuration"), nsmap=default_ns(ROOT))
        system = etree.SubElement(root, qname(SYSTEM, "system"), nsmap=default_ns(SYSTEM))
        leaf(system, "host-name", state.settings.hostname)
        table = etree.SubElement(root, qname(INTERFACES, "interfaces"), nsmap=default_ns(INTERFACES))
        entries: dict[str, etree._Element] = {}
        for name, conf in state.settings.interfaces.items():
            parent, unit = _unit_of(name)
            entry = entries.get(parent)
            if entry is None:
                entry = entries[parent] = child(table, "interface")
                leaf(entry, "name", parent)
            if unit == "0":
                if conf.description is not None:
                    leaf(entry, "description", conf.description)
                if not conf.enabled:
                    child(entry, "disable")
                if conf.mtu:
                    leaf(entry, "mtu", conf.mtu)
            if conf.addresses or unit != "0":
                node = child(entry, "unit")
                leaf(node, "name", unit)
                if unit != "0" and conf.description is not None:
                    leaf(node, "description", conf.description)
                if conf.addresses:
                    inet = child(child(node, "family"), "inet")
                    for address, length in conf.addresses:
                        leaf(child(inet, "address"), "name", f"{address}/{length}")
        return [root]

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        root = data.find(qname(ROOT, "configuration"))
        if root is None:
            return Read(None, None)
        hostname = text_of(root.find(qname(SYSTEM, "system")), "host-name")
        table = root.find(qname(INTERFACES, "interfaces"))
        if table is None:
            return Read(hostname, None)
        found: dict[str, IfSettings] = {}
        for entry in table.findall(qname(INTERFACES, "interface")):
            name = text_of(entry, "name")
            if not name:
                continue
            mtu = text_of(entry, "mtu")
            main = IfSettings(description=text_of(entry, "description"),
                              enabled=entry.find(qname(INTERFACES, "disable")) is None,
                              mtu=int(mtu) if mtu and mtu.isdigit() else None)
            for node in entry.findall(qname(INTERFACES, "unit")):
                unit = text_of(node, "name") or "0"
                addresses: list[Address] = []
                for address in node.iterfind(f"{qname(INTERFACES, 'family')}/"
                                             f"{qname(INTERFACES, 'inet')}/"
                                             f"{qname(INTERFACES, 'address')}"):
                    text = text_of(address, "name") or ""
                    try:
                        parsed = ipaddress.IPv4Interface(text)
                    except ValueError:
                        continue
                    addresses.append((str(parsed.ip), parsed.network.prefixlen))
                if unit == "0":
                    main = IfSettings(description=main.description, enabled=main.enabled,
                                      addresses=tuple(addresses), mtu=main.mtu)
                else:
                    found[f"{name}.{unit}"] = IfSettings(
                        description=text_of(node, "description"), addresses=tuple(addresses))
            found[name] = main
        return Read(hostname, found)
