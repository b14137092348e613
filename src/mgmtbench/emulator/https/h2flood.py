"""HTTP/2 control frames a client may send, counted before Hypercorn reads them.

Each SETTINGS and PING costs the server a frame in answer, and PRIORITY, RST_STREAM and empty
DATA frames cost it work for nothing a client needs at that rate (the CVE-2019-9512/9513/9515
family). WINDOW_UPDATE is not counted: a client sends one per few DATA frames it reads (h2 every
half window), thousands in a legitimate 256 MiB download; Envoy bounds it against the DATA the
server sent, and h2 rejects an update that overflows the window.

A client writing them as fast as its socket takes them kept the device's loop busy: a legitimate
request waited 2.6 s behind an empty-SETTINGS flood and 1.2 s behind a PING flood. Servers bound
this by count: Envoy's ``max_outbound_control_frames`` (1,000), nginx's and Go's
queued-control-frame limits. Here each connection has a bucket of :data:`BURST` control frames
refilled at :data:`RATE` per second (a client's own SETTINGS and pings are a few per
connection); a connection that empties it gets GOAWAY with ENHANCE_YOUR_CALM and is closed after
:data:`~.accept.CALM_GRACE`, with one log line (rate-limited as every line).

:class:`ControlFrames` reads the frame headers only (the 24-byte preface, then 9 bytes a frame,
the payload skipped), across reads; without I/O.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE = range(9)
ACK, END_STREAM = 0x1, 0x1
#: Control frames a connection may send at once, and per second after.
BURST = 1000
RATE = 100.0
ENHANCE_YOUR_CALM = 0xB


def goaway(error: int = ENHANCE_YOUR_CALM, last_stream: int = 0) -> bytes:
    """A GOAWAY frame: no stream after ``last_stream`` was processed, and why."""
    return struct.pack(">I", 8)[1:] + bytes((GOAWAY, 0)) + struct.pack(">III", 0, last_stream,
                                                                       error)


def _control(kind: int, flags: int, length: int) -> bool:
    """Whether a frame is one the client sends for nothing a request needs."""
    if kind in (SETTINGS, PING):
        return not flags & ACK  # an ACK answers the server; it asks nothing
    if kind in (PRIORITY, RST_STREAM):
        return True
    return kind == DATA and length == 0 and not flags & END_STREAM


class ControlFrames:
    """Counts a connection's control frames as its bytes arrive (see the module)."""

    def __init__(self, burst: int = BURST, rate: float = RATE,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._burst, self._rate, self._clock = burst, rate, clock
        self._tokens = float(burst)
        self._stamp = clock()
        self._preface = len(PREFACE)  # bytes of it still to come
        self._head = bytearray()  # a frame header split across reads
        self._skip = 0  # payload bytes still to pass
        self.frames = 0  # control frames seen

    def feed(self, data: bytes) -> bool:
        """Count the frames ``data`` completes; False once the connection is over its
        budget (it must be closed)."""
        view = memoryview(data)
        at = 0
        if self._preface:
            taken = min(self._preface, len(view))
            self._preface -= taken
            at = taken
        end = len(view)
        counted = 0
        while at < end:
            if self._skip:
                taken = min(self._skip, end - at)
                self._skip -= taken
                at += taken
                continue
            need = 9 - len(self._head)
            if need < 9 or end - at < 9:
                piece = view[at:at + need]
                self._head += piece
                at += len(piece)
                if len(self._head) < 9:
                    break
                head = bytes(self._head)
                self._head.clear()
            else:
                head = bytes(view[at:at + 9])
                at += 9
            length = int.from_bytes(head[:3], "big")
            counted += _control(head[3], head[4], length)
            self._skip = length
        if not counted:
            return True
        self.frames += counted
        now = self._clock()
        self._tokens = min(self._burst, self._tokens + (now - self._stamp) * self._rate)
        self._stamp = now
        self._tokens -= counted
        return self._tokens >= 0
