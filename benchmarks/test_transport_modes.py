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
measured RTT; wire RTTs count the direction changes themselves. Adapters that can wrap their
connections (``counts_round_trips``: paramiko, asyncssh, httpx, netmiko) also record the study's
own count, ``app_rtts_per_iteration``: a read after a write, on the client's TCP streams (rules in
:mod:`mgmtbench.clients.roundtrips`), over the timed rounds only; others record nothing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator.oracle import expected_output, show_commands
from mgmtbench.lab import LabLike, LinkCounters
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
    reason = lab.unsupported(cls.service(mode))  # e.g. no HTTPS on the sshd device runtime
    if reason:
        pytest.skip(reason)
    device = lab.devices[0]
    target = lab_targets(lab, login, platform=PLATFORM, count=1)[0]
    cmds = show_commands(PLATFORM, commands)
    want = expected_output(PLATFORM, device.hostname, device.reported_ip, cmds)
    client_under_test = cls(target, mode)
    counter = RoundTripCounter() if cls.counts_round_trips else None
    if counter is not None:
        client_under_test.count_round_trips(counter)  # before setup: a kept connection too
    driver = Driver(client_under_test)
    outputs: list[str] = []

    def one_round() -> None:
        outputs.append(driver.run(cmds))

    driver.setup()
    try:
        start = time.perf_counter()
        one_round()  # warm-up, and the first check of the answer
        rounds = round_count(time.perf_counter() - start)
        benchmark.group = f"{profile}, {commands} commands"
        # The tap's process starts and stops outside the timed rounds; it also probes the link's
        # RTT meanwhile (ICMP, taken out of the packet counts below).
        with lab.wire_tap(probe=True) as tap:
            before, trips_before = lab.counters(), counter.trips if counter else 0
            benchmark.pedantic(one_round, rounds=rounds, iterations=1)
            traffic = lab.counters() - before
            app_trips = counter.trips - trips_before if counter else None
    finally:
        driver.teardown()
    wire = tap.result()
    if wire is not None:
        traffic -= LinkCounters(wire.probes, wire.probe_tx_bytes, wire.probe_replies,
                                wire.probe_rx_bytes)
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
           **(wire.per_iteration(rounds) if wire else {}),
           **({} if app_trips is None else
              {"app_rtts_per_iteration": round(app_trips / rounds, 1)}),
           **(under_load(wire.link_rtt(), lab) if wire else {}))


def under_load(link: dict[str, float], lab: LabLike) -> dict[str, float]:
    """The link's RTT measured during the timed rounds, and the instrument's error then
    (``rtt_error_under_load_ms``: that RTT minus the profile's)."""
    configured = lab.facts().configured_rtt_ms
    if "link_rtt_under_load_ms" in link and configured is not None:
        link = {**link, "rtt_error_under_load_ms": round(
            link["link_rtt_under_load_ms"] - configured, 3)}
    return link
