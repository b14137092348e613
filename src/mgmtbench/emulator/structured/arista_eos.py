"""Arista EOS's JSON (``| json``, eAPI's ``"format": "json"``), in the keys EOS 4.31 uses and
pyeapi, NAPALM's eos driver and Ansible's arista.eos read, parsed from the text EOS prints.

Interface names are whole in EOS's JSON (``Ethernet1``) where the text abbreviates them
(``Et1``); MAC addresses are colon-separated; times are seconds since the epoch on the device's
clock; rates are bits and packets per second.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from mgmtbench.emulator.structured import JsonObject, Shape, ShapeInput

#: EOS's short interface names (``show interfaces status``, ``show lldp neighbors``).
_SHORT = {"Et": "Ethernet", "Ma": "Management", "Po": "Port-Channel", "Vl": "Vlan",
          "Lo": "Loopback", "Tu": "Tunnel", "Vx": "Vxlan"}
_UNITS = {"bps": 1.0, "kbps": 1e3, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def long_name(name: str) -> str:
    """``Et1`` -> ``Ethernet1``; whole names and others as they are."""
    match = re.fullmatch(r"([A-Z][a-z])(\d.*)", name)
    if match and match.group(1) in _SHORT:
        return _SHORT[match.group(1)] + match.group(2)
    return name


def colon_mac(dotted: str) -> str:
    """``001c.7300.e85e`` -> ``00:1c:73:00:e8:5e``."""
    digits = dotted.replace(".", "").replace(":", "").lower()
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


def _fields(text: str) -> dict[str, str]:
    """``Key: value`` lines as a mapping (the first ``:`` splits)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            found[key.strip()] = value.strip()
    return found


def _int(text: str, default: int = 0) -> int:
    match = re.search(r"\d+", text)
    return int(match.group()) if match else default


def version(source: ShapeInput) -> JsonObject:
    """``show version``."""
    lines = source.text.splitlines()
    fields = _fields(source.text)
    clock = source.device.clock
    boot = clock.boot.timestamp()
    return {
        "mfgName": "Arista",
        "modelName": lines[0].removeprefix("Arista ").strip() if lines else "",
        "hardwareRevision": fields.get("Hardware version", ""),
        "serialNumber": fields.get("Serial number", ""),
        "systemMacAddress": colon_mac(fields.get("System MAC address", "0000.0000.0000")),
        "hwMacAddress": colon_mac(fields.get("Hardware MAC address", "0000.0000.0000")),
        "configMacAddress": "00:00:00:00:00:00",
        "version": fields.get("Software image version", ""),
        "architecture": fields.get("Architecture", ""),
        "internalVersion": fields.get("Internal build version", ""),
        "internalBuildId": fields.get("Internal build ID", ""),
        "imageFormatVersion": fields.get("Image format version", ""),
        "imageOptimization": fields.get("Image optimization", ""),
        "isIntlVersion": False,
        "bootupTimestamp": round(boot, 3),
        "uptime": round(clock.now().timestamp() - boot, 2),
        "memTotal": _int(fields.get("Total memory", "")),
        "memFree": _int(fields.get("Free memory", "")),
    }


def hostname(source: ShapeInput) -> JsonObject:
    """``show hostname``."""
    fields = _fields(source.text)
    return {"hostname": fields.get("Hostname", ""), "fqdn": fields.get("FQDN", "")}


def clock(source: ShapeInput) -> JsonObject:
    """``show clock``."""
    fields = _fields(source.text)
    now = source.device.clock.now()
    ntp = re.search(r"NTP server \(([^)]+)\)", fields.get("Clock source", ""))
    return {
        "utcTime": round(now.timestamp(), 3),
        "timezone": fields.get("Timezone", "UTC"),
        "localTime": {"year": now.year, "month": now.month, "dayOfMonth": now.day,
                      "hour": now.hour, "min": now.minute, "sec": now.second,
                      "dayOfWeek": now.weekday(), "dayOfYear": now.timetuple().tm_yday,
                      "daylightSavingsAdjust": 0},
        "clockSource": {"local": ntp is None, **({"ntpServer": ntp.group(1)} if ntp else {})},
    }


# --- show interfaces ------------------------------------------------------------------------

_HEAD = re.compile(r"^(\S+) is (up|down|administratively down), line protocol is (\w+)"
                   r"(?: \((\w+)\))?")


def _blocks(text: str) -> Iterator[list[str]]:
    """The interface blocks: a line at the margin and the indented lines under it."""
    block: list[str] = []
    for line in text.splitlines():
        if line and not line[0].isspace():
            if block:
                yield block
            block = [line]
        elif block:
            block.append(line)
    if block:
        yield block


