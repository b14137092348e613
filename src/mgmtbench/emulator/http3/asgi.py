"""One HTTP/3 request, bridged to an ASGI application (HTTP only; no WebTransport, no push).

:class:`Request` makes the ASGI scope of a request's headers (``http_version`` ``"3"``, scheme
``https``, the client's address and the socket's, ``early-data: 1`` when it came in 0-RTT), runs
the application in a task, and hands what the application sends to the connection
(:class:`Carrier`) as it comes: the headers with the first piece of the body, each piece once the
stream has sent all but :data:`HIGH_WATER` bytes of what it was given, so long output is made at
the pace the client reads it and never held whole. An application that fails answers ``500``
(or the stream is reset, when the answer had begun), with one log line.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import unquote

from mgmtbench.emulator.http3.early import EARLY_DATA

log = logging.getLogger("mgmtbench.emulator")

Scope = dict[str, Any]
Message = dict[str, Any]
#: An ASGI application (the device API; the edge proxy's API is served the same way).
AsgiApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]

#: Bytes of a response a stream may hold unsent before the application's next send waits.
HIGH_WATER = 256 * 1024
#: Headers that belong to one HTTP/1.1 connection, not allowed in HTTP/3 (RFC 9114 4.2).
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection", b"transfer-encoding",
                        b"upgrade"})


class Carrier(Protocol):
    """What a request needs of its connection."""

    def send_headers(self, stream_id: int, headers: list[tuple[bytes, bytes]],
                     end_stream: bool) -> None:
        """Queue a HEADERS frame on the stream."""

    def send_data(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        """Queue a DATA frame on the stream."""

    def reset(self, stream_id: int) -> None:
        """Abandon the stream (RESET_STREAM, H3_INTERNAL_ERROR)."""

    def stop_reading(self, stream_id: int) -> None:
        """Ask the client to stop sending the request's body (STOP_SENDING, H3_NO_ERROR)."""

    async def drained(self, stream_id: int, mark: int) -> None:
        """Return once the stream holds at most ``mark`` bytes unsent (or is gone)."""

    def answered(self, request: Request, status: int) -> None:
        """Count an answer of ``status`` to ``request``."""


