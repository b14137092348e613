"""httpx transports whose connections count the study's application round trips (see
:mod:`mgmtbench.clients.roundtrips`), below TLS as the study counts them.

httpx's transports hand every socket operation to an httpcore *network backend* (httpcore's
public API: ``connect_tcp`` gives a stream with ``read``, ``write``, ``start_tls``,
``get_extra_info``). The backends here connect exactly as httpcore's own do (the sync one asks
httpcore's ``SyncBackend`` for the socket; the async one makes the same ``anyio.connect_tcp``), then
put the count on the raw TCP stream and run TLS over it:

- sync: TLS through an ``ssl.SSLObject`` over memory BIOs (what httpcore itself does for TLS in
  TLS), whose records go through a :class:`~mgmtbench.clients.roundtrips.CountingSocket`: the
  standard ``SSLSocket`` would read and write the socket inside OpenSSL, out of sight;
- async: anyio's ``TLSStream`` (what httpcore uses anyway) over a counting anyio byte stream.

The same ``SSLContext`` makes the TLS object either way, so certificates, versions, ciphers and
session tickets are the adapter's; ``get_extra_info("ssl_object")`` gives the TLS object as
before (``session``, ``session_reused``).

httpx 0.28 takes no network backend (encode/httpx#3749 proposes one): :func:`sync_transport` and
:func:`async_transport` build the stock ``HTTPTransport`` / ``AsyncHTTPTransport`` and set the
backend of its httpcore pool, and refuse (:class:`~mgmtbench.errors.ClientError`) an httpx whose
transport is built otherwise.
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any, TypeVar

import anyio
import anyio.abc
import httpcore
import httpx
from anyio.streams.tls import TLSAttribute, TLSStream

from mgmtbench.clients.roundtrips import CHUNK, CountingSocket, RoundTripCounter, Turns
from mgmtbench.errors import ClientError

__all__ = ["async_transport", "sync_transport"]

T = TypeVar("T")
_ErrorMap = Mapping[type[BaseException], type[Exception]]

# As httpcore's own backends map them, so httpx maps them on to its own exceptions.
_CONNECT: _ErrorMap = {TimeoutError: httpcore.ConnectTimeout, OSError: httpcore.ConnectError,
                       anyio.BrokenResourceError: httpcore.ConnectError,
                       anyio.EndOfStream: httpcore.ConnectError}
_READ: _ErrorMap = {TimeoutError: httpcore.ReadTimeout, OSError: httpcore.ReadError,
                    anyio.BrokenResourceError: httpcore.ReadError,
                    anyio.ClosedResourceError: httpcore.ReadError}
_WRITE: _ErrorMap = {TimeoutError: httpcore.WriteTimeout, OSError: httpcore.WriteError,
                     anyio.BrokenResourceError: httpcore.WriteError,
                     anyio.ClosedResourceError: httpcore.WriteError}


@contextlib.contextmanager
def _mapped(errors: _ErrorMap) -> Iterator[None]:
    """Socket and anyio errors as httpcore's (the first matching entry)."""
    try:
        yield
    except Exception as exc:
        for source, target in errors.items():
            if isinstance(exc, source):
                raise target(exc) from exc
        raise


def _socket_info(sock: socket.socket | None, info: str) -> Any:
    """httpcore's ``get_extra_info`` keys that concern the socket."""
    if sock is None:
        return None
    if info == "client_addr":
        return sock.getsockname()
    if info == "server_addr":
        return sock.getpeername()
    if info == "socket":
        return sock
    if info == "is_readable":  # an idle kept connection the device closed reads as readable
        if sock.fileno() < 0:
            return True
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    return None


# --- sync ---------------------------------------------------------------------------------------


class _Stream(httpcore.NetworkStream):
    """A TCP connection whose reads and writes are counted."""

    def __init__(self, sock: CountingSocket) -> None:
        self._sock = sock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(_READ):
            self._sock.settimeout(timeout)
            return self._sock.recv(max_bytes)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            with _mapped(_WRITE):
                self._sock.settimeout(timeout)
                self._sock.sendall(buffer)

    def close(self) -> None:
        self._sock.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        with _mapped(_CONNECT):
            try:
                return _TlsStream(self._sock, ssl_context, server_hostname, timeout)
            except Exception:
                self.close()
                raise

    def get_extra_info(self, info: str) -> Any:
        return _socket_info(self._sock.socket, info)


