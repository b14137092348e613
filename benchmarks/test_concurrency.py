"""Client libraries at concurrency (after parallel-ssh's paramiko-vs-libssh2 study): N sessions
at once, each to a distinct device of a fleet lab, each running a ~26 KB command twice.

Parametrised over client x concurrency x profile (``--clients``, ``--concurrency``,
``--fleet-profiles``; ids ``[asyncssh-c100-regional]``). The timed part is one fleet run: from the
first connection to the last disconnect (the makespan). Each library runs in a worker process of
its own, started untimed, so its CPU time (user + system, including any ``ssh`` processes) and
peak memory are the client's alone; the emulator's CPU time over the same rounds is read from
/proc. Every session's two outputs are checked; any session error fails the benchmark with the
library's message.

With ``--inventory FILE [--limit PATTERN]`` the fleet is the inventory's hosts (profile
``inventory``; at most ``--sessions-per-device`` sessions on each, rounds paced by
``--inventory-rate``): each session's answers are checked against its own first round's by
digest, the platform's volatile lines (clock, uptimes, counters) masked first
(:mod:`mgmtbench.targets.stable`), so any show command can be the ``--fleet-command``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench import progress
from mgmtbench.clients.fleet import PHASES, fleet_runner
from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.lab.usage import usage
from mgmtbench.testing import record
from mgmtbench.testing.sites import Site, first_round_digests

PLATFORM = "cisco_ios"
# Rounds: a time budget per benchmark, within limits (MGMTBENCH_FLEET_SECONDS raises it).
TARGET_SECONDS = float(os.environ.get("MGMTBENCH_FLEET_SECONDS", "3"))
MIN_ROUNDS, MAX_ROUNDS = 2, 10


# A failed warm-up leaves the benchmark fixture unused: the failure says why, not the warning.
@pytest.mark.filterwarnings("ignore:Benchmark fixture was not used")
@pytest.mark.inventory
def test_fleet(benchmark: BenchmarkFixture, fleet_site_for: Callable[[str], Site],
               request: pytest.FixtureRequest, client: str, concurrency: int,
               profile: str) -> None:
    cls = fleet_runner(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    site = fleet_site_for(profile)  # the fleet lab of that profile, or the --inventory hosts
    unsupported = site.unsupported(cls.service())
    if unsupported:
        pytest.skip(unsupported)
    command = str(request.config.getoption("--fleet-command"))  # ~26 KB: show interfaces
    reason = site.refused([command])
    if reason:
        pytest.skip(reason)
    targets = site.targets(concurrency, PLATFORM)
    # The oracle's answers; for an inventory, the first round's (checked to agree with itself).
    expected = site.fleet_expected(command, concurrency, PLATFORM)
    reports: list[dict[str, Any]] = []
    pids = site.device_pids()

    with FleetWorker(client) as worker, site.rounds(concurrency) as before_round:
        def one_round() -> None:
            reports.append(worker.run(targets, command, expected or ["?"] * concurrency))

        if before_round:
            before_round()
        start = time.perf_counter()
        one_round()  # warm-up (imports, first connections), and the first check
        if expected is None:
            expected = first_round_digests(reports[-1])
        else:
            _check(reports[-1])
        rounds = int(min(MAX_ROUNDS, max(MIN_ROUNDS, TARGET_SECONDS / (time.perf_counter() - start))))
        reports.clear()
        benchmark.group = f"fleet {profile}, concurrency {concurrency}"
        before = usage(pids)  # the emulator's CPU over all rounds, read outside the timed part
        # Rounds done on the terminal (mgmtbench.progress): counted in pedantic's untimed setup.
        with progress.rounds(f"fleet {client} c{concurrency} {profile}", rounds,
                             sessions=concurrency, setup=before_round) as counted:
            benchmark.pedantic(one_round, setup=counted, rounds=rounds, iterations=1)
        emulator = usage(pids) - before
        hello = worker.hello
    for report in reports:
        _check(report)

    walls = [r["wall"] for r in reports]
    cpu = [r["cpu_user"] + r["cpu_system"] - r["cpu_sampler"] for r in reports]
    record(benchmark, "concurrency", lab=None, library=cls, **site.record_info(), **{
        "client": client, "concurrency": concurrency, "profile": site.name, "command": command,
        "how": hello["how"], "merged": hello["merged"],
        **{f"{phase}_ms": ms for phase, ms in _phase_medians(reports).items()},
        "session_ms": round(statistics.median(_session_totals(reports)) * 1000, 3),
        "makespan_ms": round(statistics.median(walls) * 1000, 3),
        "client_cpu_s": round(statistics.median(cpu), 4),
        "client_cpu_ms_per_session": round(statistics.median(cpu) * 1000 / concurrency, 3),
        "client_cpu_pct": round(100 * sum(cpu) / sum(walls), 1),
        "client_peak_rss_mib": round(max(r["peak_rss"] for r in reports) / 2**20, 1),
        "rss_sampler_cpu_s": round(statistics.median(r["cpu_sampler"] for r in reports), 4),
        "emulator_cpu_s": round(emulator.cpu_s / rounds, 4) if pids else None,  # per round
        "emulator_cpu_pct": round(100 * emulator.cpu_s / sum(walls), 1) if pids else None,
        "emulator_rss_mib": round(usage(pids).rss_bytes / 2**20, 1) if pids else None,
        "lab_devices": site.device_count(),
        "errors": 0,
    })


def _check(report: dict[str, Any]) -> None:
    """Every session must succeed; a failure says how busy the client was meanwhile (a library
    that saturates the machine starves its own sessions into time-outs)."""
    errors = [s["error"] for s in report["sessions"] if s["error"]]
    cpu = report["cpu_user"] + report["cpu_system"] - report["cpu_sampler"]
    assert not errors, (f"{len(errors)} of {len(report['sessions'])} sessions failed (client CPU "
                        f"{cpu:.1f} s in {report['wall']:.1f} s wall: {100 * cpu / report['wall']:.0f}%"
                        f" of one core); first: {errors[0]}")


def _phase_medians(reports: list[dict[str, Any]]) -> dict[str, float | None]:
    """Per phase: the median over every session of every round (None: not separable)."""
    out: dict[str, float | None] = {}
    for phase in PHASES:
        values = [s[phase] for r in reports for s in r["sessions"] if s[phase] is not None]
        out[phase] = round(statistics.median(values) * 1000, 3) if values else None
    return out


def _session_totals(reports: list[dict[str, Any]]) -> list[float]:
    return [sum(s[p] or 0.0 for p in PHASES) for r in reports for s in r["sessions"]]
