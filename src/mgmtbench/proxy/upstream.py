"""How the tunnel's head-end reaches the edge proxy over the WAN: HTTPS or HTTP/3.

One small interface, :class:`Upstream` (``request`` a method, path and body, get the status and
text; ``aclose``), two implementations, picked once when the head-end starts
(:func:`upstream_for`):

- :class:`HttpsUpstream` (``ssh-https-ssh``): an :class:`httpx.AsyncClient`, its connections
  kept 90 s idle, as the study's head-end (Go's default ``IdleConnTimeout``) keeps them, not
  httpx's 5 s: a pause between a tool's commands must not put a TCP and TLS handshake over the
  WAN into the next one.
- :class:`Http3Upstream` (``ssh-http3-ssh``, ``mgmtbench headend --proxy-http3``): ONE QUIC
  connection to the proxy's HTTP/3, as the study's head-end keeps one in its ``http3.Transport``:
  dialled on the first request, kept, dialled again when it is gone (closed by the proxy, idle
  past QUIC's negotiated idle time-out, unreachable), so the WAN costs one round trip per request
  once warm. Concurrent requests share it (a stream each). A request that fails on a connection
  is not sent again: it may have reached the device (a configuration), so the client sees the
  failure; the next request dials anew.

A failure to reach the proxy is status 0 with the reason, never an exception. Over HTTPS an
answer is read a chunk at a time and given up past :data:`MAX_ANSWER` bytes (status 0, the
reason), so a huge output costs the head-end at most that much (the proxy caps what it sends
too, ``--max-output``). Over HTTP/3 the same: past it the head-end stops the stream
(STOP_SENDING) and answers with the reason; the connection is kept.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

from mgmtbench.errors import ClientError, UsageError

if TYPE_CHECKING:
    import httpx

    from mgmtbench.clients.aioquic_h3.connection import Connection

#: Bytes of one answer the head-end takes at most: it answers its SSH client with the whole text
#: (an exec's exit status comes after the proxy's status), so it holds the answer.
MAX_ANSWER = 32 * 1024 * 1024

__all__ = ["Http3Upstream", "HttpsUpstream", "Upstream", "upstream_for"]


class Upstream(Protocol):
    """The head-end's way to the proxy."""

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, str]:
        """The proxy's answer to one request: (status, text); status 0 and the reason when
        the proxy cannot be reached."""

    async def aclose(self) -> None:
        """Close the connections to the proxy."""


def upstream_for(url: str, ca_file: Path, username: str, password: str, timeout: float,
                 http3: bool) -> Upstream:
    """The head-end's upstream to the proxy at ``url`` (``https://HOST:PORT``): HTTP/3 to the
    same port number on UDP if ``http3``; a :class:`UsageError` if the CA cannot be read or the
    library is missing."""
    if http3:
        return Http3Upstream(url, ca_file, username, password, timeout)
    return HttpsUpstream(url, ca_file, username, password, timeout)


class HttpsUpstream:
    """httpx over HTTPS (see the module)."""

    def __init__(self, url: str, ca_file: Path, username: str, password: str,
                 timeout: float) -> None:
        try:
            context = ssl.create_default_context(cafile=str(ca_file))
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"the head-end cannot read the proxy's CA {ca_file}: {exc}") from exc
        try:  # httpx is an extra (mgmtbench[httpx]); `mgmtbench serve` in the image runs without
            import httpx
        except ImportError as exc:
            raise UsageError("the head-end talks to the proxy with httpx: "
                             "pip install 'mgmtbench[httpx]'") from exc
        self._client: httpx.AsyncClient = httpx.AsyncClient(
            base_url=url, verify=context, timeout=timeout, trust_env=False,
            limits=httpx.Limits(keepalive_expiry=90.0), auth=(username, password))

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, str]:
        """One request on a kept connection (see :class:`Upstream`)."""
        import httpx

        try:
            async with self._client.stream(method, path,
                                           content=body if method == "POST" else None) as answer:
                chunks, size = [], 0
                async for chunk in answer.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_ANSWER:
                        return 0, f"the proxy's answer is over {MAX_ANSWER} bytes: not taken"
                    chunks.append(chunk)
                status, encoding = answer.status_code, answer.encoding or "utf-8"
        except httpx.HTTPError as exc:
            return 0, f"cannot reach the proxy: {exc}"
        return status, b"".join(chunks).decode(encoding, "replace")

    async def aclose(self) -> None:
        """Close the client's connections."""
        await self._client.aclose()


class Http3Upstream:
    """aioquic over HTTP/3, one connection kept (see the module)."""

    name = "headend-h3"

    def __init__(self, url: str, ca_file: Path, username: str, password: str,
                 timeout: float) -> None:
        from mgmtbench.clients.aioquic_h3.connection import basic_auth

        parts = urlsplit(url)
        if parts.scheme != "https" or not parts.hostname:
            raise UsageError(f"--proxy {url!r}: use https://HOST:PORT (HTTP/3 goes to the same "
                             "port number on UDP)")
        try:
            port = parts.port or 443
        except ValueError as exc:
            raise UsageError(f"--proxy {url!r}: {exc}") from exc
        if not ca_file.is_file():
            raise UsageError(f"the head-end cannot read the proxy's CA {ca_file}")
        self.host, self.port, self.ca_file, self.timeout = parts.hostname, port, ca_file, timeout
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = f"{host}:{port}"
        self.headers = [basic_auth(username, password)]
        #: QUIC connections dialled so far (the first, and one per reconnection).
        self.dialled = 0
        self._connection: Connection | None = None
        self._dialling: asyncio.Lock | None = None

    async def _connected(self) -> Connection:
        """The kept connection, dialled (again) if there is none or it is gone."""
        from mgmtbench.clients.aioquic_h3.connection import client_configuration, dial

        if self._dialling is None:
            self._dialling = asyncio.Lock()
        async with self._dialling:  # concurrent first requests share one new connection
            kept = self._connection
            if kept is not None and not kept.failed:
                return kept
            self._connection = None
            if kept is not None:
                await kept.aclose()
            try:
                configuration = client_configuration(self.host, self.ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise ClientError(f"cannot read the proxy's CA {self.ca_file}: {exc}") from exc
            connection = await dial(self.host, self.port, configuration, self.name,
                                    self.authority, self.headers, None)
            self.dialled += 1
            try:
                await connection.handshaken(self.timeout)
            except BaseException:
                await connection.aclose()
                raise
            self._connection = connection
            return connection

    async def request(self, method: str, path: str, body: bytes = b"") -> tuple[int, str]:
        """One request on the kept connection (see :class:`Upstream`)."""
        from mgmtbench.clients.aioquic_h3.connection import AnswerTooLarge

        try:
            connection = await self._connected()
            response = await connection.request(method, path, body, timeout=self.timeout,
                                                max_body=MAX_ANSWER)
        except AnswerTooLarge:
            return 0, f"the proxy's answer is over {MAX_ANSWER} bytes: not taken"
        except ClientError as exc:
            return 0, f"cannot reach the proxy over HTTP/3: {exc}"
        return response.status, response.body.decode("utf-8", "replace")

    async def aclose(self) -> None:
        """Close the kept connection."""
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.aclose()
