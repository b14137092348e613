"""ssh-agent signing throughput (after an ssh-agent benchmark: ed25519 ~1.7 ms, RSA-4096 ~7.6 ms
per signature through OpenSSH's agent; message size and unique vs repeated messages made little
difference; the agent uses one core).

One real ``ssh-agent`` for the module, holding a key of every kind (``user_keys``). Two tests:

- ``test_agent_signing[raw-ed25519-32B-unique]``: one signature per round through a signer
  (:mod:`mgmtbench.testing.signers`: the ``raw`` protocol client, ``asyncssh``'s and
  ``paramiko``'s agent clients, and ``in-process``, the key file signing without the agent).
  The signer connects (and finds its key) before the timed rounds; each round's message is made
  untimed (``pedantic(setup=...)``): ``unique`` = a different message every round, ``same`` = one
  message throughout. The first and last signature are verified against the public key.
- ``test_agent_concurrency[raw-processes-ed25519-c4]``: ``c`` clients sign at once, each over its
  own agent connection (:mod:`mgmtbench.testing.agent_load`): the raw client in processes (no
  client GIL in the way), in full also paramiko in threads. A round is one burst; the agent's CPU
  over the bursts comes from ``/proc/<agent pid>/stat``.

``--agent-matrix sampled`` (default) runs every key type at 32 B and 16 KB (unique and same)
through the raw client, every size for ed25519 and RSA-4096, the library clients on every key
type at 32 B and on ed25519 / RSA-4096 at both ends, the in-process signature of every key at
32 B and 16 KB, and 1/2/4/8 raw clients for ed25519 and RSA-4096; ``full`` runs every signer x key
type x size x unique/same and the concurrency of every kind. Rounds: a time budget per benchmark
(``MGMTBENCH_AGENT_SECONDS``, default 0.4 s) within limits.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.lab.usage import usage
from mgmtbench.testing import record
from mgmtbench.testing.agent import SshAgent, ssh_agent
from mgmtbench.testing.agent_load import ClientPool, SignJob, messages
from mgmtbench.testing.keys import KEY_ALGORITHMS, KeySet
from mgmtbench.testing.signers import SIGNERS, signer, verify

KINDS = tuple(KEY_ALGORITHMS)
SIZES = (32, 64, 256, 1024, 16384)
MESSAGES = ("unique", "same")
ENDS = (32, 16384)  # the sizes every key type gets
PAIR = ("ed25519", "rsa-4096")  # the study's two ends: every size, every client
CLIENTS = (1, 2, 4, 8)
BUDGET = float(os.environ.get("MGMTBENCH_AGENT_SECONDS", "0.4"))  # seconds per benchmark
MIN_ROUNDS, MAX_ROUNDS = 20, 1000
BURST_ROUNDS = 3  # bursts per concurrency benchmark


class SignCell(NamedTuple):
    """One signing benchmark: a signer, a key type, a message size, unique or same."""

    signer: str
    kind: str
    size: int
    message: str

    def __str__(self) -> str:
        return f"{self.signer}-{self.kind}-{_size(self.size)}-{self.message}"


class LoadCell(NamedTuple):
    """One concurrency benchmark: ``clients`` signers of one kind at once, run as ``how``."""

    signer: str
    how: str
    kind: str
    clients: int

    def __str__(self) -> str:
        return f"{self.signer}-{self.how}-{self.kind}-c{self.clients}"


def _size(size: int) -> str:
    return f"{size // 1024}KB" if size >= 1024 else f"{size}B"


def sign_cells(full: bool) -> list[SignCell]:
    """The signing matrix: everything (``full``) or the sample (module docstring)."""
    if full:
        return [SignCell(s, k, n, m) for s in SIGNERS for k in KINDS for n in SIZES
                for m in MESSAGES]
    cells = [SignCell("raw", k, n, m) for k in KINDS for n in ENDS for m in MESSAGES]
    cells += [SignCell("raw", k, n, "unique") for k in PAIR for n in SIZES if n not in ENDS]
    for name in ("asyncssh", "paramiko"):
        cells += [SignCell(name, k, 32, "unique") for k in KINDS if k not in PAIR]
        cells += [SignCell(name, k, n, m) for k in PAIR for n in ENDS for m in MESSAGES]
    cells += [SignCell("in-process", k, n, "unique") for k in KINDS for n in ENDS]
    return cells


def load_cells(full: bool) -> list[LoadCell]:
    """The concurrency matrix: raw clients in processes for the study's two key types (full:
    every key type, and paramiko in threads)."""
    kinds = KINDS if full else PAIR
    runs = [("raw", "processes"), ("paramiko", "threads")] if full else [("raw", "processes")]
    return [LoadCell(s, how, k, n) for s, how in runs for k in kinds for n in CLIENTS]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise over this module's matrices (``--agent-matrix``)."""
    full = metafunc.config.getoption("--agent-matrix") == "full"
    if "sign_cell" in metafunc.fixturenames:
        cells = sign_cells(full)
        metafunc.parametrize("sign_cell", cells, ids=[str(c) for c in cells])
    if "load_cell" in metafunc.fixturenames:
        found = load_cells(full)
        metafunc.parametrize("load_cell", found, ids=[str(c) for c in found])


@pytest.fixture(scope="module")
def agent(user_keys: KeySet, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshAgent]:
    """One real ssh-agent holding a key of every kind, for the whole module."""
    with ssh_agent(tmp_path_factory.mktemp("signing-agent")) as started:
        for keys in user_keys.keys.values():
            started.add(keys.private)
        yield started


