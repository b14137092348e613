"""Configuration mode through each platform's grammar (:mod:`mgmtbench.emulator.cli.configgrammar`):
lines the device does not know are refused with its own caret error and never stored, `no ...`
removes what it names, and the same rules hold in the SSH shell and in HTTPS POST /admin/config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.configgrammar import config_grammar
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.testing.shell import configure

PLATFORMS = ("cisco_ios", "cisco_asa")
TRANSPORTS = ("shell", "https")
# An interface each platform has, another to add, and an address for it.
IFACE = {"cisco_ios": "GigabitEthernet0/0/3", "cisco_asa": "GigabitEthernet1/7"}
SHORT = {"cisco_ios": "gi0/0/3", "cisco_asa": "gi1/7"}
# A configured NTP server, as `no ntp server ...` names it on each platform.
NTP = {"cisco_ios": "vrf Mgmt-intf 198.18.0.124", "cisco_asa": "198.18.0.124"}
# The device's refusal of a line, after a caret line: IOS's and the ASA's wording.
INVALID = {"cisco_ios": "% Invalid input detected at '^' marker.\n\n",
           "cisco_asa": "ERROR: % Invalid input detected at '^' marker.\n"}


@dataclass
class Configurer:
    """Configuration lines over one transport of a fresh device, and its running-config."""

    emu: EmulatorThread
    transport: str

    @property
    def platform(self) -> str:
        return self.emu.endpoints[0].device.platform.name

    def configure(self, lines: list[str]) -> str:
        """What the device printed for ``lines`` (run in configuration mode, then `end`)."""
        printed = configure(self.emu, self.transport, lines)
        return printed if self.transport == "https" else printed.replace("\r\n", "\n")

    def show(self, command: str) -> str:
        endpoint = self.emu.endpoints[0]
        return CliSession(endpoint.device, mode=Mode.PRIV).execute(command).text()


@pytest.fixture(params=[(p, t) for p in PLATFORMS for t in TRANSPORTS],
                ids=[f"{p}-{t}" for p in PLATFORMS for t in TRANSPORTS])
def device(request: pytest.FixtureRequest,
           fresh_emulator: Callable[..., EmulatorThread]) -> Configurer:
    platform, transport = request.param
    return Configurer(fresh_emulator(platform), transport)


def caret_error(platform: str, prompt: str, position: int) -> str:
    return " " * (len(prompt) + position) + "^\n" + INVALID[platform]


def test_unknown_lines_are_refused_with_the_caret_and_not_stored(device: Configurer) -> None:
    before = device.show("show running-config")
    printed = device.configure(["zzz bar baz", "logging frobnicate 1"])
    prompt = CliSession(device.emu.endpoints[0].device, mode=Mode.CONFIG).prompt
    # "logging" is a command, "frobnicate" is not: the caret goes under its first character.
    assert printed == caret_error(device.platform, prompt, 0) + caret_error(
        device.platform, prompt, len("logging "))
    after = device.show("show running-config")
    assert "zzz" not in after
    assert "frobnicate" not in after
    assert after == before


def test_a_bad_argument_is_refused_where_it_is_and_changes_nothing(device: Configurer) -> None:
    printed = device.configure([f"interface {SHORT[device.platform]}",
                                "ip address 10.1.2 255.255.255.0"])
    prompt = CliSession(device.emu.endpoints[0].device, mode=Mode.CONFIG).prompt
    assert printed == caret_error(device.platform, prompt.replace("(config)", "(config-if)"),
                                  len("ip address "))
    assert "10.1.2 " not in device.show(f"show running-config interface {IFACE[device.platform]}")


def test_abbreviations_store_full_words_and_negation_removes(device: Configurer) -> None:
    name = IFACE[device.platform]
    printed = device.configure([
        f"int {SHORT[device.platform]}", "desc uplink to lab", "no shut",
        "ip add 10.7.7.1 255.255.255.0", "exit",
        "ntp server 10.9.9.9", f"no ntp server {NTP[device.platform]}"])
    assert printed == ""
    block = device.show(f"show running-config interface {name}")
    assert f"interface {name}\n description uplink to lab\n" in block
    assert " ip address 10.7.7.1 255.255.255.0\n" in block
    assert " shutdown\n" not in block
    config = device.show("show running-config")
    assert "ntp server 10.9.9.9\n" in config
    assert "198.18.0.124" not in config
    assert "ntp server" in config.replace("ntp server 10.9.9.9", "")  # the other server stays
    device.configure([f"interface {name}", "no ip address", "no description", "shutdown"])
    block = device.show(f"show running-config interface {name}")
    assert " no ip address\n" in block  # as the device keeps it, not beside an address
    assert "10.7.7.1" not in block
    assert "description" not in block
    assert " shutdown\n" in block


def test_hostname_changes_the_prompt_and_the_configuration(device: Configurer) -> None:
    assert device.configure(["hostname edge-7"]) == ""
    endpoint = device.emu.endpoints[0]
    assert endpoint.device.hostname == "edge-7"
    assert "hostname edge-7\n" in device.show("show running-config")


# --- the grammar alone (no transport) ---------------------------------------------------------


def session(platform: str) -> CliSession:
    device = Device(load_platform(platform), DeviceFacts.for_hostname("R1"), enable_secret="x")
    return CliSession(device, mode=Mode.CONFIG)


def test_ios_access_lists_users_and_routes() -> None:
    cli = session("cisco_ios")
    for line in ("ip access-list extended ACL-TEST", "permit tcp any any eq 22",
                 "deny ip any any log", "exit", "access-list 10 permit 10.0.0.0 0.255.255.255",
                 "username bob privilege 15 secret hunter2", "enable secret s3cret",
                 "ip route 10.0.0.0 255.0.0.0 198.19.20.10 name LAB", "router ospf 1",
                 "network 10.0.0.0 0.255.255.255 area 0", "logging host 198.18.0.99",
                 "snmp-server location Rack 9", "line vty 0 4", "exec-timeout 5 0"):
        reply = cli.execute(line)
        assert reply.ok, (line, reply.output)
        assert reply.output == "", (line, reply.output)
    config = cli.device.transcript(("show", "running-config"))
    assert "ip access-list extended ACL-TEST\n 10 permit tcp any any eq 22\n 20 deny   ip any " \
           "any log\n" in config  # numbered and aligned as IOS-XE prints them
    assert "access-list 10 permit 10.0.0.0 0.255.255.255\n" in config
    assert "hunter2" not in config  # hashed, type 9
    assert "s3cret" not in config
    assert "username bob privilege 15 secret 9 $9$" in config
    assert "enable secret 9 $9$" in config
    assert config.count("enable secret") == 1
    assert "ip route 10.0.0.0 255.0.0.0 198.19.20.10 name LAB\n" in config
    assert " network 10.0.0.0 0.255.255.255 area 0\n" in config
    assert "snmp-server location Rack 9\n" in config
    assert "Row 4 Rack B07" not in config
    assert " exec-timeout 5 0\n" in config
    cli.execute("ip access-list extended ACL-TEST")
    cli.execute("no 10")
    cli.execute("exit")
    cli.execute("no ip route 10.0.0.0 255.0.0.0 198.19.20.10")
    cli.execute("no interface Tunnel200")
    config = cli.device.transcript(("show", "running-config"))
    assert "permit tcp any any eq 22" not in config
    assert " 20 deny   ip any any log" in config
    assert "name LAB\n" not in config
    assert "\ninterface Tunnel200\n" not in config
    assert "!\n!\ninterface Vlan1" not in config


def test_asa_keeps_secrets_masked_and_its_own_forms() -> None:
    cli = session("cisco_asa")
    for line in ("username bob password hunter2 privilege 15",
                 "snmp-server community s3cret", "route outside 10.0.0.0 255.0.0.0 203.0.113.1 1",
                 "access-list TEST extended permit tcp any any eq https", "mtu dmz 1400"):
        reply = cli.execute(line)
        assert reply.ok, (line, reply.output)
        assert reply.output == "", (line, reply.output)
    config = cli.device.transcript(("show", "running-config"))
    assert "username bob password ***** pbkdf2 privilege 15\n" in config
    assert "hunter2" not in config
    assert "s3cret" not in config
    assert "route outside 10.0.0.0 255.0.0.0 203.0.113.1 1\n" in config
    assert "access-list TEST extended permit tcp any any eq https\n" in config
    assert "mtu dmz 1400\n" in config  # one per nameif
    assert "mtu outside 1500\n" in config


@pytest.mark.parametrize("platform", PLATFORMS)
def test_lines_the_device_printed_can_be_pasted_back(platform: str) -> None:
    """Every line of the default running-config is accepted by configuration mode (pasted in
    order, blocks and all) and the configuration keeps the same lines (on IOS the same text; the
    ASA's second `object network X` block, its NAT, joins the first one)."""
    cli = session(platform)
    before = cli.device.transcript(("show", "running-config"))
    indent = cli.device.platform.style.config_indent
    for raw in before.splitlines():
        if not raw.strip() or raw.lstrip().startswith(("!", ":")) or raw[0].isupper() or \
                raw.startswith(("Building", "Current configuration", "end")) or \
                len(raw) - len(raw.lstrip()) > indent:
            continue
        if raw[0] != " ":
            cli.execute("end")
            cli.execute("configure terminal")
        reply = cli.execute(raw)
        assert reply.ok, (raw, reply.output)
    after = cli.device.transcript(("show", "running-config"))
    assert set(after.splitlines()) == set(before.splitlines())
    if platform == "cisco_ios":
        assert after == before


@pytest.mark.parametrize("platform", PLATFORMS)
def test_ambiguous_and_incomplete_lines(platform: str) -> None:
    cli = session(platform)
    ambiguous = cli.execute("s")  # snmp-server, shutdown ... : not one command
    assert not ambiguous.ok
    assert "Ambiguous command" in ambiguous.output
    incomplete = cli.execute("ntp server")
    assert not incomplete.ok
    assert "Incomplete command" in incomplete.output
    assert config_grammar(cli.device.platform).modes["if"].prompt == "config-if"


def test_thousands_of_lines_added_and_removed_one_by_one() -> None:
    """`no` line by line past the point where removed lines are compacted away (the soak's
    configuration flood: the separator check looked for a removed line after compaction had
    dropped it, and the POST failed with a traceback)."""
    cli = session("cisco_ios")
    routes = [f"ip route 10.9.{i // 256}.{i % 256} 255.255.255.255 Null0" for i in range(3000)]
    for line in routes:
        assert cli.execute(line).ok, line
    for line in routes:
        reply = cli.execute("no " + line)
        assert reply.ok, (line, reply.output)
        assert reply.output == "", (line, reply.output)
    config = cli.device.transcript(("show", "running-config"))
    assert "ip route 10.9." not in config


def test_a_lone_line_takes_its_separator_with_it() -> None:
    """`spanning-tree extend system-id` stands alone between two `!` lines: removing it removes
    one of them (no empty section), and only one."""
    cli = session("cisco_ios")
    before = cli.device.transcript(("show", "running-config"))
    assert "!\nspanning-tree extend system-id\n!\n" in before
    assert cli.execute("no spanning-tree extend system-id").ok
    after = cli.device.transcript(("show", "running-config"))
    assert "spanning-tree extend system-id" not in after
    assert after.count("\n!\n") == before.count("\n!\n") - 1
