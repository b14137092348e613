"""The edge proxy (issue 15): HTTPS over the WAN to a proxy next to the devices, SSH on the campus
hop; the SSH-over-HTTPS tunnel; and the direct modes over the same two links, side by side.

The lab (:class:`~mgmtbench.proxy.topology.EdgeLab`, fixture ``edge_lab_for``): this namespace
--WAN (``--proxy-profiles``)--> the proxy's namespace --campus (``--campus-profile``, 2 ms)-->
the device. One benchmark, parametrised over cases (``[proxy-httpx-keep-alive-regional-5cmd]``):

- ``proxy``: the published study's proxy modes (clibench v0.7.0), through each HTTPS client of
  :mod:`mgmtbench.proxy.clients` (``--proxy-clients``): ``fresh-ssh`` (a new HTTPS connection per
  iteration, a new SSH connection from the proxy), ``pooled-ssh`` (a new HTTPS connection, pooled
  SSH), ``keep-alive`` (a warm HTTPS connection, pooled SSH); one ``POST /admin/config`` of the
  N commands per iteration; and its h3 modes over QUIC to the proxy's HTTP/3 (``aioquic-h3``,
  :mod:`mgmtbench.proxy.h3client`): ``h3-fresh-ssh``, ``h3-pooled-ssh`` (a new QUIC connection
  per iteration) and ``h3-keep-alive`` (one kept);
- ``direct``: the device adapters straight to the device over both links (the proxy's namespace
  routes): SSH ``pty-fresh`` (asyncssh, paramiko) and HTTPS ``batch-post`` (httpx);
- ``tunnel``: an unmodified SSH client (asyncssh, paramiko, OpenSSH ``ssh``) through the head-end
  over an access link (campus), then HTTPS over the WAN to the proxy: ``ssh-https-ssh`` (a new SSH
  connection per iteration, an exec per command: the adapters' ``fresh-conn``) and
  ``ssh-https-ssh-batch`` (one exec of the N lines: ``batch-exec``); and the shell clients
  (Netmiko, Scrapli on OpenSSH) in ``ssh-https-ssh`` only: a new SSH connection per iteration, the
  head-end's shell, one command line (so one GET over the WAN) at a time (their ``pty-fresh``).
  They have no batch: they type a line, wait for its echo and the prompt, then type the next, so
  the head-end never holds more than one line to send (a configuration session is the exception:
  the head-end sends it as one POST at ``end``, but show commands are not configuration).
  ``ssh-http3-ssh`` and ``ssh-http3-ssh-batch``: the same through a second head-end that talks
  HTTP/3 to the proxy (one QUIC connection kept, ``mgmtbench headend --proxy-http3``).

Setup (connections made outside the timed part for the reusing modes, the proxy's pool warmed)
is never timed. Every round's answer is checked against the device's transcripts. Recorded: each
link's configured and measured RTT (``wan_*``, ``campus_*``, ``access_*``), time in RTTs of the
whole path (``rtts``) and of the WAN (``wan_rtts``), what crossed the first link per iteration
(packets, wire round trips: ``tapped_link`` says which link), the study's application round
trips where the client counts them, and from the proxy: requests, new SSH connections and new
QUIC connections per iteration, the time a request spent inside it and its CPU per request.

``test_edge_proxy_concurrency``: ``--proxy-concurrency`` devices (100) behind one proxy, a
client session to each at once, 5 commands: through the proxy in each proxy mode (``httpx-async``)
and, for comparison, straight to the devices over the same two links: HTTPS ``batch-post``
(the same httpx-async client code, to the device's own API) and ``keep-alive`` (the
``httpx-async`` adapter, a GET per command), SSH ``pty-fresh`` (asyncssh). Recorded: makespan
(the benchmark's time: one round of every session), each session's time (p50, p95), CPU per
request of the proxy, the emulator and the client, the proxy's pooled connections.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import AnyClient, adapter
from mgmtbench.clients.base import AsyncClient
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator.oracle import expected_output, same_output, show_commands
from mgmtbench.lab.procfs import cpu_seconds
from mgmtbench.proxy.clients import (
    PROXY_CLIENTS,
    PROXY_MODES,
    AsyncDeviceBatchClient,
    AsyncProxyClient,
)
from mgmtbench.proxy.topology import EdgeLab
from mgmtbench.targets import Auth, Login, Target, make_target
from mgmtbench.testing import Driver, record, timing_info
from mgmtbench.testing.options import counts, profiles, split

PLATFORM = "cisco_ios"
EXPERIMENT = "edge-proxy"
TARGET_SECONDS = float(os.environ.get("MGMTBENCH_ROUND_SECONDS", "1.5"))
MIN_ROUNDS, MAX_ROUNDS = 3, 20
#: The tunnel's modes, and the adapter mode each one is (the study's head-end benchmark makes a
#: new SSH connection per iteration for both).
TUNNEL_MODES = {"ssh-https-ssh": "fresh-conn", "ssh-https-ssh-batch": "batch-exec",
                "ssh-http3-ssh": "fresh-conn", "ssh-http3-ssh-batch": "batch-exec"}
#: The same for the shell clients: a shell per iteration, a line at a time (no batch: see above).
SHELL_TUNNEL_MODES = {"ssh-https-ssh": "pty-fresh", "ssh-http3-ssh": "pty-fresh"}
#: The tunnel modes whose head-end talks HTTP/3 to the proxy.
HTTP3_TUNNEL_MODES = frozenset({"ssh-http3-ssh", "ssh-http3-ssh-batch"})
#: The tunnel's clients: exec clients and shell clients.
TUNNEL_CLIENTS = {"asyncssh": TUNNEL_MODES, "paramiko": TUNNEL_MODES, "openssh": TUNNEL_MODES,
                  "netmiko": SHELL_TUNNEL_MODES, "scrapli-bin": SHELL_TUNNEL_MODES}


@dataclass(frozen=True)
class Case:
    """One way through the lab: ``path`` (proxy, direct, tunnel), a client, a mode."""

    path: str
    client: str
    mode: str

    @property
    def id(self) -> str:
        return f"{self.path}-{self.client}-{self.mode}"

    @property
    def client_mode(self) -> str:
        """The client's own mode (the adapter's) that this case runs."""
        if self.path == "tunnel":
            return TUNNEL_CLIENTS[self.client][self.mode]
        return self.mode

    def missing(self) -> str | None:
        """An install hint if the client's library is missing."""
        cls = PROXY_CLIENTS[self.client] if self.path == "proxy" else adapter(self.client)
        return cls.missing()

    def make(self, edge: EdgeLab, login: Login) -> AnyClient:
        """The client, aimed at the proxy, the device or the head-end."""
        device = edge.chain.devices[0]
        if self.path == "proxy":
            assert edge.proxy is not None
            proxy = make_target(edge.proxy.address, 22, edge.proxy.port, platform=PLATFORM,
                                login=login, ca_file=edge.proxy.trust,
                                http3_port=edge.proxy.port)
            return PROXY_CLIENTS[self.client](proxy, self.mode, device.hostname)
        if self.path == "direct":
            target = make_target(device.address, device.ssh_port, device.https_port,
                                 platform=PLATFORM, login=login, ca_file=edge.chain.ca_file,
                                 known_hosts=edge.chain.known_hosts)
            return adapter(self.client)(target, self.mode)
        endpoint = edge.headend_http3 if self.mode in HTTP3_TUNNEL_MODES else edge.headend
        assert endpoint is not None
        headend: Target = make_target(endpoint.address, endpoint.port, 0,
                                      platform=PLATFORM, login=login,
                                      known_hosts=endpoint.trust)
        if self.client == "openssh":  # the ssh binary logs in with the key
            headend = replace(headend, auth=Auth.KEY)
        return adapter(self.client)(headend, self.client_mode)


