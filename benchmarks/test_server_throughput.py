"""Server throughput against connections (after an SSH server vendor's study against OpenSSH):
1..20 concurrent bulk transfers per cipher, MB/s per connection and in total, the server pinned
to one core and unpinned, the emulator beside a real OpenSSH ``sshd``, with the server's and the
client's CPU.

Parametrised over link x server x cipher x direction x pinning x connections
(``--throughput-links``, ``--throughput-servers``, ``--throughput-ciphers``,
``--throughput-directions``, ``--throughput-pinning``, ``--throughput-connections``; ids
``[local-aes128-gcm-upload-c5-pinned-sshd]``), ``--throughput-mb`` per connection (100 by
default). Each link is a lab (``local``: the unimpaired veth; ``1000mbit``: the study's 1 Gbit/s
at 0 ms) whose device runtime is the server: ``netns`` (the emulator) or ``sshd``; ``loopback``
runs both servers on 127.0.0.1 without a lab. ``test_link_ceiling`` first measures each lab
link's own ceiling: plain TCP to the lab's echo sink, no SSH.

The client is OpenSSH's ``ssh``, a ControlMaster per connection logged in before anything is
timed (:mod:`mgmtbench.clients.openssh.bulk`): the timed part is one round of every connection's
transfer at once (a channel, the exec request ``cat > /dev/null`` fed from a file, or ``head -c N
/dev/zero``, the data, the exit status). Pinned: every thread of the server's processes on the
last CPU (``sshd``'s listener before its connections exist, so its per-connection processes
inherit it, and every process already there), the client's masters on the others; the affinity
is read back from /proc before the round. CPU: ``/proc/PID/stat`` over the round, the server's
process tree with its reaped children, the masters and the multiplexing clients, the link's own
process (the tun delay line) and the rest of the machine (``other_cpu_pct``), and how busy the
server's CPUs and the client's CPUs were (``server_cpus_busy_pct``, ``client_cpus_busy_pct``:
100 says that side had no CPU time to spare, whoever used it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients.openssh.adapter import OpensshClient
from mgmtbench.clients.openssh.bulk import BulkConnections, zero_file
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, open_lab
from mgmtbench.lab.lab import ECHO_PORT, has_net_admin
from mgmtbench.lab.runtimes import RUNTIMES
from mgmtbench.targets import Target
from mgmtbench.testing import record
from mgmtbench.testing.credentials import PASSWORD, USERNAME, credentials
from mgmtbench.testing.keys import ClientKeys
from mgmtbench.testing.options import throughput_matrix
from mgmtbench.testing.throughput import (
    LOOPBACK,
    MB,
    BulkServer,
    ThroughputMatrix,
    algorithms,
    cpu_split,
    emulator_server,
    link_profile,
    measure,
    sshd_server,
    tcp_upload,
    trees_cpu_seconds,
)

RUNTIME = {"emulator": "netns", "sshd": "sshd"}  # the lab's device runtime for each server


# --- the matrix -------------------------------------------------------------------------------


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise from the ``--throughput-*`` options, outermost first: the servers of a link
    and their connections for a cipher serve every test of that cipher, and the servers (and
    pinned/unpinned) take turns at each connection count, so a change in the machine's load
    during the run falls on both sides of each comparison."""
    matrix = throughput_matrix(metafunc.config)
    if "ceiling_link" in metafunc.fixturenames:
        metafunc.parametrize("ceiling_link", [k for k in matrix.links if k != LOOPBACK])
        return
    if "connections" not in metafunc.fixturenames:
        return
    metafunc.parametrize("link", matrix.links)
    metafunc.parametrize("cipher", matrix.ciphers)
    metafunc.parametrize("direction", matrix.directions)
    metafunc.parametrize("connections", matrix.connections,
                         ids=[f"c{n}" for n in matrix.connections])
    metafunc.parametrize("pinning", matrix.pinning)
    metafunc.parametrize("server", matrix.servers)


# --- servers and connections, kept while consecutive tests use them ---------------------------


