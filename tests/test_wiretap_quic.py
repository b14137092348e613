"""The wire tap counts QUIC (:mod:`mgmtbench.lab.wiretap`): a real aioquic HTTP/3 exchange through
a real lab gives the round trips it costs, 1 for the handshake and 1 per request on one
connection; and the tap's size rule for ACK-only packets holds on aioquic's own log of every
packet it sent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mgmtbench.lab import Lab, LabLike
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.wiretap import QUIC_ACK_ONLY_MAX, QUIC_SHORT_MIN, WireCount
from tests.quic_support import H3Pair, SentPacket, h3_server

pytestmark = pytest.mark.skipif(
    not has_net_admin(), reason="wire taps need a lab network and AF_PACKET sockets: run as root "
                                "or with CAP_NET_ADMIN")

SETTLE = 0.2  # seconds: the last ACKs are through (regional: 30 ms RTT)
BODY = b"x" * 100


def regional(lab_for: Callable[[str], LabLike]) -> Lab:
    lab = lab_for("regional")
    assert isinstance(lab, Lab), "these tests need a real lab network"
    return lab


def exchange(lab: Lab, folder: Path, requests: int, warm: bool = False) -> tuple[
        WireCount, list[SentPacket], float]:
    """``requests`` GETs one after another on one connection, then the tap's count (taken before
    the client closes), every packet both sides sent, and the seconds the GETs took. The tap and
    the clock start before the client connects, or (``warm``) once a first GET on the connection
    is done."""
    assert lab.state is not None
    netns, address = lab.state.netns, lab.devices[0].address
    tap = lab.wire_tap(settle=SETTLE)

    async def run() -> tuple[H3Pair, float]:
        async with h3_server(netns, address, folder, BODY) as pair:
            await asyncio.sleep(SETTLE)
            try:
                if not warm:
                    tap.start()
                start = time.perf_counter()
                async with pair.client() as client:
                    if warm:
                        assert await client.get(address, "/warm") == BODY
                        await asyncio.sleep(SETTLE)
                        tap.start()
                        start = time.perf_counter()
                    for _ in range(requests):
                        assert await client.get(address, "/show") == BODY
                    took = time.perf_counter() - start
                    await asyncio.sleep(SETTLE)
                    tap.stop()
            finally:
                tap.abort()
        return pair, took

    pair, took = asyncio.run(run())
    count = tap.result()
    assert count is not None
    return count, pair.packets(), took


def least_took(took: float, again: Callable[[], float], bound: float) -> float:
    """``took``, or if it is not under ``bound`` the least of it and up to two more exchanges'.

    The counts are the wire's facts; the time is this 2-core machine's too: aioquic's handshake
    costs ~12 ms of CPU a side, and a busy neighbour only ever adds to it, where a round trip too
    many would add 30 ms to every try."""
    times = [took]
    while len(times) < 3 and min(times) >= bound:
        times.append(again())
    if len(times) > 1:
        print(f"re-timed: {', '.join(f'{t * 1000:.1f}' for t in times)} ms")
    return min(times)


def quic_only(count: WireCount) -> None:
    assert count.udp_turns == count.turns  # nothing but QUIC on the link
    assert count.syn == count.fin == count.empty_tcp == count.tcp_retransmits == 0


@pytest.mark.parametrize("requests", [1, 5])
def test_each_request_on_an_open_connection_is_one_rtt(
        lab_for: Callable[[str], LabLike], tmp_path: Path, requests: int) -> None:
    lab = regional(lab_for)
    count, _, took = exchange(lab, tmp_path, requests, warm=True)
    print(f"{requests} GET(s) on an open HTTP/3 connection: {count}; {took * 1000:.1f} ms")
    quic_only(count)
    assert count.turns == 2 * requests
    assert count.quic_rtts == requests
    assert count.quic_long == 0
    assert count.quic_ack_only >= requests  # each response is acknowledged on its own
    rtt = lab.profile.rtt_ms / 1000  # and the time agrees
    assert requests * rtt <= took
    assert least_took(took, lambda: exchange(lab, tmp_path, requests, warm=True)[2],
                      (requests + 1) * rtt) < (requests + 1) * rtt


def test_the_handshake_is_one_rtt(lab_for: Callable[[str], LabLike], tmp_path: Path) -> None:
    """Connect and one GET: 2 round trips waited for (handshake, request), so 4 turns, and up to
    2 more that nobody waits for: aioquic's client answers the server's SETTINGS (in the
    server's first 1-RTT packet) with a QPACK encoder-stream instruction (Set Dynamic Table
    Capacity, 3 bytes with an ACK: 41 bytes, data-bearing); it makes turns when it leaves between
    that packet and the response, or after both. The time says 2 round trips."""
    lab = regional(lab_for)
    count, packets, took = exchange(lab, tmp_path, 1)
    print(f"connect + 1 GET over HTTP/3: {count}; {took * 1000:.1f} ms")
    quic_only(count)
    assert 4 <= count.turns <= 6
    extra = [p for p in packets if p.side == "client" and p.packet_type == "1RTT"
             and not p.ack_only and not any(s % 4 == 0 for s in p.stream_ids)
             and p.length > QUIC_ACK_ONLY_MAX and "connection_close" not in p.frames]
    # The client's first 1-RTT packet (its control streams) goes with its Handshake: no turn.
    assert count.turns == 4 or len(extra) >= 2
    # Long-header datagrams: the client's Initial; the server's Initial + Handshake; the client's
    # Initial ACK + Handshake (+ its first 1-RTT packet), each coalesced in one datagram.
    assert count.quic_long == 3
    rtt = lab.profile.rtt_ms / 1000
    assert 2 * rtt <= took
    assert least_took(took, lambda: exchange(lab, tmp_path, 1)[2], 3 * rtt) < 3 * rtt


def test_the_ack_only_rule_holds_on_aioquics_own_log(
        lab_for: Callable[[str], LabLike], tmp_path: Path) -> None:
    """Every 1-RTT packet aioquic sent that carries only ACK frames is within the tap's ACK-only
    sizes, and every packet carrying a request or its response (frames of a request stream,
    client-initiated bidirectional: id % 4 == 0) is larger; and the tap's tally of ACK-only
    datagrams is the log's count of short packets in those sizes."""
    lab = regional(lab_for)
    count, packets, _ = exchange(lab, tmp_path, 5)
    short = [p for p in packets if p.packet_type == "1RTT"]
    ack_only = [p for p in short if p.ack_only]
    requests = [p for p in short if any(s % 4 == 0 for s in p.stream_ids)]
    print("ACK-only sizes:", sorted({p.length for p in ack_only}),
          "request/response sizes:", sorted({p.length for p in requests}),
          "other small ones:", sorted({(p.length, p.frames) for p in short
                                       if not p.ack_only and p.length <= QUIC_ACK_ONLY_MAX}))
    # How many ACKs go alone depends on timing (an ACK due as the next request leaves rides with
    # it: 4 to 7 seen in 5 GETs); the rule needs some to hold on.
    assert ack_only
    assert len(requests) >= 10
    assert all(QUIC_SHORT_MIN <= p.length <= QUIC_ACK_ONLY_MAX for p in ack_only)
    assert all(p.length > QUIC_ACK_ONLY_MAX for p in requests)
    # The tap stopped before the client's CONNECTION_CLOSE (a small short packet too).
    in_window = [p for p in short if "connection_close" not in p.frames]
    assert count.quic_ack_only == sum(QUIC_SHORT_MIN <= p.length <= QUIC_ACK_ONLY_MAX
                                      for p in in_window)
