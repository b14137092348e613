"""One QUIC connection with HTTP/3 on it, on aioquic: dialled on a UDP socket of its own,
requests answered by status and body, every datagram seen for the study's round trips.

:func:`dial` makes the connected UDP socket itself (``loop.create_datagram_endpoint``) and hands
it to :class:`Connection`, aioquic's :class:`QuicConnectionProtocol` with aioquic's
:class:`H3Connection` on top: that is all ``aioquic.asyncio.connect()`` does, less its context
manager, which waits for the close to drain (three probe time-outs) before it returns. Here
:meth:`Connection.close` sends CONNECTION_CLOSE and lets the socket go at once, as quic-go's
``Transport.Close`` does in the study, so a fresh connection's iteration is not charged for
aioquic's draining period.

Round trips (:mod:`mgmtbench.clients.roundtrips`): with a :class:`Turns`, every datagram sent is a
write and every datagram received a read, as the study's ``rtcount.WrapPacket`` counts the
``WriteTo`` and ``ReadFrom`` calls of quic-go's UDP socket: ACKs, handshake flights and
retransmissions included.

A connected socket hears ICMP: a closed port answers "port unreachable", which the socket
reports (:meth:`Connection.error_received`), so a device that serves no HTTP/3 fails the waiting
request with :class:`ConnectionFailed` at once, not after a time-out.
"""

from __future__ import annotations

import asyncio
import base64
import ssl
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar, cast

from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, ErrorCode, H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, HandshakeCompleted, QuicEvent
from aioquic.tls import SessionTicket

from mgmtbench.clients.roundtrips import Turns
from mgmtbench.errors import ClientError, ClientTimeout, ConnectionFailed

__all__ = ["AnswerTooLarge", "Connection", "Response", "basic_auth", "client_configuration",
           "dial"]

T = TypeVar("T")


class AnswerTooLarge(ClientError):
    """An answer's body passed the request's ``max_body``: not taken."""


class Response:
    """A request's answer as it comes: status, then the body's pieces."""

    def __init__(self, done: asyncio.Future[Response], max_body: int | None = None) -> None:
        self.status = 0
        self.body = bytearray()
        self.done = done
        #: Bytes of body taken at most (None: all): past it the stream is stopped and the
        #: answer fails, so a huge answer costs the client at most this much.
        self.max_body = max_body


class _Datagrams(asyncio.DatagramTransport):
    """The connected socket's transport as aioquic sees it: every datagram sent is counted (if
    ``turns``) and goes to the socket's one peer."""

    def __init__(self, transport: asyncio.DatagramTransport, turns: Turns | None) -> None:
        super().__init__()
        self._transport = transport
        self._turns = turns

    def sendto(self, data: bytes | bytearray | memoryview, addr: Any = None) -> None:
        if self._turns is not None and data:
            self._turns.wrote()
        self._transport.sendto(data)  # connected: its peer is aioquic's only address

    def close(self) -> None:
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def abort(self) -> None:
        self._transport.abort()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)


