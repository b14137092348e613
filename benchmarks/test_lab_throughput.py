"""Bulk TCP throughput through a lab link: the ``tun`` delay line against a plain veth (``none``)
at 0 ms, and against netem (where the kernel has it) at 30 ms.

Each round sends N bytes from the benchmark side to the lab's echo server (``sink N``: it reads
them and answers ``ok``), the direction of a firmware push over SCP; one download of N bytes
(``source N``) after the rounds is recorded beside it. The cases at one RTT share a benchmark group.

Recorded per case (``extra_info``): MB/s (upload median, and the download), packets per second on the
link (the host interface's kernel counters, as ``Lab.counters`` reads them: a GSO packet of up to
64 KB counts once, on veth and on the delay line with offloads alike), and for ``tun`` the delay
line's CPU time per link packet and per wire packet (its own tally, read with SIGUSR1), and how
late it released held packets (p50/p99, microseconds).

Needs root or CAP_NET_ADMIN (skipped otherwise). ``MGMTBENCH_DELAYLINE_OFFLOAD=0`` and
``MGMTBENCH_DELAYLINE_SPIN`` / ``_NAP`` / ``_BUSY`` / ``_PRIORITY`` reach the delay line through
the environment.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab
from mgmtbench.lab.backends import BACKENDS
from mgmtbench.lab.lab import ECHO_PORT, LinkCounters, has_net_admin
from mgmtbench.lab.profiles import resolve
from mgmtbench.testing import record

MB = 10**6
CHUNK = bytes(1 << 20)
CASES = [
    pytest.param("tun", 0, 50 * MB, id="tun-0ms"),
    pytest.param("none", 0, 50 * MB, id="none-0ms"),
    pytest.param("tun", 30, 20 * MB, id="tun-30ms"),
    pytest.param("netem", 30, 20 * MB, id="netem-30ms"),  # the reference where sch_netem exists
]


def cpu_seconds(pid: int) -> float:
    """CPU time of a single-threaded process: schedstat's nanoseconds, else stat's clock ticks."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def delayline_stats(lab: Lab) -> dict[str, Any]:
    """The delay line's tally (it also restarts the delay line's lateness histogram)."""
    stats = lab.link_stats()
    assert stats is not None, "the tun backend runs no delay line"
    return stats


def _delayline_pid(lab: Lab) -> int:
    pids = lab.backend.pids() if lab.backend is not None else []
    assert pids, "the tun backend runs no delay line"
    return pids[0]


def upload(address: str, size: int) -> None:
    """Send ``size`` bytes to the echo server's sink and wait for its ``ok``."""
    with socket.create_connection((address, ECHO_PORT), timeout=60) as sock:
        sock.sendall(f"sink {size}\n".encode())
        left = size
        while left > 0:
            sock.sendall(CHUNK if left >= len(CHUNK) else CHUNK[:left])
            left -= len(CHUNK)
        assert sock.recv(16) == b"ok\n"


def download(address: str, size: int) -> None:
    """Have the echo server send ``size`` bytes and read them all."""
    with socket.create_connection((address, ECHO_PORT), timeout=60) as sock:
        sock.sendall(f"source {size}\n".encode())
        buffer = bytearray(len(CHUNK))
        got = 0
        while got < size:
            n = sock.recv_into(buffer)
            assert n, "the echo server closed early"
            got += n


@pytest.fixture(scope="module")
def labs() -> Iterator[dict[tuple[str, int], Lab]]:
    """One lab per (backend, RTT), made on first use, all removed at the end of the module."""
    made: dict[tuple[str, int], Lab] = {}
    yield made
    for lab in made.values():
        lab.down()


def lab_for(labs: dict[tuple[str, int], Lab], backend: str, rtt_ms: int) -> Lab:
    if not has_net_admin():
        pytest.skip("lab networks need root or CAP_NET_ADMIN")
    why = BACKENDS[backend].unavailable()
    if why:
        pytest.skip(f"link backend {backend}: {why}")
    if (backend, rtt_ms) not in labs:
        try:
            labs[backend, rtt_ms] = Lab(resolve(f"rtt={rtt_ms}"), backend=backend).up()
        except UsageError as exc:
            pytest.fail(f"lab over {backend} at {rtt_ms} ms: {exc}")
    return labs[backend, rtt_ms]


