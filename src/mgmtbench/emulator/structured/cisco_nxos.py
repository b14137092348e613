"""Cisco NX-OS's JSON (``show ... | json``, NX-API's ``cli`` / ``cli_show``), in the keys NX-OS
9.3/10.x uses and NAPALM's nxos and nxos_ssh drivers, Ansible's cisco.nxos and pyATS read,
parsed from the text NX-OS prints.

NX-OS nests tables as ``{"TABLE_x": {"ROW_x": [row, ...]}}``, and a table of one row holds the
row itself rather than a list of one (NAPALM's ``_get_table_rows`` takes both). Interface names
are whole (``Ethernet1/1``, ``loopback0``) where the text abbreviates them (``Eth1/1``,
``Lo0``); MAC addresses stay dotted; most numbers are strings as NX-OS gives them, counters are
numbers. The keys are from memory of NX-OS 9.3/10.x output and the parsers that read it, not
from a capture; only the ones those tools read are sure to be there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from mgmtbench.emulator.cli.textblocks import margin_blocks
from mgmtbench.emulator.structured import JsonObject, Shape, ShapeInput

_SHORT = {"Eth": "Ethernet", "Lo": "loopback", "Po": "port-channel", "Vl": "Vlan",
          "Tunnel": "Tunnel", "nve": "nve"}


def long_name(name: str) -> str:
    """``Eth1/1`` -> ``Ethernet1/1``, ``Lo0`` -> ``loopback0``; whole names as they are."""
    match = re.fullmatch(r"([A-Za-z]+)(\d.*)", name)
    if match and match.group(1) in _SHORT:
        return _SHORT[match.group(1)] + match.group(2)
    return name


def table(name: str, rows: list[JsonObject]) -> JsonObject:
    """``{"TABLE_name": {"ROW_name": rows}}``, one row as itself, no rows as no table."""
    if not rows:
        return {}
    return {f"TABLE_{name}": {f"ROW_{name}": rows[0] if len(rows) == 1 else rows}}


def _fields(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in found:
            found[key.strip()] = value.strip()
    return found


# --- show version, hostname, clock, inventory ---------------------------------------------------

def version(source: ShapeInput) -> JsonObject:
    """``show version``."""
    text = source.text
    header = text.split("\n\nSoftware", 1)[0].strip("\n")

    def find(pattern: str, default: str = "") -> str:
        match = re.search(pattern, text, re.M)
        return match.group(1).strip() if match else default

    uptime = {unit: int(find(rf"(\d+) {unit}\(s\)", "0")) for unit in
              ("day", "hour", "minute", "second")}
    memory = re.search(r"^\s+(.+?) with (\d+) (\w+) of memory", text, re.M)
    compiled = re.search(r"NXOS compile time:\s+(.+?) \[(.+)\]", text)
    image = find(r"NXOS image file is: (\S+)")
    nxos = find(r"^\s+NXOS: version (\S+)")
    return {
        "header_str": header + "\n",
        "bios_ver_str": find(r"BIOS: version (\S+)"),
        "kickstart_ver_str": nxos,
        "nxos_ver_str": nxos,
        "host_nxos_ver_str": find(r"Host NXOS: version (\S+)"),
        "bios_cmpl_time": find(r"BIOS compile time:\s+(\S+)"),
        "kick_file_name": image,
        "nxos_file_name": image,
        "kick_cmpl_time": compiled.group(1) if compiled else "",
        "nxos_cmpl_time": compiled.group(1) if compiled else "",
        "kick_tmstmp": compiled.group(2) if compiled else "",
        "nxos_tmstmp": compiled.group(2) if compiled else "",
        "chassis_id": find(r"^\s+cisco (.+ Chassis)"),
        "cpu_name": memory.group(1) if memory else "",
        "memory": int(memory.group(2)) if memory else 0,
        "mem_type": memory.group(3) if memory else "kB",
        "proc_board_id": find(r"Processor Board ID (\S+)"),
        "host_name": find(r"Device name: (\S+)"),
        "bootflash_size": int(find(r"bootflash:\s+(\d+) kB", "0")),
        "kern_uptm_days": uptime["day"],
        "kern_uptm_hrs": uptime["hour"],
        "kern_uptm_mins": uptime["minute"],
        "kern_uptm_secs": uptime["second"],
        "rr_usecs": int(find(r"Last reset at (\d+) usecs", "0")),
        "rr_ctime": find(r"usecs after (.+)$"),
        "rr_reason": find(r"Reason: (.+)$"),
        "rr_sys_ver": find(r"System version: (.+)$"),
        "rr_service": find(r"Service: ?(.*)$"),
        "plugins": find(r"^plugin\n\s+(.+)$"),
        "manufacturer": "Cisco Systems, Inc.",
    }


def hostname(source: ShapeInput) -> JsonObject:
    """``show hostname``."""
    return {"hostname": source.text.strip()}


def clock(source: ShapeInput) -> JsonObject:
    """``show clock``."""
    lines = source.text.strip().splitlines()
    value: JsonObject = {"simple_time": (lines[0] if lines else "") + "\n"}
    source_line = next((line for line in lines if line.startswith("Time source is ")), "")
    if source_line:
        value["time_source"] = source_line.removeprefix("Time source is ").strip()
    return value


def inventory(source: ShapeInput) -> JsonObject:
    """``show inventory``."""
    rows: list[JsonObject] = []
    for name, desc, pid, vid, serial in re.findall(
            r'NAME: "([^"]*)",\s+DESCR: "([^"]*)"\s*\nPID: (\S*)\s*,\s+VID: (\S*)\s*,\s+SN: (\S*)',
            source.text):
        rows.append({"name": name, "desc": desc, "productid": pid, "vendorid": vid,
                     "serialnum": serial})
    return table("inv", rows)


# --- show interface -----------------------------------------------------------------------------

_COUNTERS = [
    # (regex on a line of an Ethernet block's RX/TX part, keys in order)
    (r"(\d+) unicast packets\s+(\d+) multicast packets\s+(\d+) broadcast packets",
     ("{d}ucast", "{d}mcast", "{d}bcast")),
    (r"(\d+) (?:input|output) packets\s+(\d+) bytes", ("{d}pkts", "{d}bytes")),
    (r"(\d+) jumbo packets\s+(\d+) storm suppression packets",
     ("eth_jumbo_inpkts", "eth_storm_supp")),
    (r"(\d+) runts\s+(\d+) giants\s+(\d+) CRC\s+(\d+) no buffer",
     ("eth_runts", "eth_giants", "eth_crc", "eth_nobuf")),
    (r"(\d+) input error\s+(\d+) short frame\s+(\d+) overrun\s+(\d+) underrun\s+(\d+) ignored",
     ("eth_inerr", "eth_frame", "eth_overrun", "eth_underrun", "eth_ignored")),
    (r"(\d+) watchdog\s+(\d+) bad etype drop\s+(\d+) bad proto drop\s+(\d+) if down drop",
     ("eth_watchdog", "eth_bad_eth", "eth_bad_proto", "eth_in_ifdown_drops")),
    (r"(\d+) input with dribble\s+(\d+) input discard", ("eth_dribble", "eth_indiscard")),
    (r"(\d+) Rx pause", ("eth_inpause",)),
    (r"(\d+) output error\s+(\d+) collision\s+(\d+) deferred\s+(\d+) late collision",
     ("eth_outerr", "eth_coll", "eth_deferred", "eth_latecoll")),
    (r"(\d+) lost carrier\s+(\d+) no carrier\s+(\d+) babble\s+(\d+) output discard",
     ("eth_lostcarrier", "eth_nocarrier", "eth_babbles", "eth_outdiscard")),
    (r"(\d+) Tx pause", ("eth_outpause",)),
]


def _ip(row: JsonObject, prefix: str, address: str) -> None:
    ip, _, length = address.partition("/")
    row[f"{prefix}_ip_addr"] = ip
    row[f"{prefix}_ip_mask"] = int(length or 32)
    if prefix == "eth":
        row["eth_ip_prefix"] = _network(ip, int(length or 32))


def _network(ip: str, length: int) -> str:
    value = int.from_bytes(bytes(int(part) for part in ip.split(".")), "big")
    value &= (0xFFFFFFFF << (32 - length)) & 0xFFFFFFFF
    return ".".join(str(b) for b in value.to_bytes(4, "big"))


def _svi(block: list[str]) -> JsonObject:
    head = re.match(r"(\S+) is ([^,]+), line protocol is (\w+)(?:, autostate (\w+))?", block[0])
    assert head is not None
    name, state, protocol, autostate = head.groups()
    down = re.match(r"down \((.+)\)", state)
    row: JsonObject = {"interface": name,
                       "svi_admin_state": "down" if down and "admin" in down.group(1).lower()
                       else "up",
                       "svi_line_proto": protocol, "svi_autostate": autostate or "enabled"}
    if down:
        row["svi_rsn_desc"] = down.group(1)
    for raw in block[1:]:
        line = raw.strip()
        if m := re.match(r"Hardware is (\S+), address is (.*)$", line):
            row["svi_hw_desc"], row["svi_mac"] = m.group(1), " " + m.group(2).strip()
        elif line.startswith("Description: "):
            row["svi_desc"] = line.removeprefix("Description: ")
        elif m := re.match(r"Internet Address is (\S+)", line):
            _ip(row, "svi", m.group(1))
        elif m := re.match(r"MTU (\d+) bytes, BW (\d+) Kbit, DLY (\d+) usec", line):
            row["svi_mtu"], row["svi_bw"], row["svi_delay"] = (int(g) for g in m.groups())
        elif m := re.match(r"reliability (\d+)/255, txload (\d+)/255, rxload (\d+)/255", line):
            row["svi_reliability"], row["svi_tx_load"], row["svi_rx_load"] = m.groups()
        elif m := re.match(r"ARP type: (\S+)", line):
            row["svi_arp_type"] = m.group(1)
        elif m := re.match(r'Last clearing of "show interface" counters (.+)$', line):
            row["svi_time_last_cleared"] = m.group(1)
    return row


def _physical(block: list[str]) -> JsonObject:
    head = re.match(r"(\S+) is (\w+)(?: \((.+)\))?", block[0])
    assert head is not None
    name, state, reason = head.groups()
    row: JsonObject = {"interface": name, "state": state}
    if reason:
        row["state_rsn_desc"] = reason
    loopback = name.startswith("loopback")
    kind = "eth"
    direction = "eth_in"
    for raw in block[1:]:
        line = raw.strip()
        if m := re.match(r"admin state is (\w+)(?:, (\w+) Interface)?", line):
            row["admin_state"] = m.group(1)
            if m.group(2):
                row["share_state"] = m.group(2)
        elif m := re.match(r"Hardware: (.+?)(?:, address: (\S+) \(bia (\S+)\))?$", line):
            row["eth_hw_desc"] = m.group(1)
            if m.group(2):
                row["eth_hw_addr"], row["eth_bia_addr"] = m.group(2), m.group(3)
        elif line.startswith("Description: "):
            row["desc"] = line.removeprefix("Description: ")
        elif m := re.match(r"Internet Address is (\S+)", line):
            _ip(row, "eth", m.group(1))
        elif m := re.match(r"MTU (\d+) bytes, BW (\d+) Kbit ?, DLY (\d+) usec", line):
            row["eth_mtu"] = m.group(1)
            row["eth_bw"], row["eth_dly"] = int(m.group(2)), int(m.group(3))
        elif m := re.match(r"reliability (\d+)/255, txload (\d+)/255, rxload (\d+)/255", line):
            row["eth_reliability"], row["eth_txload"], row["eth_rxload"] = m.groups()
        elif m := re.match(r"Encapsulation (\S+), medium is (\w+)", line):
            row["encapsulation"], row["medium"] = m.group(1).lower(), m.group(2)
        elif m := re.match(r"Port mode is (\w+)", line):
            row["eth_mode"] = m.group(1)
        elif m := re.match(r"(full|half|auto)-duplex, (.+)$", line):
            row["eth_duplex"], row["eth_speed"] = m.group(1), m.group(2)
        elif m := re.match(r"Beacon is turned (\w+)", line):
            row["eth_beacon"] = m.group(1)
        elif m := re.match(r"Auto-Negotiation is turned (\w+)", line):
            row["eth_autoneg"] = m.group(1)
        elif m := re.match(r"Input flow-control is (\w+), output flow-control is (\w+)", line):
            row["eth_in_flowctrl"], row["eth_out_flowctrl"] = m.groups()
        elif m := re.match(r"Auto-mdix is turned (\w+)", line):
            row["eth_mdix"] = m.group(1)
        elif m := re.match(r"Rate mode is (\w+)", line):
            row["eth_ratemode"] = m.group(1)
        elif m := re.match(r"Switchport monitor is (\w+)", line):
            row["eth_swt_monitor"] = m.group(1)
        elif m := re.match(r"EtherType is (\S+)", line):
            row["eth_ethertype"] = m.group(1)
        elif m := re.match(r"admin fec state is (\w+), oper fec state is (\w+)", line):
            row["eth_admin_fec_state"], row["eth_oper_fec_state"] = m.groups()
        elif m := re.match(r"Last link flapped (.+)$", line):
            row["eth_link_flapped"] = m.group(1)
        elif m := re.match(r'Last clearing of "show interface" counters (.+)$', line):
            row["eth_clear_counters"] = m.group(1)
        elif m := re.match(r"(\d+) interface resets", line):
            row["eth_reset_cntr"] = int(m.group(1))
        elif m := re.match(r"(\d+) (?:seconds|minute) (input|output) rate (\d+) bits/sec, "
                           r"(\d+) packets/sec", line):
            number = "2" if line.startswith("300") else "1"
            side = "in" if m.group(2) == "input" else "out"
            row[f"eth_{side}rate{number}_bits"] = m.group(3)
            row[f"eth_{side}rate{number}_pkts"] = m.group(4)
        elif line in ("RX", "Rx"):
            direction = "eth_in"
            kind = "mgmt" if name.startswith("mgmt") else "eth"
        elif line in ("TX", "Tx"):
            direction = "eth_out"
            kind = "mgmt" if name.startswith("mgmt") else "eth"
        elif loopback:
            _loopback_counters(line, row)
        else:
            _counter_line(line, row, direction, kind)
    return row


def _counter_line(line: str, row: JsonObject, direction: str, kind: str) -> None:
    if kind == "mgmt":
        side = "in" if direction == "eth_in" else "out"
        if m := re.match(r"(\d+) (?:input|output) packets (\d+) unicast packets "
                         r"(\d+) multicast packets", line):
            row[f"vdc_lvl_{side}_pkts"], row[f"vdc_lvl_{side}_ucast"], \
                row[f"vdc_lvl_{side}_mcast"] = (int(g) for g in m.groups())
        elif m := re.match(r"(\d+) broadcast packets (\d+) bytes", line):
            row[f"vdc_lvl_{side}_bcast"], row[f"vdc_lvl_{side}_bytes"] = \
                (int(g) for g in m.groups())
        return
    for pattern, keys in _COUNTERS:
        if m := re.match(pattern, line):
            for key, value in zip(keys, m.groups(), strict=True):
                if key.startswith("{d}"):
                    key = direction + key[3:]
                elif direction == "eth_out" and key == "eth_jumbo_inpkts":
                    key = "eth_jumbo_outpkts"
                row[key] = int(value)
            return
    if direction == "eth_out" and (m := re.match(r"(\d+) jumbo packets$", line)):
        row["eth_jumbo_outpkts"] = int(m.group(1))


def _loopback_counters(line: str, row: JsonObject) -> None:
    for pattern, keys in (
            (r"(\d+) packets input (\d+) bytes", ("loop_in_pkts", "loop_in_bytes")),
            (r"(\d+) multicast frames (\d+) compressed", ("loop_in_mcast", "loop_in_compressed")),
            (r"(\d+) input errors (\d+) frame (\d+) overrun (\d+) fifo",
             ("loop_in_errors", "loop_in_frame", "loop_in_overrun", "loop_in_fifo")),
            (r"(\d+) packets output (\d+) bytes (\d+) underruns",
             ("loop_out_pkts", "loop_out_bytes", "loop_out_underruns")),
            (r"(\d+) output errors (\d+) collisions (\d+) fifo",
             ("loop_out_errors", "loop_out_collisions", "loop_out_fifo")),
            (r"(\d+) out_carrier_errors", ("loop_out_carriers",))):
        if m := re.match(pattern, line):
            row.update({key: int(value) for key, value in zip(keys, m.groups(), strict=True)})
            return


def interface_rows(text: str) -> list[JsonObject]:
    """The rows of ``show interface`` (or of one interface), in the order printed."""
    rows: list[JsonObject] = []
    for block in margin_blocks(text, continues=("admin state",), drop_blank=True):
        if ", line protocol is " in block[0]:
            rows.append(_svi(block))
        elif re.match(r"\S+ is \w+", block[0]):
            rows.append(_physical(block))
    return rows


def interface(source: ShapeInput) -> JsonObject:
    """``show interface`` and ``show interface NAME``."""
    return table("interface", interface_rows(source.text))


# --- tables -------------------------------------------------------------------------------------

def _columns(header: str) -> list[int]:
    return [m.start() for m in re.finditer(r"(?<!\S)\S", header)]


def _cut(line: str, starts: list[int]) -> list[str]:
    return [line[a:b].strip() for a, b in zip(starts, [*starts[1:], None], strict=True)]


def interface_status(source: ShapeInput) -> JsonObject:
    """``show interface status``."""
    lines = source.text.splitlines()
    rows: list[JsonObject] = []
    header = next((i for i, line in enumerate(lines) if line.startswith("Port ")), None)
    if header is not None:
        starts = _columns(lines[header])
        for line in lines[header + 1:]:
            if not line.strip() or line.startswith("---"):
                continue
            port, name, state, vlan, duplex, speed, kind = (_cut(line, starts) + [""] * 7)[:7]
            row: JsonObject = {"interface": long_name(port)}
            if name != "--":
                row["name"] = name
            row.update(state=state, vlan=vlan, duplex=duplex, speed=speed, type=kind)
            rows.append(row)
    return table("interface", rows)


def interface_brief(source: ShapeInput) -> JsonObject:
    """``show interface brief``: its sections (management, Ethernet, VLAN, others) as rows of
    one table."""
    rows: list[JsonObject] = []
    for section in re.split(r"\n\s*\n", source.text):
        lines = [line for line in section.splitlines()
                 if line.strip() and not line.startswith("---")]
        if len(lines) < 2:
            continue
        title = lines[0].split()[0]
        body = [line for line in lines[1:] if not line.startswith(("Interface ", "   "))]
        for line in body:
            words = line.split()
            if title == "Port":
                rows.append({"interface": words[0], "vrf": words[1], "state": words[2],
                             "ip_addr": words[3], "speed": words[4], "mtu": words[5]})
            elif title == "Ethernet" and len(words) >= 8:
                speed = words[-2]
                rows.append({"interface": long_name(words[0]), "vlan": words[1],
                             "type": words[2], "portmode": words[3], "state": words[4],
                             "state_rsn_desc": " ".join(words[5:-2]),
                             "speed": re.sub(r"\(\w\)$", "", speed),
                             "ratemode": (re.search(r"\((\w)\)", speed) or ["", ""])[1],
                             "portchan": words[-1]})
            elif title == "Interface" and "VLAN(Type)" in lines[0]:
                rows.append({"interface": words[0], "state": words[2],
                             "state_rsn_desc": " ".join(words[3:])})
            elif title == "Interface":
                rows.append({"interface": long_name(words[0]), "state": words[1],
                             **({"desc": " ".join(words[2:])} if words[2:] else {})})
    return table("interface", rows)


def _vrf_sections(text: str) -> Iterator[tuple[str, str]]:
    """``(vrf, its part of the text)`` for each ``... for VRF "name"(id)`` header."""
    parts = re.split(r'^.* for VRF "([^"]+)"\(\d+\)\s*$', text, flags=re.M)
    for index in range(1, len(parts), 2):
        yield parts[index], parts[index + 1]


def ip_interface_brief(source: ShapeInput) -> JsonObject:
    """``show ip interface brief [vrf all]``."""
    rows: list[JsonObject] = []
    for vrf, part in _vrf_sections(source.text):
        for line in part.splitlines():
            m = re.match(r"(\S+)\s+(\d+\.\d+\.\d+\.\d+)\s+protocol-(\w+)/link-(\w+)/admin-(\w+)",
                         line)
            if m is None:
                continue
            rows.append({"vrf-name-out": vrf, "intf-name": long_name(m.group(1)),
                         "proto-state": m.group(3), "link-state": m.group(4),
                         "admin-state": m.group(5), "prefix": m.group(2),
                         "ip-disabled": "FALSE"})
    return table("intf", rows)


def ip_interface(source: ShapeInput) -> JsonObject:
    """``show ip interface [vrf all]``."""
    rows: list[JsonObject] = []
    for vrf, part in _vrf_sections(source.text):
        row: JsonObject | None = None
        for line in part.splitlines():
            if m := re.match(r"(\S+), Interface status: protocol-(\w+)/link-(\w+)/admin-(\w+), "
                             r"iod: (\d+)", line):
                row = {"vrf-name-out": vrf, "intf-name": m.group(1), "proto-state": m.group(2),
                       "link-state": m.group(3), "admin-state": m.group(4),
                       "iod": int(m.group(5))}
                rows.append(row)
            elif row is None:
                continue
            elif m := re.match(r"\s+IP address: (\S+), IP subnet: (\S+)/(\d+)( secondary)?",
                               line):
                if m.group(4):
                    secondary = row.setdefault("TABLE_secondary_address",
                                               {"ROW_secondary_address": []})
                    secondary["ROW_secondary_address"].append(
                        {"prefix1": m.group(1), "subnet1": m.group(2),
                         "masklen1": int(m.group(3))})
                else:
                    row.update({"prefix": m.group(1), "subnet": m.group(2),
                                "masklen": int(m.group(3)), "ip-disabled": "FALSE"})
            elif m := re.match(r"\s+IP broadcast address: (\S+)", line):
                row["broadcast"] = m.group(1)
            elif m := re.match(r"\s+IP MTU: (\d+) bytes", line):
                row["mtu"] = int(m.group(1))
            elif m := re.match(r"\s+IP proxy ARP : (\w+)", line):
                row["proxy-arp"] = m.group(1)
            elif m := re.match(r"\s+IP icmp redirects: (\w+)", line):
                row["icmp-redirects"] = m.group(1)
    return table("intf", rows)


def lldp_neighbors(source: ShapeInput) -> JsonObject:
    """``show lldp neighbors``."""
    rows: list[JsonObject] = []
    lines = source.text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("Device ID")), None)
    if header is not None:
        for line in lines[header + 1:]:
            words = line.split()
            if len(words) < 4 or line.startswith("Total"):
                continue
            rows.append({"chassis_id": words[0], "l_port_id": long_name(words[1]),
                         "hold_time": words[2],
                         "enabled_capability": words[3] if len(words) > 4 else "",
                         "port_id": words[-1]})
    total = re.search(r"Total entries displayed: (\d+)", source.text)
    return {"neigh_hdr": "neigh_hdr", **table("nbor", rows),
            "neigh_count": total.group(1) if total else str(len(rows))}


def lldp_neighbors_detail(source: ShapeInput) -> JsonObject:
    """``show lldp neighbors detail``."""
    keys = {"Chassis id": "chassis_id", "Port id": "port_id", "Local Port id": "l_port_id",
            "Port Description": "port_desc", "System Name": "sys_name",
            "System Description": "sys_desc", "Time remaining": "ttl",
            "System Capabilities": "system_capability",
            "Enabled Capabilities": "enabled_capability", "Management Address": "mgmt_addr",
            "Management Address IPV6": "mgmt_addr_ipv6", "Vlan ID": "vlan_id"}
    rows: list[JsonObject] = []
    for part in re.split(r"^(?=Chassis id: )", source.text, flags=re.M)[1:]:
        row: JsonObject = {}
        for line in part.splitlines():
            key, sep, value = line.partition(": ")
            if sep and key in keys:
                row[keys[key]] = value.strip()
        if "l_port_id" in row:
            row["l_port_id"] = long_name(row["l_port_id"])
        if "ttl" in row:
            row["ttl"] = int(re.sub(r"\D", "", row["ttl"]) or 0)
        rows.append(row)
    total = re.search(r"Total entries displayed: (\d+)", source.text)
    return {"neigh_hdr": "neigh_hdr", **table("nbor_detail", rows),
            "neigh_count": total.group(1) if total else str(len(rows))}


def ip_arp(source: ShapeInput) -> JsonObject:
    """``show ip arp [vrf all|NAME]``: a row per VRF, its adjacencies under it."""
    vrfs: list[JsonObject] = []
    parts = re.split(r"^IP ARP Table for (?:context|all contexts)\s*(\S*)\s*$", source.text,
                     flags=re.M)
    for index in range(1, len(parts), 2):
        by_vrf: dict[str, list[JsonObject]] = {}
        for line in parts[index + 1].splitlines():
            m = re.match(r"(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+([0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})"
                         r"\s+(\S+)(.*)$", line)
            if m is None:
                continue
            rest = m.group(5).split()
            vrf = parts[index] or (rest[-1] if rest and not rest[-1].startswith(("*", "+", "#"))
                                   else "default")
            by_vrf.setdefault(vrf, []).append({"intf-out": m.group(4),
                                               "ip-addr-out": m.group(1),
                                               "time-stamp": m.group(2), "mac": m.group(3)})
        if not by_vrf and parts[index]:
            by_vrf[parts[index]] = []
        for vrf, adjacencies in by_vrf.items():
            vrfs.append({"vrf-name-out": vrf, "cnt-total": len(adjacencies),
                         **table("adj", adjacencies)})
    return table("vrf", vrfs)


def ntp_peers(source: ShapeInput) -> JsonObject:
    """``show ntp peers``."""
    rows: list[JsonObject] = []
    for line in source.text.splitlines():
        words = line.split()
        if words and re.fullmatch(r"[\d.:a-fA-F]+", words[0]) and len(words) >= 2 \
                and "." in words[0] + ":":
            row: JsonObject = {"PeerIPAddress": words[0], "serv_peer": words[1]}
            if len(words) >= 5:
                row.update(prefer=words[2], keyid=words[3], vrf=words[4])
            rows.append(row)
    return table("peers", rows)


def ntp_peer_status(source: ShapeInput) -> JsonObject:
    """``show ntp peer-status``."""
    rows: list[JsonObject] = []
    for line in source.text.splitlines():
        m = re.match(r"([*+=-]?)(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)"
                     r"(?:\s+(\S+))?", line)
        if m is None:
            continue
        rows.append({"syncmode": m.group(1), "remote": m.group(2), "local": m.group(3),
                     "st": m.group(4), "poll": m.group(5), "reach": m.group(6),
                     "delay": m.group(7), **({"vrf": m.group(8)} if m.group(8) else {})})
    total = re.search(r"^Total peers : \d+", source.text, re.M)
    return {"totalpeers": total.group() if total else f"Total peers : {len(rows)}",
            **table("peersstatus", rows)}


_DETAILED = {"Rx Packets": ("in", "pkts"), "Rx Unicast Packets": ("in", "ucast"),
             "Rx Multicast Packets": ("in", "mcast"), "Rx Broadcast Packets": ("in", "bcast"),
             "Rx Bytes": ("in", "bytes"), "Tx Packets": ("out", "pkts"),
             "Tx Unicast Packets": ("out", "ucast"), "Tx Multicast Packets": ("out", "mcast"),
             "Tx Broadcast Packets": ("out", "bcast"), "Tx Bytes": ("out", "bytes")}


def interface_counters_detailed(source: ShapeInput) -> JsonObject:
    """``show interface counters detailed``: ``eth_inbytes`` ... for Ethernet ports,
    ``mgmt_in_bytes`` ... for mgmt0."""
    rows: list[JsonObject] = []
    for block in margin_blocks(source.text, continues=("admin state",), drop_blank=True):
        name = block[0].strip()
        row: JsonObject = {"interface": name}
        for line in block[1:]:
            key, sep, value = line.partition(":")
            if sep and key.strip() in _DETAILED and value.strip().isdigit():
                side, what = _DETAILED[key.strip()]
                field = f"mgmt_{side}_{what}" if name.startswith("mgmt") else f"eth_{side}{what}"
                row[field] = int(value.strip())
        rows.append(row)
    return table("interface", rows)


def system_resources(source: ShapeInput) -> JsonObject:
    """``show system resources``."""
    found: JsonObject = {}
    load = re.search(r"1 minute: (\S+)\s+5 minutes: (\S+)\s+15 minutes: (\S+)", source.text)
    if load:
        found.update(load_avg_1min=load[1], load_avg_5min=load[2], load_avg_15min=load[3])
    states = re.search(r"CPU states\s*:\s*(\S+)% user,\s*(\S+)% kernel,\s*(\S+)% idle",
                       source.text)
    if states:
        found.update(cpu_state_user=states[1], cpu_state_kernel=states[2],
                     cpu_state_idle=states[3])
    memory = re.search(r"Memory usage:\s*(\d+)K total,\s*(\d+)K used,\s*(\d+)K free",
                       source.text)
    if memory:
        found.update(memory_usage_total=int(memory[1]), memory_usage_used=int(memory[2]),
                     memory_usage_free=int(memory[3]))
    status = re.search(r"Current memory status: (\S+)", source.text)
    found["current_memory_status"] = status[1] if status else "OK"
    return found


def processes_cpu(source: ShapeInput) -> JsonObject:
    """``show processes cpu``: the processes, and the utilisation NX-OS's JSON sums up."""
    rows = [{"pid": int(m[1]), "runtime": int(m[2]), "invoked": int(m[3]), "usecs": int(m[4]),
             "onesec": m[5], "process": m[6]}
            for m in re.finditer(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)%\s+(\S+)$",
                                 source.text, re.M)]
    idle = re.search(r"(\S+)% idle", source.text)
    busy = round(100 - float(idle[1])) if idle else 0
    return {**table("process_cpu", rows), "fivesec_percent": busy, "fivesec_intr_percent": 0,
            "onemin_percent": busy, "fivemin_percent": busy}


