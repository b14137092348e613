"""The emulator against other servers at 0 ms: how much of a benchmark's time it adds itself.

- Against a real OpenSSH sshd, through the OpenSSH client: one ``show version`` exec per round
  (TCP + handshake + auth + channel + exec + close), the ``emulator / openssh-sshd`` ratio.
- Against the study's Go emulator (clibench ``server``, ``--peer-server PATH``), through the same
  Python client: an exec on a kept SSH connection, a fresh connection + exec, an HTTPS keep-alive
  GET; per operation the emulator's time, the Go server's and their ratio (target <= 1.2), and
  each server's CPU time per operation.
- Against clibench's Go RESTCONF server (``--peer-restconf-server PATH``), through the same httpx
  client: a GET of the study's envelope on a warm connection (target <= 1.2).
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import asyncssh
import httpx
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.options import Algorithms
from mgmtbench.emulator.oracle import same_output
from mgmtbench.lab import procfs
from mgmtbench.testing import PASSWORD, USERNAME, ClientKeys, record
from mgmtbench.testing.sshd import SshdDevice, free_port, ssh_command

Target = tuple[int, str, Path, str]  # port, user, known_hosts, expected output


@pytest.fixture
def sshd_target(sshd_device: Callable[..., SshdDevice],
                emulator_for: Callable[[str], EmulatorThread]) -> Target:
    expected = emulator_for("cisco_ios").endpoints[0].device.transcript(("show", "version"))
    device = sshd_device("cisco_ios")
    return device.port, device.user, device.known_hosts, expected


@pytest.fixture
def emulator_target(emulator_for: Callable[[str], EmulatorThread],
                    fresh_emulator: Callable[..., EmulatorThread]) -> Callable[[str], Target]:
    """The emulator for one ``kex`` case: as the platform ships (its IOS-XE identity) for
    ``default-kex``; else offering that key exchange with sshd's ed25519 host key, so both
    servers do the same handshake."""
    def target(kex: str) -> Target:
        emu = (emulator_for("cisco_ios") if kex == "default-kex" else fresh_emulator(
            "cisco_ios", https=False, algorithms=Algorithms(kex=(kex,)),
            host_key_type="ed25519"))
        endpoint = emu.endpoints[0]
        assert endpoint.ssh_port is not None
        expected = endpoint.device.transcript(("show", "version"))
        return endpoint.ssh_port, USERNAME, emu.emulator.known_hosts, expected

    return target


@pytest.mark.parametrize("kex", ["default-kex", "curve25519-sha256"])
@pytest.mark.parametrize("server", ["emulator", "openssh-sshd"])
def test_openssh_exec_show_version(benchmark: BenchmarkFixture, request: pytest.FixtureRequest,
                                   client_keys: ClientKeys, server: str, kex: str) -> None:
    port, user, known_hosts, expected = (
        request.getfixturevalue("emulator_target")(kex) if server == "emulator"
        else request.getfixturevalue("sshd_target"))
    argv = ssh_command("127.0.0.1", port, user, client_keys.private, known_hosts, "show version")
    if kex != "default-kex":  # OpenSSH 9.x prefers sntrup761x25519, which asyncssh lacks
        argv[1:1] = ["-o", f"KexAlgorithms={kex}"]

    def exec_once() -> str:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    benchmark.group = f"openssh exec show version, 0 ms, {kex}"
    record(benchmark, "emulator-baseline", server=server, client="openssh", profile="local",
           kex=kex)
    output = benchmark.pedantic(exec_once, rounds=30, warmup_rounds=3)
    assert same_output("cisco_ios", output, expected)  # the uptime runs: stable forms


# --- The same Python client against the emulator and against a Go emulator ------------------
#
# clibench's ``server`` (github.com/lykinsbd/clibench, the study's tool: Go, x/crypto/ssh and
# net/http) answers the same exec and HTTPS API. Both run as their own processes, answer the
# same ``show version`` text byte for byte (the Go server is given the emulator's as its
# transcript), and are driven by one asyncio client in this process (asyncssh, httpx) with the
# same algorithms (curve25519-sha256, aes128-gcm, ed25519 host key) and password login. Each
# round times a batch of operations on one server then the other (the order alternating): on a
# shared machine the figures move, their ratio much less. The target: mgmtbench / Go
# <= 1.2 per operation.

PEER_TARGET = 1.2
PEER_CLIENT: dict[str, list[str]] = {
    "kex_algs": ["curve25519-sha256"], "encryption_algs": ["aes128-gcm@openssh.com"],
    "server_host_key_algs": ["ssh-ed25519"],
    # The Go server offers password login only; keyboard-interactive costs a round trip more.
    "preferred_auth": ["password"]}
PEER_COMMAND = "show version"
PEER_ROUNDS = int(os.environ.get("MGMTBENCH_PEER_ROUNDS", "7"))
#: Operations per server in one round (a fresh connection costs ~10x an exec on a kept one).
PEER_BATCH = {"ssh-exec-kept": 100, "ssh-exec-fresh": 15, "https-get-kept": 100}


@dataclass
class PeerServer:
    """One of the two servers: its process, where it answers, and the client's kept sessions."""

    name: str
    process: subprocess.Popen[str]
    ssh_port: int
    https_port: int
    conn: asyncssh.SSHClientConnection | None = None
    http: httpx.AsyncClient | None = None

    def cpu_seconds(self) -> float:
        return procfs.threads_cpu_seconds(self.process.pid)

    async def connect(self) -> asyncssh.SSHClientConnection:
        return await asyncssh.connect("127.0.0.1", self.ssh_port, username=USERNAME,
                                      password=PASSWORD, known_hosts=None, **PEER_CLIENT)

    async def operation(self, op: str) -> str:
        """One operation; the command's output."""
        if op == "ssh-exec-kept":
            assert self.conn is not None
            return str((await self.conn.run(PEER_COMMAND, check=True)).stdout)
        if op == "ssh-exec-fresh":
            async with await self.connect() as conn:
                return str((await conn.run(PEER_COMMAND, check=True)).stdout)
        assert self.http is not None
        answer = await self.http.get(
            f"https://127.0.0.1:{self.https_port}/admin/exec/{PEER_COMMAND.replace(' ', '+')}")
        answer.raise_for_status()
        return answer.text


