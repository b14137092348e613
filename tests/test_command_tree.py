"""The command tree as a device's CLI has it: abbreviations, each error with its caret, commands
that are prefixes of others, `?` help and Tab in the shell, and output filters (`| include ...`)
on every transport (SSH exec, the SSH shell, HTTPS)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from urllib.parse import quote_plus

import pytest

from mgmtbench.emulator import CliSession, Device, DeviceFacts, EmulatorThread, load_platform
from mgmtbench.emulator.cli.engine import bulk_output
from mgmtbench.emulator.cli.session import Mode
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import SECRET
from mgmtbench.testing.shell import Shell, https_client, paging_off, ssh_connect

PLATFORMS = ("cisco_ios", "cisco_asa")
TRANSPORTS = ("exec", "shell", "https")
Run = Callable[[list[str]], list[str]]


def session(platform: str, hostname: str = "R1") -> CliSession:
    device = Device(load_platform(platform), DeviceFacts.for_hostname(hostname), enable_secret="en")
    return CliSession(device, mode=Mode.PRIV, user="netadmin", peer="198.18.0.10")


# --- errors, exactly as the device prints them ---------------------------------------------------

@pytest.mark.parametrize(
    ("platform", "line", "expected"),
    [
        # The caret goes under the first character no command accepts ("R1#" is 3 wide).
        ("cisco_ios", "show versionx", " " * 15 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "sh ip rx", " " * 10 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "show clock extra", " " * 14 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "show clock | grep x",
         " " * 16 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "show clock | inx x",
         " " * 18 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "show run | include (",
         " " * 22 + "^\n% Invalid input detected at '^' marker.\n\n"),
        ("cisco_ios", "sh i", '% Ambiguous command:  "sh i"\n'),
        ("cisco_ios", "show", '% Type "show ?" for a list of subcommands\n'),
        ("cisco_ios", "sh", '% Type "show ?" for a list of subcommands\n'),
        ("cisco_ios", "show ip", "% Incomplete command.\n\n"),
        ("cisco_ios", "show clock |", "% Incomplete command.\n\n"),
        ("cisco_ios", "show clock | include", "% Incomplete command.\n\n"),
        # The ASA's prompt is "R1# " (4 wide) and its words are its own.
        ("cisco_asa", "show versionx",
         " " * 16 + "^\nERROR: % Invalid input detected at '^' marker.\n"),
        ("cisco_asa", "show clock | section x",
         " " * 17 + "^\nERROR: % Invalid input detected at '^' marker.\n"),
        ("cisco_asa", "sh i", 'ERROR: % Ambiguous command:  "sh i"\n'),
        ("cisco_asa", "show", "ERROR: % Incomplete command\n"),
        ("cisco_asa", "show clock | include", "ERROR: % Incomplete command\n"),
    ],
)
def test_errors_as_the_device_prints_them(platform: str, line: str, expected: str) -> None:
    reply = session(platform).execute(line)
    assert not reply.ok
    assert reply.output == expected


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(("short", "full"), [
    ("sh inv", "show inventory"), ("sh run", "show running-config"), ("SH INV", "show inventory"),
    ("sh run | i host", "show running-config | include host"),
])
def test_abbreviations_run_the_full_command(platform: str, short: str, full: str) -> None:
    cli = session(platform)
    assert cli.execute(short).output == cli.execute(full).output
    assert cli.execute(full).ok


# --- commands that are prefixes of others, and the new ones ----------------------------------------

def test_ios_prefixes_that_are_commands_run() -> None:
    cli = session("cisco_ios")
    assert cli.execute("write").output == cli.execute("write memory").output == \
        "Building configuration...\n[OK]\n"
    unsorted = cli.execute("show processes cpu")
    assert unsorted.ok
    assert unsorted.output != cli.execute("show processes cpu sorted").output
    pids = [int(line.split()[0]) for line in unsorted.output.splitlines()[2:]]
    assert pids == sorted(pids)
    assert len(set(pids)) == len(pids)
    interface = cli.execute("show ip interface")
    assert interface.ok
    assert "Internet address is 203.0.113.10/30" in interface.output


def test_ios_show_arp_is_the_ip_arp_table() -> None:
    cli = session("cisco_ios")
    assert cli.execute("show arp").output == cli.execute("show ip arp").output
    assert cli.execute("show arp").output.startswith("Protocol  Address")


def test_ios_show_users_lists_this_session() -> None:
    lines = session("cisco_ios").execute("show users").output.splitlines()
    assert lines[0] == "    Line       User       Host(s)              Idle       Location"
    assert lines[1] == "*  2 vty 0     netadmin   idle                 00:00:00 198.18.0.10"
    assert "Peer Address" in lines[3]


def test_ios_show_hosts_names_the_domain() -> None:
    output = session("cisco_ios").execute("show hosts").output
    assert "Default domain is example.com" in output.splitlines()
    assert output.splitlines()[-1].startswith("Host ")


def test_ios_lldp_neighbors_are_the_cdp_neighbors() -> None:
    cli = session("cisco_ios")
    cdp = cli.execute("show cdp neighbors").output
    brief = cli.execute("show lldp neighbors").output
    detail = cli.execute("show lldp neighbors detail").output
    names = re.findall(r"^System Name: (\S+)$", detail, re.M)
    assert len(names) == 6
    assert all(name in cdp for name in names)
    assert f"Total entries displayed: {len(names)}" in brief
    assert f"Total cdp entries displayed : {len(names)}" in cdp
    brief_rows = brief.split("Port ID\n")[1].split("\n\n")[0].splitlines()
    locals_brief = [row[20:35].strip() for row in brief_rows]
    assert locals_brief == re.findall(r"^Local Intf: (\S+)$", detail, re.M)
    assert "{{" not in detail
    assert "R1" in detail


def test_ios_napalm_environment_commands_parse() -> None:
    cli = session("cisco_ios")
    cpu = cli.execute("show proc cpu | include CPU utilization").output
    assert re.fullmatch(r"CPU utilization for five seconds: \d+%/\d+%; one minute: \d+%; "
                        r"five minutes: \d+%\n", cpu)
    memory = cli.execute("show memory statistics").output
    processor = next(line for line in memory.splitlines() if "Processor" in line).split()
    assert int(processor[2]) > int(processor[3]) > 0  # total > used


# --- output filters on every transport ------------------------------------------------------------

async def _over_ssh(endpoint: DeviceEndpoint, commands: list[str], shell: bool) -> list[str]:
    async with ssh_connect(endpoint) as conn:
        if not shell:
            return [str((await conn.run(c, encoding="ascii")).stdout) for c in commands]
        term = await Shell.open(conn)
        if endpoint.device.platform.style.login_privilege == 1:
            await term.enable(SECRET)
        await term.command(paging_off(endpoint))
        return [(await term.command(c)).decode().replace("\r\n", "\n") for c in commands]


@pytest.fixture(params=PLATFORMS)
def platform(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=TRANSPORTS)
def run(request: pytest.FixtureRequest, platform: str,
        emulator_for: Callable[[str], EmulatorThread]) -> Run:
    """Run commands over one transport on ``platform``'s device; their outputs as text."""
    emu = emulator_for(platform)
    endpoint = emu.endpoints[0]
    transport = request.param

    def go(commands: list[str]) -> list[str]:
        if transport == "https":
            with https_client(emu) as client:
                base = endpoint.https_url("")
                return [client.get(base + quote_plus(c, safe="")).text for c in commands]
        return asyncio.run(_over_ssh(endpoint, commands, transport == "shell"))

    return go


