"""httpx: the device's HTTPS API (``GET /admin/exec/...``, ``POST /admin/config``), sync and asyncio.

Two adapters:

- ``httpx`` (:class:`httpx.Client`): ``fresh-conn``, ``keep-alive``, ``batch-post``, ``multi-cmd``,
  ``tls-resume``, ``conn-per-iteration``, ``batch-post-fresh``, ``multi-cmd-fresh``, and on the
  platforms that serve them ``eapi-batch`` and ``nxapi-batch``, all over HTTP/1.1.
- ``httpx-async`` (:class:`httpx.AsyncClient`): ``fresh-conn``, ``keep-alive``,
  ``conn-per-iteration`` (HTTP/1.1) and ``h2-multiplex`` (HTTP/2).

What one iteration (``run``) does in each mode (the first four as in the published study):

- ``fresh-conn``: for EVERY command a new client, so a new TCP connection and a full TLS
  handshake, one ``GET``, and the client is closed: five handshakes for five commands.
- ``keep-alive``: the client and its connection are made in ``setup`` (an untimed ``GET
  /admin/exec/show+clock`` opens the connection and checks the credentials); one ``GET`` per
  command on the kept connection.
- ``batch-post``: on the kept connection (made in ``setup`` as for ``keep-alive``), ONE request:
  ``POST /admin/config`` with the commands as a newline-separated body (the device answers
  ``show`` lines in configuration mode).
- ``multi-cmd``: on the kept connection, ONE request: ``GET /admin/exec/<cmd1>/<cmd2>/...``.
- ``tls-resume`` (ours): like ``fresh-conn``, a new client and TCP connection for every command,
  but each TLS handshake resumes the session (ticket) saved from the previous connection.
  ``setup`` makes one untimed connection to get the first ticket, so every timed connection
  resumes.
- ``conn-per-iteration`` (ours): one new client (TCP + full TLS) per iteration, one ``GET`` per
  command on it, one after the other; the client is closed.
- ``batch-post-fresh`` / ``multi-cmd-fresh`` (ours): a new client per iteration and ONE request,
  as ``batch-post`` / ``multi-cmd``: what the single request saves against
  ``conn-per-iteration``.
- ``eapi-batch`` (ours; Arista EOS): on a kept connection, ONE eAPI request: ``POST
  /command-api``, JSON-RPC 2.0 ``runCmds`` with ``{"version": 1, "cmds": [...], "format":
  "text"}``; the outputs are the results' ``output`` texts, concatenated.
- ``nxapi-batch`` (ours; Cisco NX-OS): on a kept connection, ONE NX-API request: ``POST /ins``
  (``application/json-rpc``) of a list of JSON-RPC ``cli_ascii`` calls, one per command; the
  outputs are the replies' ``msg`` texts, concatenated.

  Both open their kept connection with that API (an untimed ``show clock`` through it), and a
  JSON-RPC error answer (a command the device refused) is a :class:`ClientError` with its
  message. A target whose platform does not serve the API is refused when the client is made
  (:meth:`~mgmtbench.clients.base._Common.check_mode`).
- ``h2-multiplex`` (async, ours): an HTTP/2 client whose one connection is made in ``setup``
  (untimed ``GET``); per iteration every command's ``GET`` is sent concurrently
  (``asyncio.gather``) as streams of that one connection.

Connection policy: the modes in :data:`~mgmtbench.clients.base.REUSING_MODES` (``keep-alive``,
``batch-post``, ``multi-cmd``, ``h2-multiplex``) connect in ``setup``; the others pay for their
connections inside the iteration: the kept connection is held however long the
benchmark pauses between rounds, and a round whose request goes out on any other connection fails
(:mod:`.kept`).

TLS: the device's certificate is verified against ``target.ca_file``
(``ssl.create_default_context(cafile=...)``). The ``SSLContext`` is made once per adapter, outside
the timed part; it is configuration, and it carries no session between connections unless
``tls-resume`` asks for it: the OpenSSL client never resumes on its own.

``tls-resume`` and httpx: neither httpx nor httpcore has a session-reuse option. httpcore opens TLS
with ``ssl_context.wrap_socket(sock, server_hostname=...)``, so the adapter passes a context
(:class:`ResumingContext`, configured exactly like ``create_default_context(cafile=...)``) whose
``wrap_socket`` offers the saved session. Everything else is stock httpx: the same client, pool
and request path as ``fresh-conn``. After each iteration the adapter reads the connection's
``ssl_object`` (httpx's ``network_stream`` response extension): if ``session_reused`` is False
the iteration fails with :class:`ClientError` (a ``tls-resume`` that did not resume would time the
wrong thing); otherwise its newest session is saved for the next connection.

``h2-multiplex`` is checked the same way: every response must be ``HTTP/2`` and come over the same
network stream, else :class:`ClientError`.

Application round trips (both adapters, every mode): with a counter installed, the client is
built on a stock ``HTTPTransport`` / ``AsyncHTTPTransport`` whose connections count below TLS
(:mod:`.counting`); TLS then runs through an ``SSLObject`` (sync) or anyio's TLS stream (async), so
``tls-resume`` offers its saved session through ``wrap_bio`` as through ``wrap_socket``.

The HTTPS API logs in with the password (HTTP basic auth) whatever ``target.auth`` says, and
``target.algorithms`` are SSH choices: neither applies to these clients, so neither is refused.

Commands go in the URL path with spaces as ``+`` and ``/`` as ``%2F`` (``quote_plus(c,
safe="")``). Environment proxies, ``.netrc`` and ``SSL_CERT_FILE`` are ignored
(``trust_env=False``). Any status but 200 is a :class:`ClientError`; 401 (a wrong password) is
:class:`AuthenticationFailed`.

Knobs (:mod:`.knobs`): ``httpx+http2`` and ``httpx-async+http2`` offer HTTP/2 beside HTTP/1.1 in
every mode (``http2=True``; the sync client then needs ``h2`` too). Measured not to matter.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from collections.abc import Callable
from typing import Any, ClassVar
from urllib.parse import quote_plus

from mgmtbench.clients.base import AsyncClient, TranslatedClient, Transport
from mgmtbench.clients.httpx.knobs import HTTP2, KNOBS
from mgmtbench.clients.translate import Translator, optional_errors, translate_errors
from mgmtbench.errors import AuthenticationFailed, ClientError, ClientTimeout, ConnectionFailed
from mgmtbench.targets import Target

try:
    import httpx

    from mgmtbench.clients.httpx import counting
except ImportError:  # reported by Client.missing()
    httpx = None  # type: ignore[assignment]
    counting = None  # type: ignore[assignment]
from mgmtbench.clients.httpx import kept

EXEC = "/admin/exec/"
CONFIG = "/admin/config"
#: The untimed request that opens a kept connection in ``setup`` (and checks the credentials).
WARMUP = "show clock"
TIMEOUT = 30.0
#: What scripts using the ASA's CLI-over-HTTPS interface send (ASDM's agent: the interface
#: answers ASDM; ``mgmtbench serve --user-agent-rule device`` refuses other agents, as an ASA).
HEADERS = {"User-Agent": "ASDM/ Java/1.8.0_131"}

ERRORS = optional_errors(
    {OSError: ConnectionFailed, ssl.SSLError: ConnectionFailed},
    httpx, lambda: {
        httpx.HTTPError: ClientError,
        httpx.InvalidURL: ClientError,
        httpx.StreamError: ClientError,
        httpx.NetworkError: ConnectionFailed,
        httpx.RemoteProtocolError: ConnectionFailed,
        httpx.TimeoutException: ClientTimeout,
    })


class ResumingContext(ssl.SSLContext):
    """A client context that offers ``resume_with`` (a saved TLS session) on every new connection.

    Made like ``ssl.create_default_context(cafile=...)``; see :func:`resuming_context`.
    """

    resume_with: ssl.SSLSession | None = None

    def wrap_socket(self, sock: socket.socket, server_side: bool = False,
                    do_handshake_on_connect: bool = True, suppress_ragged_eofs: bool = True,
                    server_hostname: str | bytes | None = None,
                    session: ssl.SSLSession | None = None) -> ssl.SSLSocket:
        """``SSLContext.wrap_socket``, offering ``resume_with`` unless given a session."""
        return super().wrap_socket(
            sock, server_side=server_side, do_handshake_on_connect=do_handshake_on_connect,
            suppress_ragged_eofs=suppress_ragged_eofs, server_hostname=server_hostname,
            session=session if session is not None else self.resume_with)

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None,
                 session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        """``SSLContext.wrap_bio``, offering ``resume_with`` unless given a session."""
        return super().wrap_bio(
            incoming, outgoing, server_side=server_side, server_hostname=server_hostname,
            session=session if session is not None else self.resume_with)


def _verify_context(target: Target) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=_ca_file(target))


def resuming_context(target: Target) -> ResumingContext:
    """A :class:`ResumingContext` that verifies the target's certificate with its CA file."""
    # What ssl.create_default_context(Purpose.SERVER_AUTH, cafile=...) does, in the subclass:
    # PROTOCOL_TLS_CLIENT (certificate and hostname checks on), then the CA.
    context = ResumingContext(ssl.PROTOCOL_TLS_CLIENT)
    context.load_verify_locations(cafile=_ca_file(target))
    return context


