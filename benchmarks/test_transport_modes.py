"""The main job: the same commands, to the same device, over the same impaired link, through
every client library and usage mode, side by side.

Parametrised over client x mode (every pair an adapter supports), profile and command count,
chosen with ``--profiles``, ``--commands`` and ``--clients`` (mgmtbench's pytest plugin). Test
ids read ``[paramiko-reuse-conn-regional-5cmd]``, so ``-k "regional and pty-fresh"`` selects.
Connection set-up is inside the timed part for the fresh modes and outside it for the reusing ones
(the adapter's ``setup``). Every round's output is checked against the transcripts.

Besides time, each benchmark records what went over the link during its timed rounds, per
iteration: packets and bytes (interface counters), and round trips counted on the wire
(``wire_rtts_per_iteration``, ``wire_turns_per_iteration``, ``data_packets_per_iteration``: a
capture in a process of its own, started before the timed rounds and stopped after them; rules in
:mod:`mgmtbench.lab.wiretap`; not recorded on a loopback lab). ``rtts`` is time divided by the
measured RTT; wire RTTs count the direction changes themselves.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.emulator.oracle import expected_output, show_commands
from mgmtbench.lab import LabLike
from mgmtbench.targets import Login, lab_targets
from mgmtbench.testing import Driver, record, timing_info

PLATFORM = "cisco_ios"
# Time budget per benchmark: rounds = budget / one round, within limits. Rounds slower than
# SLOW_ROUND seconds (fresh connections at high RTT) get SLOW_ROUNDS, so the default matrix fits
# in 15 minutes on a 2-core machine (MGMTBENCH_ROUND_SECONDS raises the budget for tighter figures).
TARGET_SECONDS = float(os.environ.get("MGMTBENCH_ROUND_SECONDS", "1.5"))
MIN_ROUNDS, MAX_ROUNDS = 3, 30
SLOW_ROUND, SLOW_ROUNDS = 1.0, 2


def round_count(one_round: float) -> int:
    """Timed rounds for a benchmark whose warm-up round took ``one_round`` seconds."""
    if one_round > SLOW_ROUND * TARGET_SECONDS / 1.5:
        return SLOW_ROUNDS
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, TARGET_SECONDS / one_round)))


def test_transport_mode(benchmark: BenchmarkFixture, lab_for: Callable[[str], LabLike],
                        login: Login, client: str, mode: str, profile: str,
                        commands: int) -> None:
    cls = adapter(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    lab = lab_for(profile)
    device = lab.devices[0]
    target = lab_targets(lab, login, platform=PLATFORM, count=1)[0]
    cmds = show_commands(PLATFORM, commands)
    want = expected_output(PLATFORM, device.hostname, device.reported_ip, cmds)
    driver = Driver(cls(target, mode))
    outputs: list[str] = []

    def one_round() -> None:
        outputs.append(driver.run(cmds))

    driver.setup()
    try:
        start = time.perf_counter()
        one_round()  # warm-up, and the first check of the answer
        rounds = round_count(time.perf_counter() - start)
        benchmark.group = f"{profile}, {commands} commands"
        with lab.wire_tap() as tap:  # its process starts and stops outside the timed rounds
            before = lab.counters()
            benchmark.pedantic(one_round, rounds=rounds, iterations=1)
            traffic = lab.counters() - before
    finally:
        driver.teardown()
    wire = tap.result()
    wrong = [i for i, out in enumerate(outputs) if out != want]
    assert not wrong, f"rounds {wrong} returned wrong output (first: {outputs[wrong[0]][:200]!r})"

    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    record(benchmark, "transport", lab=lab, library=cls,
           client=client, mode=mode, profile=profile, commands=commands,
           transport=str(cls.transport),
           **(timing_info(data, lab.facts().measured_rtt_ms) if data else {}),
           packets_per_iteration=round(traffic.packets / rounds, 1),
           bytes_per_iteration=round(traffic.bytes / rounds),
           packets_to_device=round(traffic.tx_packets / rounds, 1),
           packets_from_device=round(traffic.rx_packets / rounds, 1),
           **(wire.per_iteration(rounds) if wire else {}))
