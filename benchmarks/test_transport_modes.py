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
:mod:`mgmtbench.lab.wiretap`; not recorded on a loopback lab).

With ``--inventory FILE [--limit PATTERN]`` the same benchmark runs against the inventory's hosts
instead (their names take the place of the profiles: ``[paramiko-reuse-conn-r1-5cmd]``), through
a site (:mod:`mgmtbench.testing.sites`): each host's own platform and show commands, rounds
compared with the first round (no oracle), paced and timed out per host; packets and wire round
trips only when the hosts sit behind a running mgmtbench lab's link. ``rtts`` is time divided by the
measured RTT; wire RTTs count the direction changes themselves. Adapters that can wrap their
connections (``counts_round_trips``: paramiko, asyncssh, httpx, netmiko) also record the study's
own count, ``app_rtts_per_iteration``: a read after a write, on the client's TCP streams, or
for aioquic-h3 its UDP datagrams (rules in :mod:`mgmtbench.clients.roundtrips`), over the timed
rounds only; others record nothing. HTTP/3 benchmarks also record what the device counted of
their connections, resumptions and early data (:mod:`mgmtbench.testing.http3`), and fail when a
``0rtt`` round was not taken in early data or a ``0rtt-resumption`` round not resumed. The
client's CPU per command over the timed rounds (``client_cpu_ms_per_command``: this process and
the client processes it starts, the lab's and the tap's set apart, :mod:`mgmtbench.testing.clientcpu`)
is recorded wherever the devices run outside this process.

