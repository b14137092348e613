"""HTTP/1.1 for an ASGI application on one TLS connection, written for the emulator's answers.

What a device API needs and no more: a request line and headers of bounded size (``400`` for a
malformed one, ``414``/``431`` for one too large), ``Content-Length`` and ``chunked`` request
bodies, ``Expect: 100-continue``, keep-alive with pipelined requests answered in order,
``Connection: close``, ``HEAD``. An answer that the application gives in one piece leaves in one
``transport.write`` (one TLS record for a short one); a streamed answer goes out chunk by chunk,
each ``send`` waiting while the transport's buffer is over its high-water mark, so a client that
stops reading stops the output, and one that leaves makes ``receive`` say ``http.disconnect``.

A connection waits at most ``idle_timeout`` seconds for a request's headers, from its start or
its last answer (the header time-out and the keep-alive time-out in one, as Hypercorn's). The
body's time-out is the application's (:class:`~mgmtbench.emulator.https.server.DeviceApi`
answers ``408``).

A malformed head is answered and the connection closed without a log line: the client's
mistake, kept out of the log as Hypercorn kept it (a flood of garbage writes nothing).

Per request: one task for the application, no timer (one per connection, re-armed lazily).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, cast
from urllib.parse import unquote

log = logging.getLogger("mgmtbench.emulator")

Scope = dict[str, Any]
Message = dict[str, Any]
AsgiApp = Callable[[Scope, Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
                   Awaitable[None]]

#: Bytes of a request's head (request line and headers): over it, 414 (the request line alone
#: is longer) or 431. A 14 KB URL (560 commands) fits, as with Hypercorn's h11 (16 KiB).
MAX_HEAD = 32 * 1024
MAX_FIELDS = 100  # header fields of one request: over it, 431
#: Request body bytes held for the application before reading from the client pauses.
BODY_BUFFER = 64 * 1024
#: Bytes of a request body the application did not read, dropped after its answer so that the
#: connection can go on; beyond it the connection is closed.
MAX_DISCARD = 16 * 1024 * 1024
#: Seconds at most that the rest of an unread body may take to come after the answer (within
#: the idle time-out too), else the connection is closed: nginx's ``lingering_time`` (30 s). A
#: client that declared a body and never sent it held the connection for minutes before.
LINGERING_TIME = 30.0

_TOKEN = rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_REQUEST_LINE = re.compile(rb"(" + _TOKEN + rb") ([\x21-\x7e]+) HTTP/1\.([01])")
_VCHAR = rb"[\x21-\x7e\x80-\xff]"
_FIELD = re.compile(rb"(" + _TOKEN + rb"):[ \t]*((?:" + _VCHAR + rb"(?:[ \t]*" + _VCHAR
                    + rb")*)?)[ \t]*")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;.*)?")


class BadRequest(Exception):
    """A request this layer answers itself (``status``) and then closes the connection."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(status, text)
        self.status, self.text = status, text


_STATUS_LINES: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = ""
        line = _STATUS_LINES[status] = f"HTTP/1.1 {status} {phrase}\r\n".encode("ascii")
    return line


_date = [0, b""]


def _date_header() -> bytes:
    """``date: <IMF-fixdate>\\r\\n``, made once a second."""
    now = int(time.time())
    if now != _date[0]:
        _date[0], _date[1] = now, b"date: " + formatdate(now, usegmt=True).encode() + b"\r\n"
    return _date[1]  # type: ignore[return-value]


def parse_head(head: bytes) -> tuple[str, bytes, bool, list[tuple[bytes, bytes]]]:
    """The method, target, whether HTTP/1.1, and the header fields (names lower-cased) of a
    request's head (without its final empty line); :class:`BadRequest` if it is malformed."""
    lines = head.split(b"\r\n") if b"\r\n" in head else head.split(b"\n")
    match = _REQUEST_LINE.fullmatch(lines[0])
    if match is None:
        raise BadRequest(400, "malformed request line\n")
    if len(lines) - 1 > MAX_FIELDS:
        raise BadRequest(431, f"more than {MAX_FIELDS} header fields\n")
    headers = []
    for line in lines[1:]:
        field = _FIELD.fullmatch(line.rstrip(b"\r"))
        if field is None:
            raise BadRequest(400, "malformed header field\n")
        headers.append((field[1].lower(), field[2]))
    return match[1].decode("ascii"), match[2], match[3] == b"1", headers


