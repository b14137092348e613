"""EOS show commands made from the device's state rather than a transcript: what NAPALM's eos
getters and Ansible's arista.eos facts ask for beyond the captured outputs.

- ``show ip interface``: the interfaces with an address, from ``show interfaces`` (so it follows
  the configuration as that view does); ``show ipv6 interface``: nothing, as none has an IPv6
  address (the configuration has none; its JSON is ``{"interfaces": {}}``);
- ``show users accounts``: the ``username`` lines of the running configuration;
- ``show vrf``: ``vrf instance`` lines and the interfaces each ``vrf X`` puts in them (the rest
  in ``default``);
- ``show vlan``: VLAN 1 and the ``vlan N`` blocks, with the ports ``switchport access vlan N``
  puts in them;
- ``show snmp v2-mib chassis|location|contact``: from ``snmp-server`` lines;
- ``show arp vrf all``: ``show ip arp`` under the VRF it is of;
- ``show mac address-table``: the MAC addresses ``show ip arp`` learnt on VLAN ports;
- ``show ntp associations``: the ``ntp server`` lines, as peers in reach;
- ``show processes top once``: ``top``'s summary, its time and uptime from the device clock, its
  memory ``show version``'s total and free (in MiB, as procps' top of EOS 4.27 on prints it);
- ``show interfaces transceiver``: a row per connected Ethernet port with an optic (``show
  interfaces status``), readings picked by the port's name (the same on every run);
- ``show lldp neighbors [INTERFACE] detail``: a block per port, with what each neighbour of
  ``show lldp neighbors`` sent (chassis MAC, description and capabilities made from its name and
  port: an Arista switch, or a Cisco one for ``Gi`` ports).

BGP and ``show ip route`` with arguments are :mod:`.eos_routing`'s; ``show system environment
cooling|temperature|power`` are transcripts (laid out after a capture of EOS 4.2x's ``show
system environment all`` on another fixed switch, with this one's 4 fan trays and 2 supplies).

Worded after EOS 4.2x's documentation and the forms NAPALM and ntc-templates parse (the
transceiver table and the LLDP detail blocks after ntc-templates' captures), the rest without a
capture at hand (top's process list and figures are from memory). Their JSON is
:mod:`mgmtbench.emulator.structured.arista_eos`'.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from datetime import timedelta

from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.cli.textblocks import margin_blocks
from mgmtbench.emulator.device.config import ConfigLine

_SHORT = {"Ethernet": "Et", "Management": "Ma", "Port-Channel": "Po", "Vlan": "Vl",
          "Loopback": "Lo"}


def _top(session: Session) -> Iterator[ConfigLine]:
    """The running configuration's live top-level lines."""
    config = session.device.config
    if config is not None:
        yield from (line for line in config.root if not line.removed)


def _blocks(session: Session, head: str) -> Iterator[tuple[str, list[str]]]:
    """``(name, lines under it)`` of every top-level block whose first words are ``head``."""
    for line in _top(session):
        words = line.text.split()
        if words[:len(head.split())] == head.split() and len(words) > len(head.split()):
            yield words[len(head.split())], [c.text for c in line.live_children()]


def short(name: str) -> str:
    """``Ethernet3`` -> ``Et3``."""
    for long, abbreviation in _SHORT.items():
        if name.startswith(long):
            return abbreviation + name[len(long):]
    return name


def _show_ip_interface(session: Session, found: Match[Action]) -> Reply:
    """``show ip interface``: each interface with an address, as ``show interfaces`` shows it."""
    text = session.execute("show interfaces").text()
    out: list[str] = []
    for block in margin_blocks(text):
        address = [line for line in block if line.startswith(
            ("  Internet address is", "  Secondary address is", "  Broadcast address is"))]
        if not address:
            continue
        mtu = next((line for line in block if line.startswith("  IP MTU")), "  IP MTU 1500 bytes")
        out += [block[0], *address, "  IPv6 Interface Forwarding : None",
                "  Proxy-ARP is disabled", "  Local Proxy-ARP is disabled",
                "  Gratuitous ARP is ignored", mtu]
    return Reply("".join(f"{line}\n" for line in out))


def _show_ipv6_interface(session: Session, found: Match[Action]) -> Reply:
    """``show ipv6 interface``: nothing, as no interface has an IPv6 address (the
    configuration grammar has no ``ipv6 address``)."""
    return Reply()


