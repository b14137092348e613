"""The packet-level delay line: a TUN device at each end of the link, every packet delayed on its own.

Run as ``python -m mgmtbench.lab.delayline SPEC_JSON`` by the ``tun`` link backend. The process
creates TUN interface ``tun_a`` in its own network namespace and ``tun_b`` inside namespace ``netns_b``
(after ``setns``), prints ``ready``, then copies every packet read from one to the other once its
release time has come: one-way delay, jitter (packets sorted by release time, as netem's tfifo
does), loss, duplication, reordering and a rate limit (serialisation time per packet).

Reading a packet from a TUN device frees the kernel's buffer at once, so a held packet is not
charged to the sending socket: TCP small queues and autocorking see what they see under netem,
which releases that charge on enqueue (the bias an NFQUEUE verdict delay would add).

Offloads (delay-only links): when the only impairment is a fixed delay, both TUN devices are opened
with ``IFF_VNET_HDR`` and ``TUNSETOFFLOAD`` (checksum, TSO4, TSO6, TSO-ECN), so the kernel hands over
a TCP segment train as one GSO packet of up to 64 KB with its virtio-net header, and the other
device takes it back with the same header: that is what netem sees on a veth pair, and what makes
bulk transfers fast (one read, one heap entry and one write per 64 KB instead of per 1448 bytes).
All segments of a GSO packet were queued by TCP together and leave together after the same delay,
so delay fidelity is unchanged. Jitter, loss, duplication, reordering and rate limits act on each
wire packet, so with any of them the devices have no offloads and the kernel segments first.
``MGMTBENCH_DELAYLINE_OFFLOAD=0`` turns offloads off for a delay-only link too. Either way the
interface counters (``Lab.counters``) count what the kernel counts, GSO packets as one, as on veth;
the delay line's own tally counts wire packets too. It goes to stderr as one JSON line on exit and
on SIGUSR1, per direction: packets read, wire packets, bytes and drops since the start, and how
late held packets were written after their release time (p50, p99, max) since the last report.

Each packet's hold is timed from when the kernel queued it to the TUN device (a packet tap with
kernel timestamps, :mod:`mgmtbench.lab.enqueue_clock`), as netem times it from its enqueue, not
from when this process got round to reading it; the wait before the read (``read_lag``) is in the
tally. The process runs real-time where allowed (see ``_priority``), so a packet goes out when it
is due even while the benchmark keeps the CPUs busy. ``Lab.wire_tap(probe=True)`` measures the
link's RTT while a benchmark runs; benchmarks record it (``rtt_error_under_load_ms``).

With no impairment at all (0 ms), packets are written out as soon as they are read, without the
heap. Timer slack is set to 1 ns so a wake-up is not rounded up by the default 50 us.

The TUN interfaces are not persistent: they vanish when this process exits, however it exits.
"""

from __future__ import annotations

import contextlib
import ctypes
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

from mgmtbench.lab.enqueue_clock import EnqueueClock
from mgmtbench.lab.netns import setns

