"""The HTTPS side of a device: the ASA-style management API (an ASGI application).

- ``GET /admin/exec/<cmd>[/<cmd>...]``: run exec commands (``+`` or ``%20`` for spaces, ``%2F`` for a
  slash inside a command); the outputs, concatenated, as ``text/plain``.
- ``POST /admin/config``: a newline-delimited body run in configuration mode (configuration lines
  applied, ``show`` commands answered).
- RESTCONF (RFC 8040) under ``/restconf`` and ``/.well-known/host-meta``: answered by
  :mod:`mgmtbench.emulator.restconf` (the modelled data, and the study's ``cli:`` envelope).
- The platform's own API where it has one (EOS's eAPI at ``POST /command-api``):
  :mod:`mgmtbench.emulator.platformapi`.
- ``GET /mgmtbench/ssh-windows``: the emulator's own diagnostics, not the platform's: the client
  windows the device's SSH bulk source saw, as a JSON list (:mod:`.windows`).
- ``GET /mgmtbench/http3``: the same kind, what the device's HTTP/3 server counted (connections,
  handshakes, resumptions, early-data requests answered and refused, requests), as a JSON object
  (:mod:`mgmtbench.emulator.device.http3`).
- A request marked ``Early-Data: 1`` (the HTTP/3 server marks those it received in 0-RTT, RFC
  8470) is answered only if it is safe to replay (``show`` commands), else ``425 Too Early``
  (:mod:`mgmtbench.emulator.http3.early`).
- HTTP Basic auth (``401`` with ``WWW-Authenticate`` otherwise; wrong credentials are answered
  after :attr:`Limits.auth_failure_delay`, one source's in turn), ``413`` for bodies, command
  counts and configuration lines over the limits, ``408`` for a body slower than
  :attr:`Limits.body_timeout` plus a second per :attr:`Limits.body_min_rate` bytes.

Output is sent a chunk at a time, each once the connection has taken the one before, so a client
that stops reading stops the output (long output, ``show bulk-output``, is made as it is sent).

:func:`serve_https` (:mod:`.accept`) serves it on the SSH server's loop, on listening sockets
bound by the caller: connection caps at accept, TLS, HTTP/1.1 keep-alive by :mod:`.http1`, HTTP/2
(ALPN) by Hypercorn.
"""

from __future__ import annotations

import asyncio
import base64
import hmac
import json
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote_plus

from mgmtbench.emulator.cli.session import CHUNK, CliSession, Mode, Reply
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.device.http3 import HTTP3_PATH
from mgmtbench.emulator.device.windows import WINDOWS_PATH
from mgmtbench.emulator.guard import AuthThrottle, source_of
from mgmtbench.emulator.http3.early import TOO_EARLY, is_early, replay_safe
from mgmtbench.emulator.https.accept import serve_https
from mgmtbench.emulator.options import Credentials, Limits
from mgmtbench.emulator.platformapi import ApiRequest, api_for
from mgmtbench.emulator.restconf.api import Answer, RestconfApi, is_restconf

#: Seconds of CLI work a POST does before it lets the loop's other tasks run (an 8,000-line
#: configuration takes seconds: other clients of every device are served in between).
CLI_SLICE = 0.02

__all__ = ["DeviceApi", "serve_https"]

