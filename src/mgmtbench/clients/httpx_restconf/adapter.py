"""httpx over RESTCONF: three adapters, the study's four modes and two of ours.

- ``httpx-restconf`` (:class:`httpx.Client`, HTTP/1.1) and ``httpx-restconf-h2`` (the same over
  HTTP/2, ALPN ``h2``): ``fresh-conn``, ``keep-alive``, ``batch-patch``, ``json-vs-xml``,
  ``conn-per-iteration``.
- ``httpx-restconf-async`` (:class:`httpx.AsyncClient`): those over HTTP/1.1, and
  ``h2-multiplex``.

What one iteration does (requests: :mod:`mgmtbench.clients.restconf.requests`):

- ``fresh-conn`` (the study's): for EVERY command a new client, so a new TCP connection and a
  full TLS handshake, one ``GET``, and the client is closed (the study's client dials per
  request: its transport keeps no connection).
- ``keep-alive`` (the study's): the client and its connection are made in ``setup`` (an
  untimed ``GET`` of the study's ``show clock``); one ``GET`` per command on it.
- ``batch-patch`` (the study's): on the kept connection, ONE ``PATCH`` carrying every command
  (``cli``: the study's body, the commands one a line as ``application/yang-patch+json``;
  ``yang``: an RFC 8072 YANG Patch with one edit per command).
- ``json-vs-xml`` (the study's): ``keep-alive`` asking for ``application/yang-data+xml``.
- ``conn-per-iteration`` (ours): one new client (TCP + full TLS) per iteration, one ``GET`` per
  command on it, one after the other.
- ``h2-multiplex`` (ours, async): an HTTP/2 client whose one connection is made in ``setup``;
  per iteration every command's ``GET`` is in flight at once (``asyncio.gather``), as streams of
  that connection (checked: every response HTTP/2, on one stream).

The kept modes hold their connection however long the benchmark pauses and fail a round whose
request goes out on another (:mod:`mgmtbench.clients.httpx.kept`).

Application round trips are counted as the CLI-API's httpx adapter counts them (its
:mod:`~mgmtbench.clients.httpx.counting` transports, below TLS). TLS and errors are that
adapter's too: the device's certificate checked against ``target.ca_file``, any status but 200
(204 for nothing) a :class:`ClientError`, 401 :class:`AuthenticationFailed`.

Knobs (:mod:`.knobs`, ``httpx-restconf`` and its ``+tuned``): ``tls-resumption`` offers each new
connection the TLS session of the one before it, through the context the CLI API's
``tls-resume`` mode uses (:class:`~mgmtbench.clients.httpx.adapter.ResumingContext`, the
only way: httpx has no session option); a new connection that was offered a session and did
not resume fails the round. ``http2`` offers HTTP/2 beside HTTP/1.1 (``http2=True``).
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Any, ClassVar

from mgmtbench.clients.base import AsyncClient, TranslatedClient, Transport
from mgmtbench.clients.httpx.adapter import (
    ERRORS,
    ResumingContext,
    base_url,
    resuming_context,
    tls_object,
)
from mgmtbench.clients.httpx_restconf.knobs import HTTP2, KNOBS, TLS_RESUMPTION
from mgmtbench.clients.restconf import requests
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import AuthenticationFailed, ClientError
from mgmtbench.targets import Target

try:
    import httpx

    from mgmtbench.clients.httpx import counting
except ImportError:  # reported by Client.missing()
    httpx = None  # type: ignore[assignment]
    counting = None  # type: ignore[assignment]
from mgmtbench.clients.httpx import kept

TIMEOUT = 30.0
#: The modes that connect in ``setup`` and keep the connection.
_KEPT = frozenset({"keep-alive", "batch-patch", "json-vs-xml", "h2-multiplex"})


def _context(target: Target, resuming: bool = False) -> ssl.SSLContext:
    """The device's CA; ``resuming``: a context that offers the session it is given
    (:class:`~mgmtbench.clients.httpx.adapter.ResumingContext`, the ``tls-resumption`` knob)."""
    if target.ca_file is None:
        raise ClientError("httpx-restconf: the target has no CA file to verify the device's "
                          "certificate")
    if resuming:
        return resuming_context(target)
    return ssl.create_default_context(cafile=str(target.ca_file))


def _body(name: str, response: httpx.Response) -> str:
    if response.status_code not in (200, 204):
        error = AuthenticationFailed if response.status_code == 401 else ClientError
        raise error(f"{name}: {response.request.method} {response.request.url.path} "
                    f"-> {response.status_code} {response.text.strip()[:300]}")
    return response.text


class _Restconf:
    """What the three adapters share: the requests of each mode and payload, the outputs."""

    name: ClassVar[str]
    mode: str
    payload: str
    target: Target
    transport = Transport.RESTCONF
    payloads: ClassVar[tuple[str, ...]] = requests.PAYLOADS
    extra = "httpx"
    counts_round_trips = True
    #: HTTP/2 (ALPN ``h2``) for every connection.
    http2: ClassVar[bool] = False

    @classmethod
    def check(cls, target: Target) -> None:
        """Nothing to refuse: RESTCONF logs in with the password whatever the SSH options."""

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)

    @property
    def _xml(self) -> bool:
        return self.mode == "json-vs-xml"

    def _get(self, command: str) -> tuple[str, dict[str, str]]:
        read = requests.read(command, self.payload, self._xml)
        return read.url, {"Accept": read.accept}

    def _patch(self, commands: list[str]) -> tuple[str, bytes, dict[str, str]]:
        path, body = requests.batch(commands, self.payload, self.target.platform)
        return path, body, {"Content-Type": requests.PATCH_JSON, "Accept": requests.JSON}

    def _output(self, response: httpx.Response, patched: bool = False) -> str:
        text = _body(self.name, response)
        if self.http2 and response.http_version != "HTTP/2":
            raise ClientError(f"{self.name}: the device answered over {response.http_version}, "
                              "not HTTP/2")
        try:
            return requests.output(text, self.payload, self._xml, patched)
        except (ValueError, KeyError, TypeError) as exc:
            raise ClientError(f"{self.name}: unexpected reply: {exc}") from exc

    def _options(self, http1: bool, http2: bool) -> dict[str, Any]:
        return {"base_url": base_url(self.target), "auth": (self.target.username,
                                                            self.target.password),
                "http1": http1, "http2": http2, "timeout": TIMEOUT, "trust_env": False}


class HttpxRestconfClient(_Restconf, TranslatedClient):
    """httpx.Client over RESTCONF, HTTP/1.1."""

    name = "httpx-restconf"
    modes = ("fresh-conn", "keep-alive", "batch-patch", "json-vs-xml", "conn-per-iteration")
    needs: ClassVar[tuple[str, ...]] = ("httpx",)
    all_knobs = KNOBS

    _client: Any = None
    _ssl: ssl.SSLContext | None = None

    def _new_client(self) -> httpx.Client:
        """A client over HTTP/1.1, or HTTP/2 only (``httpx-restconf-h2``); the ``http2`` knob
        offers both."""
        assert self._ssl is not None
        limits = kept.limits(self.mode in _KEPT)
        http2 = self.http2 or self.tuned_with(HTTP2.name)
        http1 = not self.http2
        counted = None
        if self.round_trips is not None:
            counted = counting.sync_transport(self.round_trips, verify=self._ssl, http1=http1,
                                              http2=http2, limits=limits)
        return httpx.Client(verify=self._ssl, transport=counted, limits=limits,
                            **self._options(http1, http2))

    def setup(self) -> None:
        """Untimed: the TLS context; for the kept modes the connection (a first GET)."""
        with self._translating(), self._torn_down_on_failure():
            self._ssl = _context(self.target, self.tuned_with(TLS_RESUMPTION.name))
            if self.mode in _KEPT:
                self._client = self._new_client()
                response = self._client.get(requests.WARMUP)
                _body(self.name, response)
                kept.hold(self._client, self.name, self.mode, response)

    def _run(self, commands: list[str]) -> str:
        if self.mode == "batch-patch":
            path, body, headers = self._patch(commands)
            return self._output(self._client.patch(path, content=body, headers=headers),
                                patched=True)
        if self.mode in _KEPT:  # keep-alive, json-vs-xml
            return "".join(self._one(self._client, c) for c in commands)
        if self.mode == "conn-per-iteration":
            with self._new_client() as client:
                return "".join(self._one(client, c, first=i == 0) for i, c in enumerate(commands))
        outputs = []
        for command in commands:  # fresh-conn: a new connection per request
            with self._new_client() as client:
                outputs.append(self._one(client, command, first=True))
        return "".join(outputs)

    def _one(self, client: httpx.Client, command: str, first: bool = False) -> str:
        """One GET; ``first``: the first request of a new connection."""
        url, headers = self._get(command)
        response = client.get(url, headers=headers)
        output = self._output(response)
        if first and isinstance(self._ssl, ResumingContext):
            self._resumed(self._ssl, response)
        return output

    def _resumed(self, context: ResumingContext, response: httpx.Response) -> None:
        """``tls-resumption``: the new connection must have resumed the session offered (if one
        was: a knob that did not resume would time full handshakes under its name); its own
        session is offered to the next connection."""
        ssl_object = tls_object(response)
        if context.resume_with is not None and not ssl_object.session_reused:
            raise ClientError(f"{self.name}: tls-resumption: the TLS session was not resumed")
        context.resume_with = ssl_object.session

    def teardown(self) -> None:
        """Close the kept client."""
        if self._client is not None:
            client, self._client = self._client, None
            with self._translating():
                client.close()


class HttpxRestconfH2Client(HttpxRestconfClient):
    """httpx.Client over RESTCONF, HTTP/2 (one stream at a time)."""

    name = "httpx-restconf-h2"
    needs = ("httpx", "h2")
    http2 = True


class HttpxRestconfAsyncClient(_Restconf, AsyncClient):
    """httpx.AsyncClient over RESTCONF (HTTP/1.1; HTTP/2 for ``h2-multiplex``)."""

    name = "httpx-restconf-async"
    modes = ("fresh-conn", "keep-alive", "batch-patch", "json-vs-xml", "conn-per-iteration",
             "h2-multiplex")
    needs: ClassVar[tuple[str, ...]] = ("httpx", "h2")

    _client: Any = None
    _ssl: ssl.SSLContext | None = None

    @property
    def _h2(self) -> bool:
        return self.mode == "h2-multiplex"

    def _new_client(self) -> httpx.AsyncClient:
        assert self._ssl is not None
        # One connection at most: h2-multiplex must multiplex, not spread over a pool.
        limits = kept.limits(self.mode in _KEPT, one_connection=self._h2)
        counted = None
        if self.round_trips is not None:
            counted = counting.async_transport(self.round_trips, verify=self._ssl,
                                               http1=not self._h2, http2=self._h2,
                                               limits=limits)
        return httpx.AsyncClient(verify=self._ssl, transport=counted, limits=limits,
                                 **self._options(not self._h2, self._h2))

    async def setup(self) -> None:
        """Untimed: the TLS context; for the kept modes the connection (a first GET)."""
        try:
            async with self._translating():
                self._ssl = _context(self.target)
                if self.mode in _KEPT:
                    self._client = self._new_client()
                    response = await self._client.get(requests.WARMUP)
                    _body(self.name, response)
                    if self._h2 and response.http_version != "HTTP/2":
                        raise ClientError(f"{self.name}: h2-multiplex: the device answered "
                                          f"over {response.http_version}, not HTTP/2")
                    kept.hold(self._client, self.name, self.mode, response)
        except BaseException:
            await self.teardown()
            raise

    async def run(self, commands: list[str]) -> str:
        """One iteration: the commands' outputs, concatenated in order."""
        async with self._translating():
            return await self._run(commands)

    async def _run(self, commands: list[str]) -> str:
        if self.mode == "batch-patch":
            path, body, headers = self._patch(commands)
            return self._output(await self._client.patch(path, content=body, headers=headers),
                                patched=True)
        if self._h2:
            return await self._multiplex(commands)
        if self.mode in _KEPT:
            return "".join([await self._one(self._client, c) for c in commands])
        if self.mode == "conn-per-iteration":
            async with self._new_client() as client:
                return "".join([await self._one(client, c) for c in commands])
        outputs = []
        for command in commands:  # fresh-conn
            async with self._new_client() as client:
                outputs.append(await self._one(client, command))
        return "".join(outputs)

    async def _one(self, client: httpx.AsyncClient, command: str) -> str:
        url, headers = self._get(command)
        return self._output(await client.get(url, headers=headers))

    async def _multiplex(self, commands: list[str]) -> str:
        client = self._client
        calls = [self._get(c) for c in commands]
        answers = await asyncio.gather(*(client.get(url, headers=headers)
                                         for url, headers in calls), return_exceptions=True)
        responses = []
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
            responses.append(answer)
        streams = {id(r.extensions.get("network_stream")) for r in responses}
        if len(streams) > 1 or any(r.http_version != "HTTP/2" for r in responses):
            raise ClientError(f"{self.name}: h2-multiplex: the requests did not share one "
                              "HTTP/2 connection")
        return "".join(self._output(r) for r in responses)

    async def teardown(self) -> None:
        """Close the kept client."""
        if self._client is not None:
            client, self._client = self._client, None
            async with self._translating():
                await client.aclose()


HttpxRestconfClientTuned = tuned(HttpxRestconfClient, KNOBS)