TUNSETIFF = 0x400454CA
TUNSETOFFLOAD = 0x400454D0
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
IFF_VNET_HDR = 0x4000
TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6, TUN_F_TSO_ECN = 0x01, 0x02, 0x04, 0x08
VNET_HDR_LEN = 10  # struct virtio_net_hdr, the TUN default (TUNSETVNETHDRSZ)
GSO_TYPE_MASK = 0x7F  # virtio_net_hdr.gso_type without the ECN bit (0: not a GSO packet)
READ_SIZE = 65536 + 256  # a GSO packet is at most 64 KB (the device's gso_max_size) + vnet header
PR_SET_TIMERSLACK = 29
LATE_BUCKET, LATE_BUCKETS = 10e-6, 1000  # lateness histogram: 10 us buckets up to 10 ms
BATCH = 64  # packets read from one side before looking at the clock again
# Wake this long before a packet is due, then wait for it in naps of at most NAP and busy-poll its
# last BUSY seconds: waking from a long sleep takes hundreds of microseconds on a virtual machine,
# more than the precision the lab promises, while waking from a nap of 100 us takes tens. Napping
# instead of spinning through the whole margin takes a third of the CPU time during a bulk transfer
# at 30 ms (a quarter of a core instead of four fifths), leaving the rest to the lab's other
# processes (an SSH client and server on a 2-core machine), for the same median RTT. NAP=0: spin.
SPIN = float(os.environ.get("MGMTBENCH_DELAYLINE_SPIN", "0.002"))
NAP = float(os.environ.get("MGMTBENCH_DELAYLINE_NAP", "0.0001"))
BUSY = float(os.environ.get("MGMTBENCH_DELAYLINE_BUSY", "0.00005"))
# Never sleep longer than IDLE on an impaired link, even with nothing held: a CPU left idle for
# milliseconds wakes slowly, and a packet's hold starts only when it is read. Short naps keep the
# read within tens of microseconds of the packet's arrival, for a few percent of a core.
IDLE = float(os.environ.get("MGMTBENCH_DELAYLINE_IDLE", "0.0005"))


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

    @property
    def delay_only(self) -> bool:
        """Nothing but a fixed delay: GSO packets may go through whole."""
        return not (self.jitter or self.loss or self.duplicate or self.reorder or self.rate_bps)

    @property
    def passthrough(self) -> bool:
        """No impairment at all: packets go out as soon as they come in."""
        return self.delay_only and self.delay <= 0


def open_tun(name: str, offload: bool = False) -> int:
    """A TUN device; with ``offload``, packets carry a virtio-net header and may be GSO packets."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    flags = IFF_TUN | IFF_NO_PI | (IFF_VNET_HDR if offload else 0)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), flags))
    if offload:  # without it (an old kernel), the header is there but packets are never GSO
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, TUNSETOFFLOAD, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN)
    return fd


def wire_packets(packet: bytes) -> tuple[int, int]:
    """(packets, bytes) on the wire for one packet read with a virtio-net header."""
    size = len(packet) - VNET_HDR_LEN
    if not packet[1] & GSO_TYPE_MASK:
        return 1, size
    gso_size = packet[4] | packet[5] << 8
    ip = VNET_HDR_LEN
    l3 = (packet[ip] & 0x0F) * 4 if packet[ip] >> 4 == 4 else 40
    headers = l3 + (packet[ip + l3 + 12] >> 4) * 4  # + the TCP header (GSO here is TCP only)
    segments = max(1, -(-(size - headers) // gso_size)) if gso_size else 1
    return segments, size + (segments - 1) * headers


def _percentiles(name: str, histogram: list[int]) -> dict[str, float]:
    """``{name}_p50_us`` and ``{name}_p99_us`` of a histogram of LATE_BUCKET buckets (each
    value the bucket's top), nothing for an empty one."""
    total = sum(histogram)
    out: dict[str, float] = {}
    if not total:
        return out
    for suffix, fraction in (("p50", 0.5), ("p99", 0.99)):
        seen, target = 0, fraction * total
        for bucket, count in enumerate(histogram):
            seen += count
            if seen >= target:
                out[f"{name}_{suffix}_us"] = round((bucket + 1) * LATE_BUCKET * 1e6)
                break
    return out


def _enqueue_clock(ifname: str) -> EnqueueClock | None:
    """A tap timing packets from their enqueue on ``ifname``; None where it cannot be made
    (no AF_PACKET or BPF: holds are timed from the read) or ``MGMTBENCH_DELAYLINE_CLOCK=read``."""
    if os.environ.get("MGMTBENCH_DELAYLINE_CLOCK", "enqueue") == "read":
        return None
    try:
        return EnqueueClock(ifname)
    except OSError as exc:
        print(f"delay line: holds timed from the read on {ifname} ({exc})", file=sys.stderr)
        return None


def _no_timer_slack() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)


