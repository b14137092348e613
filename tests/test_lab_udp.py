"""UDP through every link backend, with real namespaces and real datagrams: the profile's delay
(half the RTT each way), loss (binomial bounds) and rate hold for UDP as for TCP; the link neither
reorders nor merges datagrams, and UDP and TCP share one first-in first-out queue per direction,
so a QUIC flow and a TCP flow see the same link.

A UDP echo thread serves from a socket made inside the lab's namespace. One-way delays are
measured with the sender's clock before ``sendto`` and the receiver's kernel receive timestamp
(both CLOCK_REALTIME on this one host). Order is taken from packet taps on both ends of the link
(``AF_PACKET`` on the benchmark side's interface and, in the lab's namespace, on the device
side's): what left one end, in order, is what arrived at the other. Backends that cannot run
here, or cannot impair as a case asks, are skipped saying why (netem runs in the netem VM
session)."""

from __future__ import annotations

import math
import select
import socket
import statistics
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.backends import choose
from mgmtbench.lab.lab import ECHO_PORT, has_net_admin
from mgmtbench.lab.netns import in_namespace

pytestmark = pytest.mark.skipif(
    not has_net_admin(),
    reason="lab tests build network namespaces, links and raw sockets: run as root or with "
           "CAP_NET_ADMIN")

UDP_PORT = 7007
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
HEADER = struct.Struct("!Id")  # sequence number, the sender's wall clock at sendto
STOP = b"stop"


def lab_on(backend: str, profile: str) -> Lab:
    """A lab on ``backend`` for ``profile``, or a skip saying why it cannot be made here."""
    try:
        choose(backend, resolve(profile))
    except UsageError as exc:
        pytest.skip(str(exc))
    return Lab(resolve(profile), backend=backend, calibration_samples=1)


def kernel_time(ancillary: list[tuple[int, int, bytes]]) -> float:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", data[:16])
            return float(seconds + nanoseconds * 1e-9)
    raise AssertionError("no kernel receive timestamp")


def timestamped(sock: socket.socket) -> socket.socket:
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    return sock


class UdpEcho:
    """A UDP server in the lab's namespace: records every datagram's sequence number, size and
    kernel receive time, and (``echo``) sends it back with its own send time."""

    def __init__(self, lab: Lab, echo: bool = True) -> None:
        assert lab.state is not None
        self.address = lab.devices[0].address

        def bound() -> socket.socket:
            sock = timestamped(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
            sock.bind((self.address, UDP_PORT))
            return sock

        self.sock = in_namespace(lab.state.netns, bound)
        self.echo = echo
        self.received: list[tuple[int, int, float]] = []  # sequence, size, kernel time
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while True:
            data, ancillary, _, peer = self.sock.recvmsg(65536, 64)
            if data == STOP:
                return
            seq, _ = HEADER.unpack_from(data)
            self.received.append((seq, len(data), kernel_time(ancillary)))
            if self.echo:
                self.sock.sendto(HEADER.pack(seq, time.time()) + data[HEADER.size:], peer)

    def __enter__(self) -> UdpEcho:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stop:
            for _ in range(20):  # the link may drop it
                stop.sendto(STOP, (self.address, UDP_PORT))
                self.thread.join(0.2)
                if not self.thread.is_alive():
                    break
        self.sock.close()


def drain(sock: socket.socket, until: float) -> list[tuple[bytes, float]]:
    """Datagrams (and kernel receive times) arriving on ``sock`` until ``until`` (monotonic)."""
    got = []
    while (left := until - time.monotonic()) > 0:
        ready, _, _ = select.select([sock], [], [], left)
        if ready:
            data, ancillary, _, _ = sock.recvmsg(65536, 64)
            got.append((data, kernel_time(ancillary)))
    return got


# --- delay ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("backend", "profile"), [
    ("tun", "rtt=30"), ("netem", "rtt=30"), ("tbf", "rtt=0,rate=100"), ("none", "local")])