def _ca_file(target: Target) -> str:
    if target.ca_file is None:
        raise ClientError("httpx: the target has no CA file to verify the device's certificate")
    return str(target.ca_file)


def base_url(target: Target) -> str:
    """``https://host:port`` of the target's HTTPS API."""
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"https://{host}:{target.https_port}"


def exec_path(commands: list[str]) -> str:
    """``/admin/exec/<cmd>[/<cmd>...]``: spaces as ``+``, ``/`` (and the like) percent-encoded."""
    return EXEC + "/".join(quote_plus(c, safe="") for c in commands)


def body_of(response: httpx.Response) -> str:
    """The response's body; a :class:`ClientError` for any status but 200 (401:
    :class:`AuthenticationFailed`)."""
    if response.status_code != 200:
        error = AuthenticationFailed if response.status_code == 401 else ClientError
        raise error(f"httpx: {response.request.method} {response.request.url.path} -> "
                          f"{response.status_code} {response.text.strip()[:200]}")
    return response.text


def tls_object(response: httpx.Response) -> Any:
    """The ``ssl`` object of the connection ``response`` came on (its session, whether it was
    resumed)."""
    stream = response.extensions.get("network_stream")
    found = stream.get_extra_info("ssl_object") if stream is not None else None
    if found is None:
        raise ClientError("httpx: no TLS object on the response's connection")
    return found