class Request:
    """One request stream: its scope, its body as it arrives, the application's task."""

    def __init__(self, carrier: Carrier, stream_id: int, scope: Scope, early: bool) -> None:
        self.carrier, self.stream_id, self.scope, self.early = carrier, stream_id, scope, early
        self.head_only = scope["method"] == "HEAD"
        self._body: deque[bytes] = deque()
        self._body_done = False
        self._body_sent = False
        self._gone = False  # the client reset the stream, or the connection closed
        self._wake = asyncio.Event()
        self._start: Message | None = None
        self.started = False  # the response's headers are queued
        self.finished = False  # the response's last piece is queued
        self.task: asyncio.Task[None] | None = None

    def run(self, app: AsgiApp, name: str) -> asyncio.Task[None]:
        """Start the application on this request."""
        self.task = asyncio.get_running_loop().create_task(self._run(app, name))
        return self.task

    def body(self, data: bytes, ended: bool) -> None:
        """A piece of the request's body (``ended``: the last)."""
        if self.finished:
            return  # answered already: the rest of the body is dropped
        if data:
            self._body.append(data)
        self._body_done = self._body_done or ended
        self._wake.set()

    def gone(self) -> None:
        """The client reset the stream or the connection closed: nobody reads the answer."""
        self._gone = True
        self._wake.set()

    async def receive(self) -> Message:
        """ASGI ``receive``: the body's pieces, then ``http.disconnect`` once the client is gone
        or the answer is sent."""
        while True:
            if self._body:
                data = self._body.popleft()
                return {"type": "http.request", "body": data,
                        "more_body": bool(self._body) or not self._body_done}
            if self._body_done and not self._body_sent:
                self._body_sent = True
                return {"type": "http.request", "body": b"", "more_body": False}
            if self._gone or self.finished:
                return {"type": "http.disconnect"}
            self._wake.clear()
            await self._wake.wait()

    async def send(self, message: Message) -> None:
        """ASGI ``send``: headers are held until the first piece of the body, so a short
        answer leaves in one packet; each piece waits for the stream to drain."""
        if self._gone or self.finished:
            return  # the client left: taken and dropped, as the HTTPS server does
        kind = message["type"]
        if kind == "http.response.start":
            if self._start is not None:
                raise RuntimeError("http.response.start sent twice")
            self._start = message
            return
        if kind != "http.response.body":
            return
        if self._start is None:
            raise RuntimeError("http.response.body before http.response.start")
        data = b"" if self.head_only else bytes(message.get("body", b""))
        more = bool(message.get("more_body", False))
        if not self.started:
            self._send_start(self._start, end_stream=not data and not more)
            if not data and not more:
                self._finish()
                return
        self.carrier.send_data(self.stream_id, data, end_stream=not more)
        if not more:
            self._finish()
            return
        await self.carrier.drained(self.stream_id, HIGH_WATER)

    def _send_start(self, start: Message, end_stream: bool) -> None:
        status = int(start["status"])
        headers = [(b":status", str(status).encode())]
        # A HEAD answer goes without its content-length: aioquic's client (1.7.2) checks it
        # against the DATA received, HEAD or not, and closes the connection on the mismatch.
        dropped = HOP_BY_HOP | {b"content-length"} if self.head_only else HOP_BY_HOP
        headers += [(bytes(name).lower(), bytes(value)) for name, value in start.get("headers", [])
                    if bytes(name).lower() not in dropped]
        self.started = True
        self.carrier.answered(self, status)
        self.carrier.send_headers(self.stream_id, headers, end_stream=end_stream)

    def _finish(self) -> None:
        self.finished = True
        self._wake.set()
        if not self._body_done:  # answered before the body's end (413, 425): the rest unread
            self._body.clear()
            self.carrier.stop_reading(self.stream_id)

    async def _run(self, app: AsgiApp, name: str) -> None:
        client = "{}:{}".format(*(self.scope.get("client") or ("?", 0)))
        try:
            await app(self.scope, self.receive, self.send)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # one line per failed request, not a traceback storm
            log.warning("%s http3 %s: %s %s failed: %s: %s", name, client, self.scope["method"],
                        self.scope["path"], type(exc).__name__, exc)
            log.debug("the failure", exc_info=True)
            if self._gone or self.finished:
                return
            if self.started:
                self.carrier.reset(self.stream_id)
                self._finish()
                return
            self._start = None
            await self.send({"type": "http.response.start", "status": 500,
                             "headers": [(b"content-type", b"text/plain")]})
            await self.send({"type": "http.response.body", "body": b"internal error\n"})
            return
        if self._gone or self.finished:
            return
        if self._start is None:  # the application answered nothing
            await self.send({"type": "http.response.start", "status": 500, "headers": []})
        await self.send({"type": "http.response.body", "body": b""})


def make_scope(headers: list[tuple[bytes, bytes]], client: Any, server: Any,
               early: bool) -> Scope | None:
    """The ASGI scope of a request's HTTP/3 headers; None for a request that is not HTTP
    (no ``:method`` or ``:path``; aioquic has refused malformed ones already)."""
    pseudo: dict[bytes, bytes] = {}
    fields: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        if name.startswith(b":"):
            pseudo[name] = value
        else:
            fields.append((name, value))
    method, target = pseudo.get(b":method"), pseudo.get(b":path")
    if method is None or target is None or method == b"CONNECT":
        return None
    authority = pseudo.get(b":authority")
    if authority is not None and not any(name == b"host" for name, _ in fields):
        fields.insert(0, (b"host", authority))
    if early and not any(name == EARLY_DATA for name, _ in fields):
        fields.append((EARLY_DATA, b"1"))
    raw_path, _, query = target.partition(b"?")
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "3",
        "method": method.decode("ascii", "replace"),
        "scheme": "https",
        "path": unquote(raw_path.decode("ascii", "replace")),
        "raw_path": raw_path,
        "query_string": query,
        "root_path": "",
        "headers": fields,
        "client": tuple(client[:2]) if isinstance(client, (tuple, list)) else None,
        "server": tuple(server[:2]) if isinstance(server, (tuple, list)) else None,
        "extensions": {},
    }