@dataclass
class Stage:
    """The servers of the current link (each on first use) and their connections for the current
    cipher: kept while consecutive tests use them, replaced when a test wants another link or
    cipher."""

    keys: ClientKeys
    folder: Path
    backend: str
    size: int
    data: Path | None = None
    _link: str | None = None
    _servers: dict[str, tuple[BulkServer, Lab | None]] = field(default_factory=dict)
    _server_stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _cipher: str | None = None
    _bulk: dict[str, BulkConnections] = field(default_factory=dict)

    def server(self, link: str, name: str) -> tuple[BulkServer, Lab | None]:
        """The running ``name`` server on ``link`` and its lab (None on loopback)."""
        if self._link != link:
            self.close()
            self._link = link
        if name not in self._servers:
            self._servers[name] = self._start(link, name)
        return self._servers[name]

    def connections(self, link: str, name: str, cipher: str, count: int) -> BulkConnections:
        """``count`` logged-in connections to the server with ``cipher`` (warmed up)."""
        server, _ = self.server(link, name)
        if self._cipher != cipher:
            self._close_bulk()
            self._cipher = cipher
        bulk = self._bulk.get(name)
        if bulk is None or bulk.connections < count:
            if bulk is not None:
                bulk.close()
            target = replace(server.target, algorithms=algorithms(cipher))
            bulk = self._bulk[name] = BulkConnections(target, count).open()
            # Warm up every connection and the server's code paths: 1 MB each, both ways.
            warm = zero_file(MB, self.folder)
            try:
                bulk.transfer(count, "upload", MB, warm)
                bulk.transfer(count, "download", MB)
            finally:
                warm.unlink()
        return bulk

    def upload_data(self) -> Path:
        """The file each connection uploads (``size`` zero bytes, made once)."""
        if self.data is None:
            self.data = zero_file(self.size)
        return self.data

    def _start(self, link: str, name: str) -> tuple[BulkServer, Lab | None]:
        profile = link_profile(link)
        folder = self.folder / f"{link}-{name}"
        if profile is None:
            start = emulator_server if name == "emulator" else sshd_server
            server = self._server_stack.enter_context(
                start(folder, self.keys.authorized_keys, self.keys.private))
            return server, None
        if not has_net_admin():
            pytest.skip(f"link {link} is a lab link and needs root or CAP_NET_ADMIN: run as "
                        "root, or --throughput-links loopback")
        runtime = RUNTIME[name]
        if runtime not in RUNTIMES:
            pytest.skip(f"server {name} cannot be put behind a lab link here (no device runtime "
                        f"{runtime}): use --throughput-links loopback")
        try:
            lab = open_lab(profile, runtime=runtime, backend=self.backend,
                           credentials=credentials(self.keys.authorized_keys))
        except UsageError as exc:
            pytest.fail(f"lab for link {link} with server {name}: {exc}")
        assert isinstance(lab, Lab)
        self._server_stack.callback(lab.down)
        device = lab.devices[0]
        target = Target(device.address, device.ssh_port, 0, USERNAME, PASSWORD, "",
                        known_hosts=lab.known_hosts, key_file=self.keys.private)
        return BulkServer(name, target, tuple(lab.device_pids())), lab

    def _close_bulk(self) -> None:
        for bulk in self._bulk.values():
            bulk.close()
        self._bulk.clear()
        self._cipher = None

    def close(self) -> None:
        """Close the connections, stop the servers (and their labs)."""
        self._close_bulk()
        self._server_stack.close()
        self._servers.clear()
        self._link = None

    def remove(self) -> None:
        """:meth:`close`, and remove the upload file."""
        self.close()
        if self.data is not None:
            self.data.unlink(missing_ok=True)
            self.data = None