@dataclass(frozen=True)
class Snapshot:
    """The link's counters and, for ``tun``, the delay line's CPU time and wire packets."""

    link: LinkCounters
    cpu: float = 0.0
    wire: int = 0
    stats: dict[str, Any] | None = None


def snapshot(lab: Lab, pid: int | None) -> Snapshot:
    if pid is None:
        return Snapshot(lab.counters())
    cpu = cpu_seconds(pid)
    stats = delayline_stats(lab)  # also restarts its lateness histogram
    wire = stats["a_to_b"]["wire_packets"] + stats["b_to_a"]["wire_packets"]
    return Snapshot(lab.counters(), cpu, wire, stats)


@pytest.mark.parametrize(("backend", "rtt_ms", "size"), CASES)
def test_bulk_throughput(benchmark: BenchmarkFixture, labs: dict[tuple[str, int], Lab],
                         backend: str, rtt_ms: int, size: int,
                         capsys: pytest.CaptureFixture[str]) -> None:
    lab = lab_for(labs, backend, rtt_ms)
    address = lab.devices[0].address
    pid = _delayline_pid(lab) if backend == "tun" else None
    durations: list[float] = []

    def one_round() -> None:
        start = time.perf_counter()
        upload(address, size)
        durations.append(time.perf_counter() - start)

    upload(address, size // 10)  # warm up: connection paths, the sink's buffers
    before = snapshot(lab, pid)
    benchmark.group = f"lab link throughput at {rtt_ms} ms: upload {size // MB} MB"
    benchmark.pedantic(one_round, rounds=3, iterations=1)
    after = snapshot(lab, pid)  # lateness: over the rounds only
    assert benchmark.stats is not None

    start = time.perf_counter()
    download(address, size)
    download_mb_s = size / MB / (time.perf_counter() - start)

    elapsed = sum(durations)
    link = after.link - before.link
    info: dict[str, Any] = {
        "backend": backend, "rtt_ms": rtt_ms, "bytes_per_round": size,
        "measured_rtt_ms": round(lab.calibration.rtt_ms, 3) if lab.calibration else None,
        "upload_mb_s": round(size / MB / benchmark.stats.stats.median, 1),
        "download_mb_s": round(download_mb_s, 1),
        "link_packets_per_s": round(link.packets / elapsed),
        "link_bytes_per_packet": round(link.bytes / link.packets),
    }
    summary = ""
    if after.stats is not None:
        cpu, wire, late = after.cpu - before.cpu, after.wire - before.wire, after.stats
        info.update({
            "delayline_cpu_s": round(cpu, 3),
            "delayline_cpu_share": round(cpu / elapsed, 2),
            "delayline_us_per_link_packet": round(cpu / link.packets * 1e6, 2),
            "delayline_us_per_wire_packet": round(cpu / wire * 1e6, 2),
            "wire_packets_per_s": round(wire / elapsed),
            "offload": late["offload"],
            "late_p50_us": [late[d].get("late_p50_us") for d in ("a_to_b", "b_to_a")],
            "late_p99_us": [late[d].get("late_p99_us") for d in ("a_to_b", "b_to_a")],
        })
        summary = (f", delay line {info['delayline_cpu_share']:.0%} CPU, "
                   f"{info['delayline_us_per_link_packet']} us/link packet, "
                   f"{info['delayline_us_per_wire_packet']} us/wire packet "
                   f"({info['wire_packets_per_s']}/s), offload {'on' if late['offload'] else 'off'}"
                   f", late p50 {info['late_p50_us']} p99 {info['late_p99_us']} us")
    record(benchmark, "lab-throughput", **info)
    with capsys.disabled():
        print(f"\n{backend}-{rtt_ms}ms: upload {info['upload_mb_s']} MB/s, download "
              f"{info['download_mb_s']} MB/s, {info['link_packets_per_s']} link packets/s "
              f"({info['link_bytes_per_packet']} B each){summary}")