class _Https:
    """What both adapters share: SSH options do not apply; one error translation."""

    name: ClassVar[str]

    @classmethod
    def check(cls, target: Target) -> None:
        """Nothing to refuse: the HTTPS API ignores the SSH login method and algorithms."""

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)


#: The modes whose iteration makes a new client (TCP + TLS) for its requests.
_FRESH_PER_ITERATION = frozenset({"conn-per-iteration", "batch-post-fresh", "multi-cmd-fresh"})
#: The platform APIs' batch modes: (the path, the request's content type, its body for the
#: commands, the outputs of its decoded answer).
_ApiBatch = tuple[str, str, Callable[[list[str]], object], Callable[[Any], str]]


def _eapi_body(commands: list[str]) -> object:
    return {"jsonrpc": "2.0", "method": "runCmds", "id": 1,
            "params": {"version": 1, "cmds": commands, "format": "text"}}


def _eapi_outputs(answer: Any) -> str:
    return "".join(str(item["output"]) for item in _rpc_result(answer, "eAPI"))


def _nxapi_body(commands: list[str]) -> object:
    return [{"jsonrpc": "2.0", "method": "cli_ascii", "params": {"cmd": command, "version": 1},
             "id": index} for index, command in enumerate(commands, 1)]


def _nxapi_outputs(answer: Any) -> str:
    replies = answer if isinstance(answer, list) else [answer]
    return "".join(str(_rpc_result(reply, "NX-API")["msg"]) for reply in replies)


def _rpc_result(reply: Any, api: str) -> Any:
    """A JSON-RPC reply's result; its error as a :class:`ClientError` with the error's message
    (and NX-API's ``data.msg``, the CLI's own words) on one line."""
    if not isinstance(reply, dict) or ("result" not in reply and "error" not in reply):
        raise ClientError(f"httpx: {api}: not a JSON-RPC reply: {str(reply)[:200]}")
    if "error" not in reply:
        return reply["result"]
    error = reply["error"] if isinstance(reply["error"], dict) else {"message": reply["error"]}
    data = error.get("data")
    words = [str(error.get("message", "")), *([str(data["msg"])] if isinstance(data, dict)
                                              and data.get("msg") else [])]
    raise ClientError(f"httpx: {api} error {error.get('code')}: "
                      + ": ".join(" ".join(w.split()) for w in words if w.strip()))


API_BATCHES: dict[str, _ApiBatch] = {
    "eapi-batch": ("/command-api", "application/json", _eapi_body, _eapi_outputs),
    "nxapi-batch": ("/ins", "application/json-rpc", _nxapi_body, _nxapi_outputs),
}


