"""What logging in with a key held by an ssh-agent costs, against a password and a key file.

Automation at fleet scale logs in with keys held in an agent (CI runners, jump hosts, Nornir with
``ssh_config``): every new connection pays one agent signature, and at 200 connections at once
the single-threaded agent may be the queue. Three tests, all recording experiment
``agent-login``:

- ``test_login[asyncssh-agent-rsa-4096-regional]``: one login per round with a client adapter in
  ``batch-exec`` mode with one command (``show clock``): TCP connect, key exchange, login, one
  exec and its output, close; the same for every login method, so the differences are the
  login's. Login methods: ``password``; ``key`` (the private key file, read by the client);
  ``agent`` (an agent holding only that key, one agent per key type, started untimed). Clients:
  asyncssh, paramiko and the OpenSSH ``ssh`` binary (which cannot type a password: no password
  cell). Devices: the lab's emulator (``lab_for(profile, authorized_keys=...)``) accepting a
  key of every kind (``user_keys``).
- ``test_host_key_login[emulator-rsa]``: the server's side of the handshake: asyncssh with an
  ed25519 key file against the emulator and a real OpenSSH ``sshd``, each with an ed25519, ECDSA
  (P-256) or RSA host key (2048 bits on the emulator, 3072 on sshd), on loopback (an RSA host key
  makes the server sign with RSA on every handshake).
- ``test_agent_fleet[asyncssh-agent-ed25519-c200-regional]``: a fleet run
  (:mod:`mgmtbench.clients.fleet`, the concurrency benchmark's worker process) of ``c`` sessions
  at once, each to its own device, all logging in through ONE agent (or each reading the key
  file, side by side), each running ``show clock`` twice. Recorded: makespan, the median
  ``connect_exec`` (login to first exec started) and the agent's CPU over the rounds, from
  ``/proc/<agent pid>/stat``.

``--agent-matrix sampled`` (default): ed25519, ecdsa-p256 and rsa-4096 keys for logins, the
fleet with asyncssh only at the last of ``--agent-profiles`` (default ``local,regional``);
``full``: every key type, the fleet with paramiko too and at every profile.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any, NamedTuple

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.clients.fleet import fleet_runner
from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.lab import LabLike
from mgmtbench.lab.usage import usage
from mgmtbench.targets import Auth, Login, Target, lab_targets
from mgmtbench.testing import (
    PASSWORD,
    SECRET,
    USERNAME,
    Driver,
    credentials,
    expected_digests,
    record,
    timing_info,
)
from mgmtbench.testing.agent import SshAgent, ssh_agent
from mgmtbench.testing.fixtures import emulator_target, hostname_for
from mgmtbench.testing.keys import KEY_ALGORITHMS, KeySet
from mgmtbench.testing.options import profiles
from mgmtbench.testing.sshd import SshdDevice

PLATFORM = "cisco_ios"
COMMAND = "show clock"
LOGIN_CLIENTS = ("asyncssh", "paramiko", "openssh")
SAMPLED_KINDS = ("ed25519", "ecdsa-p256", "rsa-4096")
FLEET_KINDS = ("ed25519", "rsa-4096")
FLEET_SIZES = (50, 200)
HOST_KEYS = ("ed25519", "ecdsa", "rsa")
SERVERS = ("emulator", "sshd")
BUDGET = float(os.environ.get("MGMTBENCH_AGENT_LOGIN_SECONDS", "1.5"))  # seconds per benchmark
MIN_ROUNDS, MAX_ROUNDS = 3, 30
FLEET_ROUNDS = 2


class LoginCell(NamedTuple):
    """One login benchmark: a client, a login method, the key type (None: password), where
    (a tuple: pytest-benchmark saves it as a JSON list)."""

    client: str
    auth: str
    kind: str | None
    profile: str

    def __str__(self) -> str:
        return "-".join(p for p in (self.client, self.auth, self.kind, self.profile) if p)


class FleetCell(NamedTuple):
    """One fleet benchmark: ``concurrency`` sessions of ``client``, logging in with ``auth``."""

    client: str
    auth: str
    kind: str
    concurrency: int
    profile: str

    def __str__(self) -> str:
        return f"{self.client}-{self.auth}-{self.kind}-c{self.concurrency}-{self.profile}"


def login_cells(config: pytest.Config) -> list[LoginCell]:
    """Every client x login method x key type x ``--agent-profiles`` (sampled key types unless
    ``--agent-matrix full``); ``ssh`` has no password cell."""
    kinds = KEY_ALGORITHMS if _full(config) else SAMPLED_KINDS
    cells = []
    for profile in profiles(config, "--agent-profiles"):
        for client in LOGIN_CLIENTS:
            if client != "openssh":
                cells.append(LoginCell(client, "password", None, profile))
            cells += [LoginCell(client, auth, kind, profile) for kind in kinds
                      for auth in ("key", "agent")]
    return cells


def fleet_cells(config: pytest.Config) -> list[FleetCell]:
    """The fleet matrix (module docstring)."""
    full = _full(config)
    chosen = profiles(config, "--agent-profiles")
    clients = ("asyncssh", "paramiko") if full else ("asyncssh",)
    # asyncssh and paramiko read a key file on every connection, and cryptography checks an RSA
    # private key as it loads it (0.3-0.4 s of CPU for RSA-4096 on this project's 2-core
    # machine): RSA-4096 key files only in full, and only at 50 sessions (200 such loads would
    # serialise on asyncssh's one event loop past the fleet runner's time-out).
    return [FleetCell(client, auth, kind, size, profile)
            for profile in (chosen if full else chosen[-1:]) for client in clients
            for kind in FLEET_KINDS for size in FLEET_SIZES for auth in ("agent", "key")
            if auth == "agent" or kind == "ed25519" or (full and size == min(FLEET_SIZES))]


def _full(config: pytest.Config) -> bool:
    return bool(config.getoption("--agent-matrix") == "full")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise over this module's matrices (``--agent-matrix``, ``--agent-profiles``)."""
    config = metafunc.config
    if "login_cell" in metafunc.fixturenames:
        cells = login_cells(config)
        metafunc.parametrize("login_cell", cells, ids=[str(c) for c in cells])
    if "fleet_cell" in metafunc.fixturenames:
        found = fleet_cells(config)
        metafunc.parametrize("fleet_cell", found, ids=[str(c) for c in found])
    if "host_key" in metafunc.fixturenames:
        metafunc.parametrize(("server", "host_key"), [(s, h) for s in SERVERS for h in HOST_KEYS],
                             ids=[f"{s}-{h}" for s in SERVERS for h in HOST_KEYS])