@pytest.fixture(scope="module")
def stage(request: pytest.FixtureRequest, client_keys: ClientKeys,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    """The module's servers and connections (see :class:`Stage`)."""
    config = request.config
    made = Stage(client_keys, tmp_path_factory.mktemp("throughput"),
                 str(config.getoption("--link-backend")), throughput_matrix(config).size)
    yield made
    made.remove()


# --- the benchmarks ---------------------------------------------------------------------------


def test_link_ceiling(benchmark: BenchmarkFixture, stage: Stage, ceiling_link: str,
                      request: pytest.FixtureRequest,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """A lab link's own ceiling: one plain TCP upload of the per-connection size to the lab's
    echo sink (no SSH), with the link process's CPU (the tun delay line)."""
    _, lab = stage.server(ceiling_link, throughput_matrix(request.config).servers[0])
    assert lab is not None
    assert lab.echo_address is not None
    link_pids = lab.backend.pids() if lab.backend is not None else []
    tcp_upload(lab.echo_address, ECHO_PORT, MB)  # warm up
    before = trees_cpu_seconds(link_pids)
    seconds: list[float] = []
    benchmark.group = f"throughput {ceiling_link}: link ceiling"
    benchmark.pedantic(lambda: seconds.append(tcp_upload(lab.echo_address or "", ECHO_PORT,
                                                         stage.size)), rounds=1, iterations=1)
    link_cpu = trees_cpu_seconds(link_pids) - before
    mb_s = stage.size / MB / seconds[0]
    record(benchmark, "throughput", lab=lab, link=ceiling_link, server="tcp", cipher="none",
           direction="upload", connections=1, pinned=False, bytes_per_connection=stage.size,
           mb_per_s_total=round(mb_s, 1), mb_per_s_per_connection=round(mb_s, 1),
           link_cpu_pct=round(100 * link_cpu / seconds[0], 1),
           rate_mbit=lab.profile.rate_mbit)
    with capsys.disabled():
        print(f"\n{ceiling_link} ({lab.backend_name}): plain TCP {mb_s:.1f} MB/s, link process "
              f"{100 * link_cpu / seconds[0]:.0f}% CPU")


def test_server_throughput(benchmark: BenchmarkFixture, stage: Stage, link: str, server: str,
                           cipher: str, direction: str, pinning: str, connections: int,
                           request: pytest.FixtureRequest,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """``connections`` concurrent transfers of ``--throughput-mb`` each to ``server`` over
    ``link`` with ``cipher`` (its short name), the server pinned to one core or not."""
    bulk_server, lab = stage.server(link, server)
    most = max(throughput_matrix(request.config).connections)
    bulk = stage.connections(link, server, ThroughputMatrix.full_name(cipher), most)
    server_cpus, client_cpus = cpu_split(pinning == "pinned")
    bulk_server.pin(server_cpus)
    bulk.pin(client_cpus)
    readback = bulk_server.cpus()
    assert readback, f"{server}: no thread to read the affinity of"
    assert all(cpus == server_cpus for cpus in readback.values()), (
        f"{server}: threads not on CPUs {sorted(server_cpus)}: {readback}")
    data = stage.upload_data() if direction == "upload" else None
    link_pids = lab.backend.pids() if lab is not None and lab.backend is not None else []
    results = []

    def one_round() -> None:
        results.append(measure(bulk_server, bulk, connections, direction, stage.size, data,
                               link_pids))

    benchmark.group = (f"throughput {link} {direction} {cipher}, "
                       f"{connections} connections")
    benchmark.pedantic(one_round, rounds=1, iterations=1)
    result = results[0]
    figures: dict[str, Any] = {
        "link": link, "server": server, "cipher": cipher,
        "mac": ",".join(algorithms(ThroughputMatrix.full_name(cipher)).macs) or "aead",
        "direction": direction,
        "connections": connections, "pinned": pinning == "pinned",
        "server_cpus": _cpu_list(server_cpus), "client_cpus": _cpu_list(client_cpus),
        "bytes_per_connection": stage.size,
        "mb_per_s_total": round(result.mb_per_s_total, 1),
        "mb_per_s_per_connection": round(result.mb_per_s_per_connection, 1),
        "mb_per_s_per_connection_min": round(min(result.per_connection), 1),
        "server_cpu_pct": round(result.pct(result.server_cpu_s), 1),
        "mb_per_server_cpu_s": (round(result.mb_per_server_cpu_s, 1)
                                if result.mb_per_server_cpu_s is not None else None),
        "client_cpu_pct": round(result.pct(result.transfer.client_cpu_s), 1),
        "link_cpu_pct": round(result.pct(result.link_cpu_s), 1) if link_pids else None,
        "other_cpu_pct": round(result.pct(result.other_cpu_s), 1),
        "server_cpus_busy_pct": round(result.busy_pct(server_cpus), 1),
        "client_cpus_busy_pct": round(result.busy_pct(client_cpus), 1),
        "server_version": _server_version(bulk_server),
        "client": "openssh",
    }
    if lab is None:
        figures["backend"] = LOOPBACK
    record(benchmark, "throughput", lab=lab, library=OpensshClient, **figures)
    with capsys.disabled():
        print(f"\n{link} {server} {cipher} {direction} {pinning} x{connections}: "
              f"{figures['mb_per_s_total']} MB/s total, {figures['mb_per_s_per_connection']} per "
              f"connection; CPU server {figures['server_cpu_pct']}%, client "
              f"{figures['client_cpu_pct']}%, link {figures['link_cpu_pct'] or '-'}%, other "
              f"{figures['other_cpu_pct']}%")


def _cpu_list(cpus: set[int]) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def _server_version(server: BulkServer) -> str:
    if server.name == "emulator":
        return f"mgmtbench emulator (asyncssh {asyncssh.__version__})"
    return server.banner()