def api_post(client: httpx.Client, mode: str, commands: list[str]) -> httpx.Response:
    """``eapi-batch`` / ``nxapi-batch``: every command in one JSON-RPC request to the platform's
    API."""
    path, content_type, body, _ = API_BATCHES[mode]
    return client.post(path, content=json.dumps(body(commands)).encode(),
                       headers={"Content-Type": content_type})


def api_outputs(mode: str, response: httpx.Response) -> str:
    """The texts of an :func:`api_post` answer, concatenated; :class:`ClientError` for an error
    answer."""
    outputs = API_BATCHES[mode][3]
    try:
        answer = json.loads(body_of(response))
    except json.JSONDecodeError as exc:
        raise ClientError(f"httpx: {mode}: the answer is not JSON ({exc})") from None
    try:
        return outputs(answer)
    except (KeyError, TypeError) as exc:
        raise ClientError(f"httpx: {mode}: unexpected answer ({exc!r}): "
                          f"{response.text[:200]}") from None


#: The modes whose requests go out on a connection kept from ``setup``.
_KEPT = frozenset({"keep-alive", "batch-post", "multi-cmd", *API_BATCHES})


def _one_request(client: httpx.Client, mode: str, commands: list[str]) -> str:
    """``batch-post`` / ``multi-cmd`` (and their ``-fresh`` twins): every command in one request."""
    if mode.startswith("batch-post"):
        return body_of(client.post(CONFIG, content="\n".join(commands).encode()))
    return body_of(client.get(exec_path(commands)))


class HttpxClient(_Https, TranslatedClient):
    """httpx.Client over the HTTPS API."""
    name = "httpx"
    transport = Transport.HTTPS
    modes = ("fresh-conn", "keep-alive", "batch-post", "multi-cmd", "tls-resume",
             "conn-per-iteration", "batch-post-fresh", "multi-cmd-fresh", *API_BATCHES)
    extra = "httpx"
    needs = ("httpx",)
    all_knobs = KNOBS

    counts_round_trips = True

    _client: Any = None
    _context: ssl.SSLContext | None = None

    def _new_client(self) -> httpx.Client:
        assert self._context is not None
        limits = kept.limits(self.mode in _KEPT)
        http2 = self.tuned_with(HTTP2.name)
        counted = None  # None: httpx makes its transport from the same four options
        if self.round_trips is not None:
            counted = counting.sync_transport(self.round_trips, verify=self._context, http1=True,
                                              http2=http2, limits=limits)
        return httpx.Client(base_url=base_url(self.target), auth=self._auth(), verify=self._context,
                            http1=True, http2=http2, limits=limits, timeout=TIMEOUT,
                            trust_env=False, transport=counted, headers=HEADERS)

    def _auth(self) -> tuple[str, str]:
        return (self.target.username, self.target.password)

    def setup(self) -> None:
        """Untimed preparation: connect here for the modes that reuse a connection."""
        with self._translating():
            self._setup()

    def _setup(self) -> None:
        if self.mode == "tls-resume":
            self._context = resuming_context(self.target)
            with self._new_client() as client:  # the first ticket, untimed
                self._save_session(client.get(exec_path([WARMUP])), first=True)
            return
        self._context = _verify_context(self.target)
        if self.mode in _KEPT:
            self._client = self._new_client()
            if self.mode in API_BATCHES:  # the kept connection opened through the API itself
                response = api_post(self._client, self.mode, [WARMUP])
                api_outputs(self.mode, response)
            else:
                response = self._client.get(exec_path([WARMUP]))
                body_of(response)
            kept.hold(self._client, self.name, self.mode, response)

    def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "keep-alive":
            return "".join(body_of(self._client.get(exec_path([c]))) for c in commands)
        if mode in API_BATCHES:
            return api_outputs(mode, api_post(self._client, mode, commands))
        if mode in _KEPT:  # batch-post, multi-cmd
            return _one_request(self._client, mode, commands)
        if mode in _FRESH_PER_ITERATION:
            with self._new_client() as client:
                if mode == "conn-per-iteration":
                    return "".join(body_of(client.get(exec_path([c]))) for c in commands)
                return _one_request(client, mode, commands)
        return "".join(self._on_new_connection(c) for c in commands)  # fresh-conn, tls-resume

    def _on_new_connection(self, command: str) -> str:
        """One ``GET`` on a new client's new connection (closed again); with ``tls-resume`` the
        handshake must have resumed, and the connection's session is kept for the next one."""
        with self._new_client() as client:
            response = client.get(exec_path([command]))
            if self.mode == "tls-resume":
                self._save_session(response)
            return body_of(response)

    def _save_session(self, response: httpx.Response, first: bool = False) -> None:
        """Check that this connection resumed (unless it is the first), keep its newest session."""
        body_of(response)
        ssl_object = tls_object(response)
        if not first and not ssl_object.session_reused:
            raise ClientError("httpx: tls-resume: the TLS session was not resumed")
        assert isinstance(self._context, ResumingContext)
        self._context.resume_with = ssl_object.session

    def teardown(self) -> None:
        """Close what ``setup`` or ``run`` left open."""
        if self._client is not None:
            with self._translating():
                self._client.close()
        self._client = None


