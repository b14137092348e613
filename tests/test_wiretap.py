"""Wire round trips (:mod:`mgmtbench.lab.wiretap`) through real labs, real sockets and the real tap
process: known exchanges with the lab's echo server give exactly the turns the counting rule says,
on every link backend this machine has; the tap process never outlives its ``with`` block."""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from mgmtbench.errors import LabError, UsageError
from mgmtbench.lab import Lab, LabLike, resolve
from mgmtbench.lab.backends import choose
from mgmtbench.lab.lab import ECHO_PORT, has_net_admin
from mgmtbench.lab.local import LocalLab
from mgmtbench.lab.state import LabState
from mgmtbench.lab.wiretap import WireCount, WireTap

needs_lab = pytest.mark.skipif(
    not has_net_admin(), reason="wire taps need a lab network and AF_PACKET sockets: run as root "
                                "or with CAP_NET_ADMIN")
SETTLE = 0.2  # seconds: the server's FIN is back (regional: 30 ms RTT)
MESSAGE = b"q" * 100


@contextmanager
def echo_connection(lab: Lab) -> Iterator[socket.socket]:
    assert lab.echo_address is not None
    with socket.create_connection((lab.echo_address, ECHO_PORT), timeout=20) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        yield sock


def exchange(sock: socket.socket) -> None:
    """One request and its whole response (the echo of it)."""
    sock.sendall(MESSAGE)
    got = 0
    while got < len(MESSAGE):
        got += len(sock.recv(65536))


def quiet(lab: Lab) -> None:
    """Earlier traffic on the link (other tests' closing segments) is through."""
    time.sleep(SETTLE)


def connect_exchange_close(lab: Lab, pairs: int = 1) -> WireCount | None:
    quiet(lab)
    with lab.wire_tap(settle=SETTLE) as tap, echo_connection(lab) as sock:
        for _ in range(pairs):
            exchange(sock)
    return tap.result()


def pairs_on_open_connection(lab: Lab, pairs: int) -> WireCount | None:
    with echo_connection(lab) as sock:
        quiet(lab)
        with lab.wire_tap(settle=SETTLE) as tap:
            for _ in range(pairs):
                exchange(sock)
    return tap.result()


def shared_lab(lab_for: Callable[[str], LabLike]) -> Lab:
    lab = lab_for("regional")
    assert isinstance(lab, Lab), "these tests need a real lab network"
    return lab


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# --- the counting rule, on the session's lab ----------------------------------------------------


@needs_lab
@pytest.mark.parametrize("pairs", [1, 3])
def test_connect_exchanges_close(lab_for: Callable[[str], LabLike], pairs: int) -> None:
    """SYN out, SYN-ACK in, then request out/response in per pair, FIN out, FIN in: every
    data-bearing packet flips the direction."""
    count = connect_exchange_close(shared_lab(lab_for), pairs)
    print(count)
    assert count is not None
    assert count.turns == 2 * pairs + 4
    assert count.wire_rtts == pairs + 2
    assert (count.data_to_devices, count.data_from_devices) == (pairs + 2, pairs + 2)
    assert (count.syn, count.fin) == (2, 2)
    assert count.empty_tcp >= 2  # the handshake's last ACK, the ACK of the server's FIN
    assert count.dropped == 0


@needs_lab
@pytest.mark.parametrize("pairs", [1, 3, 10])
def test_pairs_on_an_open_connection(lab_for: Callable[[str], LabLike], pairs: int) -> None:
    count = pairs_on_open_connection(shared_lab(lab_for), pairs)
    assert count is not None
    assert (count.turns, count.wire_rtts) == (2 * pairs, pairs)
    assert (count.data_to_devices, count.data_from_devices) == (pairs, pairs)
    assert (count.syn, count.fin) == (0, 0)
    assert count.per_iteration(pairs) == {"wire_rtts_per_iteration": 1.0,
                                          "wire_turns_per_iteration": 2.0,
                                          "data_packets_per_iteration": 2.0}