@dataclass
class PeerPair:
    """The emulator and the Go server, and the client's loop."""

    loop: asyncio.AbstractEventLoop
    ours: PeerServer
    go: PeerServer


def _serve_mgmtbench() -> tuple[subprocess.Popen[str], int, int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0",
         "--username", USERNAME, "--password", PASSWORD,
         # The Go server's algorithms (the platform's own may differ: the handshake's cost too).
         "--host-key", "ed25519", "--host-key-algs", "ssh-ed25519",
         "--kex", ",".join(PEER_CLIENT["kex_algs"]),
         "--ciphers", ",".join(PEER_CLIENT["encryption_algs"])],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    ssh_port = https_port = 0
    for line in process.stdout:
        if found := re.search(r"ssh -p (\d+)", line):
            ssh_port = int(found.group(1))
        if found := re.search(r"https://[^/]+:(\d+)/", line):
            https_port = int(found.group(1))
        if line.startswith("Press Ctrl-C"):
            break
    assert ssh_port, "mgmtbench serve did not start"
    assert https_port, "mgmtbench serve did not start its HTTPS server"
    return process, ssh_port, https_port


def _serve_peer(binary: str, transcripts: Path) -> tuple[subprocess.Popen[str], int, int]:
    ssh_port, https_port = free_port(), free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:  # its HTTP/3 listener
        udp.bind(("127.0.0.1", 0))
        h3_port = int(udp.getsockname()[1])
    process = subprocess.Popen(
        [binary, "server", "--ssh-port", str(ssh_port), "--https-port", str(https_port),
         "--http-3-port", str(h3_port), "--hostname", "R1", "--user", USERNAME,
         "--pass", PASSWORD, "--transcripts", str(transcripts)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    waiting = {"SSH listening", "HTTPS listening"}
    # A server that never says it listens is stopped after 30 s (its output then ends).
    deadline = threading.Timer(30, process.kill)
    deadline.start()
    try:
        for line in process.stderr:
            waiting = {w for w in waiting if w not in line}
            if not waiting:
                break
    finally:
        deadline.cancel()
    assert not waiting, f"{binary} server did not start in 30 s (still waiting for {waiting})"
    return process, ssh_port, https_port


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture(scope="module")
def peer_pair(request: pytest.FixtureRequest,
              tmp_path_factory: pytest.TempPathFactory) -> Iterator[PeerPair]:
    """Both servers running, each with a kept SSH connection and HTTPS client on one loop."""
    binary = request.config.getoption("--peer-server")
    if not binary:
        pytest.skip("no Go emulator to compare with: build clibench outside this repository "
                    "(git clone github.com/lykinsbd/clibench; go build ./cmd/clibench) and give "
                    "its path with --peer-server PATH or MGMTBENCH_PEER_SERVER")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"--peer-server {binary}: not an executable file")
    loop = asyncio.new_event_loop()
    servers: list[PeerServer] = []
    try:
        servers.append(PeerServer("mgmtbench", *_serve_mgmtbench()))
        # The Go server answers from a folder of <command>.txt files: give it ours, byte for byte.
        ours = loop.run_until_complete(servers[0].operation("ssh-exec-fresh"))
        transcripts = tmp_path_factory.mktemp("peer-transcripts")
        (transcripts / f"{PEER_COMMAND.replace(' ', '_')}.txt").write_text(ours)
        servers.append(PeerServer("go", *_serve_peer(str(binary), transcripts)))
        tls = ssl.create_default_context()
        tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # both certificates made up
        for server in servers:
            server.conn = loop.run_until_complete(server.connect())
            server.http = httpx.AsyncClient(verify=tls, auth=(USERNAME, PASSWORD))
        yield PeerPair(loop, servers[0], servers[1])
    finally:
        for server in servers:
            if server.conn is not None:
                server.conn.close()
            if server.http is not None:
                loop.run_until_complete(server.http.aclose())
            _stop(server.process)
        loop.close()


@pytest.mark.parametrize("op", list(PEER_BATCH))
def test_same_client_against_go_emulator(benchmark: BenchmarkFixture, peer_pair: PeerPair,
                                         op: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Per operation: the emulator's time, the Go server's, their ratio (median of the rounds'),
    and each server's CPU time per operation (from /proc)."""
    loop, ours, go = peer_pair.loop, peer_pair.ours, peer_pair.go
    expected = loop.run_until_complete(ours.operation(op))
    batch = PEER_BATCH[op]
    times: dict[str, list[float]] = {ours.name: [], go.name: []}
    cpu: dict[str, list[float]] = {ours.name: [], go.name: []}

    async def timed(server: PeerServer) -> None:
        before_cpu = server.cpu_seconds()
        start = time.perf_counter()
        for _ in range(batch):
            output = await server.operation(op)
        elapsed = time.perf_counter() - start
        times[server.name].append(elapsed / batch)
        cpu[server.name].append((server.cpu_seconds() - before_cpu) / batch)
        # Stable forms: our uptime runs, the Go server's copy of the transcript does not.
        assert same_output("cisco_ios", output, expected), f"{server.name}: {op} answered other text"

    def one_round() -> None:
        pair = (ours, go) if len(times[ours.name]) % 2 == 0 else (go, ours)
        for server in pair:
            loop.run_until_complete(timed(server))

    # Warm both up untimed, a round's worth each: the emulator's first few hundred execs after
    # its start cost ~15 % more than later ones (the Go server's much less).
    for server in (ours, go):
        for _ in range(batch):
            loop.run_until_complete(server.operation(op))
    benchmark.group = "same Python client: mgmtbench vs Go emulator (clibench server), 0 ms"
    benchmark.pedantic(one_round, rounds=PEER_ROUNDS, warmup_rounds=0)
    ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
    cpu_ms = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    pairs = zip(times[ours.name], times[go.name], strict=True)  # the rounds' interleaved pairs
    ratio = statistics.median(a / b for a, b in pairs)
    cpu_ratio = cpu_ms[ours.name] / max(cpu_ms[go.name], 1e-9)
    record(benchmark, "emulator-vs-go", op=op, client="asyncssh+httpx", profile="local",
           rounds=PEER_ROUNDS, batch=batch, mgmtbench_ms=round(ms[ours.name], 3),
           go_ms=round(ms[go.name], 3), ratio=round(ratio, 2),
           mgmtbench_cpu_ms=round(cpu_ms[ours.name], 3), go_cpu_ms=round(cpu_ms[go.name], 3),
           cpu_ratio=round(cpu_ratio, 2), target_ratio=PEER_TARGET)
    with capsys.disabled():
        print(f"\n{op}: mgmtbench {ms[ours.name]:.3f} ms, Go {ms[go.name]:.3f} ms per op, "
              f"ratio {ratio:.2f} ({'within' if ratio <= PEER_TARGET else 'over'} the "
              f"{PEER_TARGET} target); server CPU per op {cpu_ms[ours.name]:.3f} vs "
              f"{cpu_ms[go.name]:.3f} ms ({cpu_ratio:.1f}x); median of {PEER_ROUNDS} rounds of "
              f"{batch}")


class _Peer(Protocol):
    name: str

    def cpu_seconds(self) -> float: ...


def _side_by_side(benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str],
                  pair: tuple[_Peer, _Peer], get: Callable[[Any], str], *, batch: int,
                  op: str, client: str, protocol: str) -> None:
    """One request ``get(peer)`` timed ``batch`` times on each of the two servers (ours, Go),
    alternated round by round: the time per request, their ratio (median of the rounds'), each
    server's CPU time per request; every answer checked against ours; recorded and printed."""
    ours, go = pair
    expected = get(ours)
    times: dict[str, list[float]] = {ours.name: [], go.name: []}
    cpu: dict[str, list[float]] = {ours.name: [], go.name: []}

    def timed(peer: _Peer) -> None:
        before_cpu = peer.cpu_seconds()
        start = time.perf_counter()
        for _ in range(batch):
            output = get(peer)
        times[peer.name].append((time.perf_counter() - start) / batch)
        cpu[peer.name].append((peer.cpu_seconds() - before_cpu) / batch)
        assert same_output("cisco_ios", output, expected), f"{peer.name}: other text"

    def one_round() -> None:
        for peer in (ours, go) if len(times[ours.name]) % 2 == 0 else (go, ours):
            timed(peer)

    for peer in (ours, go):
        for _ in range(batch):
            get(peer)
    benchmark.group = f"same Python client: mgmtbench vs Go {protocol} server, 0 ms"
    benchmark.pedantic(one_round, rounds=PEER_ROUNDS, warmup_rounds=0)
    ms = {name: statistics.median(values) * 1000 for name, values in times.items()}
    cpu_ms = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    ratio = statistics.median(a / b for a, b in zip(times[ours.name], times[go.name],
                                                     strict=True))
    cpu_ratio = cpu_ms[ours.name] / max(cpu_ms[go.name], 1e-9)
    record(benchmark, "emulator-vs-go", op=op, client=client,
           profile="local", rounds=PEER_ROUNDS, batch=batch,
           mgmtbench_ms=round(ms[ours.name], 3), go_ms=round(ms[go.name], 3),
           ratio=round(ratio, 2), mgmtbench_cpu_ms=round(cpu_ms[ours.name], 3),
           go_cpu_ms=round(cpu_ms[go.name], 3), cpu_ratio=round(cpu_ratio, 2),
           target_ratio=PEER_TARGET)
    with capsys.disabled():
        print(f"\n{op}: mgmtbench {ms[ours.name]:.3f} ms, Go {ms[go.name]:.3f} ms "
              f"per request, ratio {ratio:.2f} ({'within' if ratio <= PEER_TARGET else 'over'} "
              f"the {PEER_TARGET} target); server CPU per request {cpu_ms[ours.name]:.3f} vs "
              f"{cpu_ms[go.name]:.3f} ms ({cpu_ratio:.1f}x); median of {PEER_ROUNDS} rounds of "
              f"{batch}")


# --- NETCONF: the emulator's netconf subsystem against clibench's Go NETCONF server -----------

NETCONF_BATCH = 100
_NETCONF_HELLO = (b'<hello xmlns="urn:ietf:params:xml:ns:netconf:base:1.0"><capabilities>'
                  b"<capability>urn:ietf:params:netconf:base:1.1</capability></capabilities>"
                  b"</hello>]]>]]>")


@dataclass
class NetconfPeer:
    """One NETCONF server: its process, port, and the client's kept session."""

    name: str
    process: subprocess.Popen[str]
    port: int
    conn: asyncssh.SSHClientConnection | None = None
    writer: asyncssh.SSHWriter[bytes] | None = None
    reader: asyncssh.SSHReader[bytes] | None = None
    buffer: bytes = b""
    message_id: int = 0

    def cpu_seconds(self) -> float:
        return procfs.threads_cpu_seconds(self.process.pid)

    async def open(self) -> None:
        """SSH, the netconf subsystem, both hellos (base:1.1: chunked framing after them)."""
        self.conn = await asyncssh.connect("127.0.0.1", self.port, username=USERNAME,
                                           password=PASSWORD, known_hosts=None, **PEER_CLIENT)
        self.writer, self.reader, _ = await self.conn.open_session(subsystem="netconf",
                                                                   encoding=None)
        while b"]]>]]>" not in self.buffer:
            self.buffer += await self.reader.read(65536)
        self.buffer = self.buffer.split(b"]]>]]>", 1)[1]
        self.writer.write(_NETCONF_HELLO)

    async def get(self) -> str:
        """One ``<get>`` of the study's CLI envelope; the ``<data>``'s text."""
        assert self.writer is not None
        assert self.reader is not None
        self.message_id += 1
        rpc = (f'<rpc message-id="{self.message_id}" xmlns="urn:ietf:params:xml:ns:netconf:'
               f'base:1.0"><get><filter type="cli">{PEER_COMMAND}</filter></get></rpc>').encode()
        self.writer.write(b"\n#%d\n%s\n##\n" % (len(rpc), rpc))
        while b"\n##\n" not in self.buffer:
            self.buffer += await self.reader.read(65536)
        framed, self.buffer = self.buffer.split(b"\n##\n", 1)
        message = b""
        while framed:
            head, _, framed = framed[2:].partition(b"\n")
            message += framed[:int(head)]
            framed = framed[int(head):]
        text = message.decode()
        start, end = text.index("<data>") + 6, text.rindex("</data>")
        return html.unescape(text[start:end])


def _serve_netconf_peer(binary: str, transcripts: Path) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    process = subprocess.Popen(
        [binary, "-addr", f"127.0.0.1:{port}", "-hostname", "R1", "-user", USERNAME,
         "-pass", PASSWORD, "-transcripts", str(transcripts)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = threading.Timer(30, process.kill)
    deadline.start()
    try:
        started = any("listening" in line for line in process.stderr)
    finally:
        deadline.cancel()
    assert started, f"{binary} did not start in 30 s"
    return process, port


@pytest.fixture(scope="module")
def netconf_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[tuple[asyncio.AbstractEventLoop, NetconfPeer, NetconfPeer]]:
    """The emulator's NETCONF (on its SSH port) and the Go NETCONF server, each with a kept
    session on one loop."""
    binary = request.config.getoption("--peer-netconf-server")
    if not binary:
        pytest.skip("no Go NETCONF server to compare with: build clibench's internal/"
                    "netconfserver (v0.8) outside this repository behind a small main and give "
                    "its path with --peer-netconf-server PATH or MGMTBENCH_PEER_NETCONF_SERVER")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"--peer-netconf-server {binary}: not an executable file")
    loop = asyncio.new_event_loop()
    peers: list[NetconfPeer] = []
    try:
        process, ssh_port, _ = _serve_mgmtbench()
        peers.append(NetconfPeer("mgmtbench", process, ssh_port))
        loop.run_until_complete(peers[0].open())
        ours = loop.run_until_complete(peers[0].get())
        transcripts = tmp_path_factory.mktemp("peer-netconf-transcripts")
        (transcripts / f"{PEER_COMMAND.replace(' ', '_')}.txt").write_text(ours)
        peers.append(NetconfPeer("go", *_serve_netconf_peer(str(binary), transcripts)))
        loop.run_until_complete(peers[1].open())
        yield loop, peers[0], peers[1]
    finally:
        for peer in peers:
            if peer.conn is not None:
                peer.conn.close()
            _stop(peer.process)
        loop.close()


def test_netconf_get_against_go_server(
        benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str],
        netconf_pair: tuple[asyncio.AbstractEventLoop, NetconfPeer, NetconfPeer]) -> None:
    """A NETCONF ``get`` (the study's CLI envelope, ``show version``) on a kept session:
    the emulator's time per request, the Go server's, their ratio (median of the rounds'),
    and each server's CPU time per request."""
    loop, ours, go = netconf_pair
    _side_by_side(benchmark, capsys, (ours, go), lambda peer: loop.run_until_complete(peer.get()),
                  batch=NETCONF_BATCH, op="netconf-get-kept", client="asyncssh",
                  protocol="NETCONF")


# --- RESTCONF: the emulator's RESTCONF against clibench's Go RESTCONF server ------------------

RESTCONF_BATCH = 100
RESTCONF_PATH = "/restconf/data/cli:show/version"  # the study's envelope of PEER_COMMAND


@dataclass
class RestconfPeer:
    """One RESTCONF server: its process, HTTPS port, and the client kept on it."""

    name: str
    process: subprocess.Popen[str]
    port: int
    http: httpx.AsyncClient | None = None

    def cpu_seconds(self) -> float:
        return procfs.threads_cpu_seconds(self.process.pid)

    async def get(self) -> str:
        """One GET of the study's envelope (JSON) on the kept connection; its CLI text."""
        assert self.http is not None
        response = await self.http.get(f"https://127.0.0.1:{self.port}{RESTCONF_PATH}",
                                       headers={"Accept": "application/yang-data+json"})
        assert response.status_code == 200, f"{self.name}: {response.status_code}"
        return str(response.json()["cli:output"]["response"])


@pytest.fixture(scope="module")
def restconf_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
                  ) -> Iterator[tuple[asyncio.AbstractEventLoop, RestconfPeer, RestconfPeer]]:
    """The emulator's RESTCONF (on its HTTPS port) and the Go RESTCONF server, each with a kept
    HTTP/1.1 connection of one httpx client on one loop."""
    binary = request.config.getoption("--peer-restconf-server")
    if not binary:
        pytest.skip("no Go RESTCONF server to compare with: build clibench's internal/"
                    "restconfserver (v0.8) outside this repository behind a small main and give "
                    "its path with --peer-restconf-server PATH or MGMTBENCH_PEER_RESTCONF_SERVER")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"--peer-restconf-server {binary}: not an executable file")
    loop = asyncio.new_event_loop()
    peers: list[RestconfPeer] = []
    tls = ssl.create_default_context()
    tls.check_hostname, tls.verify_mode = False, ssl.CERT_NONE  # both certificates made up
    try:
        process, _, https_port = _serve_mgmtbench()
        peers.append(RestconfPeer("mgmtbench", process, https_port))
        peers[0].http = httpx.AsyncClient(verify=tls, auth=(USERNAME, PASSWORD))
        ours = loop.run_until_complete(peers[0].get())
        transcripts = tmp_path_factory.mktemp("peer-restconf-transcripts")
        (transcripts / f"{PEER_COMMAND.replace(' ', '_')}.txt").write_text(ours)
        peers.append(RestconfPeer("go", *_serve_netconf_peer(str(binary), transcripts)))
        peers[1].http = httpx.AsyncClient(verify=tls, auth=(USERNAME, PASSWORD))
        yield loop, peers[0], peers[1]
    finally:
        for peer in peers:
            if peer.http is not None:
                loop.run_until_complete(peer.http.aclose())
            _stop(peer.process)
        loop.close()


