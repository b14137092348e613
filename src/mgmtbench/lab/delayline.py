"""The packet-level delay line: a TUN device at each end of the link, every packet delayed on its own.

Run as ``python -m mgmtbench.lab.delayline SPEC_JSON`` by the ``tun`` link backend. The process
creates TUN interface ``tun_a`` in its own network namespace and ``tun_b`` inside namespace ``netns_b``
(after ``setns``), prints ``ready``, then copies every packet read from one to the other once its
release time has come: one-way delay, jitter (packets sorted by release time, as netem's tfifo
does), loss, duplication, reordering and a rate limit (serialisation time per packet).

Reading a packet from a TUN device frees the kernel's buffer at once, so a held packet is not
charged to the sending socket: TCP small queues and autocorking see what they see under netem,
which releases that charge on enqueue (the bias an NFQUEUE verdict delay would add).

The TUN interfaces are not persistent: they vanish when this process exits, however it exits.
"""

from __future__ import annotations

import fcntl
import heapq
import json
import os
import random
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass

from mgmtbench.lab.netns import setns

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
READ_SIZE = 65536
BATCH = 64  # packets read from one side before looking at the clock again
# Wake this long before a packet is due and poll until it is: waking from a long sleep takes
# hundreds of microseconds on a virtual machine, more than the precision the lab promises.
SPIN = float(os.environ.get("MGMTBENCH_DELAYLINE_SPIN", "0.002"))


@dataclass(frozen=True)
class Impairment:
    """One direction's impairment (seconds, fractions, bits per second)."""

    delay: float
    jitter: float = 0.0
    distribution: str = "normal"
    loss: float = 0.0
    duplicate: float = 0.0
    reorder: float = 0.0
    rate_bps: float = 0.0


def open_tun(name: str, mtu: int | None = None) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


class Direction:
    """Packets travelling one way: a heap ordered by release time."""

    def __init__(self, impairment: Impairment, rng: random.Random) -> None:
        self.imp = impairment
        self.rng = rng
        self.heap: list[tuple[float, int, bytes]] = []
        self.seq = 0
        self.last_release = 0.0
        self.packets = self.bytes = self.dropped = 0

    def _jitter(self) -> float:
        imp = self.imp
        if not imp.jitter:
            return 0.0
        if imp.distribution == "uniform":
            value = self.rng.uniform(-imp.jitter, imp.jitter)
        elif imp.distribution == "pareto":
            value = imp.jitter * (self.rng.paretovariate(3.0) - 1.5)
        elif imp.distribution == "paretonormal":
            value = 0.75 * self.rng.gauss(0, imp.jitter) + 0.25 * imp.jitter * (
                self.rng.paretovariate(3.0) - 1.5)
        else:
            value = self.rng.gauss(0, imp.jitter)
        return value

    def admit(self, packet: bytes, now: float) -> None:
        imp = self.imp
        self.packets += 1
        self.bytes += len(packet)
        if imp.loss and self.rng.random() < imp.loss:
            self.dropped += 1
            return
        copies = 2 if imp.duplicate and self.rng.random() < imp.duplicate else 1
        for _ in range(copies):
            if imp.reorder and self.rng.random() < imp.reorder:
                release = now  # sent at once, overtaking packets still held (netem's reorder)
            else:
                release = now + max(0.0, imp.delay + self._jitter())
                if imp.rate_bps:
                    release = max(release, self.last_release) + len(packet) * 8 / imp.rate_bps
                    self.last_release = release
            heapq.heappush(self.heap, (release, self.seq, packet))
            self.seq += 1

    def next_release(self) -> float | None:
        return self.heap[0][0] if self.heap else None

    def release(self, now: float, out_fd: int) -> None:
        heap = self.heap
        while heap and heap[0][0] <= now:
            _, _, packet = heapq.heappop(heap)
            try:
                os.write(out_fd, packet)
            except OSError:
                # EAGAIN: the receiving queue is full; EIO: that interface is down. Either way the
                # packet is lost, as it would be on a real link.
                self.dropped += 1


def run(spec: dict[str, object]) -> None:
    rng = random.Random(int(spec.get("seed", 0)) or None)  # type: ignore[call-overload]
    fd_a = open_tun(str(spec["tun_a"]))
    setns(str(spec["netns_b"]))
    fd_b = open_tun(str(spec["tun_b"]))
    imp = Impairment(**spec["impairment"])  # type: ignore[arg-type]
    # a_to_b: packets read from tun_a, written to tun_b; and back.
    a_to_b, b_to_a = Direction(imp, rng), Direction(imp, rng)
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("ready", flush=True)
    clock = time.monotonic
    read = os.read
    fds = [fd_a, fd_b]
    while not stopping:
        now = clock()
        a_to_b.release(now, fd_b)
        b_to_a.release(now, fd_a)
        due = [t for t in (a_to_b.next_release(), b_to_a.next_release()) if t is not None]
        timeout = max(0.0, min(due) - clock() - SPIN) if due else 0.5
        try:
            readable, _, _ = select.select(fds, [], [], timeout)
        except InterruptedError:
            continue
        for fd in readable:
            direction = a_to_b if fd == fd_a else b_to_a
            for _ in range(BATCH):
                try:
                    packet = read(fd, READ_SIZE)
                except BlockingIOError:
                    break
                direction.admit(packet, clock())
    os.close(fd_a)
    os.close(fd_b)


def main() -> None:
    run(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
