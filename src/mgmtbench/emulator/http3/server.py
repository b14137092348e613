"""The device's HTTP/3 server: QUIC connections on already-bound UDP sockets, aioquic 1.7.2.

What the device does, and why:

- **The same API as HTTPS.** Every request goes to the ASGI application the HTTPS server serves
  (the device API: same paths, Basic auth, outputs; the edge proxy's, later), with
  ``http_version`` ``"3"``, scheme ``https`` and the client's address (the auth throttle's key).
  ALPN ``h3``; the HTTPS API's certificate and key. QUIC is TLS 1.3 only, whatever TLS versions
  the platform's HTTPS offers.
- **Session tickets and 0-RTT.** Each handshake ends with a ticket that allows early data
  (aioquic's server tickets carry ``max_early_data``). A device keeps its tickets in a
  :class:`TicketStore` from which a resumption *takes* its ticket: a ticket resumes once, so a
  ClientHello replayed by whoever recorded it finds no ticket, resumes nothing and has its early
  data dropped (RFC 8446 section 8.1, RFC 9001 section 9.2). On top of that the application
  decides per request (RFC 8470): a request received before the handshake completed carries
  ``Early-Data: 1`` and the device answers it only if it is safe to run twice, the rest
  ``425 Too Early`` (:mod:`.early`). "Received before the handshake completed": its stream's
  data came in a datagram that aioquic processed before its ``HandshakeCompleted`` event, or in a
  datagram that starts with a 0-RTT packet (one reordered behind the client's Finished); a client
  coalesces its packets Initial, 0-RTT, Handshake in that order (RFC 9000 section 12.2), so the
  order of aioquic's events is the order of the packets. The answer to an early request leaves at
  once, with the server's handshake (0.5-RTT data), so a 0-RTT GET takes one round trip.
- **Address tokens.** After each handshake a NEW_TOKEN frame; a client that brings it back in
  its next Initial from the same IP is validated at once, so its 0-RTT answer is not held to
  three times what it sent (RFC 9000 section 8.1; :mod:`.tokens`).
- **Counts.** Each device's :class:`~mgmtbench.emulator.device.http3.Http3Counts`
  (connections, handshakes, resumptions, early requests answered and refused, requests), served
  at ``/mgmtbench/http3`` so a benchmark can show its 0-RTT was real.
- **Limits** (:class:`~mgmtbench.emulator.options.Limits`): ``max_http3_connections`` open per
  device (a new one over it gets CONNECTION_CLOSE with CONNECTION_REFUSED in reply to its first
  packet, before any TLS work), ``tls_handshake_timeout`` for the handshake,
  ``https_idle_timeout`` as QUIC's idle time-out, ``max_http3_streams`` concurrent requests per
  connection; the body, command and output limits are the application's. Malformed datagrams are
  dropped (aioquic), a protocol error closes its connection (aioquic's H3), an application error
  answers ``500`` (:mod:`.asgi`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from functools import partial
from typing import Any, cast

from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.asyncio.server import QuicServer
from aioquic.buffer import Buffer  # type: ignore[attr-defined]  # re-exported from _buffer
from aioquic.h3.connection import H3_ALPN, ErrorCode, H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import SMALLEST_MAX_DATAGRAM_SIZE, QuicConfiguration
from aioquic.quic.connection import QuicConnection, QuicNetworkPath
from aioquic.quic.crypto import CryptoPair
from aioquic.quic.events import (
    ConnectionTerminated,
    HandshakeCompleted,
    QuicEvent,
    StopSendingReceived,
    StreamReset,
)
from aioquic.quic.packet import (
    QuicErrorCode,
    QuicFrameType,
    QuicPacketType,
    pull_quic_header,
)
from aioquic.quic.packet_builder import QuicPacketBuilder, QuicPacketBuilderStop
from aioquic.tls import SessionTicket

from mgmtbench.emulator import memtrim
from mgmtbench.emulator.device.http3 import Http3Counts
from mgmtbench.emulator.http3.asgi import AsgiApp, Request, make_scope
from mgmtbench.emulator.http3.early import TOO_EARLY
from mgmtbench.emulator.http3.tokens import AddressTokens
from mgmtbench.emulator.https.tls import TlsFiles
from mgmtbench.emulator.options import Limits

__all__ = ["TicketStore", "quic_configuration", "serve_http3"]

log = logging.getLogger("mgmtbench.emulator")

#: Limits of a server without a connection cap (the edge proxy's: its clients are the benchmark).
UNCAPPED = Limits(max_http3_connections=sys.maxsize)
#: Seconds open connections get to finish their answers once the server stops.
GRACE = 1.0
#: Session tickets a device keeps (the oldest go first): one per recent connection.
TICKETS_KEPT = 1000


class TicketStore:
    """A device's session tickets, each taken by the one resumption that uses it.

    aioquic asks :meth:`add` to keep each ticket it issues and :meth:`pop` for the ticket a
    ClientHello names; ``pop`` removes it, so a replayed ClientHello finds nothing (a full
    handshake, its early data dropped). At most ``kept`` tickets; expired ones are never
    returned.
    """

    def __init__(self, kept: int = TICKETS_KEPT) -> None:
        self._tickets: OrderedDict[bytes, SessionTicket] = OrderedDict()
        self._kept = kept

    def add(self, ticket: SessionTicket) -> None:
        """Keep a ticket just issued."""
        self._tickets[ticket.ticket] = ticket
        while len(self._tickets) > self._kept:
            self._tickets.popitem(last=False)

    def pop(self, label: bytes) -> SessionTicket | None:
        """Take the ticket named ``label`` (None: unknown, used, or expired)."""
        ticket = self._tickets.pop(label, None)
        return ticket if ticket is not None and ticket.is_valid else None

    def __len__(self) -> int:
        return len(self._tickets)


def quic_configuration(tls: TlsFiles, limits: Limits) -> QuicConfiguration:
    """A server's QUIC settings: ALPN ``h3``, the HTTPS API's certificate chain and key, and
    ``limits.https_idle_timeout`` as the idle time-out."""
    configuration = QuicConfiguration(alpn_protocols=list(H3_ALPN), is_client=False,
                                      idle_timeout=limits.https_idle_timeout)
    configuration.load_cert_chain(tls.cert, tls.key)
    return configuration


class _Device(QuicServer):
    """One device's UDP socket: its connections, cap, tickets and counts."""

    def __init__(self, app: AsgiApp, configuration: QuicConfiguration, limits: Limits,
                 counts: Http3Counts, name: str, server: Any) -> None:
        self.tickets = TicketStore()
        self.tokens = AddressTokens()
        #: The address whose connection is being opened with a valid token (see
        #: :meth:`datagram_received`), for :class:`_Connection` to start validated.
        self.validated: Any = None
        super().__init__(configuration=configuration,
                         create_protocol=partial(_Connection, device=self),
                         session_ticket_fetcher=self.tickets.pop,
                         session_ticket_handler=self.tickets.add)
        self.app, self.limits, self.counts, self.name = app, limits, counts, name
        self.server_address = server
        self.connections: set[_Connection] = set()
        self.cid_length = configuration.connection_id_length
        self._versions = configuration.supported_versions

    def datagram_received(self, data: bytes | str, addr: Any) -> None:
        """A datagram for a connection, or one that opens a new one (refused over the cap)."""
        data = cast(bytes, data)
        if self.counts.open >= self.limits.max_http3_connections:
            opening = self._opening(data)
            if opening is not None:
                self.counts.dropped += 1
                log.warning("%s http3 %s:%s: connection refused: %d open connections",
                            self.name, addr[0], addr[1], self.counts.open)
                assert self._transport is not None
                self._transport.sendto(_refusal(*opening), addr)
                return
        self.validated = addr if self._token_redeemed(data, addr) else None
        try:
            super().datagram_received(data, addr)
        finally:
            self.validated = None

    def _token_redeemed(self, data: bytes, addr: Any) -> bool:
        """Whether ``data`` opens a connection with a valid address token for ``addr``."""
        if not data or data[0] & 0xB0 != 0x80:  # a long header whose type is not Initial (v1)
            return False
        try:
            header = pull_quic_header(Buffer(data=data), host_cid_length=self.cid_length)
        except ValueError:
            return False
        return (header.packet_type == QuicPacketType.INITIAL and bool(header.token)
                and header.destination_cid not in self._protocols
                and self.tokens.redeem(header.token, addr[0]))

    def _opening(self, data: bytes) -> tuple[int, bytes, bytes] | None:
        """(version, client's destination CID, client's source CID) of a datagram that would
        open a connection; None for any other."""
        try:
            header = pull_quic_header(Buffer(data=data), host_cid_length=self.cid_length)
        except ValueError:
            return None
        if (header.packet_type != QuicPacketType.INITIAL or header.version is None
                or header.version not in self._versions
                or len(data) < SMALLEST_MAX_DATAGRAM_SIZE
                or header.destination_cid in self._protocols):
            return None
        return header.version, header.destination_cid, header.source_cid