@pytest.fixture(scope="module")
def agents(user_keys: KeySet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        Callable[[str], SshAgent]]:
    """``agents("rsa-4096")``: a real ssh-agent holding only the key of that kind (so a client
    offers exactly that key), started on first use and kept for the module."""
    made: dict[str, SshAgent] = {}
    with ExitStack() as stack:
        def get(kind: str) -> SshAgent:
            if kind not in made:
                made[kind] = stack.enter_context(
                    ssh_agent(tmp_path_factory.mktemp(f"agent-{kind}")))
                made[kind].add(user_keys.keys[kind].private)
            return made[kind]

        yield get


def _login(auth: str, kind: str | None, keys: KeySet,
           agents: Callable[[str], SshAgent]) -> Login:
    """The credentials of one cell: the password, a key file, or an agent holding that key."""
    if auth == "password":
        return Login(USERNAME, PASSWORD, SECRET)
    assert kind is not None
    if auth == "key":
        return Login(USERNAME, PASSWORD, SECRET, key_file=keys.keys[kind].private, auth=Auth.KEY)
    return Login(USERNAME, PASSWORD, SECRET, auth=Auth.AGENT, agent_socket=agents(kind).socket)


def _rounds(one_round: float) -> int:
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, BUDGET / max(one_round, 1e-6))))


