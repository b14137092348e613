"""The HTTP/3 client adapters (aioquic-h3, niquests-h3, niquests-h3-async) against the emulator's
HTTP/3 port: outputs in every mode, errors translated, and the round trips each mode takes,
timed through a UDP relay that delays every datagram (RTT = twice its delay) and, for aioquic-h3,
counted on its datagrams. What each mode opens per iteration is in test_mode_semantics."""

from __future__ import annotations

import asyncio
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from mgmtbench.clients import ADAPTERS, AsyncClient, Client, Transport, adapter
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.errors import AuthenticationFailed, ClientError, ConnectionFailed, UsageError
from mgmtbench.targets import Target
from mgmtbench.testing.http3 import http3_evidence
from tests.clients_support import available, drive_rounds
from tests.http3_support import Relay

HTTP3_CLIENTS = [n for n in ADAPTERS if adapter(n).transport is Transport.HTTP3]
CASES = [(name, mode) for name in HTTP3_CLIENTS for mode in adapter(name).modes]
IDS = [f"{n}-{m}" for n, m in CASES]
#: A small first answer (it fits in the device's first flight: see test_big_first_answer...).
COMMANDS = ["show clock", "show version", "show ip interface brief"]
N = len(COMMANDS)
#: One-way delay of the relay: RTT 150 ms, far above an iteration's own processing here.
DELAY = 0.075
RTT = 2 * DELAY
#: Round trips one iteration waits for, with N commands: the protocol's minimum.
ROUND_TRIPS = {
    "fresh-conn": 1 + N,  # the handshake, then a GET at a time (the study: 6 at 5 commands)
    "keep-alive": N,  # the study: 5
    "batch-post": 1,  # the study: 1
    "0rtt-resumption": 1 + N,  # a resumed handshake still takes its round trip (the study: 6)
    "0rtt": N,  # the first GET answered with the handshake (ours: 5 at 5 commands)
}
#: Round trips a library may add to a mode. urllib3-future (niquests) holds a request's last
#: piece while two ack-eliciting packets are unacknowledged (``should_wait_remote_flow_control``
#: in its qh3 protocol): a POST's headers and body are two, so its end waits for an ACK, unless
#: the device's ACKs of what went before are in by then (a CI run saw 1 of 3 rounds take 1).
LIBRARY_EXTRA = {("niquests-h3", "batch-post"): 1, ("niquests-h3-async", "batch-post"): 1}


def test_every_mode_has_a_round_trip_count() -> None:
    assert {m for _, m in CASES} == set(ROUND_TRIPS)


@pytest.fixture
def relay_for(ios_target: Target) -> Iterator[Callable[[float], Target]]:
    """``relay_for(delay)``: the target reached through a relay delaying each datagram by
    ``delay`` s each way, on an event loop of its own (sync clients block theirs)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    relays: list[Relay] = []

    def make(delay: float) -> Target:
        assert ios_target.http3_port is not None
        relay, port = asyncio.run_coroutine_threadsafe(
            Relay.start(ios_target.http3_port, delay), loop).result(10)
        relays.append(relay)
        return replace(ios_target, http3_port=port)

    yield make

    async def close() -> None:
        for relay in relays:
            relay.close()
        await asyncio.sleep(0)  # the transports' close completes on the next turn

    asyncio.run_coroutine_threadsafe(close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def timed_rounds(client: Client | AsyncClient, commands: list[str], rounds: int = 2,
                 counter: RoundTripCounter | None = None) -> tuple[list[float], list[int]]:
    """Each round's seconds and counted round trips (setup and teardown untimed)."""
    times: list[float] = []
    trips: list[int] = []

    def counted() -> int:
        return counter.trips if counter is not None else 0

    async def go_async(client: AsyncClient) -> None:
        await client.setup()
        try:
            for _ in range(rounds):
                before, start = counted(), time.perf_counter()
                await client.run(commands)
                times.append(time.perf_counter() - start)
                trips.append(counted() - before)
        finally:
            await client.teardown()

    if isinstance(client, AsyncClient):
        asyncio.run(go_async(client))
        return times, trips
    client.setup()
    try:
        for _ in range(rounds):
            before, start = counted(), time.perf_counter()
            client.run(commands)
            times.append(time.perf_counter() - start)
            trips.append(counted() - before)
    finally:
        client.teardown()
    return times, trips


@pytest.mark.parametrize(("name", "mode"), CASES, ids=IDS)
def test_outputs_are_the_devices(name: str, mode: str, ios_target: Target) -> None:
    cls = available(name)
    outputs, _ = drive_rounds(cls(ios_target, mode), COMMANDS, rounds=3)
    want = expected_output("cisco_ios", "R1", "198.18.0.1", COMMANDS)
    if mode == "batch-post":  # the device answers the lines in configuration mode
        assert all("show version" not in o and "Cisco IOS" in o for o in outputs)
        return
    assert all(same_output("cisco_ios", o, want) for o in outputs)


@pytest.mark.parametrize(("name", "mode"), CASES, ids=IDS)
def test_round_trips_per_mode(name: str, mode: str,
                              relay_for: Callable[[float], Target]) -> None:
    """Whole round trips in the fastest of three rounds: what the mode waits for, no more (and
    what its library may add)."""
    cls = available(name)
    times, _ = timed_rounds(cls(relay_for(DELAY), mode), COMMANDS, rounds=3)
    least = ROUND_TRIPS[mode]
    assert least <= math.floor(min(times) / RTT) <= least + LIBRARY_EXTRA.get((name, mode), 0), \
        times