class _TlsStream(httpcore.NetworkStream):
    """TLS over a counting socket: an ``SSLObject`` whose records the socket carries."""

    def __init__(self, sock: CountingSocket, context: ssl.SSLContext, server_hostname: str | None,
                 timeout: float | None) -> None:
        self._sock = sock
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = context.wrap_bio(self._incoming, self._outgoing,
                                     server_hostname=server_hostname)
        sock.settimeout(timeout)
        self._io(self._tls.do_handshake)

    def _io(self, operation: Callable[[], T]) -> T:
        """Run a TLS operation to completion: send what it wrote, read when it needs more."""
        while True:
            try:
                result = operation()
            except ssl.SSLWantReadError:
                self._flush()
                data = self._sock.recv(CHUNK)
                if data:
                    self._incoming.write(data)
                else:
                    self._incoming.write_eof()
                continue
            self._flush()
            return result

    def _flush(self) -> None:
        if pending := self._outgoing.read():
            self._sock.sendall(pending)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(_READ):
            self._sock.settimeout(timeout)
            try:
                return self._io(partial(self._tls.read, max_bytes))
            except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
                return b""  # closed, with or without close_notify (as SSLSocket by default)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        with _mapped(_WRITE):
            self._sock.settimeout(timeout)
            while buffer:
                sent = self._io(partial(self._tls.write, buffer))
                buffer = buffer[sent:]

    def close(self) -> None:
        self._sock.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        raise NotImplementedError("TLS in TLS (an HTTPS proxy) is not counted")

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._tls
        return _socket_info(self._sock.socket, info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend, each connection counted into ``counter``."""

    def __init__(self, counter: RoundTripCounter) -> None:
        self._counter = counter
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, timeout, local_address, socket_options)
        sock: socket.socket = stream.get_extra_info("socket")
        return _Stream(CountingSocket(sock, self._counter.connection()))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


# --- async --------------------------------------------------------------------------------------


class _CountingByteStream(anyio.abc.ByteStream):
    """An anyio TCP stream whose arrivals and writes are counted."""

    def __init__(self, stream: anyio.abc.ByteStream, turns: Turns) -> None:
        self._stream = stream
        self._turns = turns

    async def receive(self, max_bytes: int = CHUNK) -> bytes:
        data = await self._stream.receive(max_bytes)
        self._turns.arrived()  # anyio raises EndOfStream rather than return nothing
        return data

    async def send(self, item: bytes) -> None:
        if item:
            self._turns.wrote()
        await self._stream.send(item)

    async def send_eof(self) -> None:
        await self._stream.send_eof()

    async def aclose(self) -> None:
        await self._stream.aclose()

    @property
    def extra_attributes(self) -> Mapping[Any, Callable[[], Any]]:
        return self._stream.extra_attributes


class _AsyncStream(httpcore.AsyncNetworkStream):
    """httpcore's stream over an anyio byte stream (the counting one, or TLS over it)."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        with _mapped(_READ), anyio.fail_after(timeout):
            try:
                return await self._stream.receive(max_bytes)
            except anyio.EndOfStream:
                return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            with _mapped(_WRITE), anyio.fail_after(timeout):
                await self._stream.send(buffer)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        with _mapped(_CONNECT):
            try:
                with anyio.fail_after(timeout):
                    tls = await TLSStream.wrap(self._stream, ssl_context=ssl_context,
                                               hostname=server_hostname,
                                               standard_compatible=False, server_side=False)
            except Exception:
                await self.aclose()
                raise
        return _AsyncStream(tls)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._stream.extra(TLSAttribute.ssl_object, None)
        return _socket_info(self._stream.extra(anyio.abc.SocketAttribute.raw_socket, None), info)


class _AsyncBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend, each connection counted into ``counter``."""

    def __init__(self, counter: RoundTripCounter) -> None:
        self._counter = counter

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
                          ) -> httpcore.AsyncNetworkStream:
        with _mapped(_CONNECT), anyio.fail_after(timeout):
            stream = await anyio.connect_tcp(remote_host=host, remote_port=port,
                                             local_host=local_address)
        sock = stream.extra(anyio.abc.SocketAttribute.raw_socket)
        for option in socket_options or ():
            sock.setsockopt(*option)  # asyncio sets TCP_NODELAY itself
        return _AsyncStream(_CountingByteStream(stream, self._counter.connection()))

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)


# --- the transports -----------------------------------------------------------------------------


def _install(pool: Any, backend: httpcore.NetworkBackend | httpcore.AsyncNetworkBackend) -> None:
    if not hasattr(pool, "_network_backend"):
        raise ClientError(f"httpx {httpx.__version__}: its transport has no httpcore pool with "
                          "a network backend to count round trips on")
    pool._network_backend = backend


def sync_transport(counter: RoundTripCounter, **options: Any) -> httpx.HTTPTransport:
    """``httpx.HTTPTransport(**options)`` whose connections count into ``counter``."""
    transport = httpx.HTTPTransport(**options)
    _install(getattr(transport, "_pool", None), _Backend(counter))
    return transport


def async_transport(counter: RoundTripCounter, **options: Any) -> httpx.AsyncHTTPTransport:
    """``httpx.AsyncHTTPTransport(**options)`` whose connections count into ``counter``."""
    transport = httpx.AsyncHTTPTransport(**options)
    _install(getattr(transport, "_pool", None), _AsyncBackend(counter))
    return transport