def _matching(text: str, pattern: str, keep: bool = True) -> str:
    return "".join(line for line in text.splitlines(keepends=True)
                   if bool(re.search(pattern, line.rstrip("\n"))) == keep)


def test_filters_on_every_transport(platform: str, run: Run) -> None:
    filters = load_platform(platform).style.filters
    full, *filtered = run(["show running-config", "show running-config | include ^username",
                           "show running-config | exclude ^ desc", "show run | begin ^interface",
                           "show running-config | i ntp server"])
    assert full.count("\n") > 50
    include, exclude, begin, abbreviated = filtered
    assert include == _matching(full, "^username")
    assert include.count("\n") >= 2
    assert exclude == _matching(full, "^ desc", keep=False)
    assert "\n description" not in exclude
    assert "\n description" in full
    assert begin == full[full.index("\ninterface") + 1:]
    assert abbreviated == _matching(full, "ntp server")
    if "count" in filters:
        counted = run(["show running-config | count snmp-server"])[0]
        assert counted == ("Number of lines which match regexp = "
                           f"{_matching(full, 'snmp-server').count(chr(10))}\n")
    if "section" in filters:
        section = run(["show running-config | section ^interface Loopback0"])[0]
        assert section.startswith("interface Loopback0\n description ")
        assert all(line.startswith(" ") for line in section.splitlines()[1:])
    if "grep" in filters:
        grep, inverted = run(["show running-config | grep ^username",
                              "show running-config | grep -v ^ desc"])
        assert (grep, inverted) == (include, exclude)