def _rate(value: str, unit: str) -> float:
    return round(float(value) * _UNITS.get(unit, 1.0), 1)


def _interface(block: list[str], now: float) -> tuple[str, JsonObject] | None:
    head = _HEAD.match(block[0])
    if head is None:
        return None
    name, link, protocol, status = head.groups()
    kind = re.match(r"[A-Za-z-]+", name)
    hardware = {"Ethernet": "ethernet", "Management": "ethernet", "Loopback": "loopback",
                "Vlan": "vlan", "Port-Channel": "portChannel", "Tunnel": "tunnel",
                "Vxlan": "vxlan"}.get(kind.group() if kind else "", "ethernet")
    if "." in name:
        hardware = "subinterface"
    value: JsonObject = {
        "name": name,
        "forwardingModel": "routed",
        "lineProtocolStatus": protocol,
        "interfaceStatus": status or ("disabled" if link.startswith("admin") else
                                      "connected" if link == "up" else "notconnect"),
        "hardware": hardware,
        "interfaceAddress": [],
        "description": "",
        "bandwidth": 0,
        "mtu": 0,
        "l3MtuConfigured": False,
        "l2Mru": 0,
        "lastStatusChangeTimestamp": now,
        "duplex": "duplexFull",
        "autoNegotiate": "off",
        "loopbackMode": "loopbackNone",
        "lanes": 0,
    }
    counters: dict[str, Any] = {}
    statistics: dict[str, float] = {"updateInterval": 300.0}
    _parse_lines(block[1:], now, value, counters, statistics)
    if "inOctets" in counters:
        value["interfaceStatistics"] = statistics
        value["interfaceCounters"] = counters
    return name, value


def _parse_lines(lines: list[str], now: float, value: JsonObject, counters: dict[str, Any],
                 statistics: dict[str, float]) -> None:
    """Fill ``value``, ``counters`` and ``statistics`` from an interface block's lines."""
    for raw in lines:
        line = raw.strip()
        if m := re.match(r"Hardware is (\S+), address is (\S+)(?: \(bia (\S+)\))?", line):
            value["physicalAddress"] = colon_mac(m.group(2))
            value["burnedInAddress"] = colon_mac(m.group(3) or m.group(2))
        elif line.startswith("Description: "):
            value["description"] = line.removeprefix("Description: ")
        elif m := re.match(r"Internet address is (\S+)/(\d+)", line):
            value["interfaceAddress"].append({
                "primaryIp": {"address": m.group(1), "maskLen": int(m.group(2))},
                "secondaryIps": {}, "secondaryIpsOrderedList": [],
                "virtualIp": {"address": "0.0.0.0", "maskLen": 0},
                "virtualSecondaryIps": {}, "virtualSecondaryIpsOrderedList": [],
                "broadcastAddress": "255.255.255.255", "dhcp": False})
        elif m := re.match(r"Secondary address is (\S+)/(\d+)", line):
            if value["interfaceAddress"]:
                secondary = {"address": m.group(1), "maskLen": int(m.group(2))}
                address = value["interfaceAddress"][-1]
                address["secondaryIps"][m.group(1)] = secondary
                address["secondaryIpsOrderedList"].append(secondary)
        elif m := re.match(r"IP MTU (\d+) bytes(?: \(default\))?", line):
            value["mtu"] = int(m.group(1))
            value["l3MtuConfigured"] = "(default)" not in line
        elif m := re.match(r"Ethernet MTU (\d+) bytes(?:, BW (\d+) kbit)?", line):
            value["mtu"] = value["mtu"] or int(m.group(1))
            if m.group(2):
                value["bandwidth"] = int(m.group(2)) * 1000
        elif m := re.match(r"BW (\d+) kbit", line) or re.search(r", BW (\d+) kbit", line):
            value["bandwidth"] = int(m.group(1)) * 1000
        elif m := re.match(r"(Full|Half)-duplex, \S+, auto negotiation: (\w+)", line):
            value["duplex"] = "duplexFull" if m.group(1) == "Full" else "duplexHalf"
            value["autoNegotiate"] = m.group(2)
        elif m := re.match(r"(Up|Down) (.+)$", line):
            value["lastStatusChangeTimestamp"] = round(now - _duration(m.group(2)), 2)
        elif m := re.match(r"(\d+) link status changes", line):
            counters["linkStatusChanges"] = int(m.group(1))
        else:
            _counter_line(line, counters, statistics)