class Connection(QuicConnectionProtocol):
    """A client's QUIC connection and its HTTP/3 requests.

    ``handshake``: the TLS handshake's end (aioquic's event: ``session_resumed``,
    ``early_data_accepted``); ``ticket``: the newest session ticket the device sent, and
    ``ticket_came`` once there is one; ``token``: the newest address token (NEW_TOKEN) the device
    sent, empty if none. A failure of the connection (closed by the device, ICMP
    unreachable, closed locally) fails every waiting request and the handshake with
    :class:`ConnectionFailed`.
    """

    def __init__(self, configuration: QuicConfiguration, client: str, authority: str,
                 headers: list[tuple[bytes, bytes]], turns: Turns | None) -> None:
        self.client, self.authority, self.headers = client, authority, headers
        self.ticket: SessionTicket | None = None
        self.ticket_came = asyncio.Event()
        self.token = b""
        self._turns = turns
        super().__init__(QuicConnection(configuration=configuration,
                                        session_ticket_handler=self._ticket_received,
                                        token_handler=self._token_received))
        self.handshake: asyncio.Future[HandshakeCompleted] = self._loop.create_future()
        self._h3 = H3Connection(self._quic)
        self._answers: dict[int, Response] = {}
        self._failure: ClientError | None = None

    # the socket

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """aioquic gets the counting transport."""
        # asyncio's selector datagram transport is not a DatagramTransport subclass (3.11)
        super().connection_made(_Datagrams(cast(asyncio.DatagramTransport, transport),
                                           self._turns))

    def datagram_received(self, data: bytes | str, addr: Any) -> None:
        """A datagram from the device: counted, then aioquic's."""
        if self._turns is not None and data:
            self._turns.arrived()
        super().datagram_received(data, addr)

    def error_received(self, exc: Exception) -> None:
        """The socket's error (ICMP port or host unreachable): the connection has failed."""
        self._fail(ConnectionFailed(f"{self.client}: {self.authority}: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        """The socket is closed: no timer of aioquic's may fire on it any more."""
        if self._timer is not None:  # aioquic's own timer handle; it has no way to stop it
            self._timer.cancel()
            self._timer = None
        self._fail(ConnectionFailed(f"{self.client}: {self.authority}: connection closed"))

    # QUIC and HTTP/3

    def _ticket_received(self, ticket: SessionTicket) -> None:
        self.ticket = ticket
        self.ticket_came.set()

    def _token_received(self, token: bytes) -> None:
        self.token = token

    def quic_event_received(self, event: QuicEvent) -> None:
        """The handshake's end, the connection's end, and the HTTP/3 answers."""
        if isinstance(event, HandshakeCompleted):
            if not self.handshake.done():
                self.handshake.set_result(event)
        elif isinstance(event, ConnectionTerminated):
            reason = event.reason_phrase or f"error code {event.error_code:#x}"
            self._fail(ConnectionFailed(f"{self.client}: {self.authority}: the device closed "
                                        f"the connection: {reason}"))
        for h3_event in self._h3.handle_event(event):
            self._answer(h3_event)

    def _answer(self, event: H3Event) -> None:
        if not isinstance(event, (HeadersReceived, DataReceived)):
            return
        response = self._answers.get(event.stream_id)
        if response is None:
            return
        if isinstance(event, HeadersReceived):
            if not response.status:  # trailers have no status
                response.status = int(dict(event.headers).get(b":status", b"0"))
        else:
            response.body += event.data
            if response.max_body is not None and len(response.body) > response.max_body:
                self._give_up(event.stream_id, response)
                return
        if event.stream_ended:
            del self._answers[event.stream_id]
            if not response.done.done():
                response.done.set_result(response)

    def _give_up(self, stream_id: int, response: Response) -> None:
        """An answer past its ``max_body``: the peer is asked to stop sending it (STOP_SENDING,
        H3_REQUEST_CANCELLED), what came is dropped, and the answer fails."""
        del self._answers[stream_id]
        response.body = bytearray()
        self._quic.stop_stream(stream_id, ErrorCode.H3_REQUEST_CANCELLED)
        self.transmit()
        if not response.done.done():
            response.done.set_exception(AnswerTooLarge(
                f"{self.client}: {self.authority}: the answer is over {response.max_body} "
                "bytes: not taken"))

    def send(self, method: str, path: str, body: bytes = b"",
             max_body: int | None = None) -> asyncio.Future[Response]:
        """Send a request now (as 0-RTT early data if the handshake is not done and the
        connection resumed a ticket that allows it); its answer's future (failing with
        :class:`AnswerTooLarge` when the body passes ``max_body`` bytes)."""
        done: asyncio.Future[Response] = self._loop.create_future()
        if self._failure is not None:
            done.set_exception(self._failure)
            return done
        stream_id = self._quic.get_next_available_stream_id()
        self._h3.send_headers(stream_id, [
            (b":method", method.encode()), (b":scheme", b"https"),
            (b":authority", self.authority.encode()), (b":path", path.encode()),
            *self.headers], end_stream=not body)
        if body:
            self._h3.send_data(stream_id, body, end_stream=True)
        self._answers[stream_id] = Response(done, max_body)
        self.transmit()
        return done

    async def request(self, method: str, path: str, body: bytes = b"",
                      timeout: float = 30.0, max_body: int | None = None) -> Response:
        """Send a request and wait for its whole answer (:class:`ClientTimeout` after
        ``timeout`` seconds; :class:`AnswerTooLarge` past ``max_body`` bytes of body)."""
        return await self.within(self.send(method, path, body, max_body), timeout,
                                 f"{method} {path}")

    async def handshaken(self, timeout: float = 30.0) -> HandshakeCompleted:
        """The handshake's end, waited for (:class:`ClientTimeout` after ``timeout`` s)."""
        return await self.within(asyncio.shield(self.handshake), timeout, "the handshake")

    async def within(self, waited: Awaitable[T], timeout: float, what: str) -> T:
        """``waited``'s result (:class:`ClientTimeout` after ``timeout`` s: no answer to
        ``what``)."""
        try:
            return await asyncio.wait_for(waited, timeout)
        except TimeoutError:
            raise ClientTimeout(f"{self.client}: {self.authority}: no answer to {what} in "
                                f"{timeout:g} s") from None

    def close(self, error_code: int = 0, reason_phrase: str = "") -> None:
        """Send CONNECTION_CLOSE and close the socket (no draining period: see the module)."""
        if self._transport is None or self._transport.is_closing():
            return
        super().close(error_code=error_code, reason_phrase=reason_phrase)
        self._transport.close()

    async def aclose(self) -> None:
        """:meth:`close`, then let the loop finish the socket's close (one turn)."""
        self.close()
        await asyncio.sleep(0)

    @property
    def failed(self) -> bool:
        """Whether the connection is gone (closed by either side, idle past its time-out,
        unreachable): a request on it would fail at once."""
        return self._failure is not None

    def _fail(self, failure: ClientError) -> None:
        if self._failure is None:
            self._failure = failure
        waiters: list[asyncio.Future[Any]] = [self.handshake,
                                              *(r.done for r in self._answers.values())]
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(self._failure)
                waiter.exception()  # retrieved: a handshake nobody waits for logs nothing
        self._answers.clear()


def client_configuration(server_name: str, ca_file: Path, ticket: SessionTicket | None = None,
                         token: bytes = b"") -> QuicConfiguration:
    """A client's QUIC settings: ALPN ``h3``, the server's certificate verified against
    ``ca_file`` for ``server_name``, a session ticket to resume and an address token to bring."""
    configuration = QuicConfiguration(alpn_protocols=list(H3_ALPN), is_client=True,
                                      server_name=server_name, verify_mode=ssl.CERT_REQUIRED,
                                      session_ticket=ticket, token=token)
    configuration.load_verify_locations(cafile=str(ca_file))
    return configuration


def basic_auth(username: str, password: str) -> tuple[bytes, bytes]:
    """The ``authorization`` header of HTTP Basic auth."""
    token = base64.b64encode(f"{username}:{password}".encode())
    return (b"authorization", b"Basic " + token)


async def dial(host: str, port: int, configuration: QuicConfiguration, client: str,
               authority: str, headers: list[tuple[bytes, bytes]], turns: Turns | None, *,
               transmit: bool = True) -> Connection:
    """A new connection to ``host:port`` on a UDP socket of its own, its handshake started
    (``transmit`` False: nothing sent yet, so the first request goes with the ClientHello)."""
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.create_datagram_endpoint(
            lambda: Connection(configuration, client, authority, headers, turns),
            remote_addr=(host, port))
    except OSError as exc:
        raise ConnectionFailed(f"{client}: {authority}: {exc}") from exc
    assert isinstance(protocol, Connection)
    protocol.connect(transport.get_extra_info("peername"), transmit=transmit)
    return protocol
