"""HTTPS clients of the edge proxy in the published study's proxy modes (clibench v0.7.0).

Each iteration is ONE request, ``POST /device/<device>/admin/config`` with the iteration's
commands as a newline-separated body, as the study's proxy benchmark sends:

- ``fresh-ssh``: a new HTTPS connection (TCP + full TLS) for the request, and the proxy opens a
  new SSH connection to the device for it (``X-SSH-Connection: fresh``);
- ``pooled-ssh``: a new HTTPS connection for the request; the proxy runs it on a pooled SSH
  connection (warmed in ``setup``, untimed);
- ``keep-alive``: the request on a warm HTTPS connection to the proxy (made in ``setup`` by an
  untimed request, which also warms the pool), pooled SSH.

Two libraries' flavours, each over HTTP/1.1 or HTTP/2 (ALPN): ``httpx`` (:class:`httpx.Client`)
and ``httpx-async`` (:class:`httpx.AsyncClient`); the ``-h2`` names ask for HTTP/2 and fail
(:class:`~mgmtbench.errors.ClientError`) if the proxy answers otherwise. They are the same
:class:`~mgmtbench.clients.base.Client` / ``AsyncClient`` interface as the device adapters, so the
benchmark drives them with the same :class:`~mgmtbench.testing.Driver`; the target is the
proxy's address and port, its CA and the proxy's credentials. Application round trips are
counted on the TCP stream under TLS as for the device adapters (:mod:`mgmtbench.clients.httpx.counting`).

:data:`PROXY_CLIENTS` holds these and the HTTP/3 client of the study's h3 modes
(:mod:`mgmtbench.proxy.h3client`, ``aioquic-h3``); each class's ``modes`` are its own.
"""

from __future__ import annotations

import ssl
from typing import Any, ClassVar
from urllib.parse import quote

import httpx

from mgmtbench.clients.base import AsyncClient, Client, Transport
from mgmtbench.clients.httpx import counting
from mgmtbench.clients.httpx import kept as held
from mgmtbench.clients.httpx.adapter import CONFIG, ERRORS, TIMEOUT, base_url, body_of
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.errors import ClientError
from mgmtbench.proxy.h3client import H3ProxyClient
from mgmtbench.targets import Target

#: The study's proxy modes.
PROXY_MODES = ("fresh-ssh", "pooled-ssh", "keep-alive")
#: The modes whose HTTPS connection is made in ``setup`` and kept.
KEPT = frozenset({"keep-alive"})
WARMUP = "show clock"


class _ProxyClient:
    """What both flavours share: the device path, the SSH header, the TLS context."""

    name: ClassVar[str]
    http2: ClassVar[bool] = False
    #: The modes whose HTTPS connection is made in ``setup`` and kept.
    kept: ClassVar[frozenset[str]] = KEPT
    target: Target
    mode: str
    device = ""

    @classmethod
    def check(cls, target: Target) -> None:
        """Nothing to refuse: the proxy's API logs in with the password."""

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)

    def _path(self) -> str:
        return f"/device/{quote(self.device, safe='')}{CONFIG}"

    def _headers(self) -> dict[str, str]:
        return {"X-SSH-Connection": "fresh" if self.mode == "fresh-ssh" else "pooled"}

    def _limits(self) -> httpx.Limits:
        return held.limits(self.mode in self.kept)

    def _options(self, context: ssl.SSLContext) -> dict[str, Any]:
        return {"base_url": base_url(self.target), "verify": context, "http1": not self.http2,
                "http2": self.http2, "timeout": TIMEOUT, "trust_env": False,
                "auth": (self.target.username, self.target.password), "limits": self._limits()}

    def _warm(self, client: httpx.Client | httpx.AsyncClient, response: httpx.Response) -> bool:
        """Check the warm-up's answer; True (and the connection held, :mod:`~mgmtbench.clients
        .httpx.kept`) if the mode keeps ``client``."""
        self._body(response)
        if self.mode not in self.kept:
            return False
        held.hold(client, self.name, self.mode, response)
        return True

    def _body(self, response: httpx.Response) -> str:
        if self.http2 and response.http_version != "HTTP/2":
            raise ClientError(f"{self.name}: the proxy answered over {response.http_version}, "
                              "not HTTP/2")
        return body_of(response)