def _duration(text: str) -> float:
    """``6 weeks, 2 days, 4 hours, 12 minutes, 40 seconds`` in seconds."""
    seconds = {"week": 604800, "day": 86400, "hour": 3600, "minute": 60, "second": 1}
    total = 0
    for count, unit in re.findall(r"(\d+) (week|day|hour|minute|second)s?", text):
        total += int(count) * seconds[unit]
    return float(total)


def _counter_line(line: str, counters: dict[str, Any], statistics: dict[str, float]) -> None:
    if m := re.match(r"\d+ \w+ (input|output) rate ([\d.]+) (\w+) .*?, (\d+) packets/sec", line):
        side = "in" if m.group(1) == "input" else "out"
        statistics[f"{side}BitsRate"] = _rate(m.group(2), m.group(3))
        statistics[f"{side}PktsRate"] = float(m.group(4))
    elif m := re.match(r"(\d+) packets (input|output), (\d+) bytes", line):
        side = "in" if m.group(2) == "input" else "out"
        counters[f"{side}TotalPkts"] = int(m.group(1))
        counters[f"{side}Octets"] = int(m.group(3))
    elif m := re.match(r"(Received|Sent) (\d+) broadcasts, (\d+) multicast", line):
        side = "in" if m.group(1) == "Received" else "out"
        counters[f"{side}BroadcastPkts"] = int(m.group(2))
        counters[f"{side}MulticastPkts"] = int(m.group(3))
        total = counters.get(f"{side}TotalPkts", 0)
        counters[f"{side}UcastPkts"] = max(0, total - int(m.group(2)) - int(m.group(3)))
    elif m := re.match(r"(\d+) runts, (\d+) giants", line):
        counters.setdefault("inputErrorsDetail", {}).update(
            runtFrames=int(m.group(1)), giantFrames=int(m.group(2)))
    elif m := re.match(r"(\d+) input errors, (\d+) CRC, (\d+) alignment, (\d+) symbol, "
                       r"(\d+) input discards", line):
        counters["totalInErrors"] = int(m.group(1))
        counters.setdefault("inputErrorsDetail", {}).update(
            fcsErrors=int(m.group(2)), alignmentErrors=int(m.group(3)),
            symbolErrors=int(m.group(4)))
        counters["inDiscards"] = int(m.group(5))
    elif m := re.match(r"(\d+) PAUSE (input|output)", line):
        key = "inputErrorsDetail" if m.group(2) == "input" else "outputErrorsDetail"
        counters.setdefault(key, {})["rxPause" if m.group(2) == "input" else "txPause"] = \
            int(m.group(1))
    elif m := re.match(r"(\d+) output errors, (\d+) collisions", line):
        counters["totalOutErrors"] = int(m.group(1))
        counters.setdefault("outputErrorsDetail", {})["collisions"] = int(m.group(2))
    elif m := re.match(r"(\d+) late collision, (\d+) deferred, (\d+) output discards", line):
        counters.setdefault("outputErrorsDetail", {}).update(
            lateCollisions=int(m.group(1)), deferredTransmissions=int(m.group(2)))
        counters["outDiscards"] = int(m.group(3))


def interfaces(source: ShapeInput) -> JsonObject:
    """``show interfaces`` (and ``show interfaces NAME``)."""
    now = source.device.clock.now().timestamp()
    found: JsonObject = {}
    for block in _blocks(source.text):
        parsed = _interface(block, now)
        if parsed is not None:
            found[parsed[0]] = parsed[1]
    return {"interfaces": found}


# --- tables ---------------------------------------------------------------------------------

def _rows(text: str) -> Iterator[list[str]]:
    """The rows of a table after its ``---`` rule, split at the rule's column starts."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith("---"):
            starts = [m.start() for m in re.finditer(r"-+", line)]
            for row in lines[index + 1:]:
                if row.strip():
                    yield [row[a:b].strip() for a, b in zip(starts, [*starts[1:], None],
                                                           strict=True)]
            return


def _header_rows(text: str, header: str) -> Iterator[list[str]]:
    """The rows under the line that starts with ``header``, split where its column titles
    start (a table without a ``---`` rule)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(header):
            starts = [m.start() for m in re.finditer(r"(?<!\S)\S", line)]
            for row in lines[index + 1:]:
                if row.strip():
                    yield [row[a:b].strip() for a, b in zip(starts, [*starts[1:], None],
                                                           strict=True)]
            return