def _priority() -> str:
    """Run as a real-time (SCHED_FIFO, priority 1) task where allowed (root, CAP_SYS_NICE);
    ``MGMTBENCH_DELAYLINE_PRIORITY=normal`` keeps the default scheduler.

    Holds are timed from the kernel's enqueue (:mod:`mgmtbench.lab.enqueue_clock`), so a late
    read costs nothing, but a late write adds to the link's delay. While a benchmark keeps both
    CPUs busy (its client, the emulator, the tap), a normal task waits for a CPU: the link's
    median RTT under a transport benchmark was 0.05-1.1 ms above the profile, its maximum 3.5-7 ms
    (campus, regional, 2 cores shared with a VM). Real-time, the delay line takes a CPU the moment
    its packet is due, and leaves it as soon as it has written it (it naps, never spins long):
    0.03-0.08 ms above, maximum 2.1 ms, and the lab's TCP echo no slower. The kernel's real-time
    throttling (``sched_rt_runtime_us``) keeps a share of every CPU for other tasks whatever
    happens.
    """
    if os.environ.get("MGMTBENCH_DELAYLINE_PRIORITY", "fifo") == "fifo":
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
            return "fifo"
        except OSError:
            pass
    return "normal"


class Direction:
    """Packets travelling one way: a heap ordered by release time."""

    def __init__(self, impairment: Impairment, rng: random.Random, vnet: bool = False) -> None:
        self.imp = impairment
        self.rng = rng
        self.vnet = vnet  # packets carry a virtio-net header (and may be GSO packets)
        self.heap: list[tuple[float, int, bytes]] = []
        self.seq = 0
        self.last_release = 0.0
        # Read from the device (a GSO packet counts once), wire packets and bytes, and drops.
        self.packets = self.wire_packets = self.bytes = self.dropped = 0
        self.late = [0] * (LATE_BUCKETS + 1)  # how late packets were written, past their time
        self.late_max = 0.0
        # How long after the kernel queued a packet it was read (the wait the enqueue clock
        # takes out of the hold), for packets the clock timed.
        self.lag = [0] * (LATE_BUCKETS + 1)

    def count(self, packet: bytes) -> None:
        """Tally one packet read from the device."""
        self.packets += 1
        if self.vnet:
            segments, size = wire_packets(packet)
            self.wire_packets += segments
            self.bytes += size
        else:
            self.wire_packets += 1
            self.bytes += len(packet)

    def forward(self, in_fd: int, out_fd: int, batch: int) -> None:
        """No impairment: copy up to ``batch`` packets straight through."""
        read, write, count = os.read, os.write, self.count
        for _ in range(batch):
            try:
                packet = read(in_fd, READ_SIZE)
            except BlockingIOError:
                return
            count(packet)
            try:
                write(out_fd, packet)
            except OSError:
                self.dropped += 1

    def stats(self) -> dict[str, float]:
        """Counts so far, and how late held packets went out since the last call (p50, p99, max,
        microseconds)."""
        out: dict[str, float] = {"packets": self.packets, "wire_packets": self.wire_packets,
                                 "bytes": self.bytes, "dropped": self.dropped}
        out.update(_percentiles("late", self.late))
        if sum(self.late):
            out["late_max_us"] = round(self.late_max * 1e6)
        out.update(_percentiles("read_lag", self.lag))
        self.late = [0] * (LATE_BUCKETS + 1)
        self.late_max = 0.0
        self.lag = [0] * (LATE_BUCKETS + 1)
        return out

    def admit_queued(self, packet: bytes, read_at: float, clock: EnqueueClock | None) -> None:
        """:meth:`admit` a packet read at ``read_at``, its hold timed from when the kernel
        queued it (``clock``), not from the read."""
        if clock is None:
            self.admit(packet, read_at)
            return
        queued = clock.queued_at(packet, VNET_HDR_LEN if self.vnet else 0, read_at)
        if queued < read_at:
            self.lag[min(int((read_at - queued) / LATE_BUCKET), LATE_BUCKETS)] += 1
        self.admit(packet, queued)

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
        """Hold a packet until its release time (or drop or duplicate it)."""
        imp = self.imp
        self.count(packet)
        if imp.delay_only:  # the common case, without the random draws below
            heapq.heappush(self.heap, (now + imp.delay, self.seq, packet))
            self.seq += 1
            return
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
        """When the next held packet is due (None: nothing held)."""
        return self.heap[0][0] if self.heap else None

    def release(self, now: float, out_fd: int) -> None:
        """Write every held packet that is due."""
        heap, clock = self.heap, time.monotonic
        while heap and heap[0][0] <= now:
            due, _, packet = heapq.heappop(heap)
            lateness = clock() - due
            self.late[min(int(lateness / LATE_BUCKET), LATE_BUCKETS)] += 1
            if lateness > self.late_max:
                self.late_max = lateness
            try:
                os.write(out_fd, packet)
            except OSError:
                # EAGAIN: the receiving queue is full; EIO: that interface is down. Either way the
                # packet is lost, as it would be on a real link.
                self.dropped += 1