def _refusal(version: int, destination_cid: bytes, source_cid: bytes) -> bytes:
    """An Initial packet closing a connection before it starts with CONNECTION_REFUSED
    (RFC 9000 section 20.1), keyed from the client's own destination CID as its Initial was."""
    crypto = CryptoPair()
    crypto.setup_initial(cid=destination_cid, is_client=False, version=version)
    builder = QuicPacketBuilder(host_cid=destination_cid, is_client=False,
                                max_datagram_size=SMALLEST_MAX_DATAGRAM_SIZE,
                                peer_cid=source_cid, version=version)
    builder.start_packet(QuicPacketType.INITIAL, crypto)
    reason = b"too many connections"
    buf = builder.start_frame(QuicFrameType.TRANSPORT_CLOSE, capacity=16 + len(reason))
    buf.push_uint_var(QuicErrorCode.CONNECTION_REFUSED)
    buf.push_uint_var(QuicFrameType.PADDING)
    buf.push_uint_var(len(reason))
    buf.push_bytes(reason)
    datagrams, _ = builder.flush()
    return datagrams[0]


class _Connection(QuicConnectionProtocol):
    """One QUIC connection: HTTP/3 on it, each request to the application."""

    def __init__(self, quic: QuicConnection, stream_handler: Any = None, *,
                 device: _Device) -> None:
        super().__init__(quic, stream_handler)
        self.device = device
        counts = device.counts
        counts.connections += 1
        counts.open += 1
        device.connections.add(self)
        self._open = True
        self._h3 = H3Connection(quic)
        self._requests: dict[int, Request] = {}
        self._handshake_done = False
        self._early_datagram = False
        self._drained = asyncio.Event()
        self._peer: Any = None
        # aioquic offers 128 concurrent streams of each kind and has no setting for it: the
        # limit is its private Limit, read when the transport parameters are first written.
        streams = quic._local_max_streams_bidi
        streams.value = streams.sent = device.limits.max_http3_streams
        if device.validated is not None:  # a valid token: the first datagram's path is
            quic._network_paths = [QuicNetworkPath(device.validated, is_validated=True)]
            counts.address_validated += 1
        # aioquic writes no NEW_TOKEN frame: ours goes after its HANDSHAKE_DONE.
        write_done = quic._write_handshake_done_frame

        def handshake_done_and_token(builder: QuicPacketBuilder) -> None:
            write_done(builder=builder)
            self._write_new_token(builder)

        quic._write_handshake_done_frame = handshake_done_and_token  # type: ignore[method-assign]
        timeout = device.limits.tls_handshake_timeout
        self._handshake_timer = (self._loop.call_later(timeout, self._handshake_overdue)
                                 if timeout > 0 else None)

    # the network side

    def datagram_received(self, data: bytes | str, addr: Any) -> None:
        """A datagram: requests it carries are early if it starts with a 0-RTT packet."""
        self._peer = addr
        self._early_datagram = _starts_zero_rtt(cast(bytes, data),
                                                self.device.cid_length)
        try:
            super().datagram_received(data, addr)
        finally:
            self._early_datagram = False

    def transmit(self) -> None:
        """Send what is queued; wake senders waiting for their stream to drain."""
        super().transmit()
        self._drained.set()

    def quic_event_received(self, event: QuicEvent) -> None:
        """A QUIC event, in the order aioquic met it in the packets."""
        try:
            self._event(event)
        except Exception as exc:  # a bug must not take the loop's datagram handling with it
            log.warning("%s http3 %s: connection closed on an error: %s: %s", self.device.name,
                        _address(self._peer), type(exc).__name__, exc)
            log.debug("the error", exc_info=True)
            self._quic.close(error_code=QuicErrorCode.INTERNAL_ERROR,
                             reason_phrase="internal error")

    def _event(self, event: QuicEvent) -> None:
        if isinstance(event, HandshakeCompleted):
            self._handshake_done = True
            self._cancel_handshake_timer()
            counts = self.device.counts
            counts.handshakes += 1
            counts.resumed += bool(event.session_resumed)
        elif isinstance(event, ConnectionTerminated):
            self._closed_now()
        elif isinstance(event, (StreamReset, StopSendingReceived)):
            # STOP_SENDING: the client gave the answer up (aioquic resets the stream, RFC 9000
            # section 3.5); the rest is not made
            request = self._requests.pop(event.stream_id, None)
            if request is not None:
                request.gone()
        early = self._early_datagram or not self._handshake_done
        for h3_event in self._h3.handle_event(event):
            self._h3_event(h3_event, early)

    def _h3_event(self, event: H3Event, early: bool) -> None:
        if isinstance(event, HeadersReceived):
            request = self._requests.get(event.stream_id)
            if request is not None:  # trailers
                request.body(b"", event.stream_ended)
                return
            scope = make_scope(event.headers, self._peer, self.device.server_address, early)
            if scope is None:
                self._send_error(event.stream_id, 400)
                return
            request = Request(self, event.stream_id, scope, early)
            self._requests[event.stream_id] = request
            request.body(b"", event.stream_ended)
            task = request.run(self.device.app, self.device.name)
            task.add_done_callback(lambda _: self._requests.pop(event.stream_id, None))
        elif isinstance(event, DataReceived):
            request = self._requests.get(event.stream_id)
            if request is not None:
                request.body(event.data, event.stream_ended)

    # what requests need (asgi.Carrier)

    def send_headers(self, stream_id: int, headers: list[tuple[bytes, bytes]],
                     end_stream: bool) -> None:
        """Queue a HEADERS frame; sent once the loop is free (with the first DATA frame)."""
        if self._open:
            self._h3.send_headers(stream_id, headers, end_stream=end_stream)
            self._transmit_soon()

    def send_data(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        """Queue a DATA frame."""
        if self._open:
            self._h3.send_data(stream_id, data, end_stream=end_stream)
            self._transmit_soon()

    def reset(self, stream_id: int) -> None:
        """Abandon a response half sent."""
        if self._open:
            self._quic.reset_stream(stream_id, ErrorCode.H3_INTERNAL_ERROR)
            self._transmit_soon()

    def stop_reading(self, stream_id: int) -> None:
        """Ask the client to stop sending a request's body (RFC 9114 section 4.1.2)."""
        if self._open:
            try:
                self._quic.stop_stream(stream_id, ErrorCode.H3_NO_ERROR)
            except ValueError:  # the stream is gone already
                return
            self._transmit_soon()

    async def drained(self, stream_id: int, mark: int) -> None:
        """Wait while the stream holds more than ``mark`` bytes that were never sent."""
        while self._open and stream_id in self._requests and self._unsent(stream_id) > mark:
            self._drained.clear()
            await self._drained.wait()

    def answered(self, request: Request, status: int) -> None:
        """Count an answer (and, for a request received in early data, whether it was
        refused)."""
        counts = self.device.counts
        counts.requests += 1
        if request.early:
            if status == TOO_EARLY:
                counts.early_data_refused += 1
            else:
                counts.early_data_accepted += 1

    def tasks(self) -> list[asyncio.Task[None]]:
        """The tasks of the requests being answered."""
        return [r.task for r in self._requests.values() if r.task is not None]

    # the rest

    def _write_new_token(self, builder: QuicPacketBuilder) -> None:
        """A NEW_TOKEN frame for the peer's address, if the packet has room (not resent)."""
        if self._peer is None:
            return
        token = self.device.tokens.issue(self._peer[0])
        try:
            buf = builder.start_frame(QuicFrameType.NEW_TOKEN, capacity=1 + 8 + len(token))
        except QuicPacketBuilderStop:
            return
        buf.push_uint_var(len(token))
        buf.push_bytes(token)
        self.device.counts.tokens_issued += 1

    def _unsent(self, stream_id: int) -> int:
        # aioquic keeps no public count of a stream's unsent bytes: its sender's buffer ends at
        # _buffer_stop, and highest_offset is how far it has sent.
        stream = self._quic._streams.get(stream_id)
        if stream is None:
            return 0
        return int(stream.sender._buffer_stop - stream.sender.highest_offset)

    def _send_error(self, stream_id: int, status: int) -> None:
        self._h3.send_headers(stream_id, [(b":status", str(status).encode())], end_stream=True)
        self._transmit_soon()

    def _handshake_overdue(self) -> None:
        self._handshake_timer = None
        if not self._handshake_done and self._open:
            log.info("%s http3 %s: no handshake in %.0f s: connection closed", self.device.name,
                     _address(self._peer), self.device.limits.tls_handshake_timeout)
            self.close(error_code=QuicErrorCode.CONNECTION_REFUSED,
                       reason_phrase="handshake time-out")
            # Nothing more from the client: forget it now, not after its closing period.
            self._closed_now()

    def _cancel_handshake_timer(self) -> None:
        if self._handshake_timer is not None:
            self._handshake_timer.cancel()
            self._handshake_timer = None

    def _closed_now(self) -> None:
        """The connection ended: its requests are told, its slot under the cap is free."""
        if not self._open:
            return
        self._open = False
        self._cancel_handshake_timer()
        self._drained.set()
        for request in list(self._requests.values()):
            request.gone()
        self.device.counts.open -= 1
        self.device.connections.discard(self)
        memtrim.connection_closed()


def _starts_zero_rtt(data: bytes, cid_length: int) -> bool:
    try:
        header = pull_quic_header(Buffer(data=data), host_cid_length=cid_length)
    except ValueError:
        return False
    return header.packet_type == QuicPacketType.ZERO_RTT


def _address(peer: Any) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, (tuple, list)) and len(peer) > 1 else "?"


