"""Loss recovery, TCP against QUIC: the same work over the same regional link at 0, 0.5 and 2 %
loss per packet and direction (profiles ``regional``, ``regional-loss0.5``, ``regional-loss2``),
side by side.

The work: one show command per round, to one device, through

- httpx over HTTPS (TCP + TLS as the platform offers it: 1.2 on the emulated IOS-XE, so a new
  connection and a request are 4 round trips, against QUIC's 2; HTTP/1.1): ``keep-alive`` (one
  connection kept from before the timed part) and ``conn-per-iteration`` (a new connection, TCP
  and TLS handshakes included, each round);
- HTTP/3 over QUIC (client ``aioquic-h3``, transport ``http3``): ``keep-alive`` and ``fresh-conn``
  (a new QUIC connection each round; with one command a round, the same work as
  ``conn-per-iteration``).

One command a round, so a round's time is one request's (kept) or one connection's and one
request's (fresh), and a lost packet shows in that round alone: loss needs samples, so each case
runs ``MGMTBENCH_LOSS_ROUNDS`` rounds (default 200) and records p50, p95 and p99 beside the mean.
What the link lost and what was sent again is recorded too, over the timed rounds:
``link_dropped`` (the delay line's drops both ways, :meth:`~mgmtbench.lab.Lab.link_stats`; not
recorded on backends that keep no tally), ``tcp_retransmits`` (data-bearing TCP packets seen
twice by the wire tap), and the wire tap's round trips (QUIC's apart: ``quic_rtts_per_iteration``;
the rules in :mod:`mgmtbench.lab.wiretap`). QUIC's retransmissions are encrypted: its recovery
shows as time and as the link's drops.

A client that is not registered, or a service the lab's devices do not serve (HTTP/3 until the
emulator has it), is skipped saying so. The run ends with a table per client and mode across the
loss rates (:mod:`mgmtbench.testing.summary`). ``-k loss2`` or ``-k aioquic`` narrows. Needs root.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import adapter
from mgmtbench.emulator.oracle import expected_output, same_output, show_commands
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, LabLike
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.targets import Login, lab_targets
from mgmtbench.testing import Driver, record, timing_info

pytestmark = pytest.mark.skipif(not has_net_admin(),
                                reason="the loss experiment needs a lab network: run as root")

PLATFORM = "cisco_ios"
LOSS_PROFILES = ("regional", "regional-loss0.5", "regional-loss2")
#: (client, mode): TCP's two, then QUIC's two.
CASES = (("httpx", "keep-alive"), ("httpx", "conn-per-iteration"),
         ("aioquic-h3", "keep-alive"), ("aioquic-h3", "fresh-conn"))
ROUNDS = int(os.environ.get("MGMTBENCH_LOSS_ROUNDS", "200"))


def link_drops(lab: Lab) -> int | None:
    """Packets the link dropped so far, both ways (None: the backend keeps no tally)."""
    stats = lab.link_stats()
    if stats is None:
        return None
    return int(stats["a_to_b"]["dropped"]) + int(stats["b_to_a"]["dropped"])


@pytest.mark.parametrize("loss_profile", LOSS_PROFILES)
@pytest.mark.parametrize(("case_client", "case_mode"), CASES, ids=[f"{c}-{m}" for c, m in CASES])
def test_loss_recovery(benchmark: BenchmarkFixture, lab_for: Callable[[str], LabLike],
                       login: Login, case_client: str, case_mode: str, loss_profile: str) -> None:
    try:
        cls = adapter(case_client)
    except UsageError as exc:
        pytest.skip(f"client {case_client!r} is not registered here ({exc})")
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    if case_mode not in cls.modes:
        pytest.skip(f"client {case_client!r} has no mode {case_mode!r}")
    lab = lab_for(loss_profile)
    assert isinstance(lab, Lab), "the loss experiment needs a real lab network"
    reason = lab.unsupported(cls.service(case_mode))
    if reason:
        pytest.skip(reason)
    target = lab_targets(lab, login, platform=PLATFORM, count=1)[0]
    commands = show_commands(PLATFORM, 1)
    driver = Driver(cls(target, case_mode))
    outputs: list[str] = []

    def one_round() -> None:
        outputs.append(driver.run(commands))

    driver.setup()
    try:
        one_round()  # warm-up
        benchmark.group = f"loss recovery, {case_client} {case_mode}"
        with lab.wire_tap(settle=0.2) as tap:
            dropped_before = link_drops(lab)
            benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
            dropped_after = link_drops(lab)
    finally:
        driver.teardown()
    # Every round prints what the oracle says the device prints (in the stable form: the
    # device's clock and uptime run).
    device = next(d for d in lab.devices if d.address == target.host)
    want = expected_output(PLATFORM, device.hostname, device.reported_ip, commands)
    wrong = sum(not same_output(PLATFORM, output, want) for output in outputs)
    assert wrong == 0, f"{wrong} of {len(outputs)} rounds answered other than the device prints"
    wire = tap.result()
    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    figures: dict[str, Any] = {
        "client": case_client, "mode": case_mode, "profile": loss_profile,
        "transport": str(cls.transport), "loss_pct": lab.profile.loss_pct,
        "loss_rounds": ROUNDS, "p50_ms": round(statistics.median(data) * 1000, 3),
        **timing_info(data, lab.facts().measured_rtt_ms)}
    if wire is not None:
        figures.update(wire.per_iteration(ROUNDS))
        figures["tcp_retransmits"] = wire.tcp_retransmits
    if dropped_before is not None and dropped_after is not None:
        figures["link_dropped"] = dropped_after - dropped_before
    record(benchmark, "loss-recovery", lab=lab, library=cls, **figures)

