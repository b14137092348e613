"""Measure the RTT a lab really has: TCP connect time and a small echo, p50 and p95 of N."""

from __future__ import annotations

import os
import select
import socket
import statistics
import struct
import time
from dataclasses import asdict, dataclass

SO_TIMESTAMPNS = 35  # Linux; the socket module does not export it
SO_RCVBUFFORCE = 33


@dataclass(frozen=True)
class Calibration:
    """Measured round trips in milliseconds."""

    samples: int
    connect_p50_ms: float
    connect_p95_ms: float
    echo_p50_ms: float
    echo_p95_ms: float
    echo_min_ms: float
    echo_max_ms: float
    # The link's own RTT: ICMP echo answered by the device namespace's kernel, received with
    # kernel timestamps, so no process wake-up on either side counts (None without raw sockets).
    link_p50_ms: float | None = None
    link_p95_ms: float | None = None

    @property
    def rtt_ms(self) -> float:
        """The lab's RTT: the median small-echo round trip."""
        return self.echo_p50_ms

    def as_dict(self) -> dict[str, float]:
        """The calibration as recorded with results (with ``measured_rtt_ms``)."""
        return {**asdict(self), "measured_rtt_ms": self.rtt_ms}


def percentile(values: list[float], pct: float) -> float:
    """The ``pct`` percentile of ``values``, interpolated (NaN for none)."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def calibrate(host: str, port: int, samples: int = 20, timeout: float = 10.0,
              icmp: bool = False) -> Calibration:
    """TCP connect times and small-echo round trips to ``host:port`` (and ICMP with ``icmp``)."""
    connects: list[float] = []
    echoes: list[float] = []
    for _ in range(samples):
        start = time.perf_counter()
        with socket.create_connection((host, port), timeout=timeout) as sock:
            connects.append(time.perf_counter() - start)
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(samples):
            start = time.perf_counter()
            sock.sendall(b"p")
            sock.recv(1)
            echoes.append(time.perf_counter() - start)
    ms = 1000.0
    link: list[float] = []
    if icmp:
        link = sorted(ping(host, samples, interval=0.01, wait=2.0).values())
    return Calibration(
        samples=samples,
        connect_p50_ms=percentile(connects, 50) * ms,
        connect_p95_ms=percentile(connects, 95) * ms,
        echo_p50_ms=statistics.median(echoes) * ms,
        echo_p95_ms=percentile(echoes, 95) * ms,
        echo_min_ms=min(echoes) * ms,
        echo_max_ms=max(echoes) * ms,
        link_p50_ms=statistics.median(link) if link else None,
        link_p95_ms=percentile(link, 95) if link else None,
    )


def split_reply_ms(host: str, port: int, writes: int = 3, size: int = 100,
                   samples: int = 10) -> float:
    """Median time from a request to the last of ``writes`` small server writes of its reply."""
    times = []
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for _ in range(samples):
            start = time.perf_counter()
            sock.sendall(f"split {writes} {size}\n".encode())
            got = 0
            while got < writes * size:
                got += len(sock.recv(65536))
            times.append(time.perf_counter() - start)
            time.sleep(0.01)
    return statistics.median(times) * 1000


def icmp_checksum(data: bytes) -> int:
    """The Internet checksum (RFC 1071) of an ICMP message."""
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total >> 16) + (total & 0xFFFF)
    return ~total & 0xFFFF


def ping(address: str, count: int, interval: float, wait: float) -> dict[int, float]:
    """Send ``count`` ICMP echo requests ``interval`` s apart; return {sequence: RTT in ms} for
    the replies that came back within ``wait`` s of the last request.

    Send times are taken just before ``sendto``; receive times are the kernel's timestamps of the
    reply's arrival, so a late wake-up of this process does not count. Replies are read between
    sends, into a large buffer, so none is lost here."""
    ident = (os.getpid() ^ 0x6D67) & 0xFFFF  # the host side is shared with other labs' pings
    sent: dict[int, float] = {}
    rtts: dict[int, float] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) as sock:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.setblocking(False)

        def drain(until: float) -> None:
            while True:
                readable, _, _ = select.select([sock], [], [], max(0.0, until - time.time()))
                if not readable:
                    return
                while True:
                    try:
                        packet, ancillary, _, (source, _) = sock.recvmsg(2048, 256)
                    except BlockingIOError:
                        break
                    ihl = (packet[0] & 0x0F) * 4
                    kind, _, _, pid, seq = struct.unpack("!BBHHH", packet[ihl:ihl + 8])
                    if source != address or kind != 0 or pid != ident or seq not in sent:
                        continue
                    stamps = [data for level, kind_, data in ancillary
                              if level == socket.SOL_SOCKET and kind_ == SO_TIMESTAMPNS]
                    seconds, nanos = struct.unpack("qq", stamps[0][:16])
                    rtts.setdefault(seq, (seconds + nanos / 1e9 - sent[seq]) * 1000)

        due = time.time()
        for seq in range(count):
            body = b"mgmtbench-lab-test"
            checksum = icmp_checksum(struct.pack("!BBHHH", 8, 0, 0, ident, seq) + body)
            sent[seq] = time.time()
            sock.sendto(struct.pack("!BBHHH", 8, 0, checksum, ident, seq) + body, (address, 0))
            due += interval
            drain(due)
        drain(time.time() + wait)
    return rtts