def cases(config: pytest.Config) -> list[Case]:
    """Every case the options ask for."""
    wanted = split(str(config.getoption("--proxy-clients")))
    unknown = set(wanted) - set(PROXY_CLIENTS)
    if unknown:
        raise pytest.UsageError(f"--proxy-clients: unknown {sorted(unknown)}: choose from "
                                f"{', '.join(PROXY_CLIENTS)}")
    found = [Case("proxy", c, m) for c in wanted for m in PROXY_CLIENTS[c].modes]
    found += [Case("direct", "asyncssh", "pty-fresh"), Case("direct", "paramiko", "pty-fresh"),
              Case("direct", "httpx", "batch-post")]
    found += [Case("tunnel", c, m) for c, modes in TUNNEL_CLIENTS.items() for m in modes]
    return found


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    config = metafunc.config
    if "wan" in metafunc.fixturenames:
        metafunc.parametrize("wan", profiles(config, "--proxy-profiles"))
    if "case" in metafunc.fixturenames:
        found = cases(config)
        metafunc.parametrize("case", found, ids=[c.id for c in found])
        numbers = counts(config, "--commands")
        metafunc.parametrize("commands", numbers, ids=[f"{n}cmd" for n in numbers])
    if "concurrent" in metafunc.fixturenames:
        sessions = int(config.getoption("--proxy-concurrency"))
        chosen = CONCURRENT if sessions > 0 else []
        metafunc.parametrize("concurrent", chosen, ids=[f"c{sessions}-{c.id}" for c in chosen])