def _timed_logins(benchmark: BenchmarkFixture, client: str, target: Target, want: str,
                  agent: SshAgent | None) -> tuple[int, float | None]:
    """Time logins of ``client`` to ``target`` (batch-exec, one command); every output checked.
    Returns the rounds and the agent's CPU seconds over them (None without an agent)."""
    cls = adapter(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    driver = Driver(cls(target, "batch-exec"))
    outputs: list[str] = []

    def one_login() -> None:
        outputs.append(driver.run([COMMAND]))

    driver.setup()
    try:
        start = time.perf_counter()
        one_login()  # warm-up (imports, first connection) and the first check
        rounds = _rounds(time.perf_counter() - start)
        before = usage([agent.process.pid]) if agent else None
        benchmark.pedantic(one_login, rounds=rounds, iterations=1)
        cpu = (usage([agent.process.pid]) - before).cpu_s if agent and before else None
    finally:
        driver.teardown()
    wrong = [i for i, out in enumerate(outputs) if not same_output(PLATFORM, out, want)]
    assert not wrong, f"logins {wrong} returned wrong output (first: {outputs[wrong[0]][:200]!r})"
    return rounds, cpu


def test_login(benchmark: BenchmarkFixture, lab_for: Callable[..., LabLike], user_keys: KeySet,
               agents: Callable[[str], SshAgent], login_cell: LoginCell) -> None:
    cell = login_cell
    lab = lab_for(cell.profile, authorized_keys=user_keys.authorized_keys)
    device = lab.devices[0]
    login = _login(cell.auth, cell.kind, user_keys, agents)
    target = lab_targets(lab, login, platform=PLATFORM, count=1)[0]
    want = expected_output(PLATFORM, device.hostname, device.reported_ip, [COMMAND])
    agent = agents(cell.kind) if cell.auth == "agent" and cell.kind else None
    benchmark.group = f"agent login {cell.profile} {cell.client}"
    rounds, cpu = _timed_logins(benchmark, cell.client, target, want, agent)
    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    figures: dict[str, Any] = {
        "client": cell.client, "auth": cell.auth, "kind": cell.kind or "password",
        "profile": cell.profile, "sessions": 1, "server": "emulator",
        "host_key": "ed25519", "command": COMMAND,
        **(timing_info(data, lab.facts().measured_rtt_ms) if data else {}),
        "agent_cpu_ms_per_login": round(cpu * 1000 / rounds, 3) if cpu is not None else None,
    }
    record(benchmark, "agent-login", lab=lab, library=adapter(cell.client), **figures)


def test_host_key_login(benchmark: BenchmarkFixture,
                        fresh_emulator: Callable[..., EmulatorThread],
                        sshd_device: Callable[..., SshdDevice], user_keys: KeySet,
                        server: str, host_key: str) -> None:
    keys = user_keys.keys["ed25519"]
    login = Login(USERNAME, PASSWORD, SECRET, key_file=keys.private, auth=Auth.KEY)
    if server == "emulator":
        emu = fresh_emulator(PLATFORM, host_key_type=host_key,
                             credentials=credentials(user_keys.authorized_keys))
        target = emulator_target(emu, login)
        want = emu.endpoints[0].device.transcript(tuple(COMMAND.split()))
    else:
        sshd = sshd_device(PLATFORM, host_key_type=host_key,
                           authorized_keys=user_keys.authorized_keys)
        target = Target(host=sshd.host, ssh_port=sshd.port, https_port=0, username=sshd.user,
                        password="", enable_secret="", platform=PLATFORM,
                        known_hosts=sshd.known_hosts, key_file=keys.private, auth=Auth.KEY)
        want = expected_output(PLATFORM, hostname_for(PLATFORM), "198.18.0.1", [COMMAND])
    benchmark.group = "agent login: server host key"
    _timed_logins(benchmark, "asyncssh", target, want, None)
    figures: dict[str, Any] = {
        "client": "asyncssh", "auth": "key", "kind": "ed25519", "profile": "loopback",
        "sessions": 1, "server": server, "host_key": host_key, "command": COMMAND,
    }
    record(benchmark, "agent-login", library=adapter("asyncssh"), **figures)


# A failed warm-up leaves the benchmark fixture unused: the failure says why, not the warning.
@pytest.mark.filterwarnings("ignore:Benchmark fixture was not used")
def test_agent_fleet(benchmark: BenchmarkFixture, lab_for: Callable[..., LabLike],
                     user_keys: KeySet, agents: Callable[[str], SshAgent],
                     request: pytest.FixtureRequest, fleet_cell: FleetCell) -> None:
    cell = fleet_cell
    cls = fleet_runner(cell.client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    size = max(c.concurrency for c in fleet_cells(request.config))
    lab = lab_for(cell.profile, devices=size, authorized_keys=user_keys.authorized_keys)
    login = _login(cell.auth, cell.kind, user_keys, agents)
    targets = lab_targets(lab, login, platform=PLATFORM, count=cell.concurrency)
    expected = expected_digests(lab, COMMAND, count=cell.concurrency, platform=PLATFORM)
    agent = agents(cell.kind)  # the agent's CPU is read for key-file runs too: it must stay idle
    reports: list[dict[str, Any]] = []
    agent_cpu = [0.0]

    with FleetWorker(cell.client) as worker:
        def one_round() -> None:
            before = usage([agent.process.pid])
            reports.append(worker.run(targets, COMMAND, expected))
            agent_cpu[0] += (usage([agent.process.pid]) - before).cpu_s

        one_round()  # warm-up (imports, first connections) and the first check
        _check(reports[-1])
        reports.clear()
        agent_cpu[0] = 0.0
        benchmark.group = f"agent fleet {cell.profile} c{cell.concurrency}"
        benchmark.pedantic(one_round, rounds=FLEET_ROUNDS, iterations=1)
    for report in reports:
        _check(report)
    walls = [r["wall"] for r in reports]
    connect = [s["connect_exec"] for r in reports for s in r["sessions"]
               if s["connect_exec"] is not None]
    logins = cell.concurrency * len(reports)
    figures: dict[str, Any] = {
        "client": cell.client, "auth": cell.auth, "kind": cell.kind, "profile": cell.profile,
        "sessions": cell.concurrency, "server": "emulator", "host_key": "ed25519",
        "command": COMMAND,
        "makespan_ms": round(statistics.median(walls) * 1000, 3),
        "connect_exec_ms": round(statistics.median(connect) * 1000, 3) if connect else None,
        "connect_exec_p95_ms": (round(sorted(connect)[int(0.95 * (len(connect) - 1))] * 1000, 3)
                                if connect else None),
        "agent_cpu_pct": round(100 * agent_cpu[0] / sum(walls), 1),
        "agent_cpu_ms_per_login": round(agent_cpu[0] * 1000 / logins, 3),
        "client_cpu_pct": round(100 * sum(r["cpu_user"] + r["cpu_system"] - r["cpu_sampler"]
                                          for r in reports) / sum(walls), 1),
    }
    record(benchmark, "agent-login", lab=lab, library=cls, **figures)


def _check(report: dict[str, Any]) -> None:
    errors = [s["error"] for s in report["sessions"] if s["error"]]
    assert not errors, f"{len(errors)} of {len(report['sessions'])} sessions failed: {errors[0]}"