def test_each_way_is_half_the_rtt(backend: str, profile: str) -> None:
    count, interval, size = 200, 0.005, 200
    with lab_on(backend, profile) as lab, UdpEcho(lab) as server, \
            timestamped(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as sock:
        sent = {}
        replies: list[tuple[bytes, float]] = []
        for seq in range(count):
            sent[seq] = time.time()
            sock.sendto(HEADER.pack(seq, sent[seq]) + bytes(size - HEADER.size),
                        (server.address, UDP_PORT))
            replies += drain(sock, time.monotonic() + interval)
        replies += drain(sock, time.monotonic() + 0.5)
    one_way = lab.profile.one_way_ms
    forward = [(at - sent[seq]) * 1000 for seq, _, at in server.received]
    back = [(at - HEADER.unpack_from(data)[1]) * 1000 for data, at in replies]
    print(f"{backend} {profile}: one way {one_way} ms configured; forward p50 "
          f"{statistics.median(forward):.3f} min {min(forward):.3f}, back p50 "
          f"{statistics.median(back):.3f} min {min(back):.3f} ms")
    assert len(forward) == len(back) == count  # nothing lost on an unimpaired or delay-only link
    for way in (forward, back):
        # Never early (the sender's clock is read before sendto), the median within 0.5 ms.
        assert min(way) >= one_way - 0.05
        assert statistics.median(way) <= one_way + 0.5


# --- loss ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["tun", "netem"])
def test_udp_loss_rate_each_way(backend: str) -> None:
    n, loss = 3000, 0.05
    with lab_on(backend, f"rtt=2,loss={loss * 100:g}") as lab, UdpEcho(lab) as server, \
            timestamped(socket.socket(socket.AF_INET, socket.SOCK_DGRAM)) as sock:
        replies: list[tuple[bytes, float]] = []
        for seq in range(n):
            sock.sendto(HEADER.pack(seq, time.time()) + bytes(100), (server.address, UDP_PORT))
            if seq % 20 == 19:
                replies += drain(sock, time.monotonic() + 0.001)
        replies += drain(sock, time.monotonic() + 0.3)
    arrived = len(server.received)
    forward, back = 1 - arrived / n, 1 - len(replies) / arrived
    print(f"{backend}: {n} datagrams, {arrived} arrived ({forward:.2%} lost), {len(replies)} "
          f"echoes back ({back:.2%} lost); configured {loss:.0%} each way")
    sigma = math.sqrt(loss * (1 - loss) / n)
    assert abs(forward - loss) <= 4 * sigma
    assert abs(back - loss) <= 4 * math.sqrt(loss * (1 - loss) / arrived)


# --- rate ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("backend", "profile"), [
    ("tun", "rtt=2,rate=20"), ("netem", "rtt=2,rate=20"), ("tbf", "rtt=0,rate=20")])
def test_udp_rate_limit(backend: str, profile: str) -> None:
    """Datagrams sent faster than the rate arrive at the rate: IP bytes (payload + 28) per second
    between the first and the last arrival, within 5 %."""
    size, count = 1200, 2500  # 3 MB: 1.2 s at 20 Mbit/s
    with lab_on(backend, profile) as lab, UdpEcho(lab, echo=False) as server, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        for seq in range(count):
            sock.sendto(HEADER.pack(seq, time.time()) + bytes(size - HEADER.size),
                        (server.address, UDP_PORT))
            if seq % 50 == 49:
                time.sleep(0.005)  # ~100 Mbit/s offered: a queue that never runs dry, yet a
                # bounded one (tbf drops what exceeds its 100 ms)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (
                not server.received or time.time() - server.received[-1][2] < 0.3):
            time.sleep(0.05)
    times = [at for _, _, at in server.received]
    seconds = times[-1] - times[0]
    mbit = (len(times) - 1) * (size + 28) * 8 / seconds / 1e6
    print(f"{backend} {profile}: {len(times)} of {count} datagrams arrived over {seconds:.3f} s: "
          f"{mbit:.2f} Mbit/s of IP packets")
    assert len(times) >= 0.5 * count  # most of them went through
    assert abs(mbit / lab.profile.rate_mbit - 1) <= 0.05


# --- order: one queue per direction, UDP and TCP alike ------------------------------------------


def key(packet: bytes) -> bytes | None:
    """An IPv4 TCP or UDP packet's bytes with nothing a hop may rewrite (TTL, checksums), so the
    same packet has the same key at both ends and a retransmission another (IP ID, timestamps);
    None for anything else."""
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] not in (6, 17):
        return None
    ihl = (packet[0] & 0x0F) * 4
    checksum = ihl + (16 if packet[9] == 6 else 6)
    return packet[:8] + packet[9:10] + packet[12:checksum] + packet[checksum + 2:]


#: Two packets sent within this long of each other (by two senders on two CPUs) may pass the
#: sending end's tap in one order and enter the link in the other: the tap sees a packet before
#: the interface queues it. Such a pair is no reordering by the link.
TAP_RACE = 0.0003


