"""The edge proxy's HTTPS API: the device's ASA-style API, for any device behind the proxy.

- ``GET /device/<name-or-address>/admin/exec/<cmd>[/<cmd>...]`` and ``POST
  /device/<name-or-address>/admin/config`` (newline-separated body): as on the device itself
  (:mod:`mgmtbench.emulator.https.server`), run over SSH on the device; the outputs concatenated,
  as ``text/plain``. The plain ``/admin/...`` paths work too with the device in an ``X-Device``
  header.
- ``X-SSH-Connection: fresh`` or ``pooled`` chooses, per request, a new SSH connection for the
  request or one of the pool's (default: the proxy's ``--ssh`` setting).
- ``GET /proxy/stats``: the proxy's counters as JSON (requests by status and by HTTP version,
  the wall time spent answering them, the pool's connections; when served over HTTP/3 too, the
  HTTP/3 server's counts: QUIC connections, handshakes, resumptions, early requests).

A device's output is streamed: sent on as the device sends it, each piece once the client's
connection has taken the one before (the SSH channel waits meanwhile: backpressure from the
client to the device), with no ``Content-Length`` (HTTP/1.1 chunked); a request's status is
decided before the first byte (errors then are statuses), and a failure after it (the device's
output passing ``max_output``, the time-out, a broken SSH session) ends the answer with a line
``% proxy: <reason>``. A client that leaves mid-answer stops the device's output.

The same application answers over HTTPS and HTTP/3, and counts a request the same on both.
Over HTTP/3 a request that came in TLS early data (0-RTT, marked ``Early-Data: 1`` by the server,
:mod:`mgmtbench.emulator.http3.early`) is answered as the device answers it: only a ``GET`` of
``show`` commands, which is safe to run twice; anything else (a ``POST .../admin/config``, an
exec that is not ``show``) gets ``425 Too Early`` before it reaches a device, since whoever
recorded the client's first flight could replay it.

The caller logs in with HTTP Basic auth (the proxy's own user, not the device's). A wrong
password is logged (rate-limited) and answered only after ``limits.auth_failure_delay``, one
source's guesses in turn (the emulator's :class:`~mgmtbench.emulator.guard.AuthThrottle`), so
one address guesses about one password a second however many connections it opens. Every
failure is a status with one line saying why, never a request left hanging: 401 (the caller's
credentials), 404 (no such device or path), 405, 400, 413; 408 for a body slower than
``limits.body_timeout`` plus a second per ``limits.body_min_rate`` bytes (as the device's API);
502 when the device cannot be reached or refuses the proxy's login (``authentication failed at
device``), the SSH session breaks or its output passes ``max_output``; 503 with Retry-After when
no SSH connection to the device came free within the pool's queue time-out; 504 when the device
does not answer within the request's time-out.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, unquote_plus

import asyncssh

from mgmtbench.emulator.device.http3 import Http3Counts
from mgmtbench.emulator.guard import AuthThrottle, source_of
from mgmtbench.emulator.http3.early import TOO_EARLY, is_early, replay_safe
from mgmtbench.emulator.https.server import Receive, Scope, Send
from mgmtbench.emulator.options import Limits
from mgmtbench.errors import AuthenticationFailed, ClientError, ClientTimeout, ConnectionFailed
from mgmtbench.proxy.inventory import Inventory, ProxyDevice
from mgmtbench.proxy.pool import PoolBusy, SshPool
from mgmtbench.proxy.ssh import OutputTooLarge, Sink, run_commands
from mgmtbench.targets import Target

log = logging.getLogger("mgmtbench.proxy")

DEVICE_PREFIX = "/device/"
EXEC_PREFIX = "/admin/exec/"
CONFIG_PATH = "/admin/config"
STATS_PATH = "/proxy/stats"


@dataclass(frozen=True)
class ProxyPolicy:
    """How the API serves requests: who may call it, the default SSH connection, limits."""

    username: str = "admin"
    password: str = "admin"
    fresh_ssh: bool = False  # the default for requests without X-SSH-Connection
    timeout: float = 30.0  # seconds for a whole request's SSH work (then 504)
    max_body: int = 1024 * 1024
    #: Bytes of device output one request may bring back (streamed: this bounds time and the
    #: device's work, not the proxy's memory); the device API's own max_request_output.
    max_output: int = Limits.max_request_output
    #: The connection caps, time-outs, failed-login delay and body time-out, as the device's.
    limits: Limits = field(default_factory=Limits)


class _ClientGone(Exception):
    """The client went away before its request was whole."""


class _Refusal(Exception):
    def __init__(self, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None):
        super().__init__(status, text)
        self.status, self.text, self.headers = status, text, headers or []


class ProxyApi:
    """The ASGI application (see the module docstring)."""

    def __init__(self, inventory: Inventory, pool: SshPool, policy: ProxyPolicy) -> None:
        self.inventory = inventory
        self.pool = pool
        self.policy = policy
        self._expected = b"Basic " + base64.b64encode(
            f"{policy.username}:{policy.password}".encode())
        self._throttle = AuthThrottle(policy.limits)
        self.statuses: Counter[int] = Counter()
        self.versions: Counter[str] = Counter()  # requests by HTTP version ("1.1", "2", "3")
        self.busy_seconds = 0.0  # wall time spent inside requests, summed
        #: The HTTP/3 server's counts, when the API is served over HTTP/3 too.
        self.http3: Http3Counts | None = None

    def stats(self) -> dict[str, Any]:
        """Requests by status and HTTP version, the pool's counters, the HTTP/3 server's."""
        found: dict[str, Any] = {
            "requests": sum(self.statuses.values()),
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "http_versions": dict(sorted(self.versions.items())),
            "busy_ms": round(self.busy_seconds * 1000, 3),
            "devices": len(self.inventory), "pool": self.pool.stats(),
            "auth_failures": self._throttle.failures}
        if self.http3 is not None:
            found["http3"] = self.http3.as_dict()
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer one ASGI request (and the lifespan events)."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        started = time.monotonic()
        version = str(scope.get("http_version", "1.1"))
        try:
            answered = await self._answer(scope, receive, send)
            if answered is None:  # streamed
                self.statuses[200] += 1
                self.versions[version] += 1
                return
            status, body, kind = answered
            headers: list[tuple[bytes, bytes]] = []
        except _ClientGone:
            return  # nobody to answer: not an error of the proxy's
        except _Refusal as refusal:
            status, body, kind, headers = (refusal.status, refusal.text.encode(), b"text/plain",
                                           refusal.headers)
        finally:
            self.busy_seconds += time.monotonic() - started
        self.statuses[status] += 1  # counted as answered: a reading of the counts is not in them
        self.versions[version] += 1
        await _respond(send, status, body, kind, headers)

    async def _answer(self, scope: Scope, receive: Receive,
                      send: Send) -> tuple[int, bytes, bytes] | None:
        """The answer to send, or None when it was streamed already."""
        await self._authorize(scope)
        raw = scope.get("raw_path") or scope["path"].encode()
        path = raw.split(b"?", 1)[0].decode("ascii", "replace")
        if path == STATS_PATH:
            return 200, json.dumps(self.stats()).encode(), b"application/json"
        headers = dict(scope["headers"])
        device, rest = self._device(path, headers)
        method = scope["method"]
        if is_early(scope["headers"]) and not replay_safe(method, rest.encode()):
            raise _Refusal(TOO_EARLY, "not answered from early data: send it again once the "
                                      "handshake is done\n")
        fresh = _fresh(headers.get(b"x-ssh-connection"), self.policy.fresh_ssh)
        if rest.startswith(EXEC_PREFIX):
            if method not in ("GET", "HEAD"):
                raise _Refusal(405, "use GET\n", [(b"allow", b"GET, HEAD")])
            try:
                lines = [unquote_plus(p, errors="strict") for p in rest[len(EXEC_PREFIX):].split("/")
                         if p]
            except UnicodeError as exc:
                raise _Refusal(400, "command is not valid text\n") from exc
            await self._stream(device, lines, False, fresh, scope, receive, send)
            return None
        if rest == CONFIG_PATH:
            if method != "POST":
                raise _Refusal(405, "use POST\n", [(b"allow", b"POST")])
            body = await self._body(headers, receive)
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _Refusal(400, "body is not UTF-8 text\n") from exc
            lines = text.replace("\r\n", "\n").split("\n")
            await self._stream(device, lines, True, fresh, scope, receive, send)
            return None
        raise _Refusal(404, "not found: use /device/<name>/admin/exec/<command> or POST "
                            "/device/<name>/admin/config\n")

    async def _authorize(self, scope: Scope) -> None:
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            if given:  # a wrong guess (no credentials at all is the usual first request)
                log.warning("proxy https %s: bad credentials", _client(scope))
                await self._throttle.failed(source_of(scope.get("client")))
            raise _Refusal(401, "authorization required\n",
                           [(b"www-authenticate", b'Basic realm="mgmtbench proxy"')])

    def _device(self, path: str, headers: dict[bytes, bytes]) -> tuple[ProxyDevice, str]:
        """The device a request is for, and the API path after the device prefix."""
        if path.startswith(DEVICE_PREFIX):
            key, _, rest = path[len(DEVICE_PREFIX):].partition("/")
            key, rest = unquote(key), "/" + rest
        elif b"x-device" in headers:
            key, rest = headers[b"x-device"].decode("ascii", "replace"), path
        else:
            raise _Refusal(404, "no device: use /device/<name>/admin/... or an X-Device header\n")
        device = self.inventory.find(key)
        if device is None:
            raise _Refusal(404, f"unknown device {key!r}: not in the proxy's inventory\n")
        return device, rest

    async def _body(self, headers: dict[bytes, bytes], receive: Receive) -> bytes:
        limit = self.policy.max_body
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _Refusal(413, f"request body over {limit} bytes\n")
        chunks: list[bytes] = []
        size = 0
        limits = self.policy.limits
        clock = asyncio.get_running_loop().time
        start = clock()
        while True:
            # As the device's API (Apache mod_reqtimeout's body=20,MinRate=500): the time
            # allowed grows with the bytes received, so a drip never holds a connection forever.
            allowed = start + limits.body_timeout + size / max(1, limits.body_min_rate) - clock()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, allowed))
            except TimeoutError:
                raise _Refusal(408, f"request body too slow: {size} bytes in "
                               f"{clock() - start:.0f} s\n", [(b"connection", b"close")]) from None
            if message["type"] == "http.disconnect":
                raise _ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _Refusal(413, f"request body over {limit} bytes\n",
                               [(b"connection", b"close")])
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _stream(self, device: ProxyDevice, lines: list[str], config: bool, fresh: bool,
                      scope: Scope, receive: Receive, send: Send) -> None:
        """Run ``lines`` on the device, its output streamed to the client (see the module)."""
        stream = _Stream(send, head_only=scope["method"] == "HEAD")
        # The request is read: what comes next is the client leaving, if it does.
        watcher = asyncio.get_running_loop().create_task(_watch_disconnect(receive, stream))
        try:
            await self._run(device, lines, config, fresh, scope, stream.write)
        except _Refusal as refusal:
            if not stream.started:
                raise
            log.info("device %s: answer cut short: %s", device.name, refusal.text.strip())
            await stream.finish(f"\n% proxy: {refusal.text}".encode())
            return
        finally:
            watcher.cancel()
        await stream.finish()

    async def _run(self, device: ProxyDevice, lines: list[str], config: bool, fresh: bool,
                   scope: Scope, sink: Sink) -> None:
        timeout = self.policy.timeout
        max_output = self.policy.max_output

        async def work(conn: asyncssh.SSHClientConnection, target: Target) -> None:
            await run_commands(conn, device, target, lines, config, timeout, max_output, sink)

        try:
            async with asyncio.timeout(timeout):
                await self.pool.run(device, fresh, work, source_of(scope.get("client")))
        except PoolBusy as exc:
            log.info("%s", exc)
            raise _Refusal(503, f"{exc}: try again\n", [(b"retry-after", b"1")]) from exc
        except OutputTooLarge as exc:
            log.info("device %s: %s", device.name, exc)
            raise _Refusal(502, f"{exc}\n") from exc
        except TimeoutError as exc:
            raise _Refusal(504, f"device {device.name} did not answer within {timeout:g} s\n"
                           ) from exc
        except ClientError as exc:
            status, reason = _failure(exc, device)
            log.info("%s: %s", reason, exc)
            raise _Refusal(status, f"{reason}: {' '.join(str(exc).split())}\n") from exc


def _failure(exc: ClientError, device: ProxyDevice) -> tuple[int, str]:
    """The status and reason for an SSH failure."""
    if isinstance(exc, ClientTimeout) or isinstance(exc.__cause__, TimeoutError):
        return 504, f"device {device.name} did not answer in time"
    if isinstance(exc, AuthenticationFailed):
        return 502, f"authentication failed at device {device.name}"
    if isinstance(exc, ConnectionFailed):
        return 502, f"device {device.name} unreachable"
    return 502, f"SSH to device {device.name} failed"


class _Stream:
    """A streamed 200 answer: its head sent with the first piece (or at the end)."""

    def __init__(self, send: Send, head_only: bool) -> None:
        self._send, self._head_only = send, head_only
        self.started = False
        self.gone = False

    async def write(self, data: bytes) -> None:
        """Send a piece, once the connection has taken the one before; :class:`_ClientGone`
        once the client has left (the server drops sends after a disconnect without a word)."""
        if self.gone:
            raise _ClientGone
        await self._start()
        if data and not self._head_only:
            await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def finish(self, tail: bytes = b"") -> None:
        """Send ``tail`` and end the answer."""
        await self._start()
        await self._send({"type": "http.response.body",
                          "body": b"" if self._head_only else tail})

    async def _start(self) -> None:
        if not self.started:
            self.started = True
            await self._send({"type": "http.response.start", "status": 200,
                              "headers": [(b"content-type", b"text/plain; charset=us-ascii")]})


async def _watch_disconnect(receive: Receive, stream: _Stream) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    stream.gone = True


def _client(scope: Scope) -> str:
    peer = scope.get("client")
    return f"{peer[0]}:{peer[1]}" if isinstance(peer, (tuple, list)) and len(peer) > 1 else "?"


def _fresh(header: bytes | None, default: bool) -> bool:
    if header is None:
        return default
    value = header.strip().lower()
    if value not in (b"fresh", b"pooled"):
        raise _Refusal(400, "X-SSH-Connection: use fresh or pooled\n")
    return value == b"fresh"


async def _respond(send: Send, status: int, body: bytes, kind: bytes,
                   headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", kind), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Callable[[], Awaitable[dict[str, Any]]], send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