log = logging.getLogger("mgmtbench.emulator")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
#: An ASGI application (the device API here; the edge proxy's API is served the same way).
AsgiApp = Callable[[Scope, Receive, Send], Awaitable[None]]

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
                 limits: Limits, user_agent: str | None = None) -> None:
        self._devices = devices
        # The User-Agent prefix /admin/ requests must carry (the ASA's ASDM agent); None: any.
        self._user_agent = None if user_agent is None else user_agent.encode()
        self._limits = limits
        self._throttle = AuthThrottle(limits)
        self._restconf = RestconfApi(max_commands=limits.max_commands)
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
            path = (scope.get("raw_path") or scope["path"].encode()).split(b"?", 1)[0]
            if is_early(scope["headers"]) and not replay_safe(scope["method"], path):
                raise _Refusal(TOO_EARLY, "not answered from early data: send it again once "
                               "the handshake is done\n")
            self._check_agent(scope)
            await self._authorize(scope, device)
            if is_restconf(path):
                body = (await self._body(scope, receive)
                        if scope["method"] in ("POST", "PUT", "PATCH") else b"")
                await _send_answer(send, await self._restconf.answer(
                    device, scope["method"], path, scope.get("query_string", b""),
                    dict(scope["headers"]), body))
                return
            api = api_for(device, path)
            if api is not None:
                body = await self._body(scope, receive) if scope["method"] == "POST" else b""
                headers = dict(scope["headers"])
                reply = await api(device, ApiRequest(
                    scope["method"], body, headers.get(b"content-type", b"").decode("latin-1"),
                    self._limits))
                await _send_answer(send, Answer(reply.status, [
                    (b"content-type", reply.content_type.encode())], reply.body))
                return
            body = await self._body(scope, receive) if scope["method"] == "POST" else b""
            status, text = await self._handle(scope, device, body)
            if _one_piece(text):  # sent at once: no piece after which to stop
                await _respond(send, status, text)
                return
            # The request is read: what comes next is the client leaving, if it does. Then the
            # rest of the answer is neither made nor sent.
            gone = asyncio.Event()
            watcher = asyncio.create_task(_watch_disconnect(receive, gone))
            try:
                await _respond(send, status, text, gone=gone)
            finally:
                watcher.cancel()
        except _Refusal as refusal:
            try:
                await _respond(send, refusal.status, refusal.text, refusal.headers)
            except OSError as exc:  # closing after a 408 while the client still sends
                log.info("%s https %s: connection closed with the answer: %s", name, client, exc)
        except _ClientGone:
            log.info("%s https %s: client disconnected mid-request", name, client)
        except OSError as exc:  # a connection broken under a send (TLS)
            log.info("%s https %s: connection closed mid-answer: %s", name, client, exc)

    def _device(self, scope: Scope) -> Device:
        host, port = (scope.get("server") or ("", 0))[:2]
        # A device bound to a wildcard address (the device image's 0.0.0.0) answers on every
        # local address, which is what the request reports: look it up by its port then.
        device = (self._devices.get((host, port)) or self._devices.get(("0.0.0.0", port))
                  or self._devices.get(("::", port)))
        if device is None:
            raise _Refusal(404, "no device on this port\n")
        return device

    def _check_agent(self, scope: Scope) -> None:
        """Refuse an /admin/ request without the platform's User-Agent (when the rule is on)."""
        if self._user_agent is None or not scope["path"].startswith("/admin/"):
            return
        agent = dict(scope["headers"]).get(b"user-agent", b"")
        if not agent.startswith(self._user_agent):
            raise _Refusal(403, f"this interface answers {self._user_agent.decode()} clients: "
                           f"send User-Agent: {self._user_agent.decode()}/...\n")

    async def _authorize(self, scope: Scope, device: Device) -> None:
        given = dict(scope["headers"]).get(b"authorization", b"")
        if not hmac.compare_digest(given, self._expected):
            if given:  # a wrong guess (no credentials at all is the usual first request)
                client = "{}:{}".format(*(scope.get("client") or ("?", 0)))
                log.warning("%s https %s: bad credentials", device.hostname, client)
                await self._throttle.failed(source_of(scope.get("client")))
            realm = f'Basic realm="{device.hostname}"'.encode()
            raise _Refusal(401, "authorization required\n", [(b"www-authenticate", realm)])

    async def _body(self, scope: Scope, receive: Receive) -> bytes:
        limit = self._limits.max_body
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _Refusal(413, f"request body over {limit} bytes\n")
        chunks: list[bytes] = []
        size = 0
        clock = asyncio.get_running_loop().time
        start = clock()
        while True:
            # Apache mod_reqtimeout's body=20,MinRate=500: the time allowed grows with the
            # bytes received, so a slow link gets through and a drip never holds on forever.
            allowed = (start + self._limits.body_timeout
                       + size / max(1, self._limits.body_min_rate) - clock())
            try:
                message = await asyncio.wait_for(receive(), max(0.0, allowed))
            except TimeoutError:
                raise _Refusal(408, f"request body too slow: {size} bytes in "
                               f"{clock() - start:.0f} s\n", [(b"connection", b"close")]) from None
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

    async def _handle(self, scope: Scope, device: Device,
                      body: bytes) -> tuple[int, str | Sequence[Reply]]:
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
            if len(lines) > self._limits.max_commands:
                raise _Refusal(413, f"too many commands in one request: {len(lines)} (limit "
                               f"{self._limits.max_commands})\n")
            return 200, await self._run(device, Mode.PRIV, lines)
        if path == CONFIG_PATH.encode():
            if method != "POST":
                raise _Refusal(405, "use POST\n", [(b"allow", b"POST")])
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _Refusal(400, "body is not UTF-8 text\n") from exc
            lines = text.replace("\r\n", "\n").split("\n")
            count = sum(1 for line in lines if line.strip())
            if count > self._limits.max_config_lines:
                raise _Refusal(413, f"too many configuration lines in one request: {count} "
                               f"(limit {self._limits.max_config_lines})\n")
            return 200, await self._run(device, Mode.CONFIG, lines)
        if path == WINDOWS_PATH.encode() and method in ("GET", "HEAD"):
            return 200, json.dumps([r.as_dict() for r in device.ssh_windows.records()])
        if path == HTTP3_PATH.encode() and method in ("GET", "HEAD"):
            return 200, json.dumps(device.http3_counts.as_dict())
        raise _Refusal(404, "not found: use /admin/exec/<command> or POST /admin/config\n")


    async def _run(self, device: Device, mode: Mode, lines: list[str]) -> list[Reply]:
        """Run ``lines`` in order; their replies (long output not made yet). The command that
        would take the output over ``max_request_output`` gets the device's refusal and the
        rest are not run, as over SSH."""
        limits = self._limits
        session = CliSession(device, mode=mode, max_line=limits.max_line,
                             max_output=limits.max_output)
        delay = device.processing_delay
        replies: list[Reply] = []
        size = 0
        yielded = time.monotonic()
        for line in lines:
            if line.strip() and delay:
                await asyncio.sleep(delay)
            reply = session.execute(line)
            if time.monotonic() - yielded > CLI_SLICE:  # a long POST: let the others in
                await asyncio.sleep(0)
                yielded = time.monotonic()
            if size + reply.size > limits.max_request_output:
                replies.append(session.too_long(size + reply.size, limits.max_request_output,
                                                "per request"))
                break
            size += reply.size
            replies.append(reply)
            if reply.close:
                break
        return replies