def test_restconf_get_against_go_server(
        benchmark: BenchmarkFixture, capsys: pytest.CaptureFixture[str],
        restconf_pair: tuple[asyncio.AbstractEventLoop, RestconfPeer, RestconfPeer]) -> None:
    """A RESTCONF GET (the study's CLI envelope, ``show version``, JSON) on a warm connection:
    the emulator's time per request, the Go server's, their ratio (median of the rounds'),
    and each server's CPU time per request."""
    loop, ours, go = restconf_pair
    _side_by_side(benchmark, capsys, (ours, go), lambda peer: loop.run_until_complete(peer.get()),
                  batch=RESTCONF_BATCH, op="restconf-get-kept", client="httpx",
                  protocol="RESTCONF")


# --- gNMI: the emulator's gNMI server against clibench's Go gNMI server ------------------------

GNMI_BATCH = 100


@dataclass
class GnmiPeer:
    """One gNMI server: its process, port, and the client's warm channel (the bare stub)."""

    name: str
    process: subprocess.Popen[str]
    port: int
    channel: Any = None
    stub: Any = None

    def cpu_seconds(self) -> float:
        return procfs.threads_cpu_seconds(self.process.pid)

    def open(self, ca: bytes) -> None:
        import grpc

        from mgmtbench.emulator.gnmi.protos import rpc

        self.channel = grpc.secure_channel(f"127.0.0.1:{self.port}",
                                           grpc.ssl_channel_credentials(ca))
        self.stub = rpc.gNMIStub(self.channel)

    def get(self) -> str:
        """The study's request: ``/cli/show/version``, ASCII; the answer's text (ours is an
        ``ascii_val``, the Go server's a ``string_val``)."""
        from mgmtbench.emulator.gnmi.paths import command_path
        from mgmtbench.emulator.gnmi.protos import pb

        reply = self.stub.Get(pb.GetRequest(path=[command_path(PEER_COMMAND)],
                                            encoding=pb.Encoding.Value("ASCII")),
                              metadata=(("username", USERNAME), ("password", PASSWORD)),
                              timeout=10)
        value = reply.notification[0].update[0].val
        return str(getattr(value, value.WhichOneof("value")))