@needs_lab
def test_a_response_in_pieces_is_one_turn(lab_for: Callable[[str], LabLike]) -> None:
    """The echo server's ``split`` answers with separate writes, as an SSH server writes a reply:
    several data packets from the devices, one turn."""
    lab = shared_lab(lab_for)
    with echo_connection(lab) as sock:
        quiet(lab)
        with lab.wire_tap(settle=SETTLE) as tap:
            sock.sendall(b"split 5 200")
            got = 0
            while got < 1000:
                got += len(sock.recv(65536))
    count = tap.result()
    assert count is not None
    assert count.turns == 2
    assert count.data_to_devices == 1
    assert count.data_from_devices >= 2  # 5 writes, some may leave together


@needs_lab
def test_udp_and_icmp_a_datagram_is_a_turn_its_icmp_other(lab_for: Callable[[str], LabLike]) -> None:
    """A 5-byte UDP datagram to a closed port (too short to be QUIC: data-bearing) is one turn,
    UDP's; its ICMP port-unreachable is ``other``."""
    lab = shared_lab(lab_for)
    quiet(lab)
    with lab.wire_tap(settle=SETTLE) as tap, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        udp.sendto(b"hello", (lab.devices[0].address, 9))
    count = tap.result()
    assert count is not None
    assert count.other == 1
    assert (count.turns, count.udp_turns, count.data_to_devices, count.udp_to_devices) == (1, 1, 1, 1)
    assert (count.data_from_devices, count.empty_tcp, count.quic_ack_only) == (0, 0, 0)


@needs_lab
def test_probes_time_the_link_and_are_counted_apart(lab_for: Callable[[str], LabLike]) -> None:
    """With ``probe``, ICMP echoes every 0.1 s time the link's RTT (kernel timestamps at its
    interface), are no ``other`` packets and no turns, and account for exactly the packets and
    bytes the interface counters saw in a window with no other traffic."""
    lab = shared_lab(lab_for)
    quiet(lab)
    with lab.wire_tap(settle=SETTLE, probe=True) as tap:
        before = lab.counters()
        time.sleep(1.0)
    after = lab.counters()
    count = tap.result()
    assert count is not None
    configured = lab.profile.rtt_ms
    assert count.probes >= 9
    assert count.link_probes >= count.probes - 1  # one may be in flight at the end
    assert count.probe_replies >= count.link_probes
    assert (count.other, count.turns, count.data_packets) == (0, 0, 0)
    link = count.link_rtt()
    assert configured <= link["link_rtt_under_load_ms"] <= configured + 1.0
    assert link["link_probes"] == count.link_probes
    traffic = after - before
    assert (traffic.tx_packets, traffic.rx_packets) == (count.probes, count.probe_replies)
    assert (traffic.tx_bytes, traffic.rx_bytes) == (count.probe_tx_bytes, count.probe_rx_bytes)


@needs_lab
def test_without_a_probe_no_link_rtt(lab_for: Callable[[str], LabLike]) -> None:
    lab = shared_lab(lab_for)
    with lab.wire_tap(settle=SETTLE) as tap:
        time.sleep(0.3)
    count = tap.result()
    assert count is not None
    assert (count.probes, count.link_probes) == (0, 0)
    assert count.link_rtt() == {}


# --- every link backend ----------------------------------------------------------------------


@needs_lab
@pytest.mark.parametrize(("backend", "profile"), [
    ("tun", "regional"), ("netem", "regional"), ("tbf", "rtt=0,rate=100"), ("none", "local")])
def test_every_backend_counts_the_same(backend: str, profile: str) -> None:
    """The tap reads the benchmark-side interface whatever made it: a veth end (``netem``,
    ``tbf``, ``none``) or the delay line's TUN interface (``tun``)."""
    try:
        choose(backend, resolve(profile))
    except UsageError as exc:
        pytest.skip(str(exc))
    with Lab(resolve(profile), backend=backend, calibration_samples=3) as lab:
        full = connect_exchange_close(lab)
        pairs = pairs_on_open_connection(lab, 3)
    assert full is not None
    assert pairs is not None
    assert (full.turns, full.syn, full.fin, full.data_packets) == (6, 2, 2, 6)
    assert (pairs.turns, pairs.data_packets) == (6, 6)