def vlan_brief(source: ShapeInput) -> JsonObject:
    """``show vlan brief``: a row per VLAN, its access ports whole names joined by commas."""
    rows: list[JsonObject] = []
    for line in source.text.splitlines():
        head = re.match(r"^(\d+)\s+(\S+)\s+(\S+)\s*(.*)$", line)
        if head:
            rows.append({"vlanshowbr-vlanid": int(head.group(1)),
                         "vlanshowbr-vlanid-utf": head.group(1),
                         "vlanshowbr-vlanname": head.group(2),
                         "vlanshowbr-vlanstate": head.group(3),
                         "vlanshowbr-shutstate": "noshutdown", "_ports": head.group(4)})
        elif rows and line.startswith(" " * 20) and line.strip():
            rows[-1]["_ports"] = f"{rows[-1]['_ports']}, {line.strip()}"
    for row in rows:
        ports = [long_name(p.strip()) for p in str(row.pop("_ports")).split(",") if p.strip()]
        if ports:
            row["vlanshowplist-ifidx"] = ",".join(ports)
    return table("vlanbriefxbrief", rows)


def vrf_detail(source: ShapeInput) -> JsonObject:
    """``show vrf detail``: a row per VRF."""
    rows: list[JsonObject] = []
    for m in re.finditer(r"^VRF-Name: (\S+), VRF-ID: (\d+), State: (\w+)\n(?:.*\n)*?\s+RD: "
                         r"(\S+)", source.text, re.M):
        rows.append({"vrf_name": m.group(1), "vrf_id": int(m.group(2)),
                     "vrf_state": m.group(3), "vpnid": "unknown", "rd": m.group(4),
                     "max_routes": 0, "mid_threshold": 0})
    return table("vrf", rows)


