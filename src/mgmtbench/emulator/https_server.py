"""The HTTPS side of a device: the ASA-style management API, served by Hypercorn.

- ``GET /admin/exec/<cmd>[/<cmd>...]``: run exec commands (``+`` or ``%20`` for spaces, ``%2F`` for a
  slash inside a command); the outputs, concatenated, as ``text/plain``.
- ``POST /admin/config``: a newline-delimited body run in configuration mode (configuration lines
  applied, ``show`` commands answered).
- HTTP Basic auth (``401`` with ``WWW-Authenticate`` otherwise), ``413`` for bodies over the limit.

Hypercorn is the server because it speaks HTTP/1.1 keep-alive and HTTP/2 (ALPN) over TLS on the same
asyncio loop as the SSH server, and accepts listening sockets we bind ourselves.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import logging
import os
import socket
import ssl
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote_plus

from hypercorn.asyncio import serve
from hypercorn.config import Config

from mgmtbench.emulator.device import Device
from mgmtbench.emulator.options import Credentials, Limits
from mgmtbench.emulator.session import CliSession, Mode

log = logging.getLogger("mgmtbench.emulator")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

EXEC_PREFIX = "/admin/exec/"
CONFIG_PATH = "/admin/config"


class _ClientGone(Exception):
    """The client disconnected before its request was complete: nobody to answer."""


class _Refusal(Exception):
    def __init__(self, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None):
        super().__init__(status, text)
        self.status, self.text, self.headers = status, text, headers or []


class DeviceApi:
    """ASGI app answering for every device; the device is picked by the address and port the
    request came in on."""

    def __init__(self, devices: Mapping[tuple[str, int], Device], credentials: Credentials,
                 limits: Limits) -> None:
        self._devices = devices
        self._limits = limits
        self._expected = b"Basic " + base64.b64encode(
            f"{credentials.username}:{credentials.password}".encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI request for the device it came in for (and the lifespan events)."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        client = "{}:{}".format(*(scope.get("client") or ("?", 0)))
        name = "?"
        try:
            device = self._device(scope)
            name = device.hostname
            self._authorize(scope, device)
            body = await self._body(scope, receive) if scope["method"] == "POST" else b""
            status, text = await self._handle(scope, device, body)
            await _respond(send, status, text)
        except _Refusal as refusal:
            await _respond(send, refusal.status, refusal.text, refusal.headers)
        except _ClientGone:
            log.info("%s https %s: client disconnected mid-request", name, client)

    def _device(self, scope: Scope) -> Device:
        server = scope.get("server") or ("", 0)
        device = self._devices.get((server[0], server[1]))
        if device is None:
            raise _Refusal(404, "no device on this port\n")
        return device

    def _authorize(self, scope: Scope, device: Device) -> None:
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            if given:
                client = "{}:{}".format(*(scope.get("client") or ("?", 0)))
                log.info("%s https %s: bad credentials", device.hostname, client)
            realm = f'Basic realm="{device.hostname}"'.encode()
            raise _Refusal(401, "authorization required\n", [(b"www-authenticate", realm)])

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        limit = self._limits.max_body
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _Refusal(413, f"request body over {limit} bytes\n")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size <= limit:
                chunks.append(chunk)
            if not message.get("more_body", False):
                break
            if size > 16 * limit:
                break  # stop draining a body this far over the limit; the answer is the same
        if size > limit:
            # The rest of a streamed body was read and dropped, so the client can read the answer.
            raise _Refusal(413, f"request body over {limit} bytes\n")
        return b"".join(chunks)

    async def _handle(self, scope: Scope, device: Device, body: bytes) -> tuple[int, str]:
        path = scope.get("raw_path") or scope["path"].encode()
        path = path.split(b"?", 1)[0]
        method = scope["method"]
        if path.startswith(EXEC_PREFIX.encode()):
            if method not in ("GET", "HEAD"):
                raise _Refusal(405, "use GET\n", [(b"allow", b"GET, HEAD")])
            try:
                parts = path[len(EXEC_PREFIX):].decode("ascii").split("/")
                lines = [unquote_plus(p, errors="strict") for p in parts if p]
            except UnicodeError as exc:
                raise _Refusal(400, "command is not valid text\n") from exc
            return 200, await _run(CliSession(device, mode=Mode.PRIV,
                                              max_line=self._limits.max_line), lines)
        if path == CONFIG_PATH.encode():
            if method != "POST":
                raise _Refusal(405, "use POST\n", [(b"allow", b"POST")])
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _Refusal(400, "body is not UTF-8 text\n") from exc
            lines = text.replace("\r\n", "\n").split("\n")
            return 200, await _run(CliSession(device, mode=Mode.CONFIG,
                                              max_line=self._limits.max_line), lines)
        raise _Refusal(404, "not found: use /admin/exec/<command> or POST /admin/config\n")


async def _run(session: CliSession, lines: list[str]) -> str:
    delay = session.device.processing_delay
    out: list[str] = []
    for line in lines:
        if line.strip() and delay:
            await asyncio.sleep(delay)
        reply = session.execute(line)
        out.append(reply.output)
        if reply.close:
            break
    return "".join(out)


async def _respond(send: Send, status: int, text: str,
                   headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode("ascii", "replace")
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"text/plain; charset=us-ascii"),
            (b"content-length", str(len(body)).encode()),
            *(headers or []),
        ],
    })
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class _TlsConfig(Config):
    """Hypercorn config that uses our TLS context (TLS 1.3 only, session tickets)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        super().__init__()
        self._context = context

    @property
    def ssl_enabled(self) -> bool:
        return True

    def create_ssl_context(self) -> ssl.SSLContext:
        return self._context


def serve_https(app: DeviceApi, sockets: list[socket.socket], context: ssl.SSLContext,
                shutdown: asyncio.Event) -> Awaitable[None]:
    """Serve ``app`` on already-bound listening ``sockets`` until ``shutdown`` is set."""
    config = _TlsConfig(context)
    # Hypercorn takes ownership of each fd it is given: hand it duplicates.
    config.bind = [f"fd://{os.dup(s.fileno())}" for s in sockets]
    config.accesslog = None
    errors = logging.getLogger("mgmtbench.emulator.hypercorn")
    errors.setLevel(logging.WARNING)  # its "Running on ..." lines repeat what `serve` prints
    config.errorlog = errors
    config.keep_alive_timeout = 75
    config.keep_alive_max_requests = 10_000_000
    config.include_server_header = False
    config.graceful_timeout = 1
    coro: Awaitable[None] = serve(app, config, shutdown_trigger=shutdown.wait)  # type: ignore[arg-type]
    return coro