class _Exchange:
    """One request and its answer: the ASGI ``receive`` and ``send`` of one application call."""

    __slots__ = (
        "body",
        "body_done",
        "body_size",
        "chunk_buffer",
        "chunk_state",
        "chunked",
        "chunked_out",
        "conn",
        "discarded",
        "discarding",
        "expect_continue",
        "final_sent",
        "gone",
        "head_only",
        "head_sent",
        "headers",
        "keep_alive",
        "remaining",
        "response_done",
        "scope",
        "started",
        "status",
        "waiter",
    )

    def __init__(self, conn: Http1Connection, scope: Scope, keep_alive: bool) -> None:
        self.conn = conn
        self.scope = scope
        self.head_only = scope["method"] == "HEAD"
        self.keep_alive = keep_alive
        self.remaining = 0  # Content-Length body bytes still to come
        self.chunked = False
        self.chunk_state = 0  # 0 size line, 1 data, 2 CRLF after data, 3 trailers
        self.chunk_buffer = b""
        self.body: list[bytes] = []
        self.body_size = 0  # bytes in ``body``
        self.body_done = True
        self.final_sent = False  # the last http.request message was received
        self.discarding = False  # the answer is out: the rest of the body is dropped
        self.discarded = 0
        self.expect_continue = False
        self.waiter: asyncio.Future[None] | None = None
        self.started = False
        self.status = 200
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_sent = False
        self.chunked_out = False
        self.response_done = False
        self.gone = False  # the connection was lost

    # --- the request body -----------------------------------------------------------------

    def feed(self, data: bytes) -> bytes:
        """Take the body's bytes from ``data``; what follows the body (a pipelined request)."""
        if not self.chunked:
            take = min(len(data), self.remaining)
            if take:
                self.remaining -= take
                self._deliver(data[:take] if take < len(data) else data)
            if not self.remaining:
                self._body_complete()
            return data[take:]
        return self._feed_chunked(data)

    def _feed_chunked(self, data: bytes) -> bytes:
        buf = self.chunk_buffer + data if self.chunk_buffer else data
        pos = 0
        while True:
            if self.chunk_state == 1:  # data
                take = min(self.remaining, len(buf) - pos)
                if not take:
                    break
                self._deliver(buf[pos:pos + take])
                pos += take
                self.remaining -= take
                if not self.remaining:
                    self.chunk_state = 2
                continue
            if self.chunk_state == 2:  # CRLF after the data
                if len(buf) - pos < 2:
                    break
                if buf[pos:pos + 2] != b"\r\n":
                    raise BadRequest(400, "malformed chunked body\n")
                pos += 2
                self.chunk_state = 0
                continue
            end = buf.find(b"\r\n", pos)
            if end < 0:
                if len(buf) - pos > 4096:
                    raise BadRequest(400, "malformed chunked body\n")
                break
            line = buf[pos:end]
            pos = end + 2
            if self.chunk_state == 3:  # trailers, up to an empty line
                if not line:
                    self.chunk_buffer = b""
                    self._body_complete()
                    return buf[pos:]
                continue
            size = _CHUNK_SIZE.fullmatch(line)
            if size is None:
                raise BadRequest(400, "malformed chunked body\n")
            self.remaining = int(size[1], 16)
            self.chunk_state = 1 if self.remaining else 3
        self.chunk_buffer = buf[pos:]
        return b""

    def _deliver(self, chunk: bytes) -> None:
        if self.discarding:
            self.discarded += len(chunk)
            if self.discarded > MAX_DISCARD:
                self.conn.abort()
            return
        self.body.append(chunk)
        self.body_size += len(chunk)
        self._wake()
        if self.body_size > BODY_BUFFER:
            self.conn.reading(False)

    def _body_complete(self) -> None:
        self.body_done = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> Message:
        """ASGI ``receive``: the body as it comes, then ``http.disconnect`` once the answer is
        out or the client has left."""
        while True:
            if self.gone:
                return {"type": "http.disconnect"}
            if not self.final_sent and (self.body or self.body_done):
                body = self.body[0] if len(self.body) == 1 else b"".join(self.body)
                self.body.clear()
                if self.body_size > BODY_BUFFER:
                    self.conn.reading(True)
                self.body_size = 0
                self.final_sent = self.body_done
                return {"type": "http.request", "body": body, "more_body": not self.body_done}
            if self.response_done:  # the answer is out: the request is over
                return {"type": "http.disconnect"}
            if self.expect_continue and not self.started:
                self.expect_continue = False
                self.conn.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.waiter = self.conn.loop.create_future()
            try:
                await self.waiter
            finally:
                self.waiter = None

    # --- the answer -----------------------------------------------------------------------

    async def send(self, message: Message) -> None:
        """ASGI ``send``. Dropped once the connection is gone (as Hypercorn does)."""
        kind = message["type"]
        if kind == "http.response.start":
            if self.started:
                raise RuntimeError("http.response.start sent twice")
            self.started = True
            self.status = int(message["status"])
            self.headers = list(message.get("headers") or ())
            return
        if kind != "http.response.body":
            return
        if not self.started:
            raise RuntimeError("http.response.body before http.response.start")
        if self.response_done or self.gone:
            return
        body = bytes(message.get("body") or b"")
        more = bool(message.get("more_body", False))
        conn = self.conn
        length = len(body)
        if self.head_only:
            body = b""
        if not self.head_sent:
            data = self._head(length if not more else None) + self._frame(body, more)
        else:
            data = self._frame(body, more)
        if data:
            conn.write(data)
        if not more:
            self.response_done = True
            self._wake()
            conn.answered(self)
        elif conn.write_paused:
            await conn.drained()

    def _frame(self, body: bytes, more: bool) -> bytes:
        if not self.chunked_out:
            return body
        if not more:
            return (b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)) if body else b"0\r\n\r\n"
        return b"%x\r\n%b\r\n" % (len(body), body) if body else b""

    def _head(self, length: int | None) -> bytes:
        """The status line and headers; ``length``: the whole body's, when sent in one piece."""
        self.head_sent = True
        parts = [_status_line(self.status)]
        framed = False
        for name, value in self.headers:
            lower = name.lower()
            if lower == b"content-length" or lower == b"transfer-encoding":
                framed = True
            elif lower == b"connection" and value.lower() == b"close":
                self.keep_alive = False
            parts.append(b"%b: %b\r\n" % (name, value))
        if not self.body_done and (self.expect_continue or not self.keep_alive):
            # The client may still be sending a body nobody reads: close after the answer.
            self.keep_alive = False
        if not framed and self.status >= 200 and self.status not in (204, 304):
            if length is not None:
                parts.append(b"content-length: %d\r\n" % length)
            elif self.scope["http_version"] == "1.1":
                parts.append(b"transfer-encoding: chunked\r\n")
                self.chunked_out = not self.head_only
            else:  # an HTTP/1.0 client: the end of the body is the end of the connection
                self.keep_alive = False
        if not self.keep_alive:
            parts.append(b"connection: close\r\n")
        elif self.scope["http_version"] == "1.0":  # it asked to keep the connection
            parts.append(b"connection: keep-alive\r\n")
        parts.append(_date_header())
        parts.append(b"\r\n")
        return b"".join(parts)