def vrf_interface(source: ShapeInput) -> JsonObject:
    """``show vrf interface``."""
    rows: list[JsonObject] = []
    for line in source.text.splitlines()[1:]:
        parts = line.split()
        if len(parts) == 4:
            rows.append({"if_name": parts[0], "vrf_name": parts[1], "vrf_id": int(parts[2]),
                         "soo": parts[3]})
    return table("if", rows)


def module(source: ShapeInput) -> JsonObject:
    """``show module``: the module table."""
    rows: list[JsonObject] = []
    for m in re.finditer(r"^(\d+)\s+(\d+)\s+(.{37}) (\S+)\s+(\w+)", source.text, re.M):
        rows.append({"modinf": m.group(1), "ports": int(m.group(2)),
                     "modtype": m.group(3).strip(), "model": m.group(4),
                     "status": m.group(5)})
    return {"TABLE_modinfo": {"ROW_modinfo": rows[0] if len(rows) == 1 else rows}} \
        if rows else {}


def environment_fan(source: ShapeInput) -> JsonObject:
    """``show environment fan``."""
    rows: list[JsonObject] = []
    for m in re.finditer(r"^(Fan\S*)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\w+)\s*$", source.text,
                         re.M):
        if m.group(1) != "Fan":
            rows.append({"fanname": m.group(1), "fanmodel": m.group(2),
                         "fanhwver": m.group(3), "fandir": m.group(4),
                         "fanstatus": m.group(5)})
    return {"fandetails": table("faninfo", rows)}