def _serve_mgmtbench_gnmi(state: Path) -> tuple[subprocess.Popen[str], int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port", "0",
         "--no-netconf", "--username", USERNAME, "--password", PASSWORD,
         "--state-dir", str(state)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    port = 0
    for line in process.stdout:
        if found := re.search(r"gnmic -a [^ ]+:(\d+) ", line):
            port = int(found.group(1))
        if line.startswith("Press Ctrl-C"):
            break
    assert port, "mgmtbench serve did not start its gNMI server"
    return process, port


def _serve_gnmi_peer(binary: str, transcripts: Path, state: Path
                     ) -> tuple[subprocess.Popen[str], int]:
    port = free_port()
    # The emulator's own certificate (its CA is what the client trusts): the same TLS for both.
    process = subprocess.Popen(
        [binary, "-addr", f"127.0.0.1:{port}", "-hostname", "R1", "-user", USERNAME,
         "-pass", PASSWORD, "-transcripts", str(transcripts),
         "-tls-cert", str(state / "tls" / "server.pem"),
         "-tls-key", str(state / "tls" / "server.key")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    deadline = threading.Timer(30, process.kill)
    deadline.start()
    try:
        started = any("listening" in line for line in process.stderr)
    finally:
        deadline.cancel()
    assert started, f"{binary} did not start in 30 s"
    return process, port


@pytest.fixture(scope="module")
def gnmi_pair(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
              ) -> Iterator[tuple[GnmiPeer, GnmiPeer]]:
    """The emulator's gNMI and the Go gNMI server (serving the emulator's certificate), each
    with a warm channel."""
    binary = request.config.getoption("--peer-gnmi-server")
    if not binary:
        pytest.skip("no Go gNMI server to compare with: build clibench's internal/gnmiserver "
                    "(v0.7.0) outside this repository behind a small main that takes -addr "
                    "-transcripts -tls-cert -tls-key and give its path with --peer-gnmi-server "
                    "PATH or MGMTBENCH_PEER_GNMI_SERVER")
    if not os.access(binary, os.X_OK):
        pytest.skip(f"--peer-gnmi-server {binary}: not an executable file")
    state = tmp_path_factory.mktemp("gnmi-state")
    peers: list[GnmiPeer] = []
    try:
        peers.append(GnmiPeer("mgmtbench", *_serve_mgmtbench_gnmi(state)))
        ca = (state / "tls" / "ca.pem").read_bytes()
        peers[0].open(ca)
        transcripts = tmp_path_factory.mktemp("peer-gnmi-transcripts")
        (transcripts / f"{PEER_COMMAND.replace(' ', '_')}.txt").write_text(peers[0].get())
        peers.append(GnmiPeer("go", *_serve_gnmi_peer(str(binary), transcripts, state)))
        peers[1].open(ca)
        yield peers[0], peers[1]
    finally:
        for peer in peers:
            if peer.channel is not None:
                peer.channel.close()
            _stop(peer.process)


def test_gnmi_get_against_go_server(benchmark: BenchmarkFixture,
                                    capsys: pytest.CaptureFixture[str],
                                    gnmi_pair: tuple[GnmiPeer, GnmiPeer]) -> None:
    """A gNMI Get (the study's ``/cli/show/version``, ASCII) on a warm channel through the
    generated stub: the emulator's time per request, the Go server's, their ratio (median of the
    rounds'), and each server's CPU time per request."""
    _side_by_side(benchmark, capsys, gnmi_pair, lambda peer: peer.get(), batch=GNMI_BATCH,
                  op="gnmi-get-warm", client="grpc-gnmi", protocol="gNMI")