def lldp_neighbors(source: ShapeInput) -> JsonObject:
    """``show lldp neighbors``."""
    fields = _fields(source.text)
    now = source.device.clock.now().timestamp()
    changed = fields.get("Last table change time", "")
    neighbors = [{"port": long_name(port), "neighborDevice": device, "neighborPort": remote,
                  "ttl": _int(ttl)}
                 for port, device, remote, ttl in (row[:4] for row in _rows(source.text))]
    return {
        "tablesLastChangeTime": round(now - _duration_hms(changed), 2),
        "tablesAgeOuts": _int(fields.get("Number of table age-outs", "")),
        "tablesInserts": _int(fields.get("Number of table inserts", "")),
        "tablesDeletes": _int(fields.get("Number of table deletes", "")),
        "tablesDrops": _int(fields.get("Number of table drops", "")),
        "lldpNeighbors": neighbors,
    }


def _duration_hms(text: str) -> float:
    """``6 weeks, 2 days, 4:11:58 ago`` in seconds."""
    total = _duration(text)
    clock = re.search(r"(\d+):(\d{2}):(\d{2})", text)
    if clock:
        hours, minutes, seconds = (int(part) for part in clock.groups())
        total += hours * 3600 + minutes * 60 + seconds
    return total


def ip_arp(source: ShapeInput) -> JsonObject:
    """``show ip arp``."""
    neighbors = []
    for line in source.text.splitlines():
        m = re.match(r"(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+([0-9a-f.]{14})\s+(.+)$", line)
        if m is None:
            continue
        age = m.group(2)
        seconds = (_duration_hms(age) if ":" in age else int(age) if age.isdigit() else 0)
        neighbors.append({"address": m.group(1), "age": int(seconds),
                          "hwAddress": m.group(3), "interface": m.group(4).strip()})
    return {"dynamicEntries": len(neighbors), "ipV4Neighbors": neighbors,
            "notLearnedEntries": 0, "totalEntries": len(neighbors), "staticEntries": 0}


_BRIEF = re.compile(r"^(\S+)\s+(\S+)\s+(up|down|admin down|administratively down|\S+)\s+"
                    r"(\S+)\s+(\d+)")


def ip_interface_brief(source: ShapeInput) -> JsonObject:
    """``show ip interface brief`` (split at spaces: an address may be wider than its
    column)."""
    found: JsonObject = {}
    for line in source.text.splitlines():
        m = _BRIEF.match(line)
        if m is None:
            continue
        name, address, status, protocol, mtu = m.groups()
        ip, _, length = address.partition("/")
        found[name] = {
            "name": name,
            "interfaceAddress": {"ipAddr": {"address": ip if length else "0.0.0.0",
                                            "maskLen": int(length) if length else 0}},
            "interfaceStatus": "connected" if status == "up" else status,
            "lineProtocolStatus": protocol,
            "mtu": int(mtu),
            "ipv4Routable240": False, "ipv4Routable0": False,
        }
    return {"interfaces": found}


def interfaces_status(source: ShapeInput) -> JsonObject:
    """``show interfaces status``."""
    found: JsonObject = {}
    for row in _header_rows(source.text, "Port "):
        port, name, status, vlan, duplex, speed, kind = (row + [""] * 7)[:7]
        full = long_name(port)
        speed_bps = _speed(speed)
        vlan_info: JsonObject = ({"interfaceForwardingModel": "routed",
                                  "interfaceMode": "routed"} if vlan == "routed" else
                                 {"interfaceForwardingModel": "bridged",
                                  "interfaceMode": "bridged", "vlanId": _int(vlan, 1)})
        found[full] = {"description": name, "linkStatus": status, "vlanInformation": vlan_info,
                       "bandwidth": speed_bps, "interfaceType": kind,
                       "duplex": "duplexFull" if duplex.endswith("full") else "duplexHalf",
                       "autoNegotigateActive": duplex.startswith("a-"),
                       "lineProtocolStatus": "up" if status == "connected" else "down"}
    return {"interfaceStatuses": found}


def _speed(text: str) -> int:
    m = re.fullmatch(r"(?:a-)?(\d+)([GM]?)", text)
    if m is None:
        return 0
    return int(m.group(1)) * {"G": 10 ** 9, "M": 10 ** 6, "": 10 ** 6}[m.group(2)]


def configuration_sessions(source: ShapeInput) -> JsonObject:
    """``show configuration sessions [detail]``."""
    fields = _fields(source.text)
    found: JsonObject = {}
    for row in _rows(source.text):
        name, state, user = (row + [""] * 3)[:3]
        found[name.lstrip("* ").strip()] = {"state": state, "completedTime": 0,
                                            "commitUser": "", "description": "",
                                            "instances": {}, "user": user}
    return {"sessions": found,
            "maxSavedSessions": _int(fields.get("Maximum number of completed sessions", "1")),
            "maxOpenSessions": _int(fields.get("Maximum number of pending sessions", "5"))}


