"""NX-OS's own commands: show commands made from the device's state where no transcript was
captured, and the checkpoint and rollback commands NAPALM's nxos drivers build their
configuration workflow on.

Show commands (what NAPALM's nxos and nxos_ssh getters, Netmiko's and pyATS' parsers ask for):

- ``show hostname``, ``show hosts`` (the ``ip domain-name`` / ``ip name-server`` lines);
- ``show ip interface [vrf all]``: the interfaces with an address in ``show interface`` (so it
  follows the configuration as that view does), under the VRF ``vrf member`` puts them in;
  ``show ip interface brief vrf all``: the transcript's default VRF and the other VRFs';
  ``show ipv6 interface [vrf all]``: the VRF headers alone (no IPv6 is configured);
- ``show ip arp vrf all``: the transcript's table, for all contexts;
- ``show lldp neighbors detail``: the transcript's neighbors, each with the chassis MAC ARP
  learnt on its port (else one made from its name) and the address it has there;
- ``show ntp peers``, ``show ntp peer-status``: the ``ntp server`` lines (the preferred one
  selected), in place of the invalid-command answer whose ``^`` and ``%`` NAPALM's nxos_ssh
  took for servers;
- ``show interface counters detailed``: ``show interface``'s RX/TX counters, the ones not zero;
- ``show startup-config``: the saved configuration, which ``copy running-config
  startup-config`` now writes;
- ``show system resources`` (memory from ``show version``'s), ``show processes cpu``, ``show
  license host-id`` (the serial): what Ansible's cisco.nxos facts read.

Configuration files, on ``bootflash:`` (what NAPALM's commit, compare and rollback use):

- ``checkpoint file NAME``: the running configuration into a file; ``show file NAME``;
  ``delete NAME`` (no question: NAPALM sets ``terminal dont-ask`` first);
- ``rollback running-config file NAME``: the file becomes the running configuration, the
  difference typed as ``configure replace`` types it;
- ``show diff rollback-patch file A file B``: the commands that would turn A into B.

Routing tables, BGP, ping and traceroute: :mod:`.nxos_routing`; the MAC table, VLANs, VRFs,
transceivers, environment and modules: :mod:`.nxos_show`.

Worded after NX-OS 9.3/10.x documentation and the forms NAPALM, ntc-templates and Genie parse,
from memory, not captures: the column layouts of the NTP and host tables, the LLDP detail
fields, the rollback progress lines and the counter labels. Their JSON is
:mod:`mgmtbench.emulator.structured.cisco_nxos`'.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from mgmtbench.emulator.cli.configdiff import parse, replace_commands
from mgmtbench.emulator.cli.dialects import nxos_routing, nxos_show
from mgmtbench.emulator.cli.engine import Action, Dialect, Reply, Session
from mgmtbench.emulator.cli.fileops import (
    apply_config,
    locate,
    read,
    running_text,
    same_setting,
    save_startup,
    write_file,
)
from mgmtbench.emulator.cli.grammar import Match
from mgmtbench.emulator.cli.textblocks import margin_blocks
from mgmtbench.emulator.device.config import ConfigLine

_HEAD = re.compile(r"^(\S+) is (up|down)(?: \(([^)]*)\))?(?:, line protocol is (\w+))?")


def _top(session: Session) -> Iterator[ConfigLine]:
    config = session.device.config
    if config is not None:
        yield from (line for line in config.root if not line.removed)


def _setting(session: Session, *head: str) -> list[list[str]]:
    """The words after ``head`` of every top-level line that starts with it."""
    return [line.text.split()[len(head):] for line in _top(session)
            if line.text.split()[:len(head)] == list(head)]


def _vrfs(session: Session) -> dict[str, str]:
    """Interface name (lower case) -> the VRF ``vrf member`` puts it in."""
    found: dict[str, str] = {}
    for line in _top(session):
        words = line.text.split()
        if words[:1] == ["interface"] and len(words) == 2:
            for child in line.live_children():
                if child.text.startswith("vrf member "):
                    found[words[1].lower()] = child.text.split()[2]
    return found


def _show_hostname(session: Session, found: Match[Action]) -> Reply:
    """``show hostname``."""
    return Reply(f"{session.device.hostname} \n")


def _memory_kb(session: Session) -> int:
    """The memory ``show version`` says the supervisor has (kB)."""
    found = re.search(r"with (\d+) kB of memory", session.execute("show version").text())
    return int(found.group(1)) if found else 16_000_000


def _system_resources(session: Session, found: Match[Action]) -> Reply:
    """``show system resources``: load, processes, CPU states and memory (a quarter used)."""
    total = _memory_kb(session)
    used = total // 4
    return Reply(
        "Load average:   1 minute: 0.39   5 minutes: 0.45   15 minutes: 0.44\n"
        "Processes:   701 total, 1 running\n"
        "CPU states  :   3.02% user,   1.01% kernel,   95.97% idle\n"
        f"Memory usage:   {total}K total,   {used}K used,   {total - used}K free\n"
        "Kernel vmalloc:   0K total,   0K free\n"
        "Kernel buffers:   107644K Used\n"
        "Kernel cached :   3878028K Used\n\n"
        "Current memory status: OK\n")


def _processes_cpu(session: Session, found: Match[Action]) -> Reply:
    """``show processes cpu``: the utilisation line and the busiest processes."""
    return Reply(
        "\nPID    Runtime(ms)  Invoked   uSecs  1Sec    Process\n"
        "-----  -----------  --------  -----  ------  -----------\n"
        "    1        21304    603714     35   0.00%  init\n"
        "27124      1043811  13395021     77   0.50%  netstack\n"
        "27318       530193   6731946     78   0.50%  pfm\n"
        "CPU util  :    3.02% user,    1.01% kernel,   95.97% idle\n"
        "Please note that only processes from the requested vdc are shown above\n")


def _license_host_id(session: Session, found: Match[Action]) -> Reply:
    """``show license host-id``: the chassis serial."""
    return Reply(f"License hostid: VDH={session.device.facts.serial}\n")


def _show_hosts(session: Session, found: Match[Action]) -> Reply:
    """``show hosts``: the default domain and the name servers."""
    domain = next((w[0] for w in _setting(session, "ip", "domain-name") if w), "")
    servers = [w for w in _setting(session, "ip", "name-server") if w]
    lines = ["DNS lookup enabled" if _setting(session, "ip", "domain-lookup")
             else "DNS lookup disabled"]
    if domain:
        lines.append(f"Default domain for vrf:default is {domain}")
    lines += ["Name/address lookup uses domain service",
              f"Name servers are {' '.join(s[0] for s in servers) or '255.255.255.255'}", "",
              f"{'Vrf':<11} {'Use-vrf':<11} {'Token':<10} Config"]
    if domain:
        lines.append(f"{'default':<11} {'default':<11} {'domain':<10} {domain}")
    for words in servers:
        vrf = words[words.index("use-vrf") + 1] if "use-vrf" in words[:-1] else "default"
        lines.append(f"{'default':<11} {vrf:<11} {'ns':<10} {words[0]}")
    lines += ["", f"{'Host':<25} Address"]
    return Reply("".join(f"{line}\n" for line in lines))


# --- IP interfaces ------------------------------------------------------------------------------

def _addressed(session: Session) -> list[tuple[str, str, str, str, str]]:
    """``(name, address/length, state, link, admin)`` of each interface with an address in
    ``show interface``, in its order."""
    text = session.execute("show interface").text()
    found: list[tuple[str, str, str, str, str]] = []
    for block in margin_blocks(text, continues=("admin state",)):
        head = _HEAD.match(block[0])
        address = next((line.split()[-1] for line in block
                        if line.strip().startswith("Internet Address is ")), None)
        if head is None or address is None:
            continue
        name, state, reason, protocol = head.groups()
        admin_line = next((line for line in block[1:2] if line.startswith("admin state")), "")
        admin = "down" if ("admin" in (reason or "").lower() or "is down" in admin_line) \
            else "up"
        link = state
        proto = protocol or state
        found.append((name, address, proto, link, admin))
    return found


def _by_vrf(session: Session, all_vrfs: bool) -> dict[str, list[tuple[str, str, str, str, str]]]:
    members = _vrfs(session)
    grouped: dict[str, list[tuple[str, str, str, str, str]]] = {"default": []}
    for entry in _addressed(session):
        vrf = members.get(entry[0].lower(), "default")
        if all_vrfs or vrf == "default":
            grouped.setdefault(vrf, []).append(entry)
    return grouped


_VRF_IDS = {"default": 1, "management": 2}


def _vrf_id(vrf: str, order: list[str]) -> int:
    return _VRF_IDS.get(vrf, 2 + order.index(vrf))


def _network(address: str) -> tuple[str, str, int]:
    ip, _, length = address.partition("/")
    bits = int(length or 32)
    value = int.from_bytes(bytes(int(p) for p in ip.split(".")), "big")
    value &= (0xFFFFFFFF << (32 - bits)) & 0xFFFFFFFF
    return ip, ".".join(str(b) for b in value.to_bytes(4, "big")), bits


def _ip_interface(all_vrfs: bool) -> Action:
    def show(session: Session, found: Match[Action]) -> Reply:
        """``show ip interface [vrf all]``."""
        grouped = _by_vrf(session, all_vrfs)
        order = list(grouped)
        out: list[str] = []
        for vrf, entries in grouped.items():
            out.append(f'IP Interface Status for VRF "{vrf}"({_vrf_id(vrf, order)})')
            for index, (name, address, proto, link, admin) in enumerate(entries):
                ip, subnet, bits = _network(address)
                out += [f"{name}, Interface status: protocol-{proto}/link-{link}/admin-{admin}, "
                        f"iod: {5 + index},",
                        f"  IP address: {ip}, IP subnet: {subnet}/{bits} route-preference: 0, "
                        "tag: 0 ",
                        "  IP broadcast address: 255.255.255.255",
                        "  IP multicast groups locally joined: none",
                        "  IP MTU: 1500 bytes (using link MTU)",
                        "  IP primary address route-preference: 0, tag: 0",
                        "  IP proxy ARP : disabled",
                        "  IP Local Proxy ARP : disabled",
                        "  IP multicast routing: disabled",
                        "  IP icmp redirects: disabled",
                        "  IP directed-broadcast: disabled ",
                        "  IP Forwarding: disabled ",
                        "  IP icmp unreachables (except port): disabled",
                        "  IP icmp port-unreachable: enabled",
                        "  IP unicast reverse path forwarding: none",
                        "  IP load sharing: none ",
                        "  IP interface statistics last reset: never", ""]
        return Reply("".join(f"{line}\n" for line in out))
    return show


def _ip_brief_vrf_all(session: Session, found: Match[Action]) -> Reply:
    """``show ip interface brief vrf all``: the default VRF's table (the transcript), then a
    table per other VRF."""
    text = session.execute("show ip interface brief").text()
    grouped = _by_vrf(session, True)
    order = list(grouped)
    for vrf, entries in grouped.items():
        if vrf == "default":
            continue
        text += (f'\nIP Interface Status for VRF "{vrf}"({_vrf_id(vrf, order)})\n'
                 f"{'Interface':<20} {'IP Address':<15} Interface Status\n")
        for name, address, proto, link, admin in entries:
            text += (f"{name:<20} {address.partition('/')[0]:<15} "
                     f"protocol-{proto}/link-{link}/admin-{admin}\n")
    return Reply(text)


def _ipv6_interface(all_vrfs: bool) -> Action:
    def show(session: Session, found: Match[Action]) -> Reply:
        """``show ipv6 interface [vrf all]``: no interface has IPv6, only the headers."""
        vrfs = ["default", *(v for v in dict.fromkeys(_vrfs(session).values())
                             if v != "default")] if all_vrfs else ["default"]
        return Reply("".join(f'IPv6 Interface Status for VRF "{vrf}"({_vrf_id(vrf, vrfs)})\n'
                             for vrf in vrfs))
    return show


def _arp_vrf_all(session: Session, found: Match[Action]) -> Reply:
    """``show ip arp vrf all``: the ARP table (of the default VRF: the only one with entries)."""
    text = session.execute("show ip arp").text()
    return Reply(text.replace("IP ARP Table for context default", "IP ARP Table for all contexts"))


# --- LLDP ---------------------------------------------------------------------------------------

def _made_mac(name: str) -> str:
    digest = hashlib.sha256(name.encode()).hexdigest()
    return f"00fe.c8{digest[:2]}.{digest[2:6]}"


def _lldp_detail(session: Session, found: Match[Action]) -> Reply:
    """``show lldp neighbors detail``."""
    table = session.execute("show lldp neighbors").text()
    arp = session.execute("show ip arp").text()
    learnt: dict[str, tuple[str, str]] = {}
    for line in arp.splitlines():
        m = re.match(r"(\d+\.\d+\.\d+\.\d+)\s+\S+\s+([0-9a-f.]{14})\s+(\S+)", line)
        if m and m.group(3) not in learnt:
            learnt[m.group(3)] = (m.group(2), m.group(1))
    lines = table.splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith("Device ID")), None)
    out = lines[:header + 1] if header is not None else []
    out.append("")
    count = 0
    for line in lines[(header or 0) + 1:]:
        words = line.split()
        if header is None or len(words) < 4 or line.startswith("Total"):
            continue
        device, local, hold, *capability, port = words
        whole = re.sub(r"^Eth(?=\d)", "Ethernet", local)
        mac, address = learnt.get(whole, (_made_mac(device), "not advertised"))
        capabilities = ", ".join(capability[0]) if capability else "not advertised"
        count += 1
        out += [f"Chassis id: {mac}", f"Port id: {port}", f"Local Port id: {local}",
                f"Port Description: {session.device.hostname} {whole}",
                f"System Name: {device}",
                "System Description: Cisco Nexus Operating System (NX-OS) Software",
                f"Time remaining: {max(0, int(hold) - 17)} seconds",
                f"System Capabilities: {capabilities}", f"Enabled Capabilities: {capabilities}",
                f"Management Address: {address}", "Management Address IPV6: not advertised",
                "Vlan ID: not advertised", "", ""]
    out.append(f"Total entries displayed: {count}")
    return Reply("".join(f"{line}\n" for line in out))


# --- NTP ----------------------------------------------------------------------------------------

def _ntp_servers(session: Session) -> list[tuple[str, bool, str]]:
    """``(address, preferred, vrf)`` of each ``ntp server`` line."""
    found = []
    for words in _setting(session, "ntp", "server"):
        if not words:
            continue
        vrf = words[words.index("use-vrf") + 1] if "use-vrf" in words[:-1] else "default"
        found.append((words[0], "prefer" in words, vrf))
    return found


def _ntp_peers(session: Session, found: Match[Action]) -> Reply:
    """``show ntp peers``."""
    rule = "-" * 74
    out = [rule, f"  {'Peer IP Address':<30}{'Serv/Peer':<10}{'Prefer':<7}{'KeyId':<8}Vrf", rule]
    for address, prefer, vrf in _ntp_servers(session):
        out.append(f"  {address:<30}{'Server':<10}{'yes' if prefer else 'no':<7}{'None':<8}{vrf}")
    return Reply("".join(f"{line}\n" for line in out))


def _ntp_peer_status(session: Session, found: Match[Action]) -> Reply:
    """``show ntp peer-status``: the preferred (else first) server selected for sync."""
    servers = _ntp_servers(session)
    chosen = next((s for s in servers if s[1]), servers[0] if servers else None)
    out = [f"Total peers : {len(servers)}",
           "* - selected for sync, + -  peer mode(active), ",
           "- - peer mode(passive), = - polled in client mode ",
           f"    {'remote':<39}{'local':<40}{'st':<5}{'poll':<7}{'reach':<6}{'delay':<8}vrf",
           "-" * 119]
    for server in servers:
        mark = "*" if server is chosen else "="
        out.append(f"{mark}{server[0]:<42}{'0.0.0.0':<40}{'2':<5}{'64':<7}{'377':<6}"
                   f"{'0.00041':<8}{server[2]}")
    return Reply("".join(f"{line}\n" for line in out))


# --- counters -----------------------------------------------------------------------------------

def _counters_detailed(session: Session, found: Match[Action]) -> Reply:
    """``show interface counters detailed``: each interface's RX/TX counters that are not
    zero (``show interface``'s, so both move together)."""
    text = session.execute("show interface").text()
    out: list[str] = []
    for block in margin_blocks(text, continues=("admin state",)):
        head = _HEAD.match(block[0])
        if head is None or not head.group(1).startswith(("Ethernet", "mgmt", "port-channel")):
            continue
        counts: dict[str, int] = {}
        side = ""
        for raw in block[1:]:
            line = raw.strip()
            if line in ("RX", "Rx", "TX", "Tx"):
                side = line[:2].capitalize()
                continue
            if not side:
                continue
            for number, what in re.findall(r"(\d+) (unicast|multicast|broadcast) packets", line):
                counts.setdefault(f"{side} {what.capitalize()} Packets", int(number))
            if m := re.search(r"(\d+) (?:input|output) packets", line):
                counts.setdefault(f"{side} Packets", int(m.group(1)))
            if m := re.search(r"(\d+) bytes", line):
                counts.setdefault(f"{side} Bytes", int(m.group(1)))
        order = [f"{side} {what}" for side in ("Rx", "Tx") for what in
                 ("Packets", "Unicast Packets", "Multicast Packets", "Broadcast Packets",
                  "Bytes")]
        shown = [(label, counts[label]) for label in order if counts.get(label)]
        out.append(head.group(1))
        out += [f"  {label + ':':<33}{value:>20}" for label, value in shown]
        out.append("")
    return Reply("".join(f"{line}\n" for line in out))


# --- configuration files ------------------------------------------------------------------------

def _show_startup(session: Session, found: Match[Action]) -> Reply:
    """``show startup-config``."""
    return Reply(session.device.saved.startup)


def _save(session: Session, found: Match[Action]) -> Reply:
    """``copy running-config startup-config``: the running configuration becomes the startup
    one (what NAPALM's commit and Netmiko's ``save_config`` send)."""
    save_startup(session.device)
    return Reply(session.device.platform.style.save_reply)


def _file_error(word: str) -> Reply:
    return Reply(f"No such file or directory\n% {word}: No such file or directory\n", ok=False)


def _read(session: Session, word: str) -> str | None:
    try:
        return read(session.device, locate(session.device.files, word))
    except OSError:
        return None


def _checkpoint(session: Session, found: Match[Action]) -> Reply:
    """``checkpoint file NAME``: the running configuration into the file."""
    word = found.args[0]
    try:
        where = locate(session.device.files, word)
        write_file(session.device.files, where.parts, running_text(session.device))
    except OSError as exc:
        return Reply(f"% {word}: {exc.strerror or exc}\n", ok=False)
    return Reply("Done\n")


def _show_file(session: Session, found: Match[Action]) -> Reply:
    """``show file NAME``."""
    text = _read(session, found.args[0])
    return _file_error(found.args[0]) if text is None else Reply(text)


def _show_file_md5(session: Session, found: Match[Action]) -> Reply:
    """``show file NAME md5sum``: the file's MD5 digest alone (what Netmiko's NX-OS file
    transfer compares after an SCP copy)."""
    files = session.device.files
    try:
        return Reply(files.md5(files.resolve(found.args[0])) + "\n")
    except OSError:
        return _file_error(found.args[0])


def _delete(session: Session, found: Match[Action]) -> Reply:
    """``delete NAME [no-prompt]``: no question asked (NAPALM sets ``terminal dont-ask``)."""
    word = found.args[0].split()[0]
    files = session.device.files
    try:
        files.remove(files.resolve(word))
    except OSError:
        return _file_error(word)
    return Reply()


def _patch(session: Session, old: str, new: str) -> list[str]:
    indent = " " * session.device.platform.style.config_indent
    return [indent * command.depth + command.text
            for command in replace_commands(parse(old), parse(new), same_setting)]


def _rollback(session: Session, found: Match[Action]) -> Reply:
    """``rollback running-config file NAME``."""
    text = _read(session, found.args[0])
    if text is None:
        return _file_error(found.args[0])
    plan = replace_commands(parse(running_text(session.device)), parse(text), same_setting)
    errors = apply_config(session, plan)
    steps = ("Note: Applying config parallelly may fail Rollback verification\n"
             "Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n")
    if errors:
        return Reply(steps + "".join(errors) + "Rollback failed.\n", ok=False)
    return Reply(steps + "Generating Running-config for verification\n"
                 "Generating Patch for verification\nVerification is Successful.\n\n"
                 "Rollback completed successfully.\n\n")


def _diff_patch(session: Session, found: Match[Action]) -> Reply:
    """``show diff rollback-patch file A file B``: what turns A into B."""
    old, new = _read(session, found.args[0]), _read(session, found.args[1])
    if old is None or new is None:
        return _file_error(found.args[0] if old is None else found.args[1])
    lines = _patch(session, old, new)
    body = "".join(f"{line}\n" for line in lines) if lines else "Rollback Patch is Empty\n"
    return Reply("Collecting Running-Config\n#Generating Rollback Patch\n!!\n" + body)


#: Exec commands (user and privileged).
EXEC: dict[str, Action] = {
    "show hostname": _show_hostname,
    "show hosts": _show_hosts,
    "show system resources": _system_resources,
    "show processes cpu": _processes_cpu,
    "show license host-id": _license_host_id,
    "show ip interface": _ip_interface(False),
    "show ip interface vrf all": _ip_interface(True),
    "show ip interface brief vrf all": _ip_brief_vrf_all,
    "show ipv6 interface": _ipv6_interface(False),
    "show ipv6 interface vrf all": _ipv6_interface(True),
    "show ip arp vrf all": _arp_vrf_all,
    "show lldp neighbors detail": _lldp_detail,
    "show ntp peers": _ntp_peers,
    "show ntp peer-status": _ntp_peer_status,
    "show interface counters detailed": _counters_detailed,
    "show startup-config": _show_startup,
    "show file <word>": _show_file,
    "show file <word> md5sum": _show_file_md5,
    "show diff rollback-patch file <word> file <word>": _diff_patch,
}
#: Privileged exec: the configuration files.
PRIVILEGED: dict[str, Action] = {
    "checkpoint file <word>": _checkpoint,
    "rollback running-config file <word>": _rollback,
    "delete <line>": _delete,
    "copy running-config startup-config": _save,
}
DIALECT = Dialect(exec={**EXEC, **nxos_routing.EXEC, **nxos_show.EXEC}, privileged=PRIVILEGED)
