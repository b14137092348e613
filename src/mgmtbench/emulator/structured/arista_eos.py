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

from mgmtbench.emulator.cli.textblocks import margin_blocks
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
    for block in margin_blocks(source.text):
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


# --- what NAPALM's eos getters read beyond the above ---------------------------------------
# (the text is mgmtbench.emulator.cli.dialects.eos_show's and eos_routing's, and the
# show_system_environment_*.txt transcripts; key names as EOS 4.2x-4.3x gives them, from
# NAPALM's eos driver and its test data, the rest from memory)

def _ago(now: float, text: str) -> float:
    """``now`` less a ``44 days, 4:13:15`` duration (or ``4:13:15``)."""
    return round(now - _duration_hms(text), 2)


_ENV_UPTIME = r"((?:\d+ days?, )?\d+:\d{2}:\d{2})"
_FAN = re.compile(rf"^(\S+)\s+(Ok|\S+(?: \S+)?)\s+(\d+)%\s+(\d+)%\s+{_ENV_UPTIME}\s+(\S+)\s+"
                  rf"{_ENV_UPTIME}\s*$")


def environment_cooling(source: ShapeInput) -> JsonObject:
    """``show system environment cooling``: fan trays and the power supplies' fans."""
    fields = _fields(source.text)
    now = source.device.clock.now().timestamp()
    trays: dict[str, JsonObject] = {}
    supplies: dict[str, JsonObject] = {}
    for line in source.text.splitlines():
        m = _FAN.match(line)
        if m is None:
            continue
        label, status, config, actual, up, stability, stable = m.groups()
        fan = {"label": label, "status": status.lower(), "configuredSpeed": int(config),
               "actualSpeed": int(actual), "speedHwOverride": False,
               "speedStable": stability == "Stable", "uptime": _ago(now, up),
               "lastSpeedStableChangeTime": _ago(now, stable), "maxSpeed": 24000}
        slot = label.split("/")[0]
        group = supplies if slot.startswith("PowerSupply") else trays
        entry = group.setdefault(slot, {"label": slot, "status": "ok", "speed": int(config),
                                        "fans": []})
        entry["fans"].append(fan)
        if fan["status"] != "ok":
            entry["status"] = fan["status"]
    ambient = _int(fields.get("Ambient temperature", ""))
    airflow = fields.get("Airflow", "").replace("-", " ").title().replace(" ", "")
    return {"systemStatus": "coolingOk" if fields.get("System cooling status is") == "Ok"
            else "coolingAlarm",
            "ambientTemperature": float(ambient),
            "airflowDirection": airflow[:1].lower() + airflow[1:],
            "overrideFanSpeed": 0, "minFanSpeed": 0,
            "currentZones": _int(fields.get("Number of cooling zones is", "1"), 1),
            "configuredZones": 0, "defaultZones": False, "numCoolingZones": [],
            "fanTraySlots": list(trays.values()), "powerSupplySlots": list(supplies.values())}


_SENSOR = re.compile(r"^(\d+)\s+(.+?)\s+([\d.]+)\s+\((\d+|N/A)\)\s+(\S+)\s+(\d+)\s+(\d+)\s*$")