# --- the tap's life ------------------------------------------------------------------------------


@needs_lab
def test_the_tap_process_is_gone_after_an_exception(lab_for: Callable[[str], LabLike]) -> None:
    lab = shared_lab(lab_for)
    tap = lab.wire_tap()
    seen: list[int] = []

    def benchmark() -> None:
        with tap:
            assert tap.pid is not None
            seen.append(tap.pid)
            assert alive(tap.pid)
            raise RuntimeError("the benchmark failed")

    with pytest.raises(RuntimeError, match="the benchmark failed"):
        benchmark()
    assert not alive(seen[0])
    assert tap.pid is None
    assert tap.result() is None
    assert tap_children() == []


@needs_lab
def test_the_tap_process_is_gone_after_stop(lab_for: Callable[[str], LabLike]) -> None:
    tap = shared_lab(lab_for).wire_tap().start()
    pid = tap.pid
    assert pid is not None
    with pytest.raises(UsageError, match="still capturing"):
        tap.result()
    first = tap.stop()
    assert not alive(pid)
    assert first is not None
    assert tap.stop() is first
    assert tap.result() is first


def recorded_taps(lab: Lab) -> list[tuple[str, int]]:
    """The wire taps in the lab's state file, as (name, pid)."""
    assert lab.state is not None
    state = LabState.load(lab.state.folder)
    assert state is not None
    return [(p.name, p.pid) for p in state.processes if p.name.startswith("wire tap")]


@needs_lab
def test_the_tap_is_in_the_labs_state_while_it_captures(
        lab_for: Callable[[str], LabLike]) -> None:
    """Recorded like the lab's other processes (name, pid, start time) from its start; the
    record leaves the state when the tap stops, so windows leave no trail of records."""
    lab = shared_lab(lab_for)
    assert lab.state is not None
    before = len(lab.state.processes)
    for _ in range(2):
        with lab.wire_tap() as tap:
            assert recorded_taps(lab) == [(f"wire tap on {lab.state.host_if}", tap.pid)]
            record = next(p for p in lab.state.processes if p.pid == tap.pid)
            assert record.start is not None
            assert record.running()
        assert recorded_taps(lab) == []
    assert len(lab.state.processes) == before
    lab.check()  # a tap stopped on purpose is no death