def test_0rtt_takes_one_round_trip_fewer_than_fresh_conn(
        relay_for: Callable[[float], Target]) -> None:
    cls = available("aioquic-h3")
    target = relay_for(DELAY)
    early, _ = timed_rounds(cls(target, "0rtt"), COMMANDS)
    fresh, _ = timed_rounds(cls(target, "fresh-conn"), COMMANDS)
    assert math.floor(min(fresh) / RTT) - math.floor(min(early) / RTT) == 1


def test_a_big_first_answer_leaves_with_the_handshake(relay_for: Callable[[float], Target]) -> None:
    """Before a client's address is validated the device may send three times what it received
    (RFC 9000 section 8.1): ``show version`` (2.8 kB) would not fit beside the handshake and
    would wait a round trip. ``0rtt`` brings back the address token of the previous connection
    (NEW_TOKEN), so its first answer still takes one round trip with the handshake."""
    cls = available("aioquic-h3")
    commands = ["show version", "show clock", "show ip interface brief"]
    times, _ = timed_rounds(cls(relay_for(DELAY), "0rtt"), commands, rounds=3)
    assert math.floor(min(times) / RTT) == len(commands), times


@pytest.mark.parametrize("mode", adapter("aioquic-h3").modes)
def test_counted_round_trips(mode: str, relay_for: Callable[[float], Target]) -> None:
    """The study's count on aioquic's datagrams (a read after a write) is at least what the
    mode waits for; more where aioquic's ACK (sent 1 ms after a packet) goes out between two
    datagrams of one answer, which the count cannot tell from a round trip. How many more is
    the machine's timing (batch-post, 1 round trip: 3 and 5 in two rounds of one CI run), so
    no upper bound holds; the wire tap's count (tests/test_wiretap_quic.py) is the exact one."""
    cls = available("aioquic-h3")
    client = cls(relay_for(DELAY), mode)
    counter = RoundTripCounter()
    client.count_round_trips(counter)
    _, trips = timed_rounds(client, COMMANDS, counter=counter)
    print(f"{mode}: counted {trips}, waits for {ROUND_TRIPS[mode]}")
    assert min(trips) >= ROUND_TRIPS[mode], trips


@pytest.mark.parametrize("name", HTTP3_CLIENTS)
@pytest.mark.parametrize("mode", ["fresh-conn", "keep-alive"])
def test_wrong_password_is_authentication_failed(name: str, mode: str,
                                                 ios_target: Target) -> None:
    cls = available(name)
    with pytest.raises(AuthenticationFailed, match="401"):
        drive_rounds(cls(replace(ios_target, password="wrong"), mode), COMMANDS[:1], rounds=1)


def _closed_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.parametrize("name", HTTP3_CLIENTS)
def test_nothing_listening_is_connection_failed(name: str, ios_target: Target) -> None:
    cls = available(name)
    target = replace(ios_target, http3_port=_closed_udp_port())
    start = time.perf_counter()
    with pytest.raises(ConnectionFailed, match=name):
        drive_rounds(cls(target, "fresh-conn"), COMMANDS[:1], rounds=1)
    assert time.perf_counter() - start < 10  # ICMP's answer, not a time-out


@pytest.mark.parametrize("name", HTTP3_CLIENTS)
def test_a_target_without_http3_is_refused(name: str, ios_target: Target) -> None:
    cls = available(name)
    with pytest.raises(UsageError, match="serves no HTTP/3"):
        cls(replace(ios_target, http3_port=None), "keep-alive")


def test_0rtt_fails_when_the_device_refuses_early_data(ios_target: Target) -> None:
    """A used ticket resumes nothing (the device takes each once), so its early data is
    refused: the adapter says so rather than time a full handshake as 0-RTT."""
    from mgmtbench.clients.aioquic_h3.adapter import AioquicH3Client

    available("aioquic-h3")
    client = AioquicH3Client(ios_target, "0rtt")

    async def go() -> None:
        await client.setup()
        try:
            used = client._ticket
            await client.run(COMMANDS[:1])
            client._ticket = used
            await client.run(COMMANDS[:1])
        finally:
            await client.teardown()

    with pytest.raises(ClientError, match="did not accept early data"):
        asyncio.run(go())


@pytest.mark.parametrize(("mode", "early", "resumed"), [("0rtt", 1.0, 1.0),
                                                        ("fresh-conn", 0.0, 0.0)])
def test_the_benchmark_reads_what_the_device_saw(mode: str, early: float, resumed: float,
                                                 ios_target: Target) -> None:
    """The transport benchmark's hook: the device's counts over HTTPS around the rounds (``0rtt``
    brings back its previous connection's address token: validated at once, every round)."""
    from mgmtbench.clients.aioquic_h3.adapter import AioquicH3Client

    available("aioquic-h3")
    evidence = http3_evidence(ios_target, mode)
    client = AioquicH3Client(ios_target, mode)

    async def go() -> None:
        await client.setup()
        try:
            evidence.start()
            for _ in range(2):
                await client.run(COMMANDS)
            evidence.stop()
        finally:
            await client.teardown()

    asyncio.run(go())
    assert evidence.per_iteration(2) == {"connections_per_iteration": 1.0,
                                         "resumed_per_iteration": resumed,
                                         "early_data_per_iteration": early,
                                         "address_validated_per_iteration": early}
    assert evidence.problem(2) is None


def test_the_benchmark_fails_a_0rtt_without_early_data(ios_target: Target) -> None:
    evidence = http3_evidence(ios_target, "0rtt")
    counts = {"connections": 4, "handshakes": 4, "resumed": 4, "early_data_accepted": 3,
              "early_data_refused": 0, "requests": 20, "tokens_issued": 4, "address_validated": 3}
    evidence.before, evidence.after = counts, {**counts, "connections": 6, "resumed": 6,
                                               "requests": 30}
    assert evidence.problem(2) == ("0rtt: the device counted 0 early data in 2 timed rounds "
                                   "(one per round expected)")
