"""Measure the RTT a lab really has: TCP connect time and a small echo, p50 and p95 of N."""

from __future__ import annotations

import socket
import statistics
import time
from dataclasses import asdict, dataclass


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

    @property
    def rtt_ms(self) -> float:
        """The lab's RTT: the median small-echo round trip."""
        return self.echo_p50_ms

    def as_dict(self) -> dict[str, float]:
        return {**asdict(self), "measured_rtt_ms": self.rtt_ms}


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def calibrate(host: str, port: int, samples: int = 20, timeout: float = 10.0) -> Calibration:
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
    return Calibration(
        samples=samples,
        connect_p50_ms=percentile(connects, 50) * ms,
        connect_p95_ms=percentile(connects, 95) * ms,
        echo_p50_ms=statistics.median(echoes) * ms,
        echo_p95_ms=percentile(echoes, 95) * ms,
        echo_min_ms=min(echoes) * ms,
        echo_max_ms=max(echoes) * ms,
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