@dataclass(frozen=True)
class Concurrent(Case):
    """One way through the lab at concurrency: ``proxy`` or ``direct``, an asyncio client."""

    def make_async(self, edge: EdgeLab, login: Login, index: int) -> AsyncClient:
        """The client for a session to device ``index``."""
        device = edge.chain.devices[index]
        if self.path == "proxy":
            assert edge.proxy is not None
            proxy = make_target(edge.proxy.address, 22, edge.proxy.port, platform=PLATFORM,
                                login=login, ca_file=edge.proxy.trust)
            return AsyncProxyClient(proxy, self.mode, device.hostname)
        target = make_target(device.address, device.ssh_port, device.https_port,
                             platform=PLATFORM, login=login, ca_file=edge.chain.ca_file,
                             known_hosts=edge.chain.known_hosts)
        if self.mode == "batch-post":
            return AsyncDeviceBatchClient(target, self.mode)
        made = adapter(self.client)(target, self.mode)
        assert isinstance(made, AsyncClient)
        return made


#: What the concurrency benchmark runs: the proxy's modes, then the direct ones over the same path.
CONCURRENT = [Concurrent("proxy", "httpx-async", m) for m in PROXY_MODES] + [
    Concurrent("direct", "httpx-async", "batch-post"),
    Concurrent("direct", "httpx-async", "keep-alive"),
    Concurrent("direct", "asyncssh", "pty-fresh")]


def round_count(one_round: float) -> int:
    """Timed rounds for a benchmark whose warm-up round took ``one_round`` seconds."""
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, TARGET_SECONDS / max(one_round, 1e-3))))


class ProxyUse:
    """The proxy's requests, new SSH connections and CPU time between two readings."""

    def __init__(self, edge: EdgeLab) -> None:
        self.edge = edge
        self.start = self._read()

    def _read(self) -> tuple[float, float, float, float, float]:
        stats = self.edge.proxy_stats()
        assert self.edge.proxy is not None
        assert self.edge.proxy.pid is not None
        return (stats["requests"], stats["pool"]["opened"], stats["busy_ms"],
                cpu_seconds(self.edge.proxy.pid), stats.get("http3", {}).get("connections", 0))

    def figures(self, rounds: int) -> dict[str, Any]:
        requests, opened, busy, cpu, quic = (b - a for a, b in zip(self.start, self._read(),
                                                                    strict=True))
        requests -= 1  # the reading itself
        out: dict[str, Any] = {"proxy_requests_per_iteration": round(requests / rounds, 2),
                               "ssh_opened_per_iteration": round(opened / rounds, 2),
                               "quic_opened_per_iteration": round(quic / rounds, 2)}
        if requests > 0:
            out["proxy_ms_per_request"] = round(busy / requests, 2)  # inside the proxy
            out["proxy_cpu_ms_per_request"] = round(cpu * 1000 / requests, 2)
        return out


def test_edge_proxy(benchmark: BenchmarkFixture, edge_lab_for: Callable[..., EdgeLab],
                    login: Login, wan: str, case: Case, commands: int) -> None:
    hint = case.missing()
    if hint:
        pytest.skip(hint)
    edge = edge_lab_for(wan, headend=case.path == "tunnel")
    device = edge.chain.devices[0]
    cmds = show_commands(PLATFORM, commands)
    want = expected_output(PLATFORM, device.hostname, device.reported_ip, cmds)
    client = case.make(edge, login)
    counter = RoundTripCounter() if client.counts_round_trips else None
    if counter is not None:
        client.count_round_trips(counter)
    driver = Driver(client)
    outputs: list[str] = []

    def one_round() -> None:
        outputs.append(driver.run(cmds))

    driver.setup()
    try:
        start = time.perf_counter()
        one_round()  # warm-up: the head-end's connection to the proxy too
        rounds = round_count(time.perf_counter() - start)
        benchmark.group = f"edge proxy: WAN {wan}, {commands} commands"
        use = ProxyUse(edge)
        with edge.chain.wire_tap(probe=True) as tap:
            before, trips = edge.chain.counters(), counter.trips if counter else 0
            benchmark.pedantic(one_round, rounds=rounds, iterations=1)
            traffic = edge.chain.counters() - before
            app_trips = counter.trips - trips if counter else None
        proxy = use.figures(rounds)
    finally:
        driver.teardown()
    wrong = [i for i, out in enumerate(outputs) if not same_output(PLATFORM, out, want)]
    assert not wrong, f"rounds {wrong} returned wrong output (first: {outputs[wrong[0]][:200]!r})"

    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    links = edge.link_facts()
    wire = tap.result()
    record(benchmark, EXPERIMENT, lab=edge.chain, library=type(client),
           path=case.path, client=case.client, mode=case.mode, client_mode=case.client_mode,
           commands=commands,
           profile=edge.chain.profile.name, **links,
           **(timing_info(data, edge.chain.facts().measured_rtt_ms) if data else {}),
           wan_rtts=round(statistics.fmean(data) * 1000 / links["wan_link_rtt_ms"], 2)
           if data and links.get("wan_link_rtt_ms") else None,
           tapped_link=edge.chain.links[0].name,
           packets_per_iteration=round(traffic.packets / rounds, 1),
           bytes_per_iteration=round(traffic.bytes / rounds),
           **(wire.per_iteration(rounds) if wire else {}),
           **({} if app_trips is None else
              {"app_rtts_per_iteration": round(app_trips / rounds, 1)}),
           **proxy)