def environment_power(source: ShapeInput) -> JsonObject:
    """``show environment power``."""
    rows: list[JsonObject] = []
    for m in re.finditer(r"^(\d+)\s+(\S+)\s+(\d+) W\s+(\d+) W\s+(\d+) W\s+(\w+)",
                         source.text, re.M):
        rows.append({"psnum": int(m.group(1)), "psmodel": m.group(2),
                     "actual_out": f"{m.group(3)} W", "actual_input": f"{m.group(4)} W",
                     "tot_capa": f"{m.group(5)} W", "ps_status": m.group(6)})
    return {"powersup": {"voltage_level": 12, **table("psinfo", rows)}}


SHAPES: dict[str, Shape] = {
    "show vlan brief": vlan_brief,
    "show vrf detail": vrf_detail,
    "show vrf interface": vrf_interface,
    "show module": module,
    "show environment fan": environment_fan,
    "show environment power": environment_power,
    "show system resources": system_resources,
    "show processes cpu": processes_cpu,
    "show version": version,
    "show hostname": hostname,
    "show clock": clock,
    "show inventory": inventory,
    "show interface": interface,
    "show interface <word>": interface,
    "show interface status": interface_status,
    "show interface brief": interface_brief,
    "show ip interface brief": ip_interface_brief,
    "show ip interface brief vrf all": ip_interface_brief,
    "show ip interface": ip_interface,
    "show ip interface vrf all": ip_interface,
    "show ipv6 interface": lambda source: {},
    "show ipv6 interface vrf all": lambda source: {},
    "show lldp neighbors": lldp_neighbors,
    "show lldp neighbors detail": lldp_neighbors_detail,
    "show ip arp": ip_arp,
    "show ip arp vrf all": ip_arp,
    "show ntp peers": ntp_peers,
    "show ntp peer-status": ntp_peer_status,
    "show interface counters detailed": interface_counters_detailed,
}


def _json_one_line(words: tuple[str, ...], source: ShapeInput) -> str | None:
    """``| json`` as NX-OS prints it: the object on one line (``| json-pretty`` indents it);
    None for a command without JSON."""
    shape = SHAPES.get(" ".join(words))
    return None if shape is None else json.dumps(shape(source)) + "\n"


#: NX-OS prints ``| json`` on one line (:func:`mgmtbench.emulator.structured.render`).
RENDERERS = {"json": _json_one_line}