def _one_piece(body: str | Sequence[Reply]) -> bool:
    """Whether :func:`_respond` sends ``body`` in one piece (short, nothing made as it is sent):
    most answers. Those skip the disconnect watcher, a task per request."""
    if isinstance(body, str):
        return len(body) < CHUNK
    return all(r.more is None for r in body) and sum(r.size for r in body) < CHUNK


async def _send_answer(send: Send, answer: Answer) -> None:
    """A RESTCONF reply, in one piece."""
    await send({"type": "http.response.start", "status": answer.status,
                "headers": [*answer.headers,
                            (b"content-length", str(len(answer.body)).encode())]})
    await send({"type": "http.response.body", "body": answer.body})


async def _watch_disconnect(receive: Receive, gone: asyncio.Event) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set()


async def _respond(send: Send, status: int, body: str | Sequence[Reply],
                   headers: list[tuple[bytes, bytes]] | None = None,
                   gone: asyncio.Event | None = None) -> None:
    """Answer with ``body``: a text, or replies whose output is sent in pieces of about
    :data:`CHUNK` bytes (one piece for short answers), each once the connection has taken the
    one before (the server waits while the transport's buffer is full). Stops (raising
    :class:`_ClientGone`) once ``gone`` is set: the server takes sends after a disconnect
    without a word and drops them."""
    replies = [Reply(body)] if isinstance(body, str) else body
    # Filtered streamed output has no length before it is made: then sent chunked.
    length = ([(b"content-length", str(sum(r.size for r in replies)).encode())]
              if all(r.exact_size for r in replies) else [])
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"text/plain; charset=us-ascii"),
            *length,
            *(headers or []),
        ],
    })
    pending: list[bytes] = []
    size = 0
    for reply in replies:
        async for chunk in reply.stream():
            pending.append(chunk.encode("ascii", "replace"))
            size += len(chunk)
            if size >= CHUNK:
                await send({"type": "http.response.body", "body": b"".join(pending),
                            "more_body": True})
                pending.clear()
                size = 0
                await asyncio.sleep(0)  # let the disconnect watcher run
                if gone is not None and gone.is_set():
                    raise _ClientGone
    await send({"type": "http.response.body", "body": b"".join(pending)})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
