"""The emulator's limits (issue 17): what an authenticated client may ask for, what clients that
never log in may hold, what a wrong password costs. Real servers and sockets on loopback; every
wait is bounded. Durations are only ever asserted from below (a delay that must have happened).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gc
import logging
import random
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

import asyncssh
import httpx
import pytest
from lxml import etree

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.cli.engine import bulk_output
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device import config
from mgmtbench.emulator.device.config import ConfigLine, RunningConfig, block_mode, expand, line_key
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import load_platform
from mgmtbench.emulator.guard import Admission, RateLimitFilter
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, USERNAME
from mgmtbench.testing.shell import PROMPT, Shell, https_client, ssh_connect
from tests.netconf_support import RawNetconf, error_tag

FreshEmulator = Callable[..., EmulatorThread]


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


def base(endpoint: DeviceEndpoint) -> str:
    return f"https://{endpoint.host}:{endpoint.https_port}"


# --- output per command and per request, commands and configuration lines per request ---------


def test_output_over_the_per_command_limit_is_refused_before_it_is_made() -> None:
    device = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"), enable_secret="x")
    session = CliSession(device, mode=Mode.PRIV, max_output=1000)
    assert session.execute("show bulk-output 1000").text() == bulk_output(1000)
    refused = session.execute("show bulk-output 1001")
    assert not refused.ok
    assert refused.more is None  # nothing of the 1,001 bytes was (or will be) made
    assert refused.output == "% Output of 1001 bytes exceeds the limit of 1000 bytes per command\n"


def test_request_output_limit_over_ssh_exec_and_https(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(limits=Limits(max_request_output=100_000))
    endpoint = emu.endpoints[0]
    refusal = "% Output of 120000 bytes exceeds the limit of 100000 bytes per request\n"

    async def exec_it() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(endpoint) as conn:
            return await conn.run("show bulk-output 60000\nshow bulk-output 60000\nshow clock")

    result = run(exec_it())
    assert isinstance(result, asyncssh.SSHCompletedProcess)
    assert result.exit_status == 1
    assert result.stdout == bulk_output(60000) + refusal  # and `show clock` was not run
    with https_client(emu) as client:
        answer = client.get(f"{base(endpoint)}/admin/exec/show+bulk-output+60000/"
                            "show+bulk-output+60000/show+clock")
    assert answer.status_code == 200
    assert answer.text == result.stdout  # the same bytes over both transports


def test_a_14_kb_url_cannot_ask_for_147_gb(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(ssh=False)
    url = f"{base(emu.endpoints[0])}/admin/exec/" + "/".join(["sh+bulk-output+268435456"] * 560)
    with https_client(emu) as client:
        answer = client.get(url)
    # The first command takes the whole allowance (256 MiB), the second is refused: the
    # answer is 256 MiB and a line (made as it was sent), not 147 GB and a MemoryError.
    refusal = "% Output of 536870912 bytes exceeds the limit of 268435456 bytes per request\n"
    assert answer.status_code == 200
    assert len(answer.content) == 268435456 + len(refusal)
    assert answer.text.endswith(refusal)


def test_too_many_commands_or_config_lines_are_refused_whole(
        fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(limits=Limits(max_commands=5, max_config_lines=10))
    endpoint = emu.endpoints[0]

    async def exec_it() -> asyncssh.SSHCompletedProcess:
        async with ssh_connect(endpoint) as conn:
            return await conn.run("\n".join(["show clock"] * 6))

    result = run(exec_it())
    assert isinstance(result, asyncssh.SSHCompletedProcess)
    assert (result.exit_status, result.stdout) == (
        1, "% Too many commands in one request: 6 (limit 5)\n")
    before = endpoint.device.transcript(("show", "running-config"))
    with https_client(emu) as client:
        assert client.get(f"{base(endpoint)}/admin/exec/" + "/".join(["show+clock"] * 6)
                          ).status_code == 413
        assert client.get(f"{base(endpoint)}/admin/exec/" + "/".join(["show+clock"] * 5)
                          ).status_code == 200
        lines = "\n".join(f"interface Loopback{i}" for i in range(11))
        refused = client.post(f"{base(endpoint)}/admin/config", content=lines)
        assert refused.status_code == 413
        assert "too many configuration lines in one request: 11 (limit 10)" in refused.text
        assert endpoint.device.transcript(("show", "running-config")) == before  # none applied
        ten = "\n".join(f"interface Loopback{i}" for i in range(10))
        assert client.post(f"{base(endpoint)}/admin/config", content=ten).status_code == 200
    assert "interface Loopback9" in endpoint.device.transcript(("show", "running-config"))


def test_long_output_in_a_paged_shell_is_made_a_screen_at_a_time(ios: DeviceEndpoint) -> None:
    async def scenario() -> bytes:
        async with ssh_connect(ios) as conn:
            shell = await Shell.open(conn)
            shell.write(b"terminal length 24\r")
            await shell.read_until(PROMPT)
            shell.write(b"show bulk-output 268435456\r")
            screen = await shell.read_until(b"--More--")
            shell.write(b"q")  # stops: the other 268 MB are never made
            await shell.read_until(PROMPT)
            return screen

    screen = run(scenario())
    assert isinstance(screen, bytes)
    assert screen.count(b"mgmtbench bulk output") == 23


def _tls_objects() -> int:
    return sum(isinstance(o, ssl.SSLObject) for o in gc.get_objects())


def test_an_answer_left_unread_frees_its_tls_state_with_the_connection(
        fresh_emulator: FreshEmulator) -> None:
    """A client that asks for a long answer, reads none of it and resets the connection: the
    server's TLS object (its SSL state and buffers, ~1 MiB of C memory each) goes as the
    connection does, not at the garbage collector's next full pass, which C memory never
    prompts (the soak's unread answers held +31 MiB that way)."""
    emu = fresh_emulator()
    endpoint = emu.endpoints[0]
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    auth = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
    request = (f"GET /admin/exec/show+bulk-output+268435456 HTTP/1.1\r\nHost: r\r\n"
               f"Authorization: Basic {auth}\r\n\r\n").encode()
    gc.collect()
    gc.disable()  # only what reference counting frees goes
    try:
        before = _tls_objects()
        for _ in range(3):
            raw = socket.create_connection((endpoint.host, endpoint.https_port), timeout=10)
            with context.wrap_socket(raw, server_hostname=endpoint.host) as sock:
                sock.sendall(request)
                sock.recv(100)  # the answer has started: the server fills the socket, waits
                time.sleep(0.3)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        deadline = time.monotonic() + 10
        while _tls_objects() > before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _tls_objects() <= before
    finally:
        gc.enable()


# --- configuration changes cost the same however large the configuration ----------------------


class _Naive:
    """The running configuration as it was before it had indexes (issue 17): scans every line."""

    def __init__(self, text: str) -> None:
        self.root: list[ConfigLine] = RunningConfig(text).root

    def render(self) -> str:
        out: list[str] = []

        def walk(lines: list[ConfigLine], depth: int) -> None:
            for line in lines:
                out.append(" " * depth + line.text)
                walk(line.children, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"

    def open_block(self, text: str) -> ConfigLine:
        for line in self.root:
            if line.text.lower() == text.lower() or config._same_interface(text, line.text):
                return line
        block = ConfigLine(text)
        self._insert_top(block)
        return block

    def set(self, text: str, block: ConfigLine | None = None) -> None:
        siblings = block.children if block else self.root
        for i, line in enumerate(siblings):
            if line_key(line.text) == line_key(text):
                siblings[i] = ConfigLine(text, line.children)
                return
        if block is None:
            self._insert_top(ConfigLine(text))
        else:
            siblings.append(ConfigLine(text))

    def remove(self, text: str, block: ConfigLine | None = None) -> None:
        siblings = block.children if block else self.root
        siblings[:] = [line for line in siblings if line_key(line.text) != line_key(text)
                       and not config._same_interface(text, line.text)]

    def _insert_top(self, line: ConfigLine) -> None:
        kind = line.text.split()[0].lower()
        same = [i for i, old in enumerate(self.root) if old.text.lower().split()[:1] == [kind]]
        if same:
            at = same[-1] + 1
            if at < len(self.root) and self.root[at].text == "!" and block_mode(line.text):
                self.root[at + 1 : at + 1] = [line, ConfigLine("!")]
            else:
                self.root[at:at] = [line]
            return
        at = len(self.root)
        if self.root and self.root[-1].text in ("end", ": end"):
            at -= 1
        self.root[at:at] = [line, ConfigLine("!")]


def _random_line(rng: random.Random) -> str:
    kind = rng.choice(["interface", "ip", "hostname", "description", "router", "logging", "!",
                       "ntp", "line", "foo"])
    number = rng.randint(0, 5)
    if kind == "interface":
        return f"interface {rng.choice(['Loopback', 'lo', 'Gi', 'GigabitEthernet', 'te'])}{number}"
    if kind == "ip":
        return rng.choice([f"ip route 10.0.{number}.0 255.255.255.0 Null0", "ip domain-name x.y",
                           f"ip ro 10.0.{number}.0 255.255.255.0 Null0",
                           f"ip address 10.0.0.{number} 255.0.0.0"])
    if kind in ("router", "line"):
        return f"router ospf {number}" if kind == "router" else f"line vty 0 {number}"
    return f"{kind} {rng.choice(['a', 'b', str(number)])}"


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa"])
def test_indexed_configuration_changes_as_the_naive_one_did(platform: str) -> None:
    text = Device(load_platform(platform), DeviceFacts.for_hostname("R1"),
                  enable_secret="x").transcript(("show", "running-config"))
    for seed in range(60):
        rng = random.Random(seed)
        fast, naive = RunningConfig(text), _Naive(text)
        in_fast: ConfigLine | None = None
        in_naive: ConfigLine | None = None
        for step in range(rng.randint(1, 200)):
            line, roll = expand(_random_line(rng)), rng.random()
            if block_mode(line) and roll < 0.6:
                in_fast, in_naive = fast.open_block(line), naive.open_block(line)
            elif block_mode(line) and roll < 0.7:
                fast.remove(line)
                naive.remove(line)
                in_fast = in_naive = None
            elif roll < 0.3:
                fast.remove(line, in_fast)
                naive.remove(line, in_naive)
            elif roll < 0.35:
                in_fast = in_naive = None
            else:
                fast.set(line, in_fast)
                naive.set(line, in_naive)
            if step % 5 == 0:
                assert fast.render() == naive.render(), (seed, line)
        assert fast.render() == naive.render(), seed
        assert fast.size == _live_bytes(fast.root), seed  # kept change by change, never off


def _live_bytes(lines: list[ConfigLine]) -> int:
    return sum(len(line.text) + 1 + _live_bytes(line.children) for line in lines
               if not line.removed)


def _config_session(capacity: int) -> tuple[Device, CliSession]:
    device = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"),
                    enable_secret="x", max_config_size=capacity)
    return device, CliSession(device, mode=Mode.CONFIG)


def test_a_full_running_configuration_refuses_what_adds_and_takes_what_removes() -> None:
    device, session = _config_session(0)
    assert device.config is not None
    start = device.config.size
    device.config.capacity = start + 200  # room for a few lines more than the transcript's
    full = f"% Configuration full: the running configuration holds {start + 200} bytes"
    added = 0
    for i in range(100):
        reply = session.execute(f"ip route 10.0.{i}.0 255.255.255.0 Null0")
        if not reply.ok:
            assert reply.output.startswith(full)
            break
        added += 1
    assert 0 < added < 10
    assert start + 200 <= device.config.size < start + 200 + 40  # one line past it at most
    shown = device.transcript(("show", "running-config"))
    assert f"ip route 10.0.{added - 1}.0" in shown
    assert f"ip route 10.0.{added}.0" not in shown
    assert not session.execute("interface Loopback77").ok  # a new block adds: refused
    assert session.execute("interface GigabitEthernet0/0/1").ok  # an existing one: entered
    assert not session.execute("description more text").ok
    assert session.execute("exit").ok
    assert session.execute("no ip route 10.0.0.0 255.255.255.0 Null0").ok  # frees its bytes
    assert not device.config.full
    assert session.execute("ip route 10.9.9.0 255.255.255.0 Null0").ok


def test_a_banner_cannot_grow_a_full_configuration() -> None:
    device, session = _config_session(0)
    assert device.config is not None
    device.config.capacity = device.config.size + 1000
    assert session.execute("banner motd ^").ok  # its text goes on: the next lines collect it
    refused = None
    for _ in range(100):
        reply = session.execute("x" * 60)
        if not reply.ok:
            refused = reply
            break
    assert refused is not None
    assert refused.output.startswith("% Configuration full")
    closing = session.execute("^")  # no banner is pending: the delimiter is a command again
    assert "% Invalid input detected" in closing.output
    assert "x" * 60 not in device.transcript(("show", "running-config"))


def test_the_configuration_cap_holds_over_https_and_netconf(
        fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(limits=Limits(max_config_size=16_000))
    endpoint = emu.endpoints[0]
    routes = "\n".join(f"ip route 10.{i // 256}.{i % 256}.0 255.255.255.0 Null0"
                       for i in range(2000))
    with https_client(emu) as client:
        reply = client.post(f"{base(endpoint)}/admin/config", content=routes)
    assert reply.status_code == 200
    assert "% Configuration full: the running configuration holds 16000 bytes" in reply.text
    config = endpoint.device.config
    assert config is not None
    assert 16_000 <= config.size < 16_100
    assert len(endpoint.device.transcript(("show", "running-config"))) < 20_000
    raw = RawNetconf(endpoint.netconf_port or 0, password=PASSWORD)
    try:  # a NETCONF edit that would add a line: an rpc-error, the configuration unchanged
        before = config.size
        answer = raw.rpc(
            "<edit-config><target><running/></target><config>"
            '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces"><interface>'
            "<name>GigabitEthernet0/0/1</name><description>more</description></interface>"
            "</interfaces>"
            "</config></edit-config>")
        assert error_tag(answer) is not None
        assert "Configuration full" in etree.tostring(answer, encoding="unicode")
        assert config.size == before
    finally:
        raw.close()


def test_adding_lines_costs_the_same_per_line_however_many(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Counted in work done (key computations), not time: 4x the lines must be ~4x the work
    (the old scan per line made it 16x: 8,000 new lines in one POST froze the device 33 s)."""
    calls = 0

    def counting(text: str) -> str:
        nonlocal calls
        calls += 1
        return line_key(text)

    monkeypatch.setattr(config, "line_key", counting)
    work = {}
    for lines in (1000, 4000):
        device = Device(load_platform("cisco_ios"), DeviceFacts.for_hostname("R1"),
                        enable_secret="x")
        session = CliSession(device, mode=Mode.CONFIG)
        calls = 0
        for i in range(lines):
            session.execute(f"ip route 10.{i // 256}.{i % 256}.0 255.255.255.0 Null0")
            session.execute(f"interface Loopback{i}")
            session.execute(f"description loop {i}")
            session.execute("exit")
        work[lines] = calls
    assert work[4000] <= 5 * work[1000], work


# --- connections that never log in ------------------------------------------------------------


@contextmanager
def idle_tcp(endpoint: DeviceEndpoint, count: int, source: str) -> Iterator[list[socket.socket]]:
    """``count`` TCP connections to the SSH port from ``source`` that never say a word."""
    with ExitStack() as stack:
        socks = []
        for _ in range(count):
            sock = stack.enter_context(socket.create_connection(
                (endpoint.host, endpoint.ssh_port), timeout=5, source_address=(source, 0)))
            socks.append(sock)
        for sock in socks:
            assert banner(sock), "an admitted connection gets the banner"
        yield socks


def banner(sock: socket.socket) -> bytes:
    """The server's SSH version line, or b"" if it closed the connection without one."""
    try:
        return sock.recv(256)
    except ConnectionResetError:
        return b""


def open_from(endpoint: DeviceEndpoint, source: str) -> bytes:
    with socket.create_connection((endpoint.host, endpoint.ssh_port), timeout=5,
                                  source_address=(source, 0)) as sock:
        return banner(sock)


async def login_and_run(endpoint: DeviceEndpoint, **options: object) -> str:
    async with ssh_connect(endpoint, **options) as conn:
        return str((await conn.run("show clock", check=True)).stdout)


def test_connections_logging_in_do_not_count_as_sessions(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(https=False, limits=Limits(
        max_sessions=2, max_startups=(20, 30, 40), max_startups_per_source=20)).endpoints[0]
    clock = endpoint.device.transcript(("show", "clock"))

    async def two_logged_in_then_a_third() -> None:
        async with ssh_connect(endpoint), ssh_connect(endpoint):
            with pytest.raises(asyncssh.DisconnectError, match="Too many sessions"):
                await login_and_run(endpoint)

    with idle_tcp(endpoint, 15, "127.0.0.2"):  # 15 idle connections: more than max_sessions
        assert same_output("cisco_ios", str(run(login_and_run(endpoint))), clock)
        run(two_logged_in_then_a_third())


def test_one_source_cannot_take_every_login_slot(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(https=False)  # defaults: 9 unauthenticated per source
    endpoint = emu.endpoints[0]
    with idle_tcp(endpoint, 9, "127.0.0.2") as idle:
        assert open_from(endpoint, "127.0.0.2") == b""  # the 10th: dropped before the banner
        assert emu.endpoints[0].ssh_counts.dropped == 1
        assert same_output("cisco_ios", str(run(login_and_run(endpoint))),
                           endpoint.device.transcript(("show", "clock")))
        idle.pop().close()
        deadline = time.monotonic() + 5
        while not open_from(endpoint, "127.0.0.2").startswith(b"SSH-2.0-"):
            assert time.monotonic() < deadline, "a closed idle connection frees its slot"
            time.sleep(0.05)


def test_max_startups_full_drops_every_new_connection(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(https=False, limits=Limits(
        max_startups=(3, 30, 3), max_startups_per_source=100)).endpoints[0]
    with idle_tcp(endpoint, 1, "127.0.0.2") as idle, idle_tcp(endpoint, 1, "127.0.0.4"), \
            idle_tcp(endpoint, 1, "127.0.0.5"):
        # full, and no source holds two more than 127.0.0.3 would: nobody is pushed out
        assert open_from(endpoint, "127.0.0.3") == b""
        idle.pop().close()
        deadline = time.monotonic() + 5
        while not open_from(endpoint, "127.0.0.3"):
            assert time.monotonic() < deadline
            time.sleep(0.05)


def test_a_new_source_takes_the_place_of_the_heaviest_sources_oldest(
        fresh_emulator: FreshEmulator) -> None:
    """MaxStartups full of three sources' silent connections (9 each, as the issue's 12 x 9
    did at the default 100): a user from a fourth address still logs in, every time, each
    login finding room by closing the oldest silent connection of the source holding the most
    (no random drops here: MaxStartups starts at full, so the count is exact); a source
    alone holding them cannot push out its own."""
    emu = fresh_emulator(https=False, limits=Limits(max_startups=(27, 100, 27)))
    endpoint = emu.endpoints[0]
    clock = endpoint.device.transcript(("show", "clock"))
    with idle_tcp(endpoint, 9, "127.0.0.2"), idle_tcp(endpoint, 9, "127.0.0.3"), \
            idle_tcp(endpoint, 9, "127.0.0.4"):
        for _ in range(5):
            assert same_output("cisco_ios", str(run(login_and_run(endpoint))), clock)
        assert emu.endpoints[0].ssh_counts.dropped == 0
    admission = Admission(Limits(max_startups=(2, 100, 2), max_startups_per_source=100))
    closed: list[str] = []
    assert admission.refuse("a", "a1", lambda: closed.append("a1")) is None
    assert admission.refuse("a", "a2", lambda: closed.append("a2")) is None
    assert admission.refuse("a", "a3", lambda: closed.append("a3")) is not None  # its own
    assert admission.refuse("b", "b1", lambda: closed.append("b1")) is None
    assert closed == ["a1"]
    admission.closed("a", authenticated=False, key="a1")  # its close, heard later: counted once
    assert (admission.unauthenticated, admission.by_source) == (2, {"a": 1, "b": 1})


def test_early_drop_probability_rises_from_rate_at_start_to_all_at_full() -> None:
    chances = iter([0.299, 0.301, 0.649, 0.651, 0.0])
    admission = Admission(Limits(max_startups=(2, 30, 4), max_startups_per_source=100),
                          chance=lambda: next(chances))
    assert admission.refuse("a") is None  # below start
    assert admission.refuse("b") is None
    assert admission.refuse("c") is not None  # at start (2): 30 % -> 0.299 drops
    assert admission.refuse("c") is None  # 0.301 does not
    assert admission.refuse("d") is not None  # at 3: 65 % -> 0.649 drops
    assert admission.refuse("d") is None
    assert admission.refuse("e") is not None  # at full (4): always
    admission.logged_in("a")
    admission.closed("c", authenticated=False)
    assert (admission.unauthenticated, admission.authenticated) == (2, 1)
    assert admission.by_source == {"b": 1, "d": 1}


def test_login_grace_time_closes_a_silent_connection(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(https=False, limits=Limits(login_timeout=1.0)).endpoints[0]
    with idle_tcp(endpoint, 1, "127.0.0.2") as (sock,):
        started = time.monotonic()
        sock.settimeout(10)
        while sock.recv(4096):  # the server's key exchange offer, then its close
            pass
        assert time.monotonic() - started >= 0.5


def test_channels_per_connection(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(https=False, limits=Limits(max_channels=2))
    endpoint = emu.endpoints[0]

    async def scenario() -> None:
        async with ssh_connect(endpoint) as conn:
            first, _ = await Shell.open(conn), await Shell.open(conn)
            with pytest.raises(asyncssh.ChannelOpenError, match="Too many sessions"):
                await conn.create_process("show clock")
            first.process.close()
            await first.process.wait_closed()
            await asyncio.sleep(0.1)
            assert (await conn.run("show clock")).exit_status == 0

    run(scenario())
    assert endpoint.ssh_counts.refused_channels == 1


# --- password guessing ------------------------------------------------------------------------


@dataclass
class _Guesser(asyncssh.SSHClient):
    """Tries wrong passwords for as long as the server lets it."""

    tried: list[str] = field(default_factory=list)

    def password_auth_requested(self) -> str:
        self.tried.append(f"guess-{len(self.tried)}")
        return self.tried[-1]


async def guess(endpoint: DeviceEndpoint, source: str = "127.0.0.1") -> _Guesser:
    client = _Guesser()
    with pytest.raises((asyncssh.DisconnectError, asyncssh.PermissionDenied)):
        await asyncssh.connect(endpoint.host, endpoint.ssh_port, username=USERNAME,
                               known_hosts=None, client_factory=lambda: client,
                               preferred_auth="password", local_addr=(source, 0))
    return client


def test_ssh_guesses_are_delayed_and_cut_off_after_three(
        fresh_emulator: FreshEmulator, caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator(https=False, limits=Limits(auth_failure_delay=0.2))
    endpoint = emu.endpoints[0]
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="mgmtbench"):
        client = run(guess(endpoint))
    assert isinstance(client, _Guesser)
    assert time.monotonic() - started >= 3 * 0.2
    assert len(client.tried) == 3  # IOS's ip ssh authentication-retries 3
    assert endpoint.ssh_counts.auth_failures == 3
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("mgmtbench")]
    assert [line.split(": ", 1)[1] for line in lines] == [
        f"bad password for user 'admin' ({n} of 3 tries)" for n in (1, 2, 3)]


def test_guesses_from_one_source_wait_their_turn(fresh_emulator: FreshEmulator) -> None:
    endpoint = fresh_emulator(https=False, limits=Limits(auth_failure_delay=0.25,
                                                         auth_tries=1)).endpoints[0]

    async def four_at_once() -> None:
        await asyncio.gather(*(guess(endpoint, "127.0.0.2") for _ in range(4)))

    started = time.monotonic()
    run(four_at_once())
    # In parallel they would all be answered after one delay; in turn, after four.
    assert time.monotonic() - started >= 4 * 0.25


def test_https_guesses_wait_in_turn_and_a_good_login_does_not(
        fresh_emulator: FreshEmulator, caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator(ssh=False, limits=Limits(auth_failure_delay=0.3))
    url = f"{base(emu.endpoints[0])}/admin/exec/show+clock"
    finished: list[str] = []

    def get(name: str, auth: tuple[str, str]) -> None:
        with https_client(emu, auth=False) as client:
            response = client.get(url, auth=auth)
        finished.append(f"{name} {response.status_code}")

    guesses = [threading.Thread(target=get, args=(f"guess{i}", ("admin", f"no{i}")))
               for i in range(4)]
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="mgmtbench"):
        for thread in guesses:
            thread.start()
        time.sleep(0.1)
        get("good", (USERNAME, PASSWORD))
        for thread in guesses:
            thread.join(timeout=30)
    assert time.monotonic() - started >= 4 * 0.3
    assert finished[0] == "good 200"  # not queued behind the guesses
    assert sorted(finished[1:]) == [f"guess{i} 401" for i in range(4)]
    assert sum("bad credentials" in r.getMessage() for r in caplog.records) == 4


# --- HTTPS time-outs --------------------------------------------------------------------------


def _tls(emu: EmulatorThread) -> ssl.SSLSocket:
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    endpoint = emu.endpoints[0]
    raw = socket.create_connection((endpoint.host, endpoint.https_port), timeout=15)
    return context.wrap_socket(raw, server_hostname=endpoint.host)


def test_a_body_sent_a_byte_a_second_is_timed_out(fresh_emulator: FreshEmulator,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator(ssh=False, limits=Limits(body_timeout=1.0, body_min_rate=500))
    auth = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode())
    with caplog.at_level(logging.INFO), _tls(emu) as sock:
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\nAuthorization: Basic " + auth
                     + b"\r\nContent-Length: 1000\r\n\r\n")
        answer = b""
        for _ in range(20):
            sock.sendall(b"x")
            sock.settimeout(0.5)
            try:
                answer += sock.recv(4096)
            except TimeoutError:
                continue
            if b"\r\n\r\n" in answer:
                break
        for _ in range(3):  # the client goes on sending after the answer and the close
            time.sleep(0.2)
            with contextlib.suppress(OSError):
                sock.sendall(b"x")
        time.sleep(0.5)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []  # it logged "Error in ASGI Framework" and a traceback


def test_a_connection_that_never_sends_a_request_is_closed(
        fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator(ssh=False, limits=Limits(https_idle_timeout=1.0))
    with _tls(emu) as sock:
        sock.settimeout(10)
        assert sock.recv(4096) == b""  # closed by the server, long before the 10 s


# --- the log ----------------------------------------------------------------------------------


def test_a_flood_of_one_event_is_a_few_lines_and_a_count() -> None:
    now = [0.0]
    limiter = RateLimitFilter(burst=3, interval=10.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("mgmtbench.emulator", logging.WARNING, __file__, 1, msg, (),
                                 None)

    passed = [limiter.filter(record("%s ssh: bad password")) for _ in range(100)]
    assert passed.count(True) == 3
    assert limiter.filter(record("another event"))  # other events are counted apart
    now[0] = 11.0
    later = record("%s ssh: bad password")
    assert limiter.filter(later)
    assert later.msg.endswith("(97 similar messages held back)")


def test_client_errors_on_the_loop_are_one_line_without_traceback(
        fresh_emulator: FreshEmulator, caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator(ssh=False)
    with caplog.at_level(logging.DEBUG):
        emu.call(_report_client_error())
    ours = [r for r in caplog.records if r.name == "mgmtbench.emulator"]
    assert [r.getMessage() for r in ours] == [
        "socket.accept() out of system resource: [Errno 24] Too many open files"]
    assert ours[0].exc_info is None
    assert ours[0].levelno == logging.WARNING


async def _report_client_error() -> None:
    asyncio.get_running_loop().call_exception_handler({
        "message": "socket.accept() out of system resource",
        "exception": OSError(24, "Too many open files")})


def test_good_clients_are_untouched(ios: DeviceEndpoint) -> None:
    """Logging in right never meets a limit: no failure counted, nothing dropped."""
    before = (ios.ssh_counts.auth_failures, ios.ssh_counts.dropped)
    for _ in range(3):
        assert same_output("cisco_ios", str(run(login_and_run(ios))),
                           ios.device.transcript(("show", "clock")))
    assert (ios.ssh_counts.auth_failures, ios.ssh_counts.dropped) == before


def test_httpx_through_all_limits_unchanged(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa")
    with https_client(emu, http2=True) as client:
        answer = client.get(f"{base(emu.endpoints[0])}/admin/exec/show+bulk-output+1000000")
    assert isinstance(answer, httpx.Response)
    assert answer.text == bulk_output(1_000_000)