The lab's devices are cisco_ios unless ``--platforms`` names others (then the platform is an axis
of the matrix, after the profile: ``[local-arista_eos-5cmd-httpx-eapi-batch]``). A mode the
device's platform does not serve (``eapi-batch`` needs Arista EOS's eAPI, ``nxapi-batch`` NX-OS's
NX-API) is skipped before anything is timed, with the adapter's reason
(:meth:`~mgmtbench.clients.base._Common.check_mode`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.clients import Transport, adapter
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator.oracle import show_commands
from mgmtbench.errors import UsageError
from mgmtbench.lab import LinkCounters
from mgmtbench.testing import Driver, record, timing_info
from mgmtbench.testing.clientcpu import client_cpu_seconds
from mgmtbench.testing.gnmi import gnmi_output_check, gnmi_unsupported
from mgmtbench.testing.http3 import http3_evidence
from mgmtbench.testing.netconf import netconf_output_check, netconf_unsupported
from mgmtbench.testing.restconf import restconf_output_check, restconf_unsupported
from mgmtbench.testing.sites import Site

PLATFORM = "cisco_ios"
# Time budget per benchmark: rounds = budget / one round, within limits. Rounds slower than
# SLOW_ROUND seconds (fresh connections at high RTT) get SLOW_ROUNDS, so the default matrix fits
# in 15 minutes on a 2-core machine (MGMTBENCH_ROUND_SECONDS raises the budget for tighter figures).
TARGET_SECONDS = float(os.environ.get("MGMTBENCH_ROUND_SECONDS", "1.5"))
MIN_ROUNDS, MAX_ROUNDS = 3, 30
SLOW_ROUND, SLOW_ROUNDS = 1.0, 2


#: The transports that carry modelled data too: why a benchmark cannot run, and its check.
_MODELLED = {Transport.NETCONF: (netconf_unsupported, netconf_output_check),
             Transport.RESTCONF: (restconf_unsupported, restconf_output_check),
             Transport.GNMI: (gnmi_unsupported, gnmi_output_check)}
#: The transports whose device counts what a mode claims (resumptions, early data): read
#: around the timed rounds, recorded, and a claim the counts deny fails the benchmark.
_DEVICE_EVIDENCE = {Transport.HTTP3: http3_evidence}


@pytest.fixture
def platform() -> str:
    """The lab devices' platform when ``--platforms`` adds no axis (the default)."""
    return PLATFORM


def round_count(one_round: float) -> int:
    """Timed rounds for a benchmark whose warm-up round took ``one_round`` seconds."""
    if one_round > SLOW_ROUND * TARGET_SECONDS / 1.5:
        return SLOW_ROUNDS
    return int(min(MAX_ROUNDS, max(MIN_ROUNDS, TARGET_SECONDS / one_round)))


@pytest.mark.inventory
def test_transport_mode(benchmark: BenchmarkFixture, site_for: Callable[..., Site],
                        client: str, mode: str, payload: str, profile: str, platform: str,
                        commands: int) -> None:
    cls = adapter(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    site = site_for(profile, platform)  # the lab of that profile, or the --inventory host
    reason = site.unsupported(cls.service(mode))  # e.g. no HTTPS on the sshd device runtime
    if reason:
        pytest.skip(reason)
    target = site.targets(1, platform)[0]
    try:  # e.g. the OpenSSH client with an inventory host that has a password and no key file
        cls.check(target)
        cls.check_mode(target, mode)  # e.g. eapi-batch on a device without Arista's eAPI
    except UsageError as exc:
        pytest.skip(str(exc))
    cmds = show_commands(target.platform, commands)
    reason = site.refused(cmds)  # inventory hosts: show commands only, unless --allow-config
    if reason:
        pytest.skip(reason)
    if cls.transport in _MODELLED:
        unsupported, output_check = _MODELLED[cls.transport]
        reason = unsupported(target.platform, cmds, mode, payload)
        if reason:
            pytest.skip(reason)
        check = output_check(site, target, cmds, mode, payload)
    else:
        check = site.output_check(target, cmds)
    client_under_test = cls(target, mode, payload)
    counter = RoundTripCounter() if cls.counts_round_trips else None
    if counter is not None:
        client_under_test.count_round_trips(counter)  # before setup: a kept connection too
    driver = Driver(client_under_test)
    outputs: list[str] = []

    def one_round() -> None:
        outputs.append(driver.run(cmds))

    driver.setup()
    try:
        # New sessions per round, for an inventory's rate limit: counted in the warm-up where
        # the adapter counts connections, else at most one per command.
        opened = counter.connections if counter else 0
        with site.rounds(commands) as before_round:
            if before_round:
                before_round()
            start = time.perf_counter()
            one_round()  # warm-up, and the first check of the answer
            rounds = round_count(time.perf_counter() - start)
            sessions = counter.connections - opened if counter else commands
        benchmark.group = (f"{profile}, {commands} commands" if platform == PLATFORM
                           else f"{profile}, {platform}, {commands} commands")
        # Only emulated devices serve their counts (/mgmtbench/http3): a real one is taken at
        # its client's word (aioquic-h3 still fails a 0rtt round whose early data was refused).
        emulated = site.record_info().get("target") == "lab"
        evidence = (_DEVICE_EVIDENCE[cls.transport](target, mode)
                    if emulated and cls.transport in _DEVICE_EVIDENCE else None)
        if evidence is not None:  # untimed, and outside the tap's capture and link counters
            evidence.start()
        # The tap's process starts and stops outside the timed rounds; it also probes the link's
        # RTT meanwhile (ICMP, taken out of the packet counts below).
        with site.wire_tap(probe=True) as tap, site.rounds(sessions) as before_round:
            before, trips_before = site.counters(), counter.trips if counter else 0
            apart = site.process_pids()  # None: the devices are threads of this process
            if apart is not None and tap.pid is not None:
                apart = [*apart, tap.pid]
            cpu_before = None if apart is None else client_cpu_seconds(apart)
            benchmark.pedantic(one_round, setup=before_round, rounds=rounds, iterations=1)
            cpu = None if apart is None or cpu_before is None else (
                client_cpu_seconds(apart) - cpu_before)
            after = site.counters()
            app_trips = counter.trips - trips_before if counter else None
        if evidence is not None:
            evidence.stop()
    finally:
        driver.teardown()
    wire = tap.result()
    traffic = after - before if after is not None and before is not None else None
    if wire is not None and traffic is not None:
        traffic -= LinkCounters(wire.probes, wire.probe_tx_bytes, wire.probe_replies,
                                wire.probe_rx_bytes)
    problem = check(outputs)
    assert problem is None, problem
    if evidence is not None:
        problem = evidence.problem(rounds)
        assert problem is None, problem

    data = list(benchmark.stats.stats.data) if benchmark.stats else []
    record(benchmark, "transport", lab=None, library=cls,
           **({"platform": target.platform} | site.record_info()),
           client=client, mode=mode, profile=site.name, commands=commands,
           transport=str(cls.transport), payload=payload,
           **(timing_info(data, site.rtt_ms()) if data else {}),
           **({} if traffic is None else {
               "packets_per_iteration": round(traffic.packets / rounds, 1),
               "bytes_per_iteration": round(traffic.bytes / rounds),
               "packets_to_device": round(traffic.tx_packets / rounds, 1),
               "packets_from_device": round(traffic.rx_packets / rounds, 1)}),
           **(wire.per_iteration(rounds) if wire else {}),
           **({} if app_trips is None else
              {"app_rtts_per_iteration": round(app_trips / rounds, 1)}),
           **({} if cpu is None else
              {"client_cpu_ms_per_command": round(1000 * cpu / (rounds * commands), 3)}),
           **(site.under_load(wire.link_rtt()) if wire else {}),
           **({} if evidence is None else evidence.per_iteration(rounds)))