def environment_temperature(source: ShapeInput) -> JsonObject:
    """``show system environment temperature``: the system's sensors, then each power
    supply's (``TempSensorP1/1``)."""
    fields = _fields(source.text)
    system: list[JsonObject] = []
    supplies: dict[str, JsonObject] = {}
    where: str | None = None
    for line in source.text.splitlines():
        header = re.match(r"^PowerSupply (\d+):", line)
        if header:
            where = header.group(1)
            supplies[where] = {"entPhysicalClass": "PowerSupply", "relPos": where,
                               "tempSensors": []}
            continue
        m = _SENSOR.match(line)
        if m is None:
            continue
        number, description, temperature, setpoint, _, alert, critical = m.groups()
        sensor = {"name": f"TempSensorP{where}/{number}" if where else f"TempSensor{number}",
                  "relPos": number, "description": description,
                  "currentTemperature": float(temperature),
                  "maxTemperature": float(temperature),
                  "targetTemperature": float(setpoint) if setpoint.isdigit() else None,
                  "overheatThreshold": float(alert), "criticalThreshold": float(critical),
                  "hwStatus": "ok", "inAlertState": float(temperature) > float(alert),
                  "alertRaisedCount": 0, "lastAlertRaisedTime": 0.0, "isPidDriver": False,
                  "pidDriverCount": 0}
        (supplies[where]["tempSensors"] if where else system).append(sensor)
    return {"systemStatus": "temperatureOk"
            if fields.get("System temperature status is") == "Ok" else "temperatureCritical",
            "shutdownOnOverheat": fields.get("Action on overheat") == "shutdown",
            "powercycleOnOverheat": False, "recoveryModeOnOverheat": "recoveryModeNA",
            "ambientThreshold": 45.0, "tempSensors": system, "cardSlots": [],
            "powerSupplySlots": list(supplies.values())}


_SUPPLY = re.compile(r"^(\d+)\s+(\S+)\s+(\d+)W\s+([\d.]+)A\s+([\d.]+)A\s+([\d.]+)W\s+"
                     rf"(\S+(?: \S+)?)\s+{_ENV_UPTIME}\s*$")


def environment_power(source: ShapeInput) -> JsonObject:
    """``show system environment power``."""
    now = source.device.clock.now().timestamp()
    found: JsonObject = {}
    for line in source.text.splitlines():
        m = _SUPPLY.match(line)
        if m is None:
            continue
        number, model, capacity, current_in, current_out, power, status, up = m.groups()
        found[number] = {"modelName": model, "capacity": float(capacity),
                         "inputCurrent": float(current_in),
                         "outputCurrent": float(current_out), "outputPower": float(power),
                         "state": status.lower(), "uptime": _ago(now, up), "dominant": False,
                         "managed": True, "fans": {}, "tempSensors": {}}
    return {"powerSupplies": found}


def interfaces_transceiver(source: ShapeInput) -> JsonObject:
    """``show interfaces transceiver``."""
    now = source.device.clock.now().timestamp()
    found: JsonObject = {}
    for line in source.text.splitlines():
        m = re.match(r"^(Et\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+) ago\s*$", line)
        if m is None:
            continue
        port, temperature, voltage, bias, tx, rx, age = m.groups()
        values = {"temperature": temperature, "voltage": voltage, "txBias": bias,
                  "txPower": tx, "rxPower": rx}
        entry: JsonObject = {"updateTime": _ago(now, age), "displayName": long_name(port)}
        entry.update({key: float(value) for key, value in values.items() if value != "N/A"})
        found[long_name(port)] = entry
    return {"interfaces": found}


def _quoted(text: str) -> str:
    return text[1:-1] if len(text) >= 2 and text[0] == text[-1] == '"' else text


def _capabilities(listed: str, enabled: str) -> dict[str, bool]:
    on = {c.strip().lower() for c in enabled.split(",") if c.strip()}
    return {c.strip().lower(): c.strip().lower() in on
            for c in listed.split(",") if c.strip()}


