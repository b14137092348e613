"""How the HTTPS API accepts connections: caps at accept, TLS, then HTTP/1.1 or HTTP/2.

1. A TCP connection is accepted without TLS and counted against its device's caps
   (:class:`ConnectionCaps`: ``Limits.max_https_connections`` in all,
   ``Limits.max_https_connections_per_source`` from one address). Over a cap it is closed at
   once, before any TLS work, with one WARNING line (rate-limited like SSH's drops).
2. TLS within ``Limits.tls_handshake_timeout``: the loop's own TLS protocol (what
   ``loop.start_tls`` uses: uvloop's, or asyncio's) takes the connection in ``connection_made``.
3. ALPN ``h2``: the connection goes to Hypercorn's HTTP/2 (its ``TCPServer``, as its own
   ``serve`` would run it). Otherwise HTTP/1.1 by :class:`~.http1.Http1Connection`.

Both speak ASGI to the same application (the device API, or the edge proxy's).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import sys
import weakref
from asyncio import sslproto
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from hypercorn.asyncio.tcp_server import TCPServer
from hypercorn.asyncio.worker_context import WorkerContext
from hypercorn.config import Config
from hypercorn.utils import wrap_app

from mgmtbench.emulator import memtrim
from mgmtbench.emulator.guard import Descriptors, Holders, count_down, source_of
from mgmtbench.emulator.https.h2flood import BURST, RATE, ControlFrames, goaway
from mgmtbench.emulator.https.http1 import AsgiApp, Http1Connection
from mgmtbench.emulator.options import Limits

log = logging.getLogger("mgmtbench.emulator")

#: Limits of a server without connection caps (the edge proxy's: its clients are the benchmark).
UNCAPPED = Limits(max_https_connections=sys.maxsize, max_https_connections_per_source=sys.maxsize)
#: Seconds open connections get to finish their answer once the server stops.
GRACE = 1.0


@dataclass
class ConnectionCaps:
    """Open HTTPS connections of one device (one listening socket), counted from accept.

    A new connection is closed at once when its source address already has
    ``max_https_connections_per_source`` open, or the device ``max_https_connections``: one
    address cannot take every slot (nginx's ``limit_conn`` per address; OpenSSH's
    PerSourceMaxStartups for SSH), and the total bounds the descriptors and memory. At the
    total, a source holding at least two fewer than the heaviest takes the place of that
    source's oldest connection (:class:`~mgmtbench.emulator.guard.Holders`): 4 sources x 250
    filled the device and a client from a fifth address got 0 of 10 in.
    """

    limits: Limits
    open: int = 0
    dropped: int = 0
    by_source: dict[str, int] = field(default_factory=dict)
    holders: Holders = field(default_factory=Holders)
    budget: Descriptors | None = None  # the process's connections, every device's

    def refuse(self, source: str, key: object = None,
               close: Callable[[], None] | None = None) -> str | None:
        """Why a new connection from ``source`` is dropped, or None (then it is counted until
        :meth:`closed` with the same ``key``; ``close`` closes it if it must make room)."""
        per_source = self.limits.max_https_connections_per_source
        total = self.limits.max_https_connections
        reason = None
        if self.by_source.get(source, 0) >= per_source:
            reason = f"{per_source} open connections from this source"
        elif self.open >= total:
            evicted = (self.holders.evict_for(source, self.by_source.get(source, 0))
                       if close is not None else None)
            if evicted is None:
                reason = f"{total} open connections"
            else:
                self._forget(evicted)
        if reason is None and self.budget is not None and key is not None and close is not None:
            reason = self.budget.take(source, key, close)
        if reason is not None:
            self.dropped += 1
            return reason
        self.open += 1
        self.by_source[source] = self.by_source.get(source, 0) + 1
        if key is not None and close is not None:
            self.holders.add(source, key, close)
        return None

    def closed(self, source: str, key: object = None) -> None:
        """An admitted connection closed (counted once: one closed to make room was already
        forgotten)."""
        memtrim.connection_closed()
        if self.budget is not None and key is not None:
            self.budget.release(source, key)
        if key is None or self.holders.discard(source, key):
            self._forget(source)

    def _forget(self, source: str) -> None:
        self.open -= 1
        count_down(self.by_source, source)


class _Admitted:
    """One admitted connection: counted against its caps until :meth:`close` (once)."""

    __slots__ = ("caps", "name", "open", "peer", "server", "source", "transport")

    def __init__(self, server: _HttpsServer, caps: ConnectionCaps, source: str, name: str,
                 peer: str, transport: asyncio.Transport) -> None:
        self.server, self.caps, self.source, self.name, self.peer = (server, caps, source,
                                                                     name, peer)
        self.transport = transport
        self.open = True
        server.admitted.add(self)

    def close(self, *_: object) -> None:
        if self.open:
            self.open = False
            self.caps.closed(self.source, self.transport)
            self.server.admitted.discard(self)


class _Handshaking(asyncio.Protocol):
    """The TLS connection's protocol during the handshake: at its end, ALPN picks the real one
    (HTTP/2: Hypercorn's; else :class:`Http1Connection`), which takes over at once."""

    def __init__(self, admitted: _Admitted) -> None:
        self.admitted = admitted
        self.data: list[bytes] = []
        self.eof = False

    def handshake_done(self, waiter: asyncio.Future[None]) -> None:
        error = waiter.exception() if not waiter.cancelled() else TimeoutError()
        if error is not None:
            admitted = self.admitted
            log.info("%s https %s: TLS handshake failed: %s", admitted.name, admitted.peer,
                     error or type(error).__name__)
            admitted.transport.abort()
            admitted.close()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        tls = cast(asyncio.Transport, transport)
        server = self.admitted.server
        ssl_object = tls.get_extra_info("ssl_object")
        alpn = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        if alpn == "h2":
            reader = asyncio.StreamReader(limit=2**16)
            stream = _Http2Stream(reader, self.admitted)
            self._hand_over(tls, stream)
            task = server.loop.create_task(server.http2(tls, stream, reader))
            stream.task = task
            server.tasks.add(task)
            task.add_done_callback(server.tasks.discard)
            task.add_done_callback(self.admitted.close)
            return
        conn = Http1Connection(server.app, server.limits.https_idle_timeout)
        server.http1.add(conn)
        conn.closed.add_done_callback(lambda _: server.http1.discard(conn))
        conn.closed.add_done_callback(self.admitted.close)
        self._hand_over(tls, conn)

    def data_received(self, data: bytes) -> None:
        self.data.append(data)

    def eof_received(self) -> bool | None:
        self.eof = True
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.admitted.close()

    def _hand_over(self, transport: asyncio.Transport, protocol: asyncio.Protocol) -> None:
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        for data in self.data:
            protocol.data_received(data)
        self.data.clear()
        if self.eof:
            protocol.eof_received()


#: Seconds a connection closed for its control frames has to take its GOAWAY before it is cut.
CALM_GRACE = 1.0


class _Http2Stream(asyncio.StreamReaderProtocol):
    """Hypercorn's stream of an HTTP/2 connection, which stops counting against the caps when
    its transport is lost, and ends Hypercorn's task :data:`GRACE` s later if it has not ended.
    Hypercorn's task waits out its keep-alive timer (``https_idle_timeout``, 75 s) after the
    peer has gone, and the connection counted until then: 40 HTTP/2 connections opened and
    closed by their client in turn were 40 still open, so a client making a new connection per
    request filled its source's 250 in seconds, and the device dropped every new one."""

    def __init__(self, reader: asyncio.StreamReader, admitted: _Admitted) -> None:
        super().__init__(reader)
        self.admitted = admitted
        self.task: asyncio.Task[None] | None = None
        self._control = ControlFrames()
        self._calmed = False
        self._tls: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._tls = cast(asyncio.Transport, transport)
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """The client's bytes to Hypercorn, unless its control frames are over their budget
        (:mod:`.h2flood`): then GOAWAY (ENHANCE_YOUR_CALM), the connection closed, and the rest
        of what it sent dropped."""
        if self._calmed:
            return
        if not self._control.feed(data):
            self._calmed = True
            admitted = self.admitted
            log.warning("%s https %s: HTTP/2 connection closed: %d control frames (SETTINGS, "
                        "PING, PRIORITY, RST_STREAM, empty DATA) over %d at once and %g/s",
                        admitted.name, admitted.peer, self._control.frames,
                        BURST, RATE)
            raw = admitted.transport
            raw.pause_reading()  # nothing more of it is read or decrypted
            if self._tls is not None:
                self._tls.write(goaway())
                self._tls.close()
            # a client that floods may not read the GOAWAY either: gone within a second
            asyncio.get_running_loop().call_later(CALM_GRACE, raw.abort)
            return
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        self.admitted.close()
        task = self.task
        if task is not None and not task.done():
            asyncio.get_running_loop().call_later(GRACE, task.cancel)


class _Accepted(asyncio.Protocol):
    """A TCP connection just accepted: dropped over a cap, else TLS on it at once (nothing of
    it is read before)."""

    def __init__(self, server: _HttpsServer, caps: ConnectionCaps, name: str) -> None:
        self._server, self._caps, self._name = server, caps, name

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        raw = cast(asyncio.Transport, transport)
        peer = raw.get_extra_info("peername")
        source = source_of(peer)
        refused = self._caps.refuse(source, raw, raw.abort)
        if refused is not None:
            log.warning("%s https %s: connection dropped: %s", self._name, _address(peer),
                        refused)
            raw.abort()
            return
        server = self._server
        admitted = _Admitted(server, self._caps, source, self._name, _address(peer), raw)
        handshaking = _Handshaking(admitted)
        waiter: asyncio.Future[None] = server.loop.create_future()
        waiter.add_done_callback(handshaking.handshake_done)
        tls = server.tls_protocol(handshaking, waiter)
        raw.set_protocol(tls)
        tls.connection_made(raw)


class _HttpsServer:
    """Every listening socket of one ``serve_https`` call and the connections they accepted."""

    def __init__(self, app: AsgiApp, context: ssl.SSLContext, limits: Limits) -> None:
        self.app = app
        self.context = context
        self.limits = limits
        self.loop = asyncio.get_running_loop()
        self.admitted: set[_Admitted] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self.http1: set[Http1Connection] = set()
        self._tls_class = _tls_protocol_class(self.loop)
        config = Config()
        config.accesslog = None
        errors = logging.getLogger("mgmtbench.emulator.hypercorn")
        errors.setLevel(logging.WARNING)
        config.errorlog = errors
        config.keep_alive_timeout = limits.https_idle_timeout
        config.keep_alive_max_requests = 10_000_000
        config.include_server_header = False
        self.h2_config = config
        self.h2_app = wrap_app(app, config.wsgi_max_body_size, "asgi")  # type: ignore[arg-type]
        self.h2_context = WorkerContext(None)

    def tls_protocol(self, app_protocol: asyncio.Protocol,
                     waiter: asyncio.Future[None]) -> Any:
        """The loop's own TLS protocol (uvloop's or asyncio's, as ``start_tls`` makes it) for a
        server-side connection: ``app_protocol.connection_made`` once the handshake is done."""
        timeout = self.limits.tls_handshake_timeout
        protocol = self._tls_class(self.loop, app_protocol, self.context, waiter,
                                   server_side=True, call_connection_made=True,
                                   ssl_handshake_timeout=timeout if timeout > 0 else None)
        _share_read_buffer(protocol)
        return protocol

    async def http2(self, tls: asyncio.Transport, protocol: asyncio.StreamReaderProtocol,
                    reader: asyncio.StreamReader) -> None:
        """Serve the connection's HTTP/2 as Hypercorn's own ``serve`` does."""
        writer = asyncio.StreamWriter(tls, protocol, reader, self.loop)
        await TCPServer(self.h2_app, self.loop, self.h2_config, self.h2_context, {},
                        reader, writer)

    async def stop(self) -> None:
        """Close idle connections now, the others once answered (at most :data:`GRACE` s)."""
        for conn in list(self.http1):
            conn.close_when_idle()
        await self.h2_context.terminated.set()
        deadline = self.loop.time() + GRACE
        while self.admitted and self.loop.time() < deadline:
            await asyncio.sleep(0.02)
        for admitted in list(self.admitted):
            admitted.transport.abort()
            admitted.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=GRACE)


