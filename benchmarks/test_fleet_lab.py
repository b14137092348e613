"""A fleet lab at full size: one emulator process serving ``--fleet-size`` devices (default
1,000), each on its own address with its own hostname, behind one impaired link.

Reports what serving the fleet costs the emulator (start-up time, memory idle and per device,
CPU during a sweep) and times the sweep itself: ``show version`` on every device, 100 sessions at
a time (asyncssh, one worker process), every answer checked against that device's own hostname
and address.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.lab import LabLike, open_lab
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.profiles import resolve
from mgmtbench.lab.usage import usage
from mgmtbench.targets import Login, lab_targets
from mgmtbench.testing import credentials, expected_digests, record

WORKERS = 100
COMMAND = "show version"


@pytest.fixture(params=["local", "regional"])
def fleet_lab(request: pytest.FixtureRequest) -> Iterator[tuple[LabLike, float]]:
    option = request.config.getoption
    size = int(option("--fleet-size"))
    start = time.perf_counter()  # made here, not by lab_for: its start-up time is a result
    if not has_net_admin():  # measures a namespace fleet lab, not loopback
        pytest.skip("a fleet lab needs root or CAP_NET_ADMIN")
    lab = open_lab(resolve(request.param), devices=size, credentials=credentials(),
                   backend=str(option("--link-backend")), runtime=str(option("--device-runtime")),
                   image=str(option("--device-image")),
                   emulator_processes=int(option("--emulator-processes")))
    try:
        yield lab, time.perf_counter() - start
    finally:
        lab.down()


def test_fleet_sweep(benchmark: BenchmarkFixture, fleet_lab: tuple[LabLike, float],
                     login: Login) -> None:
    lab, up_seconds = fleet_lab
    pids = lab.device_pids()
    idle = usage(pids)
    targets = lab_targets(lab, login)
    digests = expected_digests(lab, COMMAND)
    errors: list[str] = []
    client_cpu: list[float] = []

    with FleetWorker("asyncssh") as worker:
        def sweep() -> None:
            for first in range(0, len(targets), WORKERS):
                report = worker.run(targets[first:first + WORKERS], COMMAND,
                                    digests[first:first + WORKERS])
                errors.extend(s["error"] for s in report["sessions"] if s["error"])
                client_cpu.append(report["cpu_user"] + report["cpu_system"])

        benchmark.group = "fleet lab sweep"
        before = usage(pids)
        benchmark.pedantic(sweep, rounds=1, iterations=1)
        busy = usage(pids) - before
    assert not errors, f"{len(errors)} sessions failed; first: {errors[0]}"

    facts = lab.facts()
    size = len(lab.devices)
    seconds = benchmark.stats.stats.median if benchmark.stats else 0.0
    figures: dict[str, Any] = {
        "profile": facts.profile, "backend": facts.backend, "runtime": facts.runtime,
        "emulator_processes": facts.emulator_processes,
        "measured_rtt_ms": facts.measured_rtt_ms, "lab_devices": size, "workers": WORKERS,
        "lab_up_s": round(up_seconds, 2),
        "emulator_rss_idle_mib": round(idle.rss_bytes / 2**20, 1),
        "emulator_rss_after_mib": round(busy.rss_bytes / 2**20, 1),
        "emulator_kib_per_device_idle": round(idle.rss_bytes / 1024 / size, 1),
        "emulator_cpu_s": round(busy.cpu_s, 3),
        "emulator_cpu_pct": round(100 * busy.cpu_s / seconds, 1) if seconds else None,
        "client_cpu_s": round(sum(client_cpu), 3),
        "sessions_per_s": round(size / seconds, 1) if seconds else None,
    }
    record(benchmark, "fleet-lab", lab=lab, **figures)
    print("\n" + ", ".join(f"{k} {v}" for k, v in figures.items()))
