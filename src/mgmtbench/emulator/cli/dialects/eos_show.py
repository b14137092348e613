"""EOS show commands made from the device's state rather than a transcript: what NAPALM's eos
getters and Ansible's arista.eos facts ask for beyond the captured outputs.

- ``show ip interface``: the interfaces with an address, from ``show interfaces`` (so it follows
  the configuration as that view does); ``show ipv6 interface``: EOS's refusal when none has an
  IPv6 address (the configuration has none);
- ``show users accounts``: the ``username`` lines of the running configuration;
- ``show vrf``: ``vrf instance`` lines and the interfaces each ``vrf X`` puts in them (the rest
  in ``default``);
- ``show vlan``: VLAN 1 and the ``vlan N`` blocks, with the ports ``switchport access vlan N``
  puts in them;
- ``show snmp v2-mib chassis|location|contact``: from ``snmp-server`` lines;
- ``show arp vrf all``: ``show ip arp`` under the VRF it is of;
- ``show mac address-table``: the MAC addresses ``show ip arp`` learnt on VLAN ports;
- ``show ntp associations``: the ``ntp server`` lines, as peers in reach.

Worded after EOS 4.2x's documentation and the forms NAPALM and ntc-templates parse, without a
capture at hand. Their JSON is :mod:`mgmtbench.emulator.structured.arista_eos`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match
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
    for block in _interface_blocks(text):
        address = [line for line in block if line.startswith(
            ("  Internet address is", "  Secondary address is", "  Broadcast address is"))]
        if not address:
            continue
        mtu = next((line for line in block if line.startswith("  IP MTU")), "  IP MTU 1500 bytes")
        out += [block[0], *address, "  IPv6 Interface Forwarding : None",
                "  Proxy-ARP is disabled", "  Local Proxy-ARP is disabled",
                "  Gratuitous ARP is ignored", mtu]
    return Reply("".join(f"{line}\n" for line in out))


def _interface_blocks(text: str) -> Iterator[list[str]]:
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


def _no_ipv6(session: Session, found: Match[Action]) -> Reply:
    return Reply("% No IPv6 configured interfaces\n", ok=False)


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


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show ip interface": _show_ip_interface,
    "show ipv6 interface": _no_ipv6,
    "show users accounts": _users_accounts,
    "show vrf": _show_vrf,
    "show vlan": _show_vlan,
    "show snmp v2-mib chassis": _snmp("Chassis", "chassis-id"),
    "show snmp v2-mib location": _snmp("Location", "location"),
    "show snmp v2-mib contact": _snmp("Contact", "contact"),
    "show arp vrf all": _arp_vrf_all,
    "show mac address-table": _mac_table,
    "show ntp associations": _ntp_associations,
}
