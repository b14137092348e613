"""A small HTTP/3 client on aioquic for the server's tests (the benchmarks' clients are in
``mgmtbench.clients``), and a UDP relay that delays every datagram, so a test can count round
trips on loopback."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, H3Event, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import HandshakeCompleted, QuicEvent
from aioquic.tls import SessionTicket

AUTH = [(b"authorization", b"Basic " + base64.b64encode(b"admin:admin"))]


@dataclass
class Response:
    status: int = 0
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)

    @property
    def text(self) -> str:
        return self.body.decode()


class Client(QuicConnectionProtocol):
    """HTTP/3 requests on one QUIC connection; ``handshake``: its HandshakeCompleted event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.handshake: HandshakeCompleted | None = None
        self._pending: dict[int, tuple[Response, asyncio.Future[Response]]] = {}

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, HandshakeCompleted):
            self.handshake = event
        for h3_event in self.h3.handle_event(event):
            self._h3_event(h3_event)

    def _h3_event(self, event: H3Event) -> None:
        if not isinstance(event, (HeadersReceived, DataReceived)):
            return
        response, done = self._pending[event.stream_id]
        if isinstance(event, HeadersReceived):
            response.headers = event.headers
            response.status = int(dict(event.headers)[b":status"])
        else:
            response.body += event.data
        if event.stream_ended and not done.done():
            done.set_result(response)

    def send(self, method: str, path: str, body: bytes = b"",
             headers: list[tuple[bytes, bytes]] | None = None) -> asyncio.Future[Response]:
        """Queue a request (in 0-RTT if the handshake is not done and early data is allowed)."""
        stream_id = self._quic.get_next_available_stream_id()
        self.h3.send_headers(stream_id, [
            (b":method", method.encode()), (b":scheme", b"https"),
            (b":authority", b"127.0.0.1"), (b":path", path.encode()),
            *(AUTH if headers is None else headers)], end_stream=not body)
        if body:
            self.h3.send_data(stream_id, body, end_stream=True)
        done: asyncio.Future[Response] = self._loop.create_future()
        self._pending[stream_id] = (Response(), done)
        self.transmit()
        return done

    async def handshaken(self) -> HandshakeCompleted:
        """The handshake's end (aioquic's ``wait_connected`` waits forever when called after
        it)."""
        for _ in range(2000):
            if self.handshake is not None:
                return self.handshake
            await asyncio.sleep(0.005)
        raise TimeoutError("no handshake in 10 s")

    async def request(self, method: str, path: str, body: bytes = b"",
                      headers: list[tuple[bytes, bytes]] | None = None) -> Response:
        return await asyncio.wait_for(self.send(method, path, body, headers), 20)


def configuration(ca: Path, ticket: SessionTicket | None = None,
                  token: bytes = b"") -> QuicConfiguration:
    config = QuicConfiguration(alpn_protocols=list(H3_ALPN), is_client=True,
                               server_name="127.0.0.1", verify_mode=ssl.CERT_REQUIRED)
    config.load_verify_locations(str(ca))
    config.session_ticket = ticket
    config.token = token
    return config


@contextlib.asynccontextmanager
async def client(port: int, ca: Path, ticket: SessionTicket | None = None,
                 tickets: list[SessionTicket] | None = None,
                 wait_connected: bool = True, token: bytes = b"",
                 tokens: list[bytes] | None = None) -> AsyncIterator[Client]:
    """A connection to 127.0.0.1:``port``; resumed from ``ticket``; new tickets in ``tickets``;
    ``token``: an address token for its Initial, new ones (NEW_TOKEN) in ``tokens``.
    ``wait_connected`` False: returns at once (requests sent now go in 0-RTT)."""
    async with connect("127.0.0.1", port, configuration=configuration(ca, ticket, token),
                       create_protocol=Client, wait_connected=wait_connected,
                       session_ticket_handler=None if tickets is None else tickets.append,
                       token_handler=None if tokens is None else tokens.append) as conn:
        assert isinstance(conn, Client)
        yield conn


class Relay(asyncio.DatagramProtocol):
    """A UDP relay on 127.0.0.1 that passes each datagram on after ``delay`` seconds (each way,
    so a round trip through it takes twice that), and keeps the client's datagrams
    (``from_client``) for a replay."""

    def __init__(self, server_port: int, delay: float) -> None:
        self.server = ("127.0.0.1", server_port)
        self.delay = delay
        self.from_client: list[bytes] = []
        self._client: Any = None
        self._transport: asyncio.DatagramTransport | None = None
        self._upstream: asyncio.DatagramTransport | None = None

    @classmethod
    async def start(cls, server_port: int, delay: float) -> tuple[Relay, int]:
        loop = asyncio.get_running_loop()
        relay = cls(server_port, delay)
        transport, _ = await loop.create_datagram_endpoint(lambda: relay,
                                                           local_addr=("127.0.0.1", 0))
        upstream, _ = await loop.create_datagram_endpoint(
            lambda: _Back(relay), remote_addr=relay.server)
        relay._upstream = upstream
        return relay, transport.get_extra_info("sockname")[1]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self._client = addr
        self.from_client.append(data)
        assert self._upstream is not None
        asyncio.get_running_loop().call_later(self.delay, self._upstream.sendto, data)

    def back(self, data: bytes) -> None:
        assert self._transport is not None
        asyncio.get_running_loop().call_later(self.delay, self._transport.sendto, data,
                                              self._client)

    def close(self) -> None:
        for transport in (self._transport, self._upstream):
            if transport is not None:
                transport.close()


class _Back(asyncio.DatagramProtocol):
    def __init__(self, relay: Relay) -> None:
        self.relay = relay

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.relay.back(data)
