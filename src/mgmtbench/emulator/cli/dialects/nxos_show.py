"""NX-OS show commands of the switch's layer 2, VRFs and hardware, made from the device's state:
what NAPALM's nxos_ssh ``get_mac_address_table``, ``get_vlans``, ``get_network_instances``,
``get_optics`` and ``get_environment``, and Ansible's cisco.nxos facts (hardware) ask for.

- ``show mac address-table``: the addresses ARP learnt on VLAN interfaces (``show ip arp``),
  dynamic, on the access port of the VLAN the address picks (``switchport access vlan``), as
  EOS's :mod:`.eos_show` does;
- ``show vlan brief``: the VLANs of the configuration (``vlan 1,10``, their ``name``) with their
  access ports; ``show vrf``, ``show vrf detail``, ``show vrf interface``: ``default``,
  ``management`` and every ``vrf context``, with the interfaces ``vrf member`` puts in them;
- ``show interface transceiver details``: a block per port of ``show interface status`` (an
  optic in a connected port has readings the same for the port on every run; a port without one
  says ``transceiver is not present``);
- ``show environment [temperature|fan|power]``, ``show module``: the inventory's fans, power
  supplies and the one line card, temperatures the same on every run.

Worded from memory of NX-OS 9.3/10.x output and of what NAPALM's nxos_ssh and Ansible parse, not
captures. Their JSON is :mod:`mgmtbench.emulator.structured.cisco_nxos`'.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match
from mgmtbench.emulator.device.config import ConfigLine

_ARP = re.compile(r"^(\d+\.\d+\.\d+\.\d+)\s+(\S+)\s+([0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})\s+"
                  r"Vlan(\d+)")
_INVENTORY = re.compile(r'^NAME: "([^"]+)",\s+DESCR: "([^"]+)"\s*\nPID: (\S+)\s*,\s+VID: (\S+)\s*,'
                        r"\s+SN: (\S+)", re.M)


def _top(session: Session) -> Iterator[ConfigLine]:
    config = session.device.config
    if config is not None:
        yield from (line for line in config.root if not line.removed)


def _digest(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256(":".join(parts).encode()).digest()[:8], "big")


def _interfaces(session: Session) -> list[tuple[str, list[str]]]:
    """``(name, its configuration lines)`` of each ``interface`` block."""
    found = []
    for line in _top(session):
        words = line.text.split()
        if words[:1] == ["interface"] and len(words) == 2:
            found.append((words[1], [c.text.strip() for c in line.live_children()]))
    return found


def _short(name: str) -> str:
    return name.replace("Ethernet", "Eth", 1) if name.startswith("Ethernet") else name


def _access_ports(session: Session) -> dict[int, list[str]]:
    """VLAN -> its access ports (``switchport access vlan N``)."""
    ports: dict[int, list[str]] = {}
    for name, lines in _interfaces(session):
        for text in lines:
            words = text.split()
            if words[:3] == ["switchport", "access", "vlan"] and len(words) == 4 and \
                    words[3].isdigit():
                ports.setdefault(int(words[3]), []).append(name)
    return ports


def _mac_table(session: Session, found: Match[Action]) -> Reply:
    """``show mac address-table``."""
    rows = ["Legend: ",
            "        * - primary entry, G - Gateway MAC, (R) - Routed MAC, O - Overlay MAC",
            "        age - seconds since last seen,+ - primary entry using vPC Peer-Link,",
            "        (T) - True, (F) - False, C - ControlPlane MAC, ~ - vsan",
            "   VLAN     MAC Address      Type      age     Secure NTFY Ports",
            "---------+-----------------+--------+---------+------+----+------------------"]
    ports = _access_ports(session)
    for line in session.execute("show ip arp").text().splitlines():
        m = _ARP.match(line)
        if m is None:
            continue
        vlan = int(m.group(4))
        members = ports.get(vlan) or [f"Vlan{vlan}"]
        port = members[_digest("mac", m.group(3)) % len(members)]
        age = _digest("age", m.group(3)) % 300
        rows.append(f"*{vlan:>5}     {m.group(3)}   dynamic  {age:<9} F      F    "
                    f"{_short(port)}")
    return Reply("".join(f"{row}\n" for row in rows))


def vlans(session: Session) -> list[tuple[int, str]]:
    """``(id, name)`` of the configured VLANs (``vlan 1,10``, ``vlan 10`` / ``name X``)."""
    found: dict[int, str] = {}
    for line in _top(session):
        words = line.text.split()
        if words[:1] != ["vlan"] or len(words) != 2:
            continue
        for part in words[1].split(","):
            low, _, high = part.partition("-")
            if not low.isdigit() or (high and not high.isdigit()):
                continue
            for number in range(int(low), int(high or low) + 1):
                found.setdefault(number, "default" if number == 1 else f"VLAN{number:04d}")
        if words[1].isdigit():
            for child in line.live_children():
                parts = child.text.split()
                if parts[:1] == ["name"] and len(parts) == 2:
                    found[int(words[1])] = parts[1]
    return sorted(found.items())


def _vlan_brief(session: Session, found: Match[Action]) -> Reply:
    """``show vlan brief``."""
    rows = ["", "VLAN Name                             Status    Ports",
            "---- -------------------------------- --------- -------------------------------"]
    ports = _access_ports(session)
    for number, name in vlans(session):
        members = [_short(p) for p in ports.get(number, [])]
        chunks = [", ".join(members[i:i + 4]) for i in range(0, len(members), 4)] or [""]
        rows.append(f"{number:<4} {name:<32} active    {chunks[0]}".rstrip())
        rows += [f"{'':<48}{chunk}" for chunk in chunks[1:]]
    return Reply("".join(f"{row}\n" for row in rows))


def vrf_members(session: Session) -> dict[str, list[str]]:
    """VRF -> its interfaces (``default`` and ``management`` first, then every ``vrf
    context``); an interface without ``vrf member`` with an address or ``no switchport`` is in
    ``default``."""
    members: dict[str, list[str]] = {"default": [], "management": []}
    for line in _top(session):
        words = line.text.split()
        if words[:2] == ["vrf", "context"] and len(words) == 3:
            members.setdefault(words[2], [])
    for name, lines in _interfaces(session):
        vrf = next((t.split()[2] for t in lines if t.startswith("vrf member ")), None)
        routed = any(t.startswith("ip address ") or t == "no switchport" for t in lines)
        if vrf is not None:
            members.setdefault(vrf, []).append(name)
        elif routed:
            members["default"].append(name)
    return members


def _vrf_id(names: list[str], name: str) -> int:
    return names.index(name) + 1


def _show_vrf(session: Session, found: Match[Action]) -> Reply:
    """``show vrf``."""
    names = list(vrf_members(session))
    rows = ["VRF-Name                           VRF-ID State   Reason"]
    rows += [f"{name:<34} {_vrf_id(names, name):>6} Up      --" for name in names]
    return Reply("".join(f"{row}\n" for row in rows))


def _vrf_detail(session: Session, found: Match[Action]) -> Reply:
    """``show vrf detail``."""
    members = vrf_members(session)
    names = list(members)
    text = ""
    for name in names:
        number = _vrf_id(names, name)
        text += (f"VRF-Name: {name}, VRF-ID: {number}, State: Up\n"
                 f"    VPNID: unknown\n    RD: 0:0\n    Max Routes: 0  Mid-Threshold: 0\n"
                 f"    Table-ID: 0x{0x80000000 + number - 1 if number > 1 else 1:x}, "
                 f"AF: IPv6, Fwd-ID: 0x{0x80000000 + number - 1 if number > 1 else 1:x}, "
                 f"State: Up\n"
                 f"    Table-ID: 0x{number:x}, AF: IPv4, Fwd-ID: 0x{number:x}, State: Up\n\n")
    return Reply(text)


def _vrf_interface(session: Session, found: Match[Action]) -> Reply:
    """``show vrf interface``."""
    members = vrf_members(session)
    names = list(members)
    rows = ["Interface                 VRF-Name                        VRF-ID  Site-of-Origin"]
    for name in names:
        rows += [f"{port:<25} {name:<31} {_vrf_id(names, name):>6}  --"
                 for port in members[name]]
    return Reply("".join(f"{row}\n" for row in rows))


_STATUS = re.compile(r"^(\S+)\s")


def _status_rows(session: Session) -> list[tuple[str, str, str]]:
    """``(port, status, type)`` of each Ethernet row of ``show interface status``."""
    text = session.execute("show interface status").text()
    lines = text.splitlines()
    header = next((line for line in lines if line.startswith("Port ")), "")
    status, vlan, kind = header.find("Status"), header.find("Vlan"), header.find("Type")
    found = []
    for line in lines:
        if line.startswith("Eth") and status > 0:
            found.append((line.split()[0].replace("Eth", "Ethernet", 1),
                          line[status:vlan].strip(), line[kind:].strip()))
    return found


def _transceiver(session: Session, found: Match[Action]) -> Reply:
    """``show interface transceiver details``."""
    blocks = []
    serial = session.device.facts.serial
    for port, status, kind in _status_rows(session):
        if kind in ("", "--") or status == "xcvrAbsen":
            blocks.append(f"{port}\n    transceiver is not present\n")
            continue
        seed = _digest("optic", port)
        copper = "-CU" in kind
        lines = [port, "    transceiver is present",
                 f"    type is {kind}",
                 "    name is CISCO-AVAGO" if not copper else "    name is CISCO-AMPHENOL",
                 f"    part number is {'SFBR-7702SDZ' if not copper else 'NDCCGJ-C403'}",
                 "    revision is G2.3" if not copper else "    revision is B",
                 f"    serial number is AVD{seed % 10**8:08d}{serial[-1:]}",
                 f"    nominal bitrate is {'10300' if '10G' in kind else '25500'} MBit/sec",
                 "    Link length supported for 50/125um OM3 fiber is 300 m" if not copper
                 else "    Link length supported for copper is 3 m",
                 "    cisco id is 3", "    cisco extended id number is 4"]
        if copper:
            lines.append("    DOM is not supported")
        else:
            temperature = 27.5 + (seed % 1200) / 100
            voltage = 3.22 + (seed >> 12) % 12 / 100
            current = 6.2 + (seed >> 20) % 270 / 100
            tx = -2.8 + (seed >> 30) % 190 / 100
            rx = -3.9 + (seed >> 40) % 270 / 100
            lines += [
                "",
                "           SFP Detail Diagnostics Information (internal calibration)",
                "  " + "-" * 75,
                "                Current              Alarms                  Warnings",
                "                Measurement     High        Low         High          Low",
                "  " + "-" * 75,
                f"  Temperature   {temperature:.2f} C        75.00 C     -5.00 C     70.00 C"
                "        0.00 C",
                f"  Voltage        {voltage:.2f} V        3.63 V      2.97 V      3.46 V"
                "        3.13 V",
                f"  Current        {current:.2f} mA      12.00 mA     1.00 mA    11.50 mA"
                "       2.00 mA",
                f"  Tx Power      {tx:.2f} dBm       1.69 dBm   -11.30 dBm   -1.30 dBm"
                "      -7.30 dBm",
                f"  Rx Power      {rx:.2f} dBm       1.99 dBm   -13.97 dBm   -1.00 dBm"
                "      -9.91 dBm",
                "  Transmit Fault Count = 0",
                "  " + "-" * 75,
                "  Note: ++  high-alarm; +  high-warning; --  low-alarm; -  low-warning"]
        blocks.append("\n".join(lines) + "\n")
    return Reply("\n".join(blocks))


def _inventory(session: Session) -> list[tuple[str, str, str, str, str]]:
    """``(name, description, PID, VID, serial)`` of ``show inventory``."""
    text = session.execute("show inventory").text()
    return [m.groups() for m in _INVENTORY.finditer(text)]  # type: ignore[misc]


def _fans(session: Session) -> list[str]:
    lines = ["Fan:", "-" * 75,
             "Fan             Model                Hw     Direction       Status",
             "-" * 75]
    for name, _, pid, _, _ in _inventory(session):
        if name.startswith("Fan "):
            lines.append(f"{'Fan' + name.split()[1]:<16}{pid:<21}--     front-to-back   Ok")
    for number in (1, 2):
        lines.append(f"{f'Fan_in_PS{number}':<16}{'--':<21}--     front-to-back   Ok")
    lines += ["Fan Zone Speed: Zone 1: 0x5f", "Fan Air Filter : NotSupported"]
    return lines


def _power(session: Session) -> list[str]:
    supplies = [(name, pid) for name, _, pid, _, _ in _inventory(session)
                if name.startswith("Power Supply ")]
    lines = ["Power Supply:", "Voltage: 12 Volts", "Power                              Actual"
             "        Actual        Total",
             "Supply    Model                    Output        Input      Capacity    Status",
             "                                   (Watts )      (Watts )     (Watts )",
             "-------  -------------------  -----------  -----------  -----------  ----------"]
    for name, pid in supplies:
        number = name.split()[-1]
        out = 80 + _digest("psu", number) % 40
        lines.append(f"{number:<8} {pid:<20} {out:>7} W    {out + 9:>7} W    {500:>7} W    Ok")
    total = 500 * len(supplies)
    lines += ["", "Power Usage Summary:", "--------------------",
              "Power Supply redundancy mode (configured)                PS-Redundant",
              "Power Supply redundancy mode (operational)               PS-Redundant", "",
              f"Total Power Capacity (based on configured mode)          {total // 2:>7}.00 W",
              f"Total Power of all Inputs (cumulative)                   {total:>7}.00 W"]
    return lines


#: ``(module, sensor, major, minor)`` of the temperature table.
SENSORS = (("1", "FRONT", 80, 70), ("1", "BACK", 70, 42), ("1", "CPU", 90, 80),
           ("1", "Homewood", 110, 90))


def _temperature(session: Session) -> list[str]:
    lines = ["Temperature:", "-" * 75,
             "Module   Sensor        MajorThresh   MinorThres   CurTemp     Status",
             "                       (Celsius)     (Celsius)    (Celsius)", "-" * 75]
    for module, sensor, major, minor in SENSORS:
        current = 28 + _digest("temp", session.device.facts.serial, sensor) % 20
        lines.append(f"{module:<9}{sensor:<14}{major:<14}{minor:<13}{current:<12}Ok")
    return lines


def _environment(part: str) -> Action:
    def show(session: Session, found: Match[Action]) -> Reply:
        """``show environment [fan|power|temperature]``."""
        made = {"fan": _fans, "power": _power, "temperature": _temperature}
        names = [part] if part else ["power", "fan", "temperature"]
        text = "\n".join("\n".join(made[name](session)) + "\n" for name in names)
        return Reply(text)
    return show


def _module(session: Session, found: Match[Action]) -> Reply:
    """``show module``: the one supervisor/line card of a fixed switch."""
    card = next(((name, descr, pid, vid, sn) for name, descr, pid, vid, sn
                 in _inventory(session) if name.startswith("Slot ")), None)
    descr, pid, sn = (card[1], card[2], card[4]) if card else ("Supervisor Module", "N9K",
                                                                session.device.facts.serial)
    ports = sum(int(n) for n in re.findall(r"(\d+)x", descr)) or 54
    version = re.search(r"NXOS: version (\S+)", session.execute("show version").text())
    software = version.group(1) if version else "10.2(5)"
    mac = session.device.facts.mac if hasattr(session.device.facts, "mac") else "00fe.c800.0000"
    rows = ["Mod Ports             Module-Type                      Model           Status",
            "--- ----- ------------------------------------- --------------------- ---------",
            f"1    {ports:<4} {descr[:37]:<37} {pid:<21} active *", "",
            "Mod  Sw                       Hw    Slot",
            "---  ----------------------- ------ ----",
            f"1    {software:<23} 1.1    NA", "",
            "Mod  MAC-Address(es)                         Serial-Num",
            "---  --------------------------------------  ----------",
            f"1    {mac} to {mac}  {sn}", "",
            "Mod  Online Diag Status", "---  ------------------", "1    Pass", "",
            "* this terminal session"]
    return Reply("".join(f"{row}\n" for row in rows))


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show mac address-table": _mac_table,
    "show vlan brief": _vlan_brief,
    "show vrf": _show_vrf,
    "show vrf detail": _vrf_detail,
    "show vrf interface": _vrf_interface,
    "show interface transceiver details": _transceiver,
    "show environment": _environment(""),
    "show environment fan": _environment("fan"),
    "show environment power": _environment("power"),
    "show environment temperature": _environment("temperature"),
    "show module": _module,
}