def ip_interface(source: ShapeInput) -> JsonObject:
    """``show ip interface``: as ``show interfaces``, its address one object (not a list)."""
    found: JsonObject = {}
    for name, value in interfaces(source)["interfaces"].items():
        addresses = value["interfaceAddress"]
        found[name] = {"name": name, "lineProtocolStatus": value["lineProtocolStatus"],
                       "interfaceStatus": value["interfaceStatus"], "mtu": value["mtu"],
                       "interfaceAddress": addresses[0] if addresses else {},
                       "proxyArp": False, "localProxyArp": False, "gratuitousArp": False,
                       "description": value["description"], "enabled": True}
    return {"interfaces": found}


def users_accounts(source: ShapeInput) -> JsonObject:
    """``show users accounts``."""
    found: JsonObject = {}
    for block in source.text.split("user: ")[1:]:
        lines = block.splitlines()
        fields = _fields("\n".join(lines[1:]))
        found[lines[0].strip()] = {
            "username": lines[0].strip(), "role": fields.get("role", ""),
            "privLevel": _int(fields.get("privilege level", "1"), 1),
            "sshAuthorizedKey": fields.get("ssh public key", "")}
    return {"users": found}


def vrf(source: ShapeInput) -> JsonObject:
    """``show vrf``."""
    found: JsonObject = {}
    for row in _rows(source.text):
        name, rd, _protocols, state, members = (row + [""] * 5)[:5]
        if not name:
            continue
        listed = [m.strip() for m in members.split(",") if m.strip()]
        routing = "up" if state.startswith("v4:routing") else "down"
        found[name] = {"routeDistinguisher": rd, "vrfState": "up", "interfaces": listed,
                       "interfacesV4": listed, "interfacesV6": [],
                       "protocols": {"ipv4": {"supported": True, "protocolState": "up",
                                              "routingState": routing},
                                     "ipv6": {"supported": True, "protocolState": "up",
                                              "routingState": "down"}}}
    return {"vrfs": found}


def vlan(source: ShapeInput) -> JsonObject:
    """``show vlan``."""
    found: JsonObject = {}
    for row in _rows(source.text):
        number, name, status, ports = (row + [""] * 4)[:4]
        found[number] = {"name": name, "status": status, "dynamic": False,
                         "interfaces": {long_name(p.strip()): {"privatePromoted": False,
                                                               "blocked": None}
                                        for p in ports.split(",") if p.strip()}}
    return {"vlans": found, "sourceDetail": ""}


def _labelled(key: str) -> Shape:
    def shape(source: ShapeInput) -> JsonObject:
        return {key: source.text.partition(":")[2].strip()}
    return shape


def arp_vrf_all(source: ShapeInput) -> JsonObject:
    """``show arp vrf all``: a table per ``VRF: name`` line."""
    found: JsonObject = {}
    for part in re.split(r"^VRF: ", source.text, flags=re.M)[1:]:
        name, _, table = part.partition("\n")
        found[name.strip()] = ip_arp(ShapeInput(table, source.args, source.device))
    return {"vrfs": found}


def mac_address_table(source: ShapeInput) -> JsonObject:
    """``show mac address-table``."""
    now = source.device.clock.now().timestamp()
    entries = []
    for row in _rows(source.text.split("Vlan    Mac", 1)[-1]):
        vlan_id, mac, kind, port, moves, last = (row + [""] * 6)[:6]
        if not vlan_id.isdigit():
            continue
        entries.append({"vlanId": int(vlan_id), "macAddress": colon_mac(mac),
                        "entryType": kind.lower(), "interface": long_name(port),
                        "moves": _int(moves), "lastMove": round(now - _duration_hms(last), 2)})
    return {"unicastTable": {"tableEntries": entries}, "multicastTable": {"tableEntries": []}}


SHAPES: dict[str, Shape] = {
    "show version": version,
    "show hostname": hostname,
    "show clock": clock,
    "show interfaces": interfaces,
    "show interfaces status": interfaces_status,
    "show lldp neighbors": lldp_neighbors,
    "show ip arp": ip_arp,
    "show ip interface brief": ip_interface_brief,
    "show configuration sessions": configuration_sessions,
    "show configuration sessions detail": configuration_sessions,
    "show ip interface": ip_interface,
    "show users accounts": users_accounts,
    "show vrf": vrf,
    "show vlan": vlan,
    "show snmp v2-mib chassis": _labelled("chassisId"),
    "show snmp v2-mib location": _labelled("location"),
    "show snmp v2-mib contact": _labelled("contact"),
    "show arp vrf all": arp_vrf_all,
    "show mac address-table": mac_address_table,
}