@pytest.fixture(scope="module")
def pools() -> Iterator[Callable[[str], ClientPool]]:
    """``pools("processes")``: a pool of as many signing clients as the largest concurrency,
    started on first use and kept for the module."""
    made: dict[str, ClientPool] = {}

    def get(how: str) -> ClientPool:
        if how not in made:
            made[how] = ClientPool(max(CLIENTS), how)
        return made[how]

    yield get
    for pool in made.values():
        pool.close()


def _rounds(seconds_per_round: float) -> int:
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, BUDGET / max(seconds_per_round, 1e-6))))


def test_agent_signing(benchmark: BenchmarkFixture, agent: SshAgent, user_keys: KeySet,
                       sign_cell: SignCell) -> None:
    cell = sign_cell
    keys = user_keys.keys[cell.kind]
    unique = cell.message == "unique"
    with signer(cell.signer, agent.socket, keys) as made:
        warm = messages(cell.size, unique, 5, 0, 0)
        start = time.perf_counter()
        for data in warm:
            made.sign(data)
        rounds = _rounds((time.perf_counter() - start) / len(warm))
        todo = messages(cell.size, unique, rounds, 1, 0)
        signatures: list[bytes] = []
        feed = iter(todo)

        def next_message() -> tuple[tuple[bytes], dict[str, object]]:
            return (next(feed),), {}

        def sign(data: bytes) -> None:
            signatures.append(made.sign(data))

        benchmark.group = f"agent signing {cell.kind} {_size(cell.size)}"
        before = usage([agent.process.pid])
        benchmark.pedantic(sign, setup=next_message, rounds=rounds, iterations=1)
        agent_cpu = (usage([agent.process.pid]) - before).cpu_s
    assert len(signatures) == rounds
    for index in (0, -1):
        assert verify(keys.public, todo[index], signatures[index]), \
            f"{cell.signer}: a {cell.kind} signature does not verify"
    assert benchmark.stats is not None
    times = list(benchmark.stats.stats.data)
    mean = statistics.fmean(times)
    figures: dict[str, Any] = {
        "signer": cell.signer, "how": SIGNERS[cell.signer].how, "kind": cell.kind,
        "size": cell.size, "message": cell.message, "clients": 1,
        "ms_per_signature": round(mean * 1000, 4),
        "signatures_per_s": round(1 / mean, 1),
        "median_ms_per_signature": round(statistics.median(times) * 1000, 4),
        # Over the timed rounds and their untimed set-up; none for the in-process signer.
        "agent_cpu_ms_per_signature": (None if cell.signer == "in-process"
                                       else round(agent_cpu * 1000 / rounds, 3)),
        "signature_bytes": len(signatures[0]),
    }
    record(benchmark, "agent-signing", library=SIGNERS[cell.signer], **figures)


def test_agent_concurrency(benchmark: BenchmarkFixture, agent: SshAgent, user_keys: KeySet,
                           pools: Callable[[str], ClientPool], load_cell: LoadCell) -> None:
    cell = load_cell
    pool = pools(cell.how)
    keys = user_keys.keys[cell.kind]
    # The burst size: about BUDGET seconds of signatures for the whole burst, from one client's
    # pace (untimed).
    probe = SignJob(cell.signer, agent.socket, keys, 32, True, 10)
    pool.prepare(1, probe)
    once = pool.burst()
    per_signature = once.wall / once.signatures
    total = int(min(5000, max(8 * cell.clients, BUDGET / per_signature)))
    job = SignJob(cell.signer, agent.socket, keys, 32, True, max(2, total // cell.clients))
    bursts = []
    cpu = {"agent": 0.0, "clients": 0.0}
    # The clients' CPU when they are processes of their own (threads share this one's).
    clients = pool.pids(cell.clients) if cell.how == "processes" else []

    def one_burst() -> None:
        agent_before, clients_before = usage([agent.process.pid]), usage(clients)
        bursts.append(pool.burst())
        cpu["agent"] += (usage([agent.process.pid]) - agent_before).cpu_s
        cpu["clients"] += (usage(clients) - clients_before).cpu_s

    benchmark.group = f"agent concurrency {cell.kind}"
    benchmark.pedantic(one_burst, setup=lambda: pool.prepare(cell.clients, job),
                       rounds=BURST_ROUNDS, iterations=1)
    assert all(len(b.clients) == cell.clients for b in bursts)
    assert all(b.overlapped() for b in bursts), "the clients did not all sign at one time"
    walls = [b.wall for b in bursts]
    rates = [b.signatures / b.wall for b in bursts]
    rate = statistics.median(rates)
    figures: dict[str, Any] = {
        "signer": cell.signer, "how": cell.how, "kind": cell.kind, "size": job.size,
        "message": "unique", "clients": cell.clients,
        "signatures_per_burst": job.count * cell.clients,
        "signatures_per_s": round(rate, 1),
        "ms_per_signature": round(1000 / rate, 4),  # the agent's pace, all clients together
        "client_ms_per_signature": round(statistics.median(
            (c.end - c.start) * 1000 / c.signatures for b in bursts for c in b.clients), 4),
        # CPU from /proc/PID/stat (clock ticks: 10 ms) over the bursts, in % of one core.
        "agent_cpu_pct": round(100 * cpu["agent"] / sum(walls), 1),
        "agent_cpu_ms_per_signature": round(
            cpu["agent"] * 1000 / sum(b.signatures for b in bursts), 4),
        "clients_cpu_pct": round(100 * cpu["clients"] / sum(walls), 1) if clients else None,
        "agent_threads": _threads(agent.process.pid),  # 1: it can use one core at most
    }
    record(benchmark, "agent-signing", library=SIGNERS[cell.signer], **figures)


def _threads(pid: int) -> int | None:
    """The number of threads of process ``pid`` (``Threads:`` in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    return next((int(line.split()[1]) for line in status.splitlines()
                 if line.startswith("Threads:")), None)