class Http1Connection(asyncio.Protocol):
    """HTTP/1.1 on one connection for ``app``; ``closed`` is done once the connection is."""

    def __init__(self, app: AsgiApp, idle_timeout: float, scheme: str = "https") -> None:
        self.app = app
        self.idle_timeout = idle_timeout
        self.scheme = scheme
        self.loop = asyncio.get_running_loop()
        self.closed: asyncio.Future[None] = self.loop.create_future()
        self.transport: asyncio.Transport | None = None
        self.write_paused = False
        self._drain: asyncio.Future[None] | None = None
        self._buffer = b""
        self._exchange: _Exchange | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: tuple[str, int] | None = None
        self._server: tuple[str, int] | None = None
        self._idle_since = 0.0
        self._idle_timer: asyncio.TimerHandle | None = None
        self._paused_for: set[str] = set()
        self._close_when_idle = False

    # --- asyncio.Protocol -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """The TLS connection is up (its handshake done): wait for a request."""
        transport = cast(asyncio.Transport, transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        self._client = (str(peer[0]), int(peer[1])) if peer else None
        self._server = (str(local[0]), int(local[1])) if local else None
        self._waiting()

    def data_received(self, data: bytes) -> None:
        """Bytes from the client: the current request's body, or the next requests."""
        exchange = self._exchange
        if exchange is not None and not exchange.body_done:
            try:
                data = exchange.feed(data)
            except BadRequest as bad:
                self._refuse(bad)
                return
            if exchange.body_done and exchange.response_done:
                self._next_exchange()
            if not data:
                return
        self._buffer = self._buffer + data if self._buffer else data
        if self._exchange is None:
            self._start_requests()
        elif len(self._buffer) > MAX_HEAD:
            self.reading(False, "pipelined")  # answer the ones before first

    def eof_received(self) -> bool | None:
        """The client closed its side: close once the current answer is out."""
        exchange = self._exchange
        if exchange is None or exchange.response_done:
            self.close()
        return None  # close the transport (TLS: no half-closed connections)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone: a running request hears ``http.disconnect``."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None
        exchange = self._exchange
        if exchange is not None:
            exchange.gone = True
            exchange._wake()
        self.write_paused = False
        self._release_drain()
        if not self.closed.done():
            self.closed.set_result(None)
        # This connection and its exchange refer to each other (and to their futures'
        # callbacks): a cycle that only the garbage collector's rare full pass frees. Let go
        # of the TLS transport now, so that its SSL object and buffers (~1 MiB for an answer
        # left unread, all C memory that never prompts a collection) go with the connection.
        self.transport = None

    def pause_writing(self) -> None:
        """The transport's buffer is over its high-water mark: streamed sends wait."""
        self.write_paused = True

    def resume_writing(self) -> None:
        """The transport's buffer is below its low-water mark again."""
        self.write_paused = False
        self._release_drain()

    # --- used by _Exchange ----------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Write ``data`` unless the connection is closing."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    async def drained(self) -> None:
        """Wait until the transport's buffer is below its low-water mark (or the connection is
        gone)."""
        if self._drain is None or self._drain.done():
            self._drain = self.loop.create_future()
        await asyncio.shield(self._drain)

    def _release_drain(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def reading(self, on: bool, why: str = "body") -> None:
        """Pause reading from the client (``on`` False) for ``why``, or resume it once no
        reason is left."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if on:
            if why in self._paused_for:
                self._paused_for.discard(why)
                if not self._paused_for:
                    transport.resume_reading()
        elif why not in self._paused_for:
            self._paused_for.add(why)
            transport.pause_reading()

    def answered(self, exchange: _Exchange) -> None:
        """``exchange``'s answer is out: go on with the next request, or close."""
        if not exchange.keep_alive or self._close_when_idle:
            self.close()
            return
        if not exchange.body_done:
            exchange.discarding = True  # drop the rest of the body, then go on
            exchange.body.clear()
            if exchange.body_size > BODY_BUFFER:
                self.reading(True)
            self.loop.call_later(min(self.idle_timeout, LINGERING_TIME), self._linger_over,
                                 exchange)
            return
        self._next_exchange()

    def _linger_over(self, exchange: _Exchange) -> None:
        """The rest of an answered request's body did not come in time: close."""
        if self._exchange is exchange and not exchange.body_done:
            self.abort()

    def abort(self) -> None:
        """Close at once, dropping what is not sent."""
        if self.transport is not None:
            self.transport.abort()

    def close(self) -> None:
        """Close once what is written is sent."""
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def close_when_idle(self) -> None:
        """Close now if no request is being answered, else after its answer (shutdown)."""
        self._close_when_idle = True
        if self._exchange is None:
            self.close()

    # --- requests -------------------------------------------------------------------------

    def _next_exchange(self) -> None:
        self._exchange = None
        self._waiting()
        self.reading(True, "pipelined")
        if self._buffer:
            # Not from inside the application's send: the next request's task starts afresh.
            self.loop.call_soon(self._start_requests)

    def _waiting(self) -> None:
        """Waiting for a request's headers from now on: the idle time-out runs."""
        self._idle_since = self.loop.time()
        if self._idle_timer is None:
            self._idle_timer = self.loop.call_at(self._idle_since + self.idle_timeout,
                                                 self._idle_check)

    def _idle_check(self) -> None:
        self._idle_timer = None
        if self._exchange is not None or self.transport is None or self.transport.is_closing():
            return  # a request is being answered: its end re-arms the timer
        due = self._idle_since + self.idle_timeout
        if self.loop.time() >= due - 0.001:
            self.close()
        else:
            self._idle_timer = self.loop.call_at(due, self._idle_check)

    def _start_requests(self) -> None:
        if self._exchange is not None or self.transport is None or self.transport.is_closing():
            return
        buf = self._buffer
        end = buf.find(b"\r\n\r\n")
        skip = 4
        if end < 0:
            end, skip = buf.find(b"\n\n"), 2
        if end < 0 or end > MAX_HEAD:
            if len(buf) > MAX_HEAD:
                line_end = buf.find(b"\n", 0, MAX_HEAD)
                self._refuse(BadRequest(414, "request line too long\n") if line_end < 0
                             else BadRequest(431, "request header fields too large\n"))
            elif buf[:1] in (b"\r", b"\n"):  # empty lines before a request are allowed
                self._buffer = buf.lstrip(b"\r\n")
                if self._buffer:
                    self._start_requests()
            return
        if buf[:1] in (b"\r", b"\n"):
            self._buffer = buf.lstrip(b"\r\n")
            self._start_requests()
            return
        try:
            exchange = self._exchange_for(buf[:end])
            rest = buf[end + skip:]
            if not exchange.body_done:
                rest = exchange.feed(rest)
        except BadRequest as bad:
            self._refuse(bad)
            return
        self._buffer = rest
        self._exchange = exchange
        task = self.loop.create_task(self._call(exchange))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _exchange_for(self, head: bytes) -> _Exchange:
        method, target, http11, headers = parse_head(head)
        keep_alive = http11
        length: bytes | None = None
        chunked = expect = False
        for name, value in headers:
            if name == b"content-length":
                if length is not None and value != length:
                    raise BadRequest(400, "conflicting Content-Length\n")
                length = value
            elif name == b"transfer-encoding":
                if value.lower() != b"chunked" or chunked:
                    raise BadRequest(501, "only the chunked transfer coding is supported\n")
                chunked = True
            elif name == b"connection":
                tokens = value.lower()
                if b"close" in tokens:
                    keep_alive = False
                elif not http11 and b"keep-alive" in tokens:
                    keep_alive = True
            elif name == b"expect" and value.lower() == b"100-continue":
                expect = http11
        path, _, query = target.partition(b"?")
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1" if http11 else "1.0",
            "method": method,
            "scheme": self.scheme,
            "path": unquote(path.decode("ascii")),
            "raw_path": path,
            "query_string": query,
            "root_path": "",
            "headers": headers,
            "client": self._client,
            "server": self._server,
            "extensions": {},
        }
        exchange = _Exchange(self, scope, keep_alive)
        if chunked:
            if length is not None:
                raise BadRequest(400, "both Content-Length and Transfer-Encoding\n")
            exchange.chunked, exchange.body_done = True, False
        elif length is not None:
            if not length.isdigit() or len(length) > 18:
                raise BadRequest(400, "malformed Content-Length\n")
            exchange.remaining = int(length)
            exchange.body_done = not exchange.remaining
        exchange.expect_continue = expect and not exchange.body_done
        return exchange

    async def _call(self, exchange: _Exchange) -> None:
        try:
            await self.app(exchange.scope, exchange.receive, exchange.send)
        except Exception:  # the application's bug: logged, answered 500, connection closed
            log.exception("https %s: error answering %s %s", _peer(exchange.scope),
                          exchange.scope["method"], exchange.scope["path"])
            if not exchange.head_sent and not exchange.gone:
                exchange.started, exchange.status = True, 500
                exchange.headers = [(b"content-type", b"text/plain"), (b"connection", b"close")]
                await exchange.send({"type": "http.response.body", "body": b"internal error\n"})
            self.close()
            return
        if not exchange.response_done and not exchange.gone:
            if not exchange.started:  # the application answered nothing: as Hypercorn, 500
                exchange.started, exchange.status = True, 500
                exchange.headers = [(b"content-length", b"0")]
            await exchange.send({"type": "http.response.body", "body": b""})

    def _refuse(self, bad: BadRequest) -> None:
        """Answer a request this layer cannot pass on, and close."""
        exchange = self._exchange
        if exchange is not None:
            exchange.gone = True  # the application's request is over: it hears a disconnect
            exchange._wake()
            if exchange.head_sent:  # in the middle of an answer: nothing sensible to add
                self.abort()
                return
            exchange.response_done = True
        body = bad.text.encode()
        self.write(_status_line(bad.status) + b"content-type: text/plain; charset=us-ascii\r\n"
                   b"content-length: %d\r\nconnection: close\r\n%b\r\n%b"
                   % (len(body), _date_header(), body))
        self.close()


def _peer(scope: Scope) -> str:
    client = scope.get("client")
    return f"{client[0]}:{client[1]}" if client else "?"