def _users_accounts(session: Session, found: Match[Action]) -> Reply:
    """``show users accounts``."""
    out: list[str] = []
    for line in _top(session):
        words = line.text.split()
        if words[:1] != ["username"] or len(words) < 2:
            continue
        settings = dict(zip(words[2::2], words[3::2], strict=False))
        key = line.text.split(" ssh-key ", 1)[1] if " ssh-key " in line.text else ""
        out += [f"user: {words[1]}",
                f"       role: {settings.get('role', '<unknown>')}",
                f"       privilege level: {settings.get('privilege', '1')}",
                f"       ssh public key: {key}", ""]
    return Reply("".join(f"{line}\n" for line in out))


def vrf_members(session: Session) -> dict[str, list[str]]:
    """VRF name -> its interfaces, ``default`` first (every routed interface not in another)."""
    members: dict[str, list[str]] = {"default": []}
    for name, _ in _blocks(session, "vrf instance"):
        members.setdefault(name, [])
    for name, children in _blocks(session, "interface"):
        vrf = next((c.split()[1] for c in children if c.startswith("vrf ")), None)
        routed = any(c.startswith("ip address") for c in children)
        if vrf is not None:
            members.setdefault(vrf, []).append(name)
        elif routed:
            members["default"].append(name)
    return members


def _show_vrf(session: Session, found: Match[Action]) -> Reply:
    """``show vrf``."""
    rows = ["Maximum number of vrfs allowed: 1023",
            "   VRF           RD            Protocols       State         Interfaces",
            "------------- ------------- --------------- ---------------- ------------------"]
    for vrf, members in vrf_members(session).items():
        state = "v4:routing," if vrf == "default" else "v4:no routing,"
        rows.append(f"   {vrf:<13} {'<not set>':<13} {'ipv4,ipv6':<15} {state:<16} "
                    f"{', '.join(members)}".rstrip())
        rows.append(f"   {'':<13} {'':<13} {'':<15} {'v6:no routing':<16}".rstrip())
    return Reply("".join(f"{row}\n" for row in rows))


def _show_vlan(session: Session, found: Match[Action]) -> Reply:
    """``show vlan``."""
    names = {"1": "default"}
    names.update({vlan: next((c.split(None, 1)[1] for c in children if c.startswith("name ")),
                             f"VLAN{int(vlan):04d}")
                  for vlan, children in _blocks(session, "vlan")})
    ports: dict[str, list[str]] = {vlan: [] for vlan in names}
    for name, children in _blocks(session, "interface"):
        if not name.startswith("Ethernet") or any(c == "no switchport" for c in children):
            continue
        vlan = next((c.split()[-1] for c in children
                     if c.startswith("switchport access vlan ")), "1")
        ports.setdefault(vlan, []).append(short(name))
    rows = ["VLAN  Name                             Status    Ports",
            "----- -------------------------------- --------- -------------------------------"]
    for vlan in sorted(names, key=int):
        rows.append(f"{vlan:<5} {names[vlan]:<32} {'active':<9} {', '.join(ports[vlan])}"
                    .rstrip())
    return Reply("".join(f"{row}\n" for row in rows))


def _snmp_setting(session: Session, keyword: str) -> str:
    for line in _top(session):
        words = line.text.split(None, 2)
        if words[:2] == ["snmp-server", keyword] and len(words) == 3:
            return words[2]
    return ""


def _snmp(label: str, keyword: str) -> Action:
    def show(session: Session, found: Match[Action]) -> Reply:
        return Reply(f"{label}: {_snmp_setting(session, keyword)}\n")
    return show


def _arp_vrf_all(session: Session, found: Match[Action]) -> Reply:
    """``show arp vrf all``: the default VRF's ARP table (the only one the transcripts have)."""
    return Reply("VRF: default\n" + session.execute("show ip arp").text())


_ARP = re.compile(r"^(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+([0-9a-f.]{14})\s+Vlan(\d+), (\S+)$")


def _mac_table(session: Session, found: Match[Action]) -> Reply:
    """``show mac address-table``: the addresses ARP learnt on VLAN ports, dynamic, last moved
    when ARP last heard them."""
    rows = ["          Mac Address Table",
            "------------------------------------------------------------------", "",
            "Vlan    Mac Address       Type        Ports      Moves   Last Move",
            "----    -----------       ----        -----      -----   ---------"]
    count = 0
    for line in session.execute("show ip arp").text().splitlines():
        m = _ARP.match(line)
        if m is None:
            continue
        count += 1
        rows.append(f"{m.group(4):>4}    {m.group(3)}    DYNAMIC     {short(m.group(5)):<10} "
                    f"1       {m.group(2)} ago")
    rows.append(f"Total Mac Addresses for this criterion: {count}")
    return Reply("".join(f"{row}\n" for row in rows))