def serve_http3(app: AsgiApp, sockets: list[socket.socket], tls: TlsFiles,
                shutdown: asyncio.Event, limits: Limits | None = None,
                names: Sequence[str] | None = None,
                counts: Sequence[Http3Counts] | None = None) -> Awaitable[None]:
    """Serve ``app`` over HTTP/3 on already-bound UDP ``sockets`` until ``shutdown`` is set.

    Each socket is a device (``names``, one per socket, in log lines) with its own tickets,
    connection cap and counts (``counts``, one per socket, where the caller wants to read them;
    else new ones). ``limits`` None: the default time-outs and no cap (the edge proxy). The
    certificate and key are ``tls``'s, the HTTPS API's.
    """
    chosen = limits or UNCAPPED

    async def run() -> None:
        loop = asyncio.get_running_loop()
        configuration = quic_configuration(tls, chosen)
        devices: list[_Device] = []
        try:
            for index, sock in enumerate(sockets):
                counted = counts[index] if counts is not None else Http3Counts()
                name = names[index] if names is not None else "http3"
                # A duplicate: the caller closes its socket, the loop its own.
                own = socket.socket(sock.family, sock.type, fileno=os.dup(sock.fileno()))
                own.setblocking(False)
                address = own.getsockname()
                _, device = await loop.create_datagram_endpoint(
                    partial(_Device, app, configuration, chosen, counted, name, address),
                    sock=own)
                devices.append(device)
            await shutdown.wait()
        finally:
            await _stop(devices)

    return run()


async def _stop(devices: list[_Device]) -> None:
    """Let answers being sent finish (at most :data:`GRACE` s), then close every connection."""
    tasks = [task for device in devices for conn in device.connections for task in conn.tasks()]
    if tasks:
        await asyncio.wait(tasks, timeout=GRACE)
    for device in devices:
        connections = list(device.connections)
        device.close()  # CONNECTION_CLOSE to each, then the socket
        for conn in connections:
            conn._closed_now()
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.wait(tasks, timeout=GRACE)