async def every(awaitables: Iterable[Awaitable[None]]) -> None:
    """Run ``awaitables`` at once (on the running loop)."""
    await asyncio.gather(*awaitables)


@pytest.mark.filterwarnings("ignore:Benchmark fixture was not used")
def test_edge_proxy_concurrency(benchmark: BenchmarkFixture,
                                edge_lab_for: Callable[..., EdgeLab], login: Login, wan: str,
                                concurrent: Concurrent, request: pytest.FixtureRequest) -> None:
    hint = concurrent.missing()
    if hint:
        pytest.skip(hint)
    sessions = int(request.config.getoption("--proxy-concurrency"))
    edge = edge_lab_for(wan, devices=sessions)
    assert edge.proxy is not None
    cmds = show_commands(PLATFORM, 5)
    devices = edge.chain.devices
    wants = [expected_output(PLATFORM, d.hostname, d.reported_ip, cmds) for d in devices]
    clients = [concurrent.make_async(edge, login, i) for i in range(len(devices))]
    loop = asyncio.new_event_loop()
    latencies: list[float] = []
    wrong: list[str] = []

    async def timed(client: AsyncClient, want: str, device: str) -> None:
        start = time.perf_counter()
        answer = await client.run(cmds)
        latencies.append(time.perf_counter() - start)
        if not same_output(PLATFORM, answer, want):
            wrong.append(device)

    def one_round() -> None:
        loop.run_until_complete(every(timed(c, w, d.hostname)
                                      for c, w, d in zip(clients, wants, devices, strict=True)))

    proxied = concurrent.path == "proxy"
    try:
        loop.run_until_complete(every(c.setup() for c in clients))
        one_round()  # warm-up
        latencies.clear()
        use = ProxyUse(edge)
        rounds = 3
        benchmark.group = f"edge proxy at concurrency {sessions}: WAN {wan}"
        devices_cpu, client_cpu = emulator_cpu(edge), time.process_time()
        benchmark.pedantic(one_round, rounds=rounds, iterations=1)
        devices_cpu, client_cpu = emulator_cpu(edge) - devices_cpu, time.process_time() - client_cpu
        figures = use.figures(rounds) if proxied else {}
        pool = edge.proxy_stats()["pool"] if proxied else {}
    finally:
        loop.run_until_complete(every(c.teardown() for c in clients))
        loop.close()
    assert not wrong, f"{len(wrong)} sessions returned wrong output (first: {wrong[0]})"
    ordered = sorted(latencies)
    record(benchmark, "edge-proxy-concurrency", lab=edge.chain, library=type(clients[0]),
           path=concurrent.path, client=concurrent.client, mode=concurrent.mode,
           sessions=sessions, commands=len(cmds), profile=edge.chain.profile.name,
           **edge.link_facts(),
           session_p50_ms=round(ordered[len(ordered) // 2] * 1000, 1),
           session_p95_ms=round(ordered[int(len(ordered) * 0.95)] * 1000, 1),
           ssh_pooled_open=pool.get("open"), ssh_peak_open=pool.get("peak_open"),
           proxy_requests_per_round=figures.get("proxy_requests_per_iteration"),
           ssh_opened_per_round=figures.get("ssh_opened_per_iteration"),
           proxy_cpu_ms_per_request=figures.get("proxy_cpu_ms_per_request"),
           proxy_ms_per_request=figures.get("proxy_ms_per_request"),
           emulator_cpu_ms_per_request=round(devices_cpu * 1000 / (rounds * sessions), 2),
           client_cpu_ms_per_request=round(client_cpu * 1000 / (rounds * sessions), 2),
           **timing_info(list(benchmark.stats.stats.data) if benchmark.stats else [0.0], None))


def emulator_cpu(edge: EdgeLab) -> float:
    """CPU seconds of the processes serving the devices so far."""
    return sum(cpu_seconds(pid) for pid in edge.chain.device_pids())