@contextmanager
def packet_tap(interface: str, netns: str | None = None) -> Iterator[
        list[tuple[bool, bytes, float]]]:
    """Every IPv4 TCP and UDP packet on ``interface`` (in ``netns``), as (outgoing, key, kernel
    time), in the order the kernel handed them to the tap, collected when the block ends."""
    def make() -> socket.socket:
        sock = timestamped(socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0))
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 32 << 20)
        sock.bind((interface, ETH_P_ALL))
        return sock

    sock = in_namespace(netns, make) if netns else make()
    packets: list[tuple[bool, bytes, float]] = []
    try:
        yield packets
        sock.setblocking(False)
        while True:
            try:
                data, ancillary, _, address = sock.recvmsg(70000, 64)
            except BlockingIOError:
                break
            if (found := key(data)) is not None:
                packets.append((address[2] == PACKET_OUTGOING, found, kernel_time(ancillary)))
    finally:
        sock.close()


def one_way(packets: list[tuple[bool, bytes, float]], outgoing: bool) -> list[tuple[bytes, float]]:
    return [(data, at) for out, data, at in packets if out == outgoing]


def reordered(got: list[tuple[bytes, float]], sent: list[tuple[bytes, float]]) -> list[str]:
    """Packets that arrived that were never sent, or after a packet sent more than TAP_RACE
    after them: what the link reordered, duplicated or made up."""
    where: dict[bytes, list[float]] = {}
    for data, at in sent:
        where.setdefault(data, []).append(at)
    problems, latest = [], 0.0
    for index, (data, _) in enumerate(got):
        if not where.get(data):
            problems.append(f"arrival {index} was not sent (or arrived twice)")
            continue
        sent_at = where[data].pop(0)
        if sent_at < latest - TAP_RACE:
            problems.append(f"arrival {index} was sent {(latest - sent_at) * 1e6:.0f} us before "
                            "one that arrived ahead of it")
        latest = max(latest, sent_at)
    return problems


@pytest.mark.parametrize(("backend", "profile"), [
    ("tun", "rtt=20"), ("tun", "rtt=20,loss=2"), ("tun", "rtt=20,rate=50"),
    ("netem", "rtt=20,loss=2"), ("tbf", "rtt=0,rate=50"), ("none", "local")])
def test_udp_and_tcp_share_one_fifo_each_way(backend: str, profile: str) -> None:
    """Datagrams and TCP segments sent interleaved (UDP to the echo thread, TCP to the lab's echo
    server: both answer, so both directions carry both) leave the link in the order they entered
    it, each datagram whole and on its own; with loss, what arrives is in order."""
    rounds = 300
    with lab_on(backend, profile) as lab, UdpEcho(lab) as server:
        assert lab.backend is not None
        assert lab.echo_address is not None
        ends = lab.backend.ends
        time.sleep(lab.profile.rtt_ms / 1000 + 0.5)  # the calibration's last packets are through
        with packet_tap(ends.host_if) as host, packet_tap(ends.dev_if, ends.netns) as dev:
            time.sleep(0.1)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, \
                    socket.create_connection((lab.echo_address, ECHO_PORT), timeout=10) as tcp:
                tcp.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                for i in range(rounds):
                    udp.sendto(HEADER.pack(i, 0.0) + bytes(i % 50), (server.address, UDP_PORT))
                    tcp.sendall(b"T%05d" % i)
                    if i % 10 == 9:
                        time.sleep(0.001)
                        for sock in select.select([udp, tcp], [], [], 0)[0]:
                            sock.recv(65536)  # keep the receive queues short
                time.sleep(lab.profile.rtt_ms / 1000 + 0.2)
            time.sleep(lab.profile.rtt_ms / 1000 + 1.0)  # the closing segments are through
    for sent, got, way in ((one_way(host, True), one_way(dev, False), "to the devices"),
                           (one_way(dev, True), one_way(host, False), "from the devices")):
        udp_sent = sum(packet[8] == 17 for packet, _ in sent)  # the key's protocol byte
        print(f"{backend} {profile} {way}: {len(sent)} packets sent ({udp_sent} UDP), "
              f"{len(got)} arrived")
        assert udp_sent >= 0.9 * rounds
        # TCP segments among them: a segment may hold several writes, sent while the previous
        # one waited for its ACK or corked behind a queued packet (Linux's tcp_autocorking), the
        # more so on a busy machine (16-18 of 300 writes in one CI run; 20 was required)
        assert len(sent) - udp_sent >= 10
        assert reordered(got, sent) == [], way
        if not lab.profile.loss_pct:
            assert len(got) == len(sent), way
    # Each datagram arrived whole and alone, at its size.
    assert all(size == HEADER.size + seq % 50 for seq, size, _ in server.received)
