"""Arista EOS, Cisco NX-OS and Juniper Junos as real as the tools on top of them expect: device
clocks and uptimes that run (fleet devices differ), Junos's pipes (``| no-more`` unpaged,
``| match``, ``| count``, ``| display set`` ...) and ``edit`` in configuration mode, each
platform's SSH identity as the server sends it (version string, algorithm lists, host key).
Netmiko and scrapli against the same features: tests/test_new_platforms.py.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime

import asyncssh
import pytest

from mgmtbench.clients import pairs
from mgmtbench.emulator import EmulatorThread, load_platform
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.clock import bsd_uptime_text, uptime_text
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.oracle import expected_output, same_output, stable_output
from mgmtbench.targets import Login
from mgmtbench.testing import USERNAME
from mgmtbench.testing.fixtures import emulator_target
from mgmtbench.testing.shell import ssh_connect
from tests.clients_support import available, drive
from tests.test_platform_identity import server_hello

FreshEmulator = Callable[..., EmulatorThread]
NEW_PLATFORMS = ("arista_eos", "cisco_nxos", "juniper_junos")
# The uptime line of each platform, in its own words.
UPTIMES = {
    "arista_eos": ("show version",
                   r"^Uptime: \d+ weeks, \d+ days, \d+ hours and \d+ minutes$"),
    "cisco_nxos": ("show version", r"^Kernel uptime is \d+ day\(s\), \d+ hour\(s\), "
                                   r"\d+ minute\(s\), \d+ second\(s\)$"),
    "juniper_junos": ("show system uptime",
                      r"^System booted: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC "
                      r"\(\d+w\d+d \d\d:\d\d ago\)$"),
}
# The clock, in its own words.
CLOCKS = {
    "arista_eos": ("show clock", r"^\w{3} \w{3} [ \d]\d (\d\d):\d\d:\d\d \d{4}$"),
    "cisco_nxos": ("show clock", r"^(\d\d):\d\d:\d\d\.\d{3} UTC \w{3} \w{3} \d+ \d{4}$"),
    "juniper_junos": ("show system uptime",
                      r"^Current time: \d{4}-\d\d-\d\d (\d\d):\d\d:\d\d UTC$"),
}


def make_device(platform: str, hostname: str = "R1", clock_start: str | None = None) -> Device:
    loaded = load_platform(platform)
    return Device(loaded, DeviceFacts.for_hostname(hostname, form=loaded.style.identity.facts),
                  enable_secret="x", clock_start=clock_start)


def show(device: Device, command: str) -> str:
    return CliSession(device, mode=Mode.PRIV, user=USERNAME).execute(command).text()


def found(pattern: str, text: str) -> re.Match[str]:
    match = re.search(pattern, text, re.M)
    assert match is not None, (pattern, text)
    return match


# --- clocks and uptimes -------------------------------------------------------------------------


@pytest.mark.parametrize("platform", NEW_PLATFORMS)
def test_clock_and_uptime_run(platform: str, monkeypatch: pytest.MonkeyPatch) -> None:
    device = make_device(platform)
    (clock_command, clock), (uptime_command, uptime) = CLOCKS[platform], UPTIMES[platform]
    before = show(device, clock_command), show(device, uptime_command)
    monkeypatch.setattr(device.clock, "_made", device.clock._made - 3600 * 5 - 60)  # 5 h 1 min
    after = show(device, clock_command), show(device, uptime_command)
    hours = [int(found(clock, text).group(1)) for text in (before[0], after[0])]
    assert (hours[1] - hours[0]) % 24 == 5
    lines = [found(uptime, text).group(0) for text in (before[1], after[1])]
    assert lines[0] != lines[1]
    for old, new in zip(before, after, strict=True):
        assert same_output(platform, new, old)  # only the clock and uptimes moved


@pytest.mark.parametrize("platform", NEW_PLATFORMS)
def test_fleet_devices_boot_at_different_times(platform: str,
                                               fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(platform, devices=3)
    command, uptime = UPTIMES[platform]
    seen = {found(uptime, show(e.device, command)).group(0) for e in emu.endpoints}
    assert len(seen) == 3

    async def run() -> str:
        async with ssh_connect(emu.endpoints[1]) as conn:
            return str((await conn.run(command)).stdout)

    endpoint = emu.endpoints[1]
    want = expected_output(platform, endpoint.hostname, endpoint.device.facts.mgmt_ip, [command])
    got = asyncio.run(run())
    assert same_output(platform, got, want)  # the oracle's device booted when this one did
    # (to the seconds between the two devices' starts: masked) and another device did not.
    other = show(emu.endpoints[0].device, command)
    assert found(uptime, got).group(0) != found(uptime, other).group(0)


def test_uptime_words_per_platform() -> None:
    up = 44 * 86400 + 4 * 3600 + 13 * 60 + 22
    assert uptime_text(up, "eos") == "6 weeks, 2 days, 4 hours and 13 minutes"
    assert uptime_text(up, "nxos") == "44 day(s), 4 hour(s), 13 minute(s), 22 second(s)"
    assert uptime_text(up, "junos") == "6w2d 04:13"
    assert uptime_text(2 * 86400 + 20 * 3600 + 29 * 60 + 33, "junos") == "2d 20:29"
    assert uptime_text(4 * 3600 + 13 * 60 + 22, "junos") == "04:13:22"
    moment = datetime(2026, 11, 23, 5, 42, 17, tzinfo=UTC)
    assert bsd_uptime_text(moment, up) == " 5:42AM  up 44 days,  4:13"
    assert bsd_uptime_text(moment.replace(hour=17), 13 * 60) == " 5:42PM  up 13 mins"
    assert bsd_uptime_text(moment, 86400 + 3600) == " 5:42AM  up 1 day,  1:00"


def test_junos_last_configured_follows_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    device = make_device("juniper_junos", clock_start="transcript")
    first = show(device, "show system uptime")
    assert "Last configured: 2026-11-20 09:12:44 UTC (2d 20:29 ago) by admin" in first
    monkeypatch.setattr(device.clock, "_made", device.clock._made - 3600)  # an hour on
    assert "(2d 21:29 ago) by admin" in show(device, "show system uptime")
    session = CliSession(device, user="netops")
    session.execute("configure")
    session.execute("set system location building-2")
    assert session.execute("commit").text() == "commit complete\n"
    now = device.clock.now().strftime("%Y-%m-%d %H:%M")
    line = found(r"^Last configured: .*$", show(device, "show system uptime")).group(0)
    assert re.fullmatch(rf"Last configured: {now}:\d\d UTC \(00:00:0\d ago\) by netops", line)
    assert show(device, "show configuration").startswith(f"## Last commit: {now}")


# --- Junos's pipes ------------------------------------------------------------------------------


def test_junos_pipes() -> None:
    device = make_device("juniper_junos")
    terse = device.transcript(("show", "interfaces", "terse"))
    route = device.transcript(("show", "route"))
    session = CliSession(device, user=USERNAME)

    def run(line: str) -> str:
        reply = session.execute(line)
        assert reply.ok, (line, reply.text())
        return reply.text()

    with_et = [line for line in terse.splitlines(keepends=True) if "et-" in line]
    assert len(with_et) > 3
    assert run("show interfaces terse | match et-") == "".join(with_et)
    assert run("show interfaces terse | match et- | count") == f"Count: {len(with_et)} lines\n"
    assert "et-" not in run("show interfaces terse | except et-")
    assert run("show interfaces terse | find xe-").startswith("xe-")
    assert run("show route | last 2") == "".join(route.splitlines(keepends=True)[-2:])
    assert run("show interfaces terse | trim 10").splitlines()[1] == terse.splitlines()[1][10:]
    assert run('show interfaces terse | match "et-0/0/0"').startswith("et-0/0/0 ")
    unpaged = session.execute("show version | no-more")
    assert unpaged.text() == device.transcript(("show", "version"))
    assert not unpaged.paged
    assert session.execute("show version | match Junos").paged
    bad = session.execute("show version | bogus")
    assert not bad.ok
    assert bad.text() == " " * len("admin@R1> show version | ") + "^\n" \
        "syntax error, expecting <command>.\n"


def test_junos_display_set() -> None:
    device = make_device("juniper_junos")
    session = CliSession(device, user=USERNAME)
    as_set = session.execute("show configuration | display set").text().splitlines()
    assert len(as_set) > 20
    assert all(line.startswith("set ") for line in as_set)
    assert "set system host-name R1" in as_set
    assert 'set interfaces et-0/0/0 description "R2 et-0/0/0"' in as_set
    assert session.execute("show configuration system | display set | match host-name | "
                           "no-more").text() == "set system host-name R1\n"
    assert session.execute("show configuration | match host-name").text() \
        == "    host-name R1;\n"
    bad = session.execute("show configuration | bogus")
    assert not bad.ok
    assert bad.text().endswith("^\nsyntax error, expecting <command>.\n")


def test_junos_no_more_is_not_paged_over_the_shell(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for("juniper_junos").endpoints[0]
    prompt = re.compile(rb"\n" + USERNAME.encode() + rb"@R1> $")
    more = b"---(more)---"

    async def run() -> tuple[bytes, bytes]:
        async with ssh_connect(endpoint) as conn:
            process = await conn.create_process(term_type="vt100", encoding=None)
            buffer = b""

            async def until(pattern: re.Pattern[bytes]) -> bytes:
                nonlocal buffer
                while not (hit := pattern.search(buffer)):
                    buffer += await asyncio.wait_for(process.stdout.read(65536), 10)
                taken, buffer = buffer[:hit.end()], buffer[hit.end():]
                return taken

            await until(prompt)
            process.stdin.write(b"show configuration\r")  # 24-line screens by default
            paged = await until(re.compile(re.escape(more)))
            process.stdin.write(b"q")
            await until(prompt)
            process.stdin.write(b"show configuration | no-more\r")
            whole = await until(prompt)
            process.close()
            return paged, whole

    paged, whole = asyncio.run(run())
    config = endpoint.device.transcript(("show", "configuration"))
    assert paged.count(b"\n") < 30
    assert more not in whole
    assert whole.replace(b"\r\n", b"\n").count(b"\n") > config.count("\n")


# --- Junos's edit -------------------------------------------------------------------------------


def test_junos_edit_moves_down_the_hierarchy() -> None:
    device = make_device("juniper_junos")
    session = CliSession(device, user=USERNAME)
    session.execute("configure")
    assert session.prompt == "\n[edit]\nadmin@R1# "
    assert session.execute("edit interfaces xe-0/1/3").ok
    assert session.prompt == "\n[edit interfaces xe-0/1/3]\nadmin@R1# "
    assert session.execute('set description "to lab 3"').ok
    assert session.execute("edit unit 0 family inet").ok
    assert session.prompt == "\n[edit interfaces xe-0/1/3 unit 0 family inet]\nadmin@R1# "
    assert session.execute("set address 192.0.2.65/26").ok
    assert session.execute("show").text() == "address 192.0.2.65/26;\n"
    assert session.execute("up 2").ok
    assert session.prompt == "\n[edit interfaces xe-0/1/3]\nadmin@R1# "
    shown = session.execute("show").text()
    assert shown == ('description "to lab 3";\nunit 0 {\n    family inet {\n'
                     '        address 192.0.2.65/26;\n    }\n}\n')
    assert session.execute("show unit 0 | display set").text() \
        == "set interfaces xe-0/1/3 unit 0 family inet address 192.0.2.65/26\n"
    assert session.execute("delete description").ok
    assert "description" not in session.execute("show").text()
    assert session.execute("exit").ok  # back to where the last edit started
    assert session.prompt == "\n[edit interfaces xe-0/1/3]\nadmin@R1# "
    assert session.execute("exit").ok
    assert session.prompt == "\n[edit]\nadmin@R1# "
    assert session.execute("edit system").ok
    assert session.execute("top").ok
    assert session.prompt == "\n[edit]\nadmin@R1# "
    assert session.execute("edit bogus").text().endswith("^\nsyntax error.\n")
    assert session.prompt == "\n[edit]\nadmin@R1# "
    session.execute("edit protocols")
    assert session.execute("commit").text() == "commit complete\n"
    assert session.prompt == "\n[edit protocols]\nadmin@R1# "  # commit leaves it where it is
    assert "    xe-0/1/3 {\n        unit 0 {\n" in session.execute("run show configuration").text()
    assert session.execute("exit configuration-mode").text() == "Exiting configuration mode\n"
    assert session.mode is not Mode.CONFIG
    session.execute("configure")
    assert session.prompt == "\n[edit]\nadmin@R1# "  # a new configure starts at the top


# --- SSH identity -------------------------------------------------------------------------------

# asyncssh adds these to the key exchange list it sends.
_MARKERS = ("ext-info-s", "kex-strict-s-v00@openssh.com")


@pytest.mark.parametrize("platform", NEW_PLATFORMS)
def test_the_server_offers_the_platforms_ssh_identity(
        platform: str, emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for(platform).endpoints[0]
    ssh = load_platform(platform).style.identity.ssh
    assert ssh.version.startswith("OpenSSH_")
    ident, lists = server_hello(endpoint)
    assert ident == f"SSH-2.0-{ssh.version}"
    assert [k for k in lists["kex"] if k not in _MARKERS] == list(ssh.kex or ())
    assert lists["ciphers"] == lists["ciphers_sc"] == list(ssh.ciphers or ())
    assert lists["macs"] == lists["macs_sc"] == list(ssh.macs or ())
    assert lists["host_key_algs"] == list(ssh.host_key_algs or ())

    async def hello() -> tuple[str, str, str]:
        async with ssh_connect(endpoint) as conn:
            key = conn.get_server_host_key()
            assert key is not None
            return (str(conn.get_extra_info("server_version")),
                    key.get_algorithm(), str(conn.get_extra_info("send_cipher")))

    version, key_algorithm, cipher = asyncio.run(hello())
    assert version == ident
    assert key_algorithm == {"rsa": "ssh-rsa", "ed25519": "ssh-ed25519"}[ssh.host_key]
    assert cipher in (ssh.ciphers or ())


FIRST_MODES: dict[str, str] = {}
for _client, _mode in pairs(same_process=True):
    FIRST_MODES.setdefault(_client, _mode)


@pytest.mark.parametrize("platform", NEW_PLATFORMS)
@pytest.mark.parametrize("client", sorted(c for c in FIRST_MODES if not c.startswith("httpx")))
def test_every_ssh_client_connects_to_the_platforms_defaults(
        client: str, platform: str, emulator_for: Callable[[str], EmulatorThread],
        login: Login) -> None:
    """Each SSH client adapter (paramiko, asyncssh, libssh2, OpenSSH ...) negotiates the
    platform's own algorithm lists and host key."""
    cls = available(client)
    emu = emulator_for(platform)
    output = drive(cls(emulator_target(emu, login), FIRST_MODES[client]), ["show version"])
    want = emu.endpoints[0].device.transcript(("show", "version"))
    assert stable_output(platform, want) in stable_output(platform, output)


def test_nxos_refuses_what_its_image_does_not_offer(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    endpoint = emulator_for("cisco_nxos").endpoints[0]

    async def connect(**options: object) -> None:
        async with ssh_connect(endpoint, **options):
            pass

    # The client finds no common algorithm, or the server, first, closes the connection.
    refused = (asyncssh.KeyExchangeFailed, asyncssh.ConnectionLost)
    with pytest.raises(refused):
        asyncio.run(connect(kex_algs=["curve25519-sha256"]))
    with pytest.raises(refused):
        asyncio.run(connect(encryption_algs=["chacha20-poly1305@openssh.com"]))
    asyncio.run(connect(kex_algs=["ecdh-sha2-nistp256"]))
