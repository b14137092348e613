"""The published study's application-level round-trip count, for adapters that can wrap their
connection.

The study (clibench v0.7.0, ``internal/rtcount``) wraps each TCP connection's ``net.Conn`` right
after dialing and before TLS or SSH run over it, and counts a round trip when a ``Read`` follows a
``Write``: a write stores "last direction: write"; a read swaps in "read" and counts one if the
swapped-out value was "write". Consecutive writes count once; consecutive reads count nothing.
A benchmark iteration's figure is the sum over every connection the iteration used (``fresh-conn``
over HTTPS: the five connections' counts added) or, on a kept connection, the difference across
the iteration. Not counted, because they are neither reads nor writes of the stream: the TCP
handshake and close (SYN, FIN). Counted, because they are reads and writes below TLS: every TLS
handshake flight. It reports the median over the iterations; the transport benchmark here
records the mean over its timed rounds (``app_rtts_per_iteration``), so a count that varies from
one iteration to the next shows as a fraction.

Here the same rule, per connection (:class:`Turns`), summed by a :class:`RoundTripCounter` over
every connection opened while it is installed, on the reads and writes the client library itself
makes (as the study counts the ``Read`` and ``Write`` calls of Go's library). One deliberate
difference of form: a read is counted when it returns bytes, not when it is called. Go's readers
(the SSH multiplexer's read loop, the HTTP/1.1 ``readLoop``) call ``Read`` again as soon as the
previous one returned, so the ``Read`` call that follows a write is the one that returns the answer:
counting the call or its bytes gives the same number. Python's clients make the bytes the only
common point: an asyncio protocol sees nothing but arrivals (``data_received``), and paramiko's
reader thread calls ``recv`` every 0.1 s whether or not anything came (a call that times out is no
round trip). Counting on return also means an iteration's last answer is counted before the client
sees it, so the count taken after an iteration is complete. Further details:

- A read is one read call of the library that returned bytes: a library that takes a message in
  pieces (paramiko: 16 bytes, then the rest of the packet) and writes between two pieces counts a
  round trip there, as a Go ``Read`` after a ``Write`` counts whether or not its bytes were already
  waiting (Go reads through a 4 KiB ``bufio`` buffer, so it makes fewer, larger reads). The wrappers
  never change how a library reads: a buffering wrapper was tried and changed paramiko's timing
  (more delayed-ACK stalls), which a benchmark must not do.
- An empty write (``sendall(b"")``) sends nothing and does not count as a write.
- A write is noted before it is handed to the kernel (as Go stores the direction first), so an
  answer can never be seen before the write that caused it.
- One reader per connection (every client here: paramiko's transport thread, an event loop,
  httpcore's caller); writers may be other threads (paramiko's). The per-connection state is a
  write ticket and the last ticket a counted read saw: lock-free, and a write racing a read is
  counted at the next read, never lost.

Wrappers for the two kinds of I/O clients do: :class:`CountingSocket` (a blocking socket: paramiko's
``sock=``, and the raw layer under the httpx adapter's TLS) and :func:`counting_protocol` (an
asyncio protocol factory whose transport counts: asyncssh). Library glue lives with each library's
adapter; an adapter that can count says so with ``counts_round_trips`` and takes a counter with
:meth:`~mgmtbench.clients.base.Client.count_round_trips`.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["CountingProtocol", "CountingSocket", "RoundTripCounter", "Turns", "counting_protocol"]

#: Bytes a wrapper that chooses its own reads asks for (the httpx adapter's TLS records).
CHUNK = 65536


class Turns:
    """One connection's round trips: :meth:`wrote` before every non-empty write, :meth:`arrived`
    after every read that returned bytes (see the module for the rule)."""

    __slots__ = ("_seen", "_tickets", "_written", "trips")

    def __init__(self) -> None:
        self._tickets = itertools.count(1)  # next() is atomic: writers need no lock
        self._written = 0  # the ticket of the latest write
        self._seen = 0  # the write ticket the latest counted arrival answered
        #: Round trips counted on this connection.
        self.trips = 0

    def wrote(self) -> None:
        """The client is writing to the connection."""
        self._written = next(self._tickets)

    def arrived(self) -> None:
        """Bytes came back from the peer: a round trip if the client wrote since the last one."""
        written = self._written
        if written != self._seen:
            self._seen = written
            self.trips += 1


class RoundTripCounter:
    """The study's round trips, summed over every connection opened while it is installed in an
    adapter (:meth:`~mgmtbench.clients.base.Client.count_round_trips`).

    ``trips`` is a running total; a benchmark takes it before and after its timed rounds. Safe to
    read from any thread; exact once the connections' readers have returned what was asked.
    """

    def __init__(self) -> None:
        self._connections: list[Turns] = []

    def connection(self) -> Turns:
        """A new connection's :class:`Turns`, counted in this total."""
        turns = Turns()
        self._connections.append(turns)  # list.append is atomic
        return turns

    @property
    def trips(self) -> int:
        """Round trips so far, over every connection."""
        return sum(turns.trips for turns in list(self._connections))

    @property
    def connections(self) -> int:
        """How many connections were counted."""
        return len(self._connections)