def lldp_neighbors_detail(source: ShapeInput) -> JsonObject:
    """``show lldp neighbors [INTERFACE] detail``: per port, what each neighbour sent."""
    now = source.device.clock.now().timestamp()
    found: JsonObject = {}
    current: list[JsonObject] = []
    neighbor: JsonObject | None = None
    for line in source.text.splitlines():
        stripped = line.strip().removeprefix("- ")
        key, _, value = (part.strip() for part in stripped.partition(":"))
        if m := re.match(r"^Interface (\S+) detected \d+ LLDP neighbors:", line):
            current = []
            found[m.group(1)] = {"lldpNeighborInfo": current}
        elif m := re.match(r"^\s+Neighbor (\S+?)/(.+), age (\d+) seconds", line):
            neighbor = {"chassisIdType": "macAddress", "chassisId": m.group(1),
                        "lastContactTime": round(now - int(m.group(3)), 2),
                        "neighborInterfaceInfo": {}, "systemCapabilities": {},
                        "managementAddresses": []}
            current.append(neighbor)
        elif neighbor is None:
            continue
        elif m := re.match(r"^\s+Discovered (.+) ago; Last changed (.+) ago", line):
            neighbor["neighborDiscoveryTime"] = _ago(now, m.group(1))
            neighbor["lastChangeTime"] = _ago(now, m.group(2))
        elif key == "Chassis ID type":
            neighbor["chassisIdType"] = ("macAddress" if value.startswith("MAC")
                                         else "local")
        elif key == "Port ID type":
            neighbor["neighborInterfaceInfo"]["interfaceIdType"] = (
                "interfaceName" if value.startswith("Interface name") else "local")
        elif key == "Port ID" and "interfaceId" not in neighbor["neighborInterfaceInfo"]:
            neighbor["neighborInterfaceInfo"]["interfaceId"] = value
            neighbor["neighborInterfaceInfo"]["interfaceId_v2"] = _quoted(value)
        elif key == "Time To Live":
            neighbor["ttl"] = _int(value)
        elif key == "Port Description":
            neighbor["neighborInterfaceInfo"]["interfaceDescription"] = _quoted(value)
        elif key == "System Name":
            neighbor["systemName"] = _quoted(value)
        elif key == "System Description":
            neighbor["systemDescription"] = _quoted(value)
        elif key == "System Capabilities":
            neighbor["_listed"] = value
        elif key == "Enabled Capabilities":
            neighbor["systemCapabilities"] = _capabilities(neighbor.pop("_listed", value),
                                                           value)
        elif key == "Management Address":
            neighbor["managementAddresses"].append({"addressType": "all802", "address": value,
                                                    "interfaceNumType": "unknown",
                                                    "interfaceNum": 0, "oidString": ""})
        elif key == "IEEE802.3 Maximum Frame Size":
            neighbor["neighborInterfaceInfo"]["maxFrameSize"] = _int(value)
    return {"lldpNeighbors": found}


_STATES = {"Estab": "Established", "Idle(Admin)": "Idle"}


def bgp_summary(source: ShapeInput) -> JsonObject:
    """``show ip[v6] bgp summary [vrf all]``."""
    now = source.device.clock.now().timestamp()
    found: JsonObject = {}
    vrf: JsonObject = {}
    neighbor_at = 0
    for line in source.text.splitlines():
        if m := re.match(r"^BGP summary information for VRF (\S+)", line):
            vrf = {"vrf": m.group(1), "routerId": "", "asn": "", "peers": {}}
            found[m.group(1)] = vrf
        elif m := re.match(r"^Router identifier (\S+), local AS number (\S+)", line):
            vrf["routerId"], vrf["asn"] = m.group(1), m.group(2)
        elif line.startswith("  Description"):
            neighbor_at = line.index("Neighbor")
        elif line.startswith("  ") and neighbor_at and vrf:
            words = line[neighbor_at:].split()
            if len(words) < 9:
                continue
            address, version, asn, received, sent, inq, outq, updown, state = words[:9]
            prefixes = [int(w) for w in words[9:11]] + [0, 0]
            peer = {"description": line[2:neighbor_at].strip(), "version": int(version),
                    "msgReceived": int(received), "msgSent": int(sent),
                    "inMsgQueue": int(inq), "outMsgQueue": int(outq), "asn": asn,
                    "prefixReceived": prefixes[0], "prefixAccepted": prefixes[1],
                    "upDownTime": round(now - _up_down(updown), 6),
                    "underMaintenance": False, "peerState": _STATES.get(state, state)}
            if not peer["description"]:
                del peer["description"]
            vrf["peers"][address] = peer
    return {"vrfs": found}


