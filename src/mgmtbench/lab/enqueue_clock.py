"""When the kernel queued each packet to a TUN device: the delay line's clock for a packet's hold.

A user-space delay line reads a packet some time after the kernel queued it to the TUN device: the
time its process takes to wake up, tens of microseconds on a quiet machine, up to milliseconds when
the CPUs are busy running the benchmark's client and the emulator. Timing the hold from the read
would add that wait to the link's delay, so a lab under load would be slower than its profile.

netem starts a packet's delay when the qdisc takes it. The same moment for a TUN device: the
kernel hands every packet it transmits to the device's packet taps (``dev_queue_xmit_nit``) just
before queueing it to the device, with a kernel timestamp. An :class:`EnqueueClock` is such a tap,
an ``AF_PACKET`` socket bound to the one TUN device, with a classic BPF filter that keeps only
packets the kernel sends out of it (``PACKET_OUTGOING``: what the delay line will read; not the
packets the delay line writes) and only their first :data:`SNAP` bytes. For each packet read from
the device, :meth:`EnqueueClock.queued_at` finds its tap copy by those bytes (the IP and TCP
headers: ID, ports, sequence numbers) and returns when the kernel queued it, on
``time.monotonic``'s clock; the delay line holds it until that time plus the delay. Tap copies of
packets the device dropped (its queue full) are skipped; a packet without a copy (sent before the
tap was bound) is timed from its read, as before.

Standard library only: the delay line runs as ``python -m mgmtbench.lab.delayline``.
"""

from __future__ import annotations

import collections
import ctypes
import errno
import socket
import struct
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_ATTACH_FILTER = 26
SO_TIMESTAMPNS = 35
SO_RCVBUFFORCE = 33
SKF_AD_PKTTYPE = -0x1000 + 4  # SKF_AD_OFF + SKF_AD_PKTTYPE: the packet's sll_pkttype
SNAP = 48  # bytes kept per packet: an IPv4 header and the TCP header's first 28 bytes
RCVBUF = 16 << 20
SEARCH = 64  # tap copies looked through for a packet's own before giving up on it
CMSG_SPACE = 64


def outgoing_filter(snap: int = SNAP) -> list[tuple[int, int, int, int]]:
    """The classic BPF program: keep the first ``snap`` bytes of packets the kernel sends out of
    the interface, drop everything else. Instructions as (code, jt, jf, k)."""
    ld_w_abs, jeq_k, ret_k = 0x20, 0x15, 0x06
    return [(ld_w_abs, 0, 0, SKF_AD_PKTTYPE & 0xFFFFFFFF),
            (jeq_k, 0, 1, PACKET_OUTGOING),
            (ret_k, 0, 0, snap),
            (ret_k, 0, 0, 0)]


def _attach(sock: socket.socket, program: list[tuple[int, int, int, int]]) -> None:
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxQ", len(program), ctypes.addressof(buffer))
    sock.setsockopt(socket.SOL_SOCKET, SO_ATTACH_FILTER, fprog)


class EnqueueClock:
    """Kernel enqueue times of the packets the kernel sends out of TUN device ``ifname`` (in the
    calling thread's network namespace)."""

    def __init__(self, ifname: str) -> None:
        # Protocol 0 until bound (no other interface's packets queue up); filter before bind.
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)
        try:
            _attach(sock, outgoing_filter())
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF)
            except PermissionError:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            sock.bind((ifname, ETH_P_ALL))
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self.sock = sock
        self.pending: collections.deque[tuple[bytes, float]] = collections.deque()
        self.matched = self.unmatched = self.skipped = 0

    def close(self) -> None:
        """Stop tapping."""
        self.sock.close()

    def _drain(self) -> None:
        """Move every queued tap copy into ``pending`` as (first bytes, monotonic time)."""
        recvmsg, pending = self.sock.recvmsg, self.pending
        offset = time.time() - time.monotonic()  # realtime -> monotonic (both slewed alike)
        while True:
            try:
                data, ancillary, _, _ = recvmsg(SNAP, CMSG_SPACE)
            except BlockingIOError:
                return
            except OSError as exc:  # bound while the device was down: reported once, then clear
                if exc.errno == errno.ENETDOWN:
                    continue
                raise
            for level, kind, value in ancillary:
                if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                    seconds, nanos = struct.unpack("qq", value[:16])
                    pending.append((data, seconds + nanos * 1e-9 - offset))
                    break

    def queued_at(self, packet: bytes, start: int, fallback: float) -> float:
        """When the kernel queued ``packet`` (its IP header at ``start``) to the device;
        ``fallback`` if the tap never saw it."""
        pending = self.pending
        if not pending:
            self._drain()
        for attempt in range(2):
            for index in range(min(len(pending), SEARCH)):
                head, stamp = pending[index]
                if packet.startswith(head, start):
                    for _ in range(index):  # copies of packets the device never delivered
                        pending.popleft()
                    self.skipped += index
                    pending.popleft()
                    self.matched += 1
                    return min(stamp, fallback)
            if attempt == 0:
                self._drain()
        self.unmatched += 1
        return fallback

    def stats(self) -> dict[str, int]:
        """Packets timed from their enqueue, timed from their read, and tap copies skipped."""
        return {"enqueue_timed": self.matched, "read_timed": self.unmatched,
                "tap_skipped": self.skipped}