def _ntp_associations(session: Session, found: Match[Action]) -> Reply:
    """``show ntp associations``: each configured server, the preferred one selected."""
    rows = ["     remote          refid      st t when  poll reach   delay   offset  jitter",
            "=============================================================================="]
    for line in _top(session):
        words = line.text.split()
        if words[:2] != ["ntp", "server"]:
            continue
        address = next((w for w in words[2:] if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", w)), "")
        mark = "*" if "prefer" in words else "+"
        rows.append(f"{mark}{address:<15} 198.19.255.1     2 u   33   64  377    0.412    "
                    "0.021   0.008")
    return Reply("".join(f"{row}\n" for row in rows))


def _digest(*parts: str) -> int:
    """A number from ``parts``, the same on every run (values that differ per port or
    neighbour but never move)."""
    return int.from_bytes(hashlib.sha256("\0".join(parts).encode()).digest()[:8], "big")


def _spread(seed: int, low: float, high: float) -> float:
    """A value from ``low`` to ``high`` picked by ``seed``."""
    return low + (seed % 10_000) / 10_000 * (high - low)


def _memory(session: Session) -> tuple[int, int]:
    """``show version``'s total and free memory, in kB."""
    text = session.execute("show version").text()
    total = re.search(r"^Total memory:\s+(\d+)", text, re.M)
    free = re.search(r"^Free memory:\s+(\d+)", text, re.M)
    return int(total.group(1)) if total else 0, int(free.group(1)) if free else 0


def _top_uptime(seconds: int) -> str:
    """How procps' ``top`` words an uptime: ``44 days,  4:13`` (``13 min`` under an hour)."""
    days, rest = divmod(max(seconds, 0), 86400)
    hours, minutes = rest // 3600, rest // 60 % 60
    up = f"{days} day{'s' if days != 1 else ''}, " if days else ""
    return up + (f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min")


#: The agents ``show processes top once`` lists: PID, user, VIRT, RES, SHR (KiB), %CPU,
#: %MEM, TIME+, command.
_PROCESSES = (
    (1987, "root", 740260, 251604, 139264, 6.2, 3.1, "389:13.91", "Sysdb"),
    (2412, "root", 612144, 198032, 121876, 1.3, 2.4, "120:45.02", "Strata-FixedSystem"),
    (2201, "root", 556908, 163444, 114312, 0.7, 2.0, "98:12.33", "Rib"),
    (2150, "root", 498772, 121012, 98764, 0.7, 1.5, "64:03.80", "Ebra"),
    (1893, "root", 402316, 88120, 70412, 0.3, 1.1, "41:22.17", "ProcMgr-worker"),
    (2288, "root", 455020, 96436, 80044, 0.3, 1.2, "27:56.09", "Lldp"),
    (2301, "root", 470128, 104872, 83516, 0.3, 1.3, "25:31.44", "StpTopology"),
    (2176, "root", 388944, 79216, 66780, 0.0, 1.0, "19:08.61", "Fru"),
    (2350, "root", 421756, 91884, 74100, 0.0, 1.1, "12:40.27", "Ira"),
    (1, "root", 10208, 5984, 4396, 0.0, 0.1, "8:02.55", "systemd"),
)


def _processes_top(session: Session, found: Match[Action]) -> Reply:
    """``show processes top once``: ``top``'s summary (EOS 4.27 on: procps' ``%Cpu(s)`` and
    ``MiB Mem`` lines), its time and uptime from the device clock, its memory the total and
    free memory of ``show version`` (used = total - free - buff/cache), then the busiest
    agents."""
    clock = session.device.clock
    now = clock.now()
    total, free = _memory(session)
    cache = min(845_212, max(total - free, 0))
    used = max(total - free - cache, 0)

    def mib(kb: int) -> str:
        return f"{kb / 1024:8.1f}"

    rows = [f"top - {now:%H:%M:%S} up {_top_uptime(clock.uptime())},  0 users,  "
            "load average: 0.42, 0.51, 0.48",
            f"Tasks: {312:>3} total,   1 running, 311 sleeping,   0 stopped,   0 zombie",
            "%Cpu(s):  4.2 us,  0.9 sy,  0.0 ni, 94.6 id,  0.0 wa,  0.1 hi,  0.2 si,  0.0 st",
            f"MiB Mem : {mib(total)} total, {mib(free)} free, {mib(used)} used, "
            f"{mib(cache)} buff/cache",
            f"MiB Swap: {mib(0)} total, {mib(0)} free, {mib(0)} used. {mib(free + cache)} "
            "avail Mem",
            "",
            "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND"]
    for pid, user, virt, res, shr, cpu, mem, cputime, command in _PROCESSES:
        rows.append(f"{pid:>7} {user:<9} 20   0 {virt:>7} {res:>6} {shr:>6} S {cpu:>5.1f} "
                    f"{mem:>5.1f} {cputime:>9} {command}")
    return Reply("".join(f"{row}\n" for row in rows))


def _status_rows(session: Session) -> Iterator[tuple[str, str, str]]:
    """``(port, status, type)`` of each row of ``show interfaces status`` (cut at the header's
    columns: a description may have spaces)."""
    lines = session.execute("show interfaces status").text().splitlines()
    header = next((line for line in lines if line.startswith("Port ")), None)
    if header is None:
        return
    status, vlan = header.index("Status"), header.index("Vlan")
    kind = header.index("Type")
    flags = header.find("Flags")
    for line in lines[lines.index(header) + 1:]:
        if line.strip():
            yield (line.split()[0], line[status:vlan].strip(),
                   line[kind:flags if flags > kind else None].strip())


def optics_ports(session: Session) -> list[str]:
    """The connected Ethernet ports with an optic in (``show interfaces status``), short
    names."""
    return [port for port, status, kind in _status_rows(session)
            if port.startswith("Et") and status == "connected" and "BASE-" in kind
            and not kind.endswith("BASE-T")]


def _transceiver(session: Session, found: Match[Action]) -> Reply:
    """``show interfaces transceiver``: a row per optic of a connected port, its readings the
    same for the port on every run."""
    rows = ["If device is externally calibrated, only calibrated values are printed.",
            "N/A: not applicable, Tx: transmit, Rx: receive.",
            "mA: milliamperes, dBm: decibels (milliwatts).",
            "                               Bias      Optical   Optical",
            "          Temp       Voltage   Current   Tx Power  Rx Power",
            "Port      (Celsius)  (Volts)   (mA)      (dBm)     (dBm)     Last Update",
            "-----     ---------  --------  --------  --------  --------  -------------------"]
    for port in optics_ports(session):
        seed = _digest("optic", port)
        temperature = _spread(seed, 27.5, 39.5)
        voltage = _spread(seed >> 8, 3.22, 3.34)
        bias = _spread(seed >> 16, 6.2, 8.9)
        tx = _spread(seed >> 24, -2.8, -0.9)
        rx = _spread(seed >> 32, -3.9, -1.2)
        age = 1 + (seed >> 40) % 9
        rows.append(f"{port:<10} {temperature:<10.2f} {voltage:<9.2f} {bias:<9.2f} "
                    f"{tx:<9.2f} {rx:<9.2f} 0:00:{age:02d} ago")
    return Reply("".join(f"{row}\n" for row in rows))


_LLDP_ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$")
_LONG = {abbreviation: long for long, abbreviation in _SHORT.items()}
#: Neighbours that give themselves away by their port names: Cisco's (``Gi1/0/12``).
_CISCO_PORTS = {"Gi": "GigabitEthernet", "Te": "TenGigabitEthernet", "Fa": "FastEthernet"}


def long_name(name: str) -> str:
    """``Et1`` -> ``Ethernet1`` (whole names as they are)."""
    match = re.fullmatch(r"([A-Z][a-z])(\d.*)", name)
    return _LONG[match.group(1)] + match.group(2) if match and match.group(1) in _LONG else name


def _neighbor_block(session: Session, port: str, name: str, remote: str, ttl: str) -> list[str]:
    """One neighbour of ``show lldp neighbors detail``: what its LLDP frames said, made from
    its name and port (the same on every run)."""
    device = session.device
    seed = _digest("lldp", device.hostname, name)
    cisco = remote[:2] in _CISCO_PORTS
    oui = "00d7.8f" if cisco else "001c.73"
    low = f"{seed & 0xFFFFFF:06x}"
    chassis = f"{oui[:4]}.{oui[5:7]}{low[:2]}.{low[2:]}"
    discovered = str(timedelta(seconds=max(device.clock.uptime() - 77, 0)))
    if cisco:
        description = _CISCO_PORTS[remote[:2]] + remote[2:]
        system = ("Cisco IOS Software [Amsterdam], Catalyst L3 Switch Software "
                  "(CAT9K_IOSXE), Version 17.3.4, RELEASE SOFTWARE (fc3)")
        enabled, frame = "Bridge", 1518
    else:
        description = f"{device.hostname} {long_name(port)}"
        system = ("Arista Networks EOS version 4.31.2F running on an Arista Networks "
                  "DCS-7050SX3-48YC8")
        enabled, frame = "Bridge, Router", 9236
    return [f'  Neighbor {chassis}/"{remote}", age {1 + seed % 29} seconds',
            f"  Discovered {discovered} ago; Last changed {discovered} ago",
            "    - Chassis ID type: MAC address (4)",
            f"      Chassis ID     : {chassis}",
            "    - Port ID type: Interface name (5)",
            f'      Port ID     : "{remote}"',
            f"    - Time To Live: {ttl} seconds",
            f'    - Port Description: "{description}"',
            f'    - System Name: "{name}"',
            f'    - System Description: "{system}"',
            "    - System Capabilities : Bridge, Router",
            f"      Enabled Capabilities: {enabled}",
            "    - Management Address Subtype: Ethernet (6)",
            f"      Management Address        : {chassis}",
            "      Interface Number Subtype  : Unknown (1)",
            "      Interface Number          : 0",
            "      OID String                : ",
            "    - IEEE802.1 Port VLAN ID: 0",
            "    - IEEE802.1/IEEE802.3 Link Aggregation",
            "      Link Aggregation Status: Capable, Disabled (0x01)",
            "      Port ID                : 0",
            f"    - IEEE802.3 Maximum Frame Size: {frame} bytes", ""]


def _same_interface(typed: str, name: str) -> bool:
    """Whether ``typed`` (``Et1``, ``eth1``, ``Ethernet1``) names interface ``name``."""
    match = re.fullmatch(r"([A-Za-z-]+)\s*(\d[\d/.]*)", typed)
    kind = re.fullmatch(r"([A-Za-z-]+)(\d[\d/.]*)", name)
    return bool(match and kind and match.group(2) == kind.group(2)
                and kind.group(1).lower().startswith(match.group(1).lower()))


def _lldp_detail(session: Session, found: Match[Action]) -> Reply:
    """``show lldp neighbors [INTERFACE] detail``: a block per LLDP-enabled port (those of
    ``show interfaces status``) with what each neighbour of ``show lldp neighbors`` sent."""
    neighbors: dict[str, list[tuple[str, str, str]]] = {}
    for line in session.execute("show lldp neighbors").text().splitlines():
        m = _LLDP_ROW.match(line)
        if m and m.group(4) != "TTL":
            neighbors.setdefault(long_name(m.group(1)), []).append(
                (m.group(2), m.group(3), m.group(4)))
    ports = [long_name(port) for port, _, _ in _status_rows(session)
             if port.startswith(("Et", "Ma"))]
    if found.args:
        ports = [port for port in ports if _same_interface(found.args[0], port)]
        if not ports:
            line = " ".join(("show lldp neighbors", found.args[0], "detail"))
            return session._error(ParseError(ParseErrorKind.INVALID, line.index(found.args[0])),
                                  line)
    rows: list[str] = []
    for port in ports:
        found_here = neighbors.get(port, [])
        rows += [f"Interface {port} detected {len(found_here)} LLDP neighbors:", ""]
        for name, remote, ttl in found_here:
            rows += _neighbor_block(session, port, name, remote, ttl)
    return Reply("".join(f"{row}\n" for row in rows))


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show ip interface": _show_ip_interface,
    "show ipv6 interface": _show_ipv6_interface,
    "show users accounts": _users_accounts,
    "show vrf": _show_vrf,
    "show vlan": _show_vlan,
    "show snmp v2-mib chassis": _snmp("Chassis", "chassis-id"),
    "show snmp v2-mib location": _snmp("Location", "location"),
    "show snmp v2-mib contact": _snmp("Contact", "contact"),
    "show arp vrf all": _arp_vrf_all,
    "show mac address-table": _mac_table,
    "show ntp associations": _ntp_associations,
    "show processes top once": _processes_top,
    "show interfaces transceiver": _transceiver,
    "show lldp neighbors detail": _lldp_detail,
    "show lldp neighbors <word> detail": _lldp_detail,
}