class HttpxAsyncClient(_Https, AsyncClient):
    """httpx.AsyncClient over the HTTPS API."""
    name = "httpx-async"
    transport = Transport.HTTPS
    modes = ("fresh-conn", "keep-alive", "h2-multiplex", "conn-per-iteration")
    extra = "httpx"
    needs = ("httpx", "h2")
    counts_round_trips = True
    all_knobs = KNOBS

    _client: Any = None
    _context: ssl.SSLContext | None = None

    def _new_client(self, http2: bool = False) -> httpx.AsyncClient:
        """A client; ``http2``: HTTP/2 only, one connection at most (``h2-multiplex`` must
        multiplex, not spread over a pool). The ``http2`` knob offers HTTP/2 beside HTTP/1.1."""
        assert self._context is not None
        limits = kept.limits(self.mode in ("keep-alive", "h2-multiplex"), one_connection=http2)
        offer_h2 = http2 or self.tuned_with(HTTP2.name)
        counted = None  # None: httpx makes its transport from the same four options
        if self.round_trips is not None:
            counted = counting.async_transport(self.round_trips, verify=self._context,
                                               http1=not http2, http2=offer_h2, limits=limits)
        return httpx.AsyncClient(base_url=base_url(self.target),
                                 auth=(self.target.username, self.target.password),
                                 verify=self._context, http1=not http2, http2=offer_h2,
                                 limits=limits, timeout=TIMEOUT, trust_env=False,
                                 transport=counted, headers=HEADERS)

    async def setup(self) -> None:
        """Untimed preparation: connect here for the modes that reuse a connection."""
        async with self._translating():
            await self._setup()

    async def _setup(self) -> None:
        self._context = _verify_context(self.target)
        if self.mode in ("keep-alive", "h2-multiplex"):
            self._client = self._new_client(http2=self.mode == "h2-multiplex")
            response = await self._client.get(exec_path([WARMUP]))
            body_of(response)
            if self.mode == "h2-multiplex" and response.http_version != "HTTP/2":
                raise ClientError(f"httpx: h2-multiplex: the device answered over "
                                  f"{response.http_version}, not HTTP/2")
            kept.hold(self._client, self.name, self.mode, response)

    async def run(self, commands: list[str]) -> str:
        """One iteration: the commands' outputs, concatenated in order."""
        async with self._translating():
            return await self._run(commands)

    async def _run(self, commands: list[str]) -> str:
        if self.mode == "keep-alive":
            return "".join([body_of(await self._client.get(exec_path([c]))) for c in commands])
        if self.mode == "h2-multiplex":
            return await self._multiplex(commands)
        if self.mode == "conn-per-iteration":
            async with self._new_client() as client:
                return "".join([body_of(await client.get(exec_path([c]))) for c in commands])
        outputs = []
        for command in commands:  # fresh-conn: a new connection for every request
            async with self._new_client() as client:
                outputs.append(body_of(await client.get(exec_path([command]))))
        return "".join(outputs)

    async def _multiplex(self, commands: list[str]) -> str:
        client = self._client
        answers = await asyncio.gather(*(client.get(exec_path([c])) for c in commands),
                                       return_exceptions=True)
        responses = []
        for answer in answers:
            if isinstance(answer, BaseException):
                raise answer
            responses.append(answer)
        if any(r.http_version != "HTTP/2" for r in responses):  # one connection: kept.hold
            raise ClientError("httpx: h2-multiplex: a request was not answered over HTTP/2")
        return "".join(body_of(r) for r in responses)

    async def teardown(self) -> None:
        """Close what ``setup`` or ``run`` left open."""
        if self._client is not None:
            client, self._client = self._client, None
            async with self._translating():
                await client.aclose()
