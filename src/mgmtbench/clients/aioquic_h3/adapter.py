"""aioquic's HTTP/3 client over the device's API: ``aioquic-h3``, asyncio, every HTTP/3 mode.

The modes (:data:`~mgmtbench.clients.base.HTTP3_MODES`) are described in
:mod:`mgmtbench.clients.http3`; here is how this adapter does them with aioquic
(:mod:`.connection`):

- ``fresh-conn``: per iteration, :func:`~.connection.dial` a connection without a ticket, wait for
  the handshake, one GET per command, close.
- ``keep-alive`` / ``batch-post``: one connection from ``setup`` (dialled, handshake, an untimed
  ``GET /admin/exec/show+clock`` that checks the credentials); per iteration one GET per command,
  or one ``POST /admin/config``. Nothing reconnects: a kept connection that died fails the round.
- ``0rtt-resumption``: ``setup`` makes one untimed connection for the first ticket; per iteration
  a connection resuming the newest ticket (the previous connection's, as Go's client session cache
  of one in the study), the handshake waited for, then the GETs. The handshake must say
  ``session_resumed``, else :class:`ClientError`: a resumption that did not resume would time a
  full handshake under this name.
- ``0rtt``: the same, but the connection is dialled without sending, the first GET is queued and
  leaves with the ClientHello as 0-RTT data; the handshake must say ``early_data_accepted``, else
  :class:`ClientError`; the rest wait for the handshake. An iteration ends with a ticket in hand
  for the next one (waited for if it has not come: the device takes each ticket once), and the
  address token the device sent with it (NEW_TOKEN, RFC 9000 section 8.1.3), which the next
  Initial carries, as quic-go's client with a token store and browsers do: without it a device
  may send only three times what the client's first datagram held before the handshake
  validates its address, and an early answer over ~2 kB (``show version``) would wait a round
  trip for it. ``0rtt-resumption`` is the study's client, which keeps no tokens.

TLS: verified against ``target.ca_file`` with ``server_name = target.host`` (QUIC is TLS 1.3).
Requests carry HTTP Basic auth and the HTTPS API's user agent; 401 is
:class:`AuthenticationFailed`, any other status but 200 :class:`ClientError`. With a counter
installed (:meth:`count_round_trips`), every connection's datagrams are counted.

Knobs (:mod:`.knobs`, none measured to matter): ``max-datagram-size`` and ``cubic`` set the
:class:`QuicConfiguration` of every connection.
"""

from __future__ import annotations

from aioquic.quic.configuration import QuicConfiguration
from aioquic.tls import SessionTicket

from mgmtbench.clients.aioquic_h3.connection import (
    Connection,
    basic_auth,
    client_configuration,
    dial,
)
from mgmtbench.clients.aioquic_h3.knobs import CUBIC, KNOBS, MAX_DATAGRAM_SIZE
from mgmtbench.clients.base import HTTP3_MODES, REUSING_MODES, AsyncClient, Transport
from mgmtbench.clients.http3 import Http3Target, authority, checked_body
from mgmtbench.clients.httpx.adapter import CONFIG, HEADERS, WARMUP, exec_path
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

__all__ = ["AioquicH3Client"]

#: Seconds to wait for a handshake or an answer.
TIMEOUT = 30.0
#: The ``max-datagram-size`` knob's: an Ethernet path's (MTU 1500) less IPv6 and UDP headers.
TUNED_DATAGRAM_SIZE = 1452
#: The modes whose connections resume a ticket.
_RESUMING = frozenset({"0rtt-resumption", "0rtt"})


