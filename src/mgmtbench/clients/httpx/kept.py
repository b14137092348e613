"""The connection a kept mode opens in ``setup``, held and checked for the whole benchmark.

httpx closes a pooled connection that has been idle ``keepalive_expiry`` seconds (5 s by
default) and opens a new one at the next request. Between a kept mode's untimed ``setup`` and its
timed rounds the benchmark does untimed work (the warm-up round's checks, the wire tap's start),
which can pass 5 s on a slow machine; the next timed round would then pay for TCP and TLS and
report a handshake as ``keep-alive``. The study's Go client holds its idle connections 90 s (Go's
``IdleConnTimeout``) and the device 75 s, so the kept modes hold theirs for as long as the client
lives (``keepalive_expiry=None``), and every timed response is checked to have come over the
connection ``setup`` opened: a mode that says "one kept connection" either times exactly that or
fails.
"""

from __future__ import annotations

from mgmtbench.errors import ClientError

try:
    import httpx
except ImportError:  # reported by Client.missing()
    httpx = None  # type: ignore[assignment]


def limits(kept: bool, one_connection: bool = False) -> httpx.Limits:
    """httpx's default pool limits, but a kept client never lets its connection expire, and
    ``one_connection`` allows one connection at most (HTTP/2 multiplexing must not spread)."""
    return httpx.Limits(max_connections=1 if one_connection else None,
                        keepalive_expiry=None if kept else 5.0)


def hold(client: httpx.Client | httpx.AsyncClient, name: str, mode: str,
         response: httpx.Response) -> None:
    """From now on, every response of ``client`` must come over ``response``'s connection (an
    httpx response hook; any other raises :class:`ClientError` from the request)."""
    kept = response.extensions.get("network_stream")
    if kept is None:
        raise ClientError(f"{name}: {mode}: httpx reported no connection for the kept one")

    def check(answer: httpx.Response) -> None:
        if answer.extensions.get("network_stream") is not kept:
            raise ClientError(f"{name}: {mode}: a request went out on a new connection, not "
                              f"the one kept from setup (the round would time a handshake)")

    async def check_async(answer: httpx.Response) -> None:
        check(answer)

    hook = check_async if isinstance(client, httpx.AsyncClient) else check
    client.event_hooks = {"response": [hook]}