def test_filters_keep_long_output_streamed(platform: str, run: Run) -> None:
    count, include = run(["show bulk-output 640000 | include 9$",
                          "show bulk-output 640000 | include ^0000012"])
    assert count == ""  # lines end in "z\n"
    assert include == _matching(bulk_output(640000), "^0000012")
    assert include.count("\n") == 10


def test_a_bad_filter_is_the_device_error(platform: str, run: Run) -> None:
    [reply] = run(["show clock | nosuchfilter x"])
    assert "Invalid input detected at '^' marker." in reply


# --- ? and Tab in the shell ----------------------------------------------------------------------

async def _typed(endpoint: DeviceEndpoint, keys: bytes, until: re.Pattern[bytes]) -> bytes:
    async with ssh_connect(endpoint) as conn:
        term = await Shell.open(conn)
        if endpoint.device.platform.style.login_privilege == 1:
            await term.enable(SECRET)
        term.write(keys)
        return await term.read_until(until)


def _prompt(endpoint: DeviceEndpoint) -> bytes:
    return (endpoint.device.hostname + "#" + endpoint.device.platform.style.prompt_suffix).encode()


def test_question_mark_lists_next_words(platform: str,
                                        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    prompt = _prompt(endpoint)
    shown = asyncio.run(_typed(endpoint, b"show clock ?", re.compile(
        re.escape(b"\r\n\r\n" + prompt + b"show clock ") + b"$")))
    assert shown.startswith(b"show clock ?\r\n")
    assert b"  |     Output modifiers\r\n  <cr>  <cr>\r\n" in shown
    words = asyncio.run(_typed(endpoint, b"show ?", re.compile(
        re.escape(prompt + b"show ") + b"$")))
    assert re.search(rb"\r\n  version +System hardware and software status\r\n", words)
    assert b"bulk-output" not in words  # the emulator's own command is hidden


def test_question_mark_completes_a_partial_word(
        platform: str, emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    prompt = _prompt(endpoint)
    shown = asyncio.run(_typed(endpoint, b"show run | e?", re.compile(
        re.escape(prompt + b"show run | e") + b"$")))
    assert b"?\r\nexclude  \r\n\r\n" in shown
    unknown = asyncio.run(_typed(endpoint, b"show zz ?", re.compile(
        re.escape(prompt + b"show zz ") + b"$")))
    assert endpoint.device.platform.style.unrecognized.replace("\n", "\r\n").encode() in unknown


def test_tab_completes_and_the_line_runs(platform: str,
                                         emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    prompt = _prompt(endpoint)
    done = asyncio.run(_typed(endpoint, b"sh\tclo\t\r", re.compile(
        re.escape(b"\r\n" + prompt) + b"$")))
    assert done.startswith(b"show clock \r\n")  # "sh" + Tab: "ow ", "clo" + Tab: "ck "
    assert re.search(rb"\d{2}:\d{2}:\d{2}", done)  # show clock ran
    ambiguous = asyncio.run(_typed(endpoint, b"show c\t", re.compile(
        re.escape(b"\r\n" + prompt + b"show c") + b"$")))
    assert ambiguous == b"show c\r\n" + prompt + b"show c"  # reprinted, nothing completed


@pytest.mark.parametrize("platform", PLATFORMS)
def test_do_in_configuration_mode_filters_and_places_its_caret(platform: str) -> None:
    cli = session(platform)
    cli.execute("configure terminal")
    assert cli.execute("do show running-config | include ^hostname").output == "hostname R1\n"
    reply = cli.execute("do show run | nosuch x")
    caret = reply.output.splitlines()[0]
    assert len(caret) - 1 == len(cli.prompt) + len("do show run | ")  # under the "n"


def test_ios_napalm_plain_show_commands_exist() -> None:
    cli = session("cisco_ios")
    assert cli.execute("show snmp chassis").output == cli.device.facts.serial + "\n"
    memory = cli.execute("show processes memory sorted").output.splitlines()
    assert memory[0].startswith("Processor Pool Total: ")
    holding = [int(line.split()[4]) for line in memory[4:-1]]
    assert holding == sorted(holding, reverse=True)
    assert int(memory[-1].split()[0]) == sum(holding)


# --- configuration mode: ? and Tab from the configuration grammar --------------------------------

def test_config_question_mark_lists_the_grammar_with_descriptions() -> None:
    cli = session("cisco_ios")
    cli.execute("configure terminal")
    listed = cli.help("")
    assert re.search(r"^  interface +Select an interface to configure$", listed, re.M)
    assert re.search(r"^  hostname +Set system's network name$", listed, re.M)
    assert re.search(r"^  end +Exit from configure mode$", listed, re.M)  # the session's own
    assert re.search(r"^  no +Negate a command or set its defaults$", listed, re.M)
    assert "GigabitEthernet" in cli.help("interface ")  # the interface types
    assert cli.help("banner ") == ("  exec   Set EXEC process creation banner\n"
                                   "  login  Set login banner\n"
                                   "  motd   Set Message of the Day banner\n\n")
    assert cli.help("ho") == "hostname  \n\n"
    assert cli.help("hostname ") == "  WORD\n\n"
    assert cli.help("zzz ") == "% Unrecognized command\n"

    cli.execute("interface gi0/0/3")
    sub = cli.help("")
    assert re.search(r"^  speed +Configure speed operation\.$", sub, re.M)
    assert "hostname" not in sub  # a sub-mode lists its own commands
    assert cli.help("speed ") == ("  10    Force 10 Mbps operation\n"
                                  "  100   Force 100 Mbps operation\n"
                                  "  1000  Force 1000 Mbps operation\n"
                                  "  auto  Enable AUTO speed configuration\n\n")
    assert cli.help("ip address 192.0.2.1 255.255.255.0 ") == \
        "  secondary\n  <cr>       <cr>\n\n"


def test_config_tab_completes_grammar_words() -> None:
    cli = session("cisco_ios")
    cli.execute("configure terminal")
    assert cli.complete("hostn") == "hostname "
    assert cli.complete("i") is None  # interface, ip, ipv6
    assert cli.help("do sh") == "show  \n\n"  # after `do`, the exec commands
    assert re.search(r"^  version +System hardware and software status$",
                     cli.help("do show "), re.M)
    assert cli.complete("do show ver") == "do show version "
    cli.execute("interface gi0/0/3")
    assert cli.complete("dup") == "duplex "
    assert cli.complete("duplex f") == "duplex full "
    assert cli.complete("no shut") == "no shutdown "


def test_config_question_mark_and_tab_in_the_shell(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for("cisco_ios").endpoints[0]
    config = (endpoint.device.hostname + "(config)#").encode()
    shown = asyncio.run(_typed(endpoint, b"configure terminal\rbanner ?", re.compile(
        re.escape(b"\r\n\r\n" + config + b"banner ") + b"$")))
    assert b"banner ?\r\n  exec   Set EXEC process creation banner\r\n" in shown
    done = asyncio.run(_typed(endpoint, b"configure terminal\rhostn\t", re.compile(
        re.escape(config + b"hostname ") + b"$")))
    assert done.endswith(config + b"hostname ")