class AioquicH3Client(Http3Target, AsyncClient):
    """aioquic's QUIC and HTTP/3 over the device's API."""

    name = "aioquic-h3"
    transport = Transport.HTTP3
    modes = HTTP3_MODES
    extra = "http3"
    needs = ("aioquic",)
    counts_round_trips = True
    all_knobs = KNOBS

    def __init__(self, target: Target, mode: str, payload: str = "cli") -> None:
        super().__init__(target, mode, payload)
        self._authority = authority(target)
        self._headers = [basic_auth(target.username, target.password),
                         *((k.lower().encode(), v.encode()) for k, v in HEADERS.items())]
        self._kept: Connection | None = None
        self._ticket: SessionTicket | None = None
        self._token = b""  # 0rtt: the address token for the next connection

    def _configuration(self, ticket: SessionTicket | None, token: bytes) -> QuicConfiguration:
        assert self.target.ca_file is not None  # Http3Target.check
        configuration = client_configuration(self.target.host, self.target.ca_file, ticket,
                                             token)
        if self.tuned_with(MAX_DATAGRAM_SIZE.name):
            configuration.max_datagram_size = TUNED_DATAGRAM_SIZE
        if self.tuned_with(CUBIC.name):
            configuration.congestion_control_algorithm = "cubic"
        return configuration

    async def _dial(self, ticket: SessionTicket | None = None, token: bytes = b"",
                    transmit: bool = True) -> Connection:
        assert self.target.http3_port is not None  # Http3Target.check
        return await dial(self.target.host, self.target.http3_port,
                          self._configuration(ticket, token),
                          self.name, self._authority, self._headers,
                          None if self.round_trips is None else self.round_trips.connection(),
                          transmit=transmit)

    async def _get(self, connection: Connection, command: str) -> str:
        path = exec_path([command])
        response = await connection.request("GET", path, timeout=TIMEOUT)
        return checked_body(self.name, "GET", path, response.status, response.body.decode())

    async def setup(self) -> None:
        """Untimed: the kept connection, or the first ticket, with one GET that checks the
        credentials."""
        if self.mode not in REUSING_MODES and self.mode not in _RESUMING:
            return
        connection = await self._dial()
        try:
            await connection.handshaken(TIMEOUT)
            await self._get(connection, WARMUP)
            if self.mode in _RESUMING:
                self._ticket = await self._ticket_of(connection)
                self._token = connection.token if self.mode == "0rtt" else b""
        except BaseException:
            await connection.aclose()
            raise
        if self.mode in REUSING_MODES:
            self._kept = connection
        else:
            await connection.aclose()

    async def run(self, commands: list[str]) -> str:
        """One iteration in the adapter's mode."""
        if self._kept is not None:
            if self.mode == "batch-post":
                body = "\n".join(commands).encode()
                response = await self._kept.request("POST", CONFIG, body, timeout=TIMEOUT)
                return checked_body(self.name, "POST", CONFIG, response.status,
                                    response.body.decode())
            return "".join([await self._get(self._kept, c) for c in commands])
        if self.mode == "0rtt":
            return await self._early(commands)
        connection = await self._dial(self._ticket)
        try:
            handshake = await connection.handshaken(TIMEOUT)
            if self.mode == "0rtt-resumption" and not handshake.session_resumed:
                raise ClientError(f"{self.name}: 0rtt-resumption: the session was not resumed")
            outputs = [await self._get(connection, c) for c in commands]
            if self.mode == "0rtt-resumption":
                self._ticket = await self._ticket_of(connection)
            return "".join(outputs)
        finally:
            await connection.aclose()

    async def _early(self, commands: list[str]) -> str:
        """``0rtt``: the first GET in the ClientHello's flight, the rest after the handshake."""
        connection = await self._dial(self._ticket, self._token, transmit=False)
        try:
            path = exec_path(commands[:1])
            first = connection.send("GET", path)
            handshake = await connection.handshaken(TIMEOUT)
            if not handshake.early_data_accepted:
                raise ClientError(f"{self.name}: 0rtt: the device did not accept early data "
                                  f"(session resumed: {handshake.session_resumed})")
            answer = await connection.within(first, TIMEOUT, f"GET {path}")
            outputs = [checked_body(self.name, "GET", path, answer.status, answer.body.decode())]
            outputs += [await self._get(connection, c) for c in commands[1:]]
            self._ticket = await self._ticket_of(connection)
            self._token = connection.token  # sent with the ticket, after the handshake
            return "".join(outputs)
        finally:
            await connection.aclose()

    async def _ticket_of(self, connection: Connection) -> SessionTicket:
        """The connection's newest session ticket, waited for if it has not come yet."""
        try:
            await connection.within(connection.ticket_came.wait(), TIMEOUT, "a session ticket")
        except ClientError:
            raise ClientError(f"{self.name}: {self.mode}: the device sent no session ticket "
                              f"in {TIMEOUT:g} s") from None
        assert connection.ticket is not None
        return connection.ticket

    async def teardown(self) -> None:
        """Close the kept connection."""
        if self._kept is not None:
            await self._kept.aclose()
            self._kept = None