def _tls_protocol_class(loop: asyncio.AbstractEventLoop) -> Any:
    """The TLS protocol class ``loop.start_tls`` would use: uvloop's for its loop, else
    asyncio's. Made directly (not through ``start_tls``) so that TLS takes the connection in
    ``connection_made``: uvloop starts reading right after it, before any task could run."""
    if type(loop).__module__.startswith("uvloop"):
        import uvloop.loop

        cls = getattr(uvloop.loop, "SSLProtocol", None)
        if cls is not None:
            return cls
    return sslproto.SSLProtocol


def serve_https(app: AsgiApp | Callable[..., Awaitable[None]], sockets: list[socket.socket],
                context: ssl.SSLContext, shutdown: asyncio.Event, limits: Limits | None = None,
                names: Sequence[str] | None = None,
                caps: Sequence[ConnectionCaps] | None = None) -> Awaitable[None]:
    """Serve ``app`` on already-bound listening ``sockets`` until ``shutdown`` is set.

    Each socket is a device (``names``, one per socket, in log lines) with its own connection
    caps (``caps``, one per socket, where the caller wants to read their counts; else new ones
    of ``limits``); ``limits`` None: the default time-outs and no caps (the edge proxy). A
    connection waits at most ``limits.tls_handshake_timeout`` for its TLS handshake and
    ``limits.https_idle_timeout`` for each request's headers.
    """
    chosen = limits or UNCAPPED

    async def run() -> None:
        loop = asyncio.get_running_loop()
        server = _HttpsServer(app, context, chosen)
        listeners = []
        try:
            for index, sock in enumerate(sockets):
                counted = caps[index] if caps is not None else ConnectionCaps(chosen)
                name = names[index] if names is not None else "https"

                def accepted(caps: ConnectionCaps = counted, name: str = name) -> _Accepted:
                    return _Accepted(server, caps, name)

                # A duplicate: the caller closes its socket, the loop its own.
                own = socket.socket(sock.family, sock.type, fileno=os.dup(sock.fileno()))
                listeners.append(await loop.create_server(accepted, sock=own, backlog=1024))
            await shutdown.wait()
        finally:
            for listener in listeners:
                listener.close()
            await server.stop()

    return run()


