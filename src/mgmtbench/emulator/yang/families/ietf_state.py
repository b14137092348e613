"""The operational data the device's show commands hold, in IETF models: ietf-hardware
(RFC 8348) from ``show inventory`` (each component's class, description, model, revision and
serial number) and ietf-routing (RFC 8349) with ietf-ipv4-unicast-routing from ``show ip route``
(the IPv4 RIB's connected, local and static routes: the others come from routing protocols
whose modules the emulator does not ship, so they are not in the modelled RIB).

Both are read from the transcripts as the device shows them (the same text ``show inventory``
prints over SSH), so the models and the CLI never disagree. Their configuration is only the
list entries' names (``get-config`` writes nothing else), and :meth:`read` gives no settings:
nothing here is written back.
"""

from __future__ import annotations

import re
from typing import ClassVar

from lxml import etree

from mgmtbench.emulator.yang.families.base import Family, Read, child, default_ns, leaf, qname
from mgmtbench.emulator.yang.state import DeviceState

HW = "urn:ietf:params:xml:ns:yang:ietf-hardware"
IANAHW = "urn:ietf:params:xml:ns:yang:iana-hardware"
RT = "urn:ietf:params:xml:ns:yang:ietf-routing"
V4UR = "urn:ietf:params:xml:ns:yang:ietf-ipv4-unicast-routing"

_ITEM = re.compile(r'NAME:\s*"([^"]*)",\s*DESCR:\s*"([^"]*)"\s*\n\s*PID:\s*([^,]*?)\s*,'
                   r"\s*VID:\s*([^,]*?)\s*,\s*SN:\s*(\S*)")
_CLASSES = (("chassis", "chassis"), ("power supply", "power-supply"), ("fan", "fan"),
            ("cpu", "cpu"), ("sensor", "sensor"), ("port", "port"))
_ROUTE = re.compile(r"^([A-Za-z*]{1,3})\s+(\d+\.\d+\.\d+\.\d+/\d+)\s+(.*)$")
_CONNECTED = re.compile(r"is directly connected, (\S+)")
_VIA = re.compile(r"\[(\d+)/(\d+)\] via (\d+\.\d+\.\d+\.\d+)(?:,.*?,\s*(\S+))?")


def hardware_class(name: str) -> str:
    """The iana-hardware class of an inventory item, by its name."""
    lowered = name.lower()
    return next((kind for word, kind in _CLASSES if word in lowered), "module")


class IetfHardware(Family):
    """ietf-hardware's components, from ``show inventory``."""

    modules = ("ietf-hardware", "iana-hardware")
    lists: ClassVar = {qname(HW, "component"): (qname(HW, "name"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(HW, "hardware"), nsmap=default_ns(HW))
        for name, descr, pid, vid, serial in _ITEM.findall(state.show("show inventory")):
            entry = child(root, "component")
            leaf(entry, "name", name)
            kind = etree.SubElement(entry, qname(HW, "class"), nsmap={"ianahw": IANAHW})
            kind.text = f"ianahw:{hardware_class(name)}"
            if with_state:
                leaf(entry, "description", descr)
                if vid:
                    leaf(entry, "hardware-rev", vid)
                if serial:
                    leaf(entry, "serial-num", serial)
                leaf(entry, "mfg-name", state.vendor)
                if pid:
                    leaf(entry, "model-name", pid)
        return [root]

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        return Read(None, None)


class IetfRouting(Family):
    """ietf-routing's IPv4 RIB, from ``show ip route`` (see the module docstring)."""

    modules = ("ietf-routing", "ietf-ipv4-unicast-routing")
    lists: ClassVar = {qname(RT, "rib"): (qname(RT, "name"),)}

    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's data nodes (see :meth:`Family.build`)."""
        root = etree.Element(qname(RT, "routing"), nsmap=default_ns(RT))
        rib = child(child(root, "ribs"), "rib")
        leaf(rib, "name", "ipv4-main")
        family = etree.SubElement(rib, qname(RT, "address-family"), nsmap={"v4ur": V4UR})
        family.text = "v4ur:ipv4-unicast"
        if not with_state:
            return [root]
        routes = child(rib, "routes")
        for line in state.show("show ip route").splitlines():
            found = _ROUTE.match(line.strip())
            if found is None:
                continue
            code, prefix, rest = found.groups()
            connected = _CONNECTED.search(rest)
            via = _VIA.search(rest)
            if code in ("C", "L") and connected:
                protocol, preference = "direct", 0
                hop: tuple[str | None, str | None] = (connected.group(1), None)
            elif code.rstrip("*") == "S" and via:
                protocol, preference = "static", int(via.group(1))
                hop = (via.group(4), via.group(3))
            else:
                continue
            route = child(routes, "route")
            leaf(route, "route-preference", preference)
            nexthop = child(route, "next-hop")
            if hop[0]:
                leaf(nexthop, "outgoing-interface", hop[0])
            if hop[1]:
                address = etree.SubElement(nexthop, qname(V4UR, "next-hop-address"),
                                           nsmap=default_ns(V4UR))
                address.text = hop[1]
            source = etree.SubElement(route, qname(RT, "source-protocol"))
            source.text = protocol
            child(route, "active")
            prefix_node = etree.SubElement(route, qname(V4UR, "destination-prefix"),
                                           nsmap=default_ns(V4UR))
            prefix_node.text = prefix
        return [root]

    def read(self, data: etree._Element) -> Read:
        """The settings the data holds (see :meth:`Family.read`)."""
        return Read(None, None)