class CountingSocket:
    """A connected blocking socket that counts round trips into ``turns``; everything but reading
    and writing is the socket's own (``settimeout``, ``fileno``, ``getpeername``, ``close`` ...), so
    it stands in for the socket wherever a library takes a socket-like object (paramiko's
    ``sock=``)."""

    def __init__(self, sock: socket.socket, turns: Turns) -> None:
        self._sock = sock
        self._turns = turns

    @property
    def socket(self) -> socket.socket:
        """The real socket."""
        return self._sock

    def recv(self, bufsize: int) -> bytes:
        """Up to ``bufsize`` bytes, as the socket's ``recv``."""
        data = self._sock.recv(bufsize)
        if data:
            self._turns.arrived()
        return data

    def recv_into(self, buffer: bytearray | memoryview, nbytes: int = 0) -> int:
        """``recv`` into ``buffer``; the number of bytes."""
        got = self._sock.recv_into(buffer, nbytes)
        if got:
            self._turns.arrived()
        return got

    def send(self, data: bytes) -> int:
        """Send what the kernel takes of ``data``; how much that was."""
        if data:
            self._turns.wrote()
        return self._sock.send(data)

    def sendall(self, data: bytes) -> None:
        """Send all of ``data``."""
        if data:
            self._turns.wrote()
            self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _CountingTransport(asyncio.Transport):
    """An asyncio transport whose writes are counted; the rest is the real transport's."""

    def __init__(self, transport: asyncio.Transport, turns: Turns) -> None:
        super().__init__()
        self._transport = transport
        self._turns = turns

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if data:
            self._turns.wrote()
        self._transport.write(data)

    def writelines(self, list_of_data: Iterable[bytes | bytearray | memoryview]) -> None:
        chunks = list(list_of_data)
        if any(chunks):
            self._turns.wrote()
        self._transport.writelines(chunks)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def close(self) -> None:
        self._transport.close()

    def abort(self) -> None:
        self._transport.abort()

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size()

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def write_eof(self) -> None:
        self._transport.write_eof()


class CountingProtocol(asyncio.Protocol):
    """Stands between an asyncio transport and the library's protocol (``inner``): arrivals are
    counted on the way in, writes by the transport it hands the protocol."""

    def __init__(self, inner: asyncio.Protocol, turns: Turns) -> None:
        #: The library's own protocol.
        self.inner = inner
        self._turns = turns

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Hand the library's protocol the counting transport."""
        assert isinstance(transport, asyncio.Transport)
        self.inner.connection_made(_CountingTransport(transport, self._turns))

    def data_received(self, data: bytes) -> None:
        """A read that returned bytes: counted, then passed on."""
        if data:
            self._turns.arrived()
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        """Passed on."""
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        """Passed on."""
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        """Passed on."""
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        """Passed on."""
        self.inner.resume_writing()


def counting_protocol(factory: Callable[[], asyncio.Protocol],
                      counter: RoundTripCounter) -> Callable[[], CountingProtocol]:
    """A protocol factory for ``loop.create_connection`` that makes ``factory``'s protocol and
    counts its connection into ``counter``; the library's own protocol is the returned
    protocol's ``inner``."""

    def make() -> CountingProtocol:
        return CountingProtocol(factory(), counter.connection())

    return make