def _address(peer: Any) -> str:
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, (tuple, list)) and len(peer) > 1 else "?"


_shared_buffers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[bytearray, memoryview]]
_shared_buffers = weakref.WeakKeyDictionary()


def _share_read_buffer(protocol: Any) -> None:
    """On asyncio's own loop, make the TLS connection use its loop's one shared read buffer.

    asyncio gives every TLS connection its own 256 KiB read buffer (``SSLProtocol.max_size``),
    zero-filled, so resident: 15,000 idle HTTPS connections held 4.5 GB. The buffer is only used
    between ``get_buffer()`` and ``buffer_updated()``, which the loop calls back to back in one
    callback, so one buffer per loop serves every connection. Private asyncio attributes:
    without them nothing changes. uvloop's protocol (the emulator's loop where installed) needs
    none of it: its buffer is allocated without being filled, so resident only as far as reads
    reach into it.
    """
    own = getattr(protocol, "_ssl_buffer", None)
    if not isinstance(own, bytearray) or not hasattr(protocol, "_ssl_buffer_view"):
        return
    loop = asyncio.get_running_loop()
    shared = _shared_buffers.get(loop)
    if shared is None or len(shared[0]) != len(own):
        buffer = bytearray(len(own))
        shared = _shared_buffers[loop] = (buffer, memoryview(buffer))
    protocol._ssl_buffer, protocol._ssl_buffer_view = shared