def _up_down(text: str) -> float:
    """``00:06:10`` or ``34d20h`` in seconds."""
    if m := re.fullmatch(r"(\d+)d(\d+)h", text):
        return int(m.group(1)) * 86400 + int(m.group(2)) * 3600.0
    return _duration_hms(text)


def bgp_neighbors(source: ShapeInput) -> JsonObject:
    """``show ip bgp neighbors [ADDRESS] [vrf all]``, ``show ipv6 bgp peers [vrf all]``."""
    found: JsonObject = {}
    for block in re.split(r"^(?=BGP neighbor is )", source.text, flags=re.M):
        head = re.match(r"BGP neighbor is (\S+), remote AS (\d+), (\w+) link", block)
        if head is None:
            continue
        peer: JsonObject = {"peerAddress": head.group(1), "asn": head.group(2),
                            "linkType": head.group(3), "version": 4}
        text = block
        if m := re.search(r"^  Description: (.*)$", text, re.M):
            peer["description"] = m.group(1)
        if m := re.search(r"remote router ID (\S+), VRF (\S+)", text):
            peer["routerId"], peer["vrf"] = m.group(1), m.group(2)
        if m := re.search(r"^  Hold time is (\d+), keepalive interval is (\d+)", text, re.M):
            peer["holdTime"], peer["keepaliveTime"] = int(m.group(1)), int(m.group(2))
        if m := re.search(r"Configured hold time is (\d+), keepalive interval is (\d+)", text):
            peer["configHoldTime"] = int(m.group(1))
            peer["configKeepaliveTime"] = int(m.group(2))
        if m := re.search(r"^  BGP state is (\w+)(?:, (.+))?$", text, re.M):
            peer["state"] = m.group(1)
            if m.group(1) == "Established" and m.group(2):
                peer["establishedTime"] = int(_up_down(m.group(2).removeprefix("up for ")))
            elif m.group(1) == "Idle":
                peer["idleReason"] = m.group(2) or ""
        if m := re.search(r"transitions to established: (\d+)", text):
            peer["establishedTransitions"] = int(m.group(1))
        if m := re.search(r"Last state was (\S+)", text):
            peer["lastState"] = m.group(1)
        if m := re.search(r"Last event was (\S+)", text):
            peer["lastEvent"] = m.group(1)
        stats = {name: (int(sent), int(rcvd)) for name, sent, rcvd in re.findall(
            r"^    ([\w -]+):\s+(\d+)\s+(\d+)$", text, re.M)}
        peer["sentMessages"], peer["receivedMessages"] = stats.get("Total messages", (0, 0))
        peer["prefixesSent"], peer["prefixesReceived"] = stats.get("IPv4 Unicast", (0, 0))
        peer["v6PrefixesSent"], peer["v6PrefixesReceived"] = stats.get("IPv6 Unicast", (0, 0))
        if m := re.search(r"^Local AS is (\d+), local router ID (\S+)", text, re.M):
            peer["localAsn"], peer["localRouterId"] = m.group(1), m.group(2)
        if m := re.search(r"^TTL is (\d+)", text, re.M):
            peer["ttl"] = int(m.group(1))
        if m := re.search(r"^Local TCP address is (\S+?)(?:, local port is (\d+))?$", text,
                          re.M):
            peer["updateSource"] = m.group(1)
            peer["localPort"] = int(m.group(2) or 0)
        if m := re.search(r"^Remote TCP address is \S+, remote port is (\d+)", text, re.M):
            peer["remotePort"] = int(m.group(1))
        vrf = found.setdefault(peer.get("vrf", "default"), {"peerList": []})
        vrf["peerList"].append(peer)
    return {"vrfs": found}