@needs_lab
def test_an_interrupted_start_leaves_no_tap_and_no_record(
        lab_for: Callable[[str], LabLike], monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the tap process starts (before it said ready): the process is gone and its
    record with it."""
    lab = shared_lab(lab_for)

    def interrupted(*args: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(select, "select", interrupted)
    with pytest.raises(KeyboardInterrupt):
        lab.wire_tap().start()
    monkeypatch.undo()
    assert tap_children() == []
    assert recorded_taps(lab) == []
    lab.check()


@needs_lab
def test_an_unknown_interface_is_refused_and_leaves_nothing() -> None:
    with pytest.raises(LabError, match="did not start: cannot capture on mgbnosuch"):
        WireTap("mgbnosuch").start()
    assert tap_children() == []


def tap_children() -> list[int]:
    """This process's children that run the tap."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat, \
                    open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                ppid = int(stat.read().rsplit(b")", 1)[1].split()[1])
                if ppid == os.getpid() and b"wiretap" in cmdline.read():
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


@needs_lab
def test_a_lab_that_is_not_up_has_no_tap() -> None:
    with pytest.raises(UsageError, match="not up"):
        Lab(resolve("regional")).wire_tap()


def test_a_loopback_lab_measures_nothing() -> None:
    """LocalLab's tap starts no process and says why its result is None."""
    with LocalLab(resolve("local")).wire_tap() as tap:
        assert tap.pid is None
    assert tap.result() is None
    assert "loopback" in tap.reason


def test_per_iteration_rounding() -> None:
    count = WireCount(turns=25, data_to_devices=20, data_from_devices=21, dropped=3)
    assert count.per_iteration(4) == {"wire_rtts_per_iteration": 3.1,
                                      "wire_turns_per_iteration": 6.2,
                                      "data_packets_per_iteration": 10.2,
                                      "wire_dropped_packets": 3}


# --- the counting rules on made-up packets ------------------------------------------------------


def _ipv4(protocol: int, payload: bytes, total: int | None = None) -> bytearray:
    length = total if total is not None else 20 + len(payload)
    header = bytes([0x45, 0, length >> 8, length & 0xFF, 0, 0, 0x40, 0, 64, protocol, 0, 0,
                    198, 18, 0, 1, 198, 18, 0, 2])
    return bytearray(header + payload)


def _tcp(seq: int, flags: int, data: bytes = b"") -> bytearray:
    header = (1234).to_bytes(2, "big") + (22).to_bytes(2, "big") + seq.to_bytes(4, "big") + \
        bytes(4) + bytes([5 << 4, flags]) + bytes(6)
    return _ipv4(6, header + data)


def _udp(payload: bytes) -> bytearray:
    return _ipv4(17, bytes(8) + payload)


def test_tcp_segments_sent_again_count_as_retransmits() -> None:
    from mgmtbench.lab.wiretap import _Tally

    tally = _Tally()
    ack, syn, fin = 0x10, 0x02, 0x01
    for packet in (_tcp(100, syn), _tcp(100, syn),  # a SYN, sent again after its timeout
                   _tcp(101, ack, b"a" * 10), _tcp(111, ack, b"b" * 10),
                   _tcp(101, ack, b"a" * 10),  # the first segment again
                   _tcp(121, ack), _tcp(121, fin | ack)):
        tally._tcp(packet, len(packet), outgoing=True)
    counts = tally.result(0)
    assert counts.tcp_retransmits == 2
    assert counts.data_to_devices == 6  # everything but the pure ACK
    assert counts.turns == 1
    wrapping = _Tally()  # sequence numbers wrap around 2**32: new data, not old
    for packet in (_tcp(2**32 - 10, ack, b"y" * 10), _tcp(0, ack, b"z" * 10)):
        wrapping._tcp(packet, len(packet), outgoing=True)
    assert wrapping.result(0).tcp_retransmits == 0


def test_quic_ack_only_sizes_do_not_count_and_everything_else_does() -> None:
    from mgmtbench.lab.wiretap import QUIC_ACK_ONLY_MAX, QUIC_SHORT_MIN, _Tally

    tally = _Tally()
    short = 0x40  # a short header: the fixed bit, no long-header bit
    cases = [(bytes([0xC0]) + bytes(1199), True),  # an Initial
             (bytes([short]) + bytes(QUIC_SHORT_MIN - 1), False),  # ACK-only sizes
             (bytes([short]) + bytes(QUIC_ACK_ONLY_MAX - 1), False),
             (bytes([short]) + bytes(QUIC_ACK_ONLY_MAX), True),  # one byte more: data
             (bytes([short]) + bytes(QUIC_SHORT_MIN - 2), True),  # too short for QUIC
             (b"\x00" + bytes(QUIC_SHORT_MIN), True)]  # no fixed bit: not QUIC
    for payload, counts in cases:
        before = tally.counts["udp_to_devices"]
        packet = _udp(payload)
        assert tally._udp(packet, len(packet), outgoing=True)
        assert tally.counts["udp_to_devices"] - before == counts, payload[:1]
    result = tally.result(0)
    assert (result.quic_long, result.quic_ack_only, result.udp_turns, result.turns) == (1, 2, 1, 1)
    assert not tally._udp(_tcp(1, 0x10), 40, outgoing=True)  # TCP is no UDP
