"""What the HTTP/3 adapters share: the HTTPS API's requests, carried over QUIC.

The device serves its HTTPS API over HTTP/3 on UDP ``target.http3_port`` (None: it serves no
HTTP/3): the same paths, Basic auth, user agent and outputs as the HTTPS API
(:mod:`mgmtbench.clients.httpx.adapter`), TLS 1.3 inside QUIC, verified against ``target.ca_file``
for ``target.host``. A target without an HTTP/3 port or a CA file is refused in the adapter's
constructor (:class:`~mgmtbench.errors.UsageError`), so a benchmark skips it with that sentence.

What one iteration does in each mode (:data:`~mgmtbench.clients.base.HTTP3_MODES`), as the
study's ``internal/bench/http3.go`` does it, and ours:

- ``fresh-conn``: ONE new QUIC connection per iteration (full handshake), the commands' GETs one
  after another on it, then closed: HTTPS ``conn-per-iteration``, not HTTPS ``fresh-conn``.
- ``keep-alive``: one connection made in ``setup`` (an untimed GET), one GET per command on it.
- ``batch-post``: on the kept connection, one ``POST /admin/config`` of every command.
- ``0rtt-resumption``: as ``fresh-conn``, but each connection resumes the session ticket of the
  connection before it (the first from an untimed warm-up connection in ``setup``), and its
  requests wait for the handshake: a 1-RTT resumption, no early data.
- ``0rtt`` (ours): as ``0rtt-resumption``, but the first GET goes out as 0-RTT early data with
  the ClientHello, and the Initial carries the address token (NEW_TOKEN) of the connection
  before it, so the device may send the whole first answer with its handshake; the rest after
  the handshake. The device takes each ticket and token once, so the next iteration needs this
  connection's: an iteration waits for the ticket when its commands are done before it came
  (one command: a round trip more).
"""

from __future__ import annotations

from typing import ClassVar

from mgmtbench.errors import AuthenticationFailed, ClientError, UsageError
from mgmtbench.targets import Target

__all__ = ["STATUS_TEXT", "Http3Target", "authority", "checked_body"]

#: How much of a refused answer's body goes into the error message.
STATUS_TEXT = 200


def authority(target: Target) -> str:
    """``host:port`` of the target's HTTP/3 API (the ``:authority`` of its requests)."""
    host = f"[{target.host}]" if ":" in target.host else target.host
    return f"{host}:{target.http3_port}"


def checked_body(client: str, method: str, path: str, status: int, body: str) -> str:
    """``body`` of a 200 answer; :class:`AuthenticationFailed` for 401, :class:`ClientError`
    for any other status."""
    if status != 200:
        error = AuthenticationFailed if status == 401 else ClientError
        raise error(f"{client}: {method} {path} -> {status} {body.strip()[:STATUS_TEXT]}")
    return body


class Http3Target:
    """The check every HTTP/3 adapter makes of its target (mixed into the adapter class)."""

    name: ClassVar[str]

    @classmethod
    def check(cls, target: Target) -> None:
        """:class:`UsageError` without an HTTP/3 port or a CA file; the SSH login method and
        algorithms do not apply (the API logs in with the password, as over HTTPS)."""
        if target.http3_port is None:
            raise UsageError(f"client {cls.name}: target {target.host} serves no HTTP/3 (it has "
                             "no http3_port)")
        if target.ca_file is None:
            raise UsageError(f"client {cls.name}: target {target.host} has no CA file to verify "
                             "the device's certificate")