_ROUTE_LINE = re.compile(r"^ (\S+(?: \S+)?)\s+(\d+\.\d+\.\d+\.\d+/\d+)\s+(.*)$")


def _legend(text: str) -> dict[str, str]:
    """The codes of ``show ip route``'s legend: ``O E2`` -> ``OSPF external type 2``."""
    legend = " ".join(line.strip() for line in text.splitlines()
                      if line.startswith(("Codes:", "       ")) and " - " in line)
    codes: dict[str, str] = {}
    for item in legend.removeprefix("Codes:").split(","):
        code, sep, meaning = item.partition(" - ")
        if sep:
            codes[" ".join(code.split())] = meaning.strip()
    return codes


def _route_type(code: str, legend: dict[str, str]) -> str:
    words = code.split()
    meaning = legend.get(code) or legend.get(words[-1]) or legend.get(words[0], code)
    return {"Other BGP Routes": "BGP"}.get(meaning, meaning)


def ip_route(source: ShapeInput) -> JsonObject:
    """``show ip route [vrf V] [PREFIX] [longer-prefixes] [PROTOCOL] [detail]``."""
    legend = _legend(source.text)
    found: JsonObject = {}
    for part in re.split(r"^(?=VRF: )", source.text, flags=re.M):
        if not part.startswith("VRF: "):
            continue
        name = part.split("\n", 1)[0].removeprefix("VRF: ").strip()
        routes: JsonObject = {}
        route: JsonObject | None = None
        for line in part.splitlines():
            if m := _ROUTE_LINE.match(line):
                code, prefix, rest = m.groups()
                kind = _route_type(code, legend)
                route = {"routeType": kind, "routeAction": "forward", "vias": [],
                         "directlyConnected": kind == "connected", "kernelProgrammed": True,
                         "hardwareProgrammed": True, "routeLeaked": False,
                         "preference": 0, "metric": 0}
                if m2 := re.match(r"\[(\d+)/(\d+)\]", rest):
                    route["preference"], route["metric"] = int(m2.group(1)), int(m2.group(2))
                if m2 := re.search(r"is directly connected, (\S+)", rest):
                    route["vias"].append({"interface": m2.group(1)})
                routes[prefix] = route
                line = rest
            if route is not None:
                for address, interface in re.findall(r"via (\S+), (\S+)", line):
                    route["vias"].append({"nexthopAddr": address, "interface": interface})
        default = routes.get("0.0.0.0/0")
        found[name] = {"routes": routes, "allRoutesProgrammedHardware": True,
                       "allRoutesProgrammedKernel": True,
                       "routingDisabled": "! IP routing not enabled" in part,
                       "defaultRouteState": "reachable" if default else "notSet"}
    return {"vrfs": found}


def _route_shapes() -> dict[str, Shape]:
    """``show ip route``'s forms, by the words the command tree names (arguments left out)."""
    shapes: dict[str, Shape] = {}
    for vrf in ("", " vrf"):
        for longer in ("", " longer-prefixes"):
            for detail in ("", " detail"):
                shapes[f"show ip route{vrf}{longer}{detail}"] = ip_route
    return shapes


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
    "show ipv6 interface": lambda source: {"interfaces": {}},
    "show system environment cooling": environment_cooling,
    "show system environment temperature": environment_temperature,
    "show system environment power": environment_power,
    "show interfaces transceiver": interfaces_transceiver,
    "show lldp neighbors detail": lldp_neighbors_detail,
    "show ip bgp summary": bgp_summary,
    "show ip bgp summary vrf all": bgp_summary,
    "show ipv6 bgp summary": bgp_summary,
    "show ipv6 bgp summary vrf all": bgp_summary,
    "show ip bgp neighbors": bgp_neighbors,
    "show ip bgp neighbors vrf all": bgp_neighbors,
    "show ipv6 bgp peers": bgp_neighbors,
    "show ipv6 bgp peers vrf all": bgp_neighbors,
    **_route_shapes(),
}
