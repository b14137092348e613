"""A small HTTP/3 server and client on aioquic, for the lab's QUIC tests: the server answers every
GET with 200 and a body of ``body`` bytes, from a UDP socket made inside the lab's namespace; the
client sends GETs one at a time on one connection. Both keep aioquic's own log of every packet
they sent (qlog: packet type, length, frames), which the wire tap's rule is checked against.

Both run on the test's event loop (one thread): the server's socket belongs to the lab's
namespace whichever thread uses it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.asyncio.server import QuicServer
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent
from aioquic.quic.logger import QuicLogger

from mgmtbench.lab.netns import in_namespace

H3_PORT = 4433


@dataclass(frozen=True)
class SentPacket:
    """One packet as aioquic's log has it."""

    side: str  # "client" or "server"
    packet_type: str  # "initial", "handshake", "1RTT"
    length: int  # the whole QUIC packet: header, frames, tag
    frames: tuple[str, ...]
    stream_ids: tuple[int, ...] = field(default=())

    @property
    def ack_only(self) -> bool:
        return set(self.frames) <= {"ack", "padding"}


def sent_packets(logger: QuicLogger, side: str) -> list[SentPacket]:
    """Every packet one side sent, from its qlog."""
    found = []
    for trace in logger.to_dict()["traces"]:
        for event in trace["events"]:
            if event["name"] != "transport:packet_sent":
                continue
            data: dict[str, Any] = event["data"]
            frames = data["frames"]
            found.append(SentPacket(
                side, data["header"]["packet_type"], int(data["raw"]["length"]),
                tuple(f["frame_type"] for f in frames),
                tuple(int(f["stream_id"]) for f in frames if f["frame_type"] == "stream")))
    return found


class _ServerProtocol(QuicConnectionProtocol):
    body = b""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._h3 = H3Connection(self._quic)

    def quic_event_received(self, event: QuicEvent) -> None:
        for h3_event in self._h3.handle_event(event):
            if isinstance(h3_event, HeadersReceived) and h3_event.stream_ended:
                self._h3.send_headers(h3_event.stream_id, [(b":status", b"200"),
                                                           (b"content-type", b"text/plain")])
                self._h3.send_data(h3_event.stream_id, self.body, end_stream=True)
                self.transmit()


class H3Client(QuicConnectionProtocol):
    """GETs one at a time: :meth:`get` returns the body."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._h3 = H3Connection(self._quic)
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        self._bodies: dict[int, bytearray] = {}

    def quic_event_received(self, event: QuicEvent) -> None:
        for h3_event in self._h3.handle_event(event):
            if isinstance(h3_event, DataReceived | HeadersReceived):
                if isinstance(h3_event, DataReceived):
                    self._bodies.setdefault(h3_event.stream_id, bytearray()).extend(h3_event.data)
                if h3_event.stream_ended and h3_event.stream_id in self._waiting:
                    self._waiting.pop(h3_event.stream_id).set_result(
                        bytes(self._bodies.pop(h3_event.stream_id, b"")))

    async def get(self, authority: str, path: str) -> bytes:
        stream_id = self._quic.get_next_available_stream_id()
        self._h3.send_headers(stream_id, [
            (b":method", b"GET"), (b":scheme", b"https"), (b":authority", authority.encode()),
            (b":path", path.encode())], end_stream=True)
        waiter: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[stream_id] = waiter
        self.transmit()
        return await asyncio.wait_for(waiter, 30)


@dataclass
class H3Pair:
    """The server's address and both sides' logs."""

    address: str
    client_config: QuicConfiguration
    server_log: QuicLogger
    client_log: QuicLogger

    @asynccontextmanager
    async def client(self) -> AsyncIterator[H3Client]:
        async with connect(self.address, H3_PORT, configuration=self.client_config,
                           create_protocol=H3Client, wait_connected=True) as protocol:
            assert isinstance(protocol, H3Client)
            yield protocol

    def packets(self) -> list[SentPacket]:
        return [*sent_packets(self.client_log, "client"), *sent_packets(self.server_log, "server")]


@asynccontextmanager
async def h3_server(netns: str, address: str, folder: Path, body: bytes) -> AsyncIterator[H3Pair]:
    """An HTTP/3 server on ``address``:H3_PORT inside namespace ``netns`` (on the running loop),
    and a client configuration that trusts it; certificates in ``folder``."""
    ca = trustme.CA()
    cert = ca.issue_cert(address)
    cert.cert_chain_pems[0].write_to_path(folder / "h3-cert.pem")
    cert.private_key_pem.write_to_path(folder / "h3-key.pem")
    ca.cert_pem.write_to_path(folder / "h3-ca.pem")
    server_log, client_log = QuicLogger(), QuicLogger()
    server_config = QuicConfiguration(is_client=False, alpn_protocols=H3_ALPN,
                                      quic_logger=server_log)
    server_config.load_cert_chain(folder / "h3-cert.pem", folder / "h3-key.pem")
    client_config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN,
                                      quic_logger=client_log)
    client_config.load_verify_locations(str(folder / "h3-ca.pem"))

    def bound() -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((address, H3_PORT))
        return sock

    sock = in_namespace(netns, bound)
    protocol_class = type("ServerProtocol", (_ServerProtocol,), {"body": body})
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: QuicServer(configuration=server_config, create_protocol=protocol_class), sock=sock)
    try:
        yield H3Pair(address, client_config, server_log, client_log)
    finally:
        transport.close()
