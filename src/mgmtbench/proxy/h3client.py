"""The edge proxy's HTTP/3 client in the published study's h3 proxy modes (clibench v0.7.0).

Each iteration is ONE request, ``POST /device/<device>/admin/config`` with the iteration's
commands as a newline-separated body, over QUIC to the proxy's HTTP/3 (UDP, the HTTPS port's
number), as the study's ``doProxyH3`` and h3 keep-alive send it:

- ``h3-fresh-ssh``: a new QUIC connection (full handshake, no ticket: the study makes a new
  ``http3.Transport`` per iteration) for the request, and the proxy opens a new SSH connection
  to the device for it (``X-SSH-Connection: fresh``);
- ``h3-pooled-ssh``: a new QUIC connection for the request; the proxy runs it on a pooled SSH
  connection (warmed in ``setup``, untimed);
- ``h3-keep-alive``: the request on a QUIC connection made in ``setup`` (by an untimed request,
  which also warms the pool) and kept, pooled SSH.

aioquic, through the same connection core as the device's ``aioquic-h3`` adapter
(:mod:`mgmtbench.clients.aioquic_h3.connection`), so application round trips are counted the
same way: every datagram each connection sends and receives. The target is the proxy's address,
``http3_port`` its UDP port, its CA and the proxy's credentials.
"""

from __future__ import annotations

from typing import ClassVar
from urllib.parse import quote

from mgmtbench.clients.aioquic_h3.connection import (
    Connection,
    basic_auth,
    client_configuration,
    dial,
)
from mgmtbench.clients.base import AsyncClient, Transport
from mgmtbench.clients.http3 import Http3Target, authority, checked_body
from mgmtbench.clients.httpx.adapter import CONFIG, WARMUP
from mgmtbench.targets import Target

__all__ = ["H3_PROXY_MODES", "H3ProxyClient"]

#: The study's h3 proxy modes.
H3_PROXY_MODES = ("h3-fresh-ssh", "h3-pooled-ssh", "h3-keep-alive")
#: Seconds to wait for a handshake or an answer.
TIMEOUT = 30.0


class H3ProxyClient(Http3Target, AsyncClient):
    """aioquic's HTTP/3 to the edge proxy."""

    name = "aioquic-h3"
    transport = Transport.HTTP3
    modes = H3_PROXY_MODES
    extra = "http3"
    needs = ("aioquic",)
    counts_round_trips = True
    #: The modes whose QUIC connection is made in ``setup`` and kept.
    kept: ClassVar[frozenset[str]] = frozenset({"h3-keep-alive"})

    def __init__(self, target: Target, mode: str, device: str) -> None:
        super().__init__(target, mode)
        self.device = device
        self._path = f"/device/{quote(device, safe='')}{CONFIG}"
        ssh = "fresh" if mode == "h3-fresh-ssh" else "pooled"
        self._headers = [basic_auth(target.username, target.password),
                         (b"x-ssh-connection", ssh.encode())]
        self._kept: Connection | None = None

    async def _connect(self) -> Connection:
        """A new QUIC connection to the proxy, its handshake done."""
        target = self.target
        assert target.http3_port is not None  # check()
        assert target.ca_file is not None
        connection = await dial(
            target.host, target.http3_port, client_configuration(target.host, target.ca_file),
            self.name, authority(target), self._headers,
            None if self.round_trips is None else self.round_trips.connection())
        try:
            await connection.handshaken(TIMEOUT)
        except BaseException:
            await connection.aclose()
            raise
        return connection

    async def _post(self, connection: Connection, commands: list[str]) -> str:
        response = await connection.request("POST", self._path, "\n".join(commands).encode(),
                                            timeout=TIMEOUT)
        return checked_body(self.name, "POST", self._path, response.status,
                            response.body.decode("ascii", "replace"))

    async def setup(self) -> None:
        """Untimed: one request (checks the credentials and the device, warms the SSH pool),
        on the connection that ``h3-keep-alive`` keeps."""
        connection = await self._connect()
        try:
            await self._post(connection, [WARMUP])
        except BaseException:
            await connection.aclose()
            raise
        if self.mode in self.kept:
            self._kept = connection
        else:
            await connection.aclose()

    async def run(self, commands: list[str]) -> str:
        """One iteration: one POST of every command, on the kept connection or a new one."""
        if self._kept is not None:
            return await self._post(self._kept, commands)
        connection = await self._connect()
        try:
            return await self._post(connection, commands)
        finally:
            await connection.aclose()

    async def teardown(self) -> None:
        """Close the kept connection."""
        kept, self._kept = self._kept, None
        if kept is not None:
            await kept.aclose()