def run(spec: dict[str, object]) -> None:
    """Create both TUN devices and copy packets between them until SIGTERM."""
    rng = random.Random(int(spec.get("seed", 0)) or None)  # type: ignore[call-overload]
    imp = Impairment(**spec["impairment"])  # type: ignore[arg-type]
    offload = imp.delay_only and os.environ.get("MGMTBENCH_DELAYLINE_OFFLOAD", "1") != "0"
    _no_timer_slack()
    priority = _priority()
    fd_a = open_tun(str(spec["tun_a"]), offload)
    impaired = not imp.passthrough
    clock_a = _enqueue_clock(str(spec["tun_a"])) if impaired else None
    setns(str(spec["netns_b"]))
    fd_b = open_tun(str(spec["tun_b"]), offload)
    clock_b = _enqueue_clock(str(spec["tun_b"])) if impaired else None
    # a_to_b: packets read from tun_a, written to tun_b; and back.
    a_to_b, b_to_a = Direction(imp, rng, offload), Direction(imp, rng, offload)
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    def report(signum: int = 0, frame: object = None) -> None:
        directions = {"a_to_b": a_to_b.stats(), "b_to_a": b_to_a.stats()}
        for name, tap in (("a_to_b", clock_a), ("b_to_a", clock_b)):
            if tap is not None:
                directions[name].update(tap.stats())
        print(json.dumps({**directions, "offload": offload, "priority": priority,
                          "clock": "enqueue" if clock_a and clock_b else "read"}),
              file=sys.stderr, flush=True)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGUSR1, report)
    print("ready", flush=True)
    clock = time.monotonic
    read = os.read
    fds = [fd_a, fd_b]
    if imp.passthrough:
        while not stopping:
            try:
                readable, _, _ = select.select(fds, [], [], 0.5)
            except InterruptedError:
                continue
            for fd in readable:
                if fd == fd_a:
                    a_to_b.forward(fd_a, fd_b, BATCH)
                else:
                    b_to_a.forward(fd_b, fd_a, BATCH)
    while not stopping:
        now = clock()
        a_to_b.release(now, fd_b)
        b_to_a.release(now, fd_a)
        due = [t for t in (a_to_b.next_release(), b_to_a.next_release()) if t is not None]
        if due:
            remaining = min(due) - clock()
            if remaining > SPIN:
                timeout = min(remaining - SPIN, IDLE) if IDLE else remaining - SPIN
            elif NAP and remaining > BUSY:
                timeout = min(NAP, remaining - BUSY)
            else:
                timeout = 0.0
        else:
            timeout = IDLE or 0.5
        try:
            readable, _, _ = select.select(fds, [], [], timeout)
        except InterruptedError:
            continue
        for fd in readable:
            direction, tap = (a_to_b, clock_a) if fd == fd_a else (b_to_a, clock_b)
            for _ in range(BATCH):
                try:
                    packet = read(fd, READ_SIZE)
                except BlockingIOError:
                    break
                direction.admit_queued(packet, clock(), tap)
    os.close(fd_a)
    os.close(fd_b)
    for tap in (clock_a, clock_b):
        if tap is not None:
            tap.close()
    report()


def main() -> None:
    """``python -m mgmtbench.lab.delayline SPEC_JSON``."""
    run(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