class ProxyClient(_ProxyClient, Client):
    """httpx.Client to the proxy (HTTP/1.1)."""

    name = "httpx"
    transport = Transport.HTTPS
    modes = PROXY_MODES
    extra = "httpx"
    needs: ClassVar[tuple[str, ...]] = ("httpx",)
    counts_round_trips = True
    _client: httpx.Client | None = None
    _context: ssl.SSLContext | None = None

    def __init__(self, target: Target, mode: str, device: str) -> None:
        super().__init__(target, mode)
        self.device = device

    def _new_client(self) -> httpx.Client:
        assert self._context is not None
        options = self._options(self._context)
        if self.round_trips is not None:
            options["transport"] = counting.sync_transport(
                self.round_trips, verify=self._context, http1=not self.http2, http2=self.http2,
                limits=self._limits())
        return httpx.Client(**options)

    def _post(self, client: httpx.Client, commands: list[str]) -> str:
        return self._body(client.post(self._path(), content="\n".join(commands).encode(),
                                      headers=self._headers()))

    def setup(self) -> None:
        """The TLS context; a warm connection for ``keep-alive``; a warm SSH pool."""
        with self._translating():
            self._context = ssl.create_default_context(cafile=str(self.target.ca_file))
            client = self._new_client()
            if self._warm(client, client.post(self._path(), content=WARMUP.encode(),
                                              headers=self._headers())):
                self._client = client
            else:
                client.close()

    def run(self, commands: list[str]) -> str:
        """One iteration: one POST of every command."""
        with self._translating():
            if self._client is not None:
                return self._post(self._client, commands)
            with self._new_client() as client:
                return self._post(client, commands)

    def teardown(self) -> None:
        """Close the kept connection."""
        client, self._client = self._client, None
        if client is not None:
            with self._translating():
                client.close()


class ProxyClientH2(ProxyClient):
    """httpx.Client to the proxy over HTTP/2."""

    name = "httpx-h2"
    http2 = True
    needs = ("httpx", "h2")


class AsyncProxyClient(_ProxyClient, AsyncClient):
    """httpx.AsyncClient to the proxy (HTTP/1.1)."""

    name = "httpx-async"
    transport = Transport.HTTPS
    modes: ClassVar[tuple[str, ...]] = PROXY_MODES
    extra = "httpx"
    needs: ClassVar[tuple[str, ...]] = ("httpx",)
    counts_round_trips = True
    _client: httpx.AsyncClient | None = None
    _context: ssl.SSLContext | None = None

    def __init__(self, target: Target, mode: str, device: str) -> None:
        super().__init__(target, mode)
        self.device = device

    def _new_client(self) -> httpx.AsyncClient:
        assert self._context is not None
        options = self._options(self._context)
        if self.round_trips is not None:
            options["transport"] = counting.async_transport(
                self.round_trips, verify=self._context, http1=not self.http2, http2=self.http2,
                limits=self._limits())
        return httpx.AsyncClient(**options)

    async def _post(self, client: httpx.AsyncClient, commands: list[str]) -> str:
        return self._body(await client.post(self._path(), content="\n".join(commands).encode(),
                                            headers=self._headers()))

    async def setup(self) -> None:
        """The TLS context; a warm connection for ``keep-alive``; a warm SSH pool."""
        async with self._translating():
            self._context = ssl.create_default_context(cafile=str(self.target.ca_file))
            client = self._new_client()
            if self._warm(client, await client.post(self._path(), content=WARMUP.encode(),
                                                    headers=self._headers())):
                self._client = client
            else:
                await client.aclose()

    async def run(self, commands: list[str]) -> str:
        """One iteration: one POST of every command."""
        async with self._translating():
            if self._client is not None:
                return await self._post(self._client, commands)
            async with self._new_client() as client:
                return await self._post(client, commands)

    async def teardown(self) -> None:
        """Close the kept connection."""
        client, self._client = self._client, None
        if client is not None:
            async with self._translating():
                await client.aclose()


class AsyncProxyClientH2(AsyncProxyClient):
    """httpx.AsyncClient to the proxy over HTTP/2."""

    name = "httpx-async-h2"
    http2 = True
    needs = ("httpx", "h2")


class AsyncDeviceBatchClient(AsyncProxyClient):
    """httpx.AsyncClient to a device's own HTTPS API in ``batch-post`` (one ``POST
    /admin/config`` of the commands on a warm connection): the direct twin of the proxy's
    ``keep-alive``, so that the edge benchmark at concurrency runs both on the same client code
    (the ``httpx-async`` device adapter has no ``batch-post``)."""

    modes: ClassVar[tuple[str, ...]] = ("batch-post",)
    kept = frozenset({"batch-post"})

    def __init__(self, target: Target, mode: str) -> None:
        super().__init__(target, mode, "")

    def _path(self) -> str:
        return CONFIG

    def _headers(self) -> dict[str, str]:
        return {}


#: A client of the proxy: made with the proxy's target, a mode of its ``modes``, the device.
ProxyClientType = type[ProxyClient] | type[AsyncProxyClient] | type[H3ProxyClient]
#: The proxy's clients by name.
PROXY_CLIENTS: dict[str, ProxyClientType] = {
    c.name: c for c in (ProxyClient, ProxyClientH2, AsyncProxyClient, AsyncProxyClientH2,
                        H3ProxyClient)}
