"""niquests over the device's HTTP/3 API: ``niquests-h3`` (:class:`niquests.Session`) and
``niquests-h3-async`` (:class:`niquests.AsyncSession`); QUIC through urllib3-future and qh3.

HTTP/3 only, from the first request: the session is made with ``disable_http1=True,
disable_http2=True``, which makes urllib3-future dial QUIC at once (``backend/hface.py``:
with both TCP protocols disabled it takes the origin itself as the HTTP/3 endpoint, no Alt-Svc
discovery and no TCP first); nothing can fall back, and every response must still say HTTP/3
(``response.http_version == 30``) or the iteration fails with :class:`ClientError`. The
device's certificate is verified against ``target.ca_file`` (``verify=`` its path: qh3 loads it
as the CA file); environment settings are ignored (``trust_env=False``).

Modes (:mod:`mgmtbench.clients.http3`): ``fresh-conn`` (a new session, so a new QUIC connection,
per iteration, its GETs one after another, then closed), ``keep-alive`` and ``batch-post`` (one
session from ``setup``, opened by an untimed GET; every timed response must come over that
connection, else :class:`ClientError`, as :mod:`mgmtbench.clients.httpx.kept` checks for httpx;
:func:`_reused` says whether a response came over a connection already open).

Not offered, because niquests cannot do them: ``0rtt-resumption`` and ``0rtt``. urllib3-future
(2.25.904) never resumes a QUIC session: its ``QuicTLSConfig`` has a ``session_ticket`` field,
but nothing sets it, and the qh3 connection it makes (``contrib/hface/protocols/http3/_qh3.py``)
has no session ticket handler, so the tickets the device sends are dropped and every connection
is a full handshake without early data. A mode under either name would time ``fresh-conn``.

Round trips are not counted: urllib3-future makes and reads its UDP socket itself, with no
hook to wrap it.

Knobs (:mod:`.knobs`, none measured to matter): ``happy-eyeballs`` (``happy_eyeballs=True``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, ClassVar

from mgmtbench.clients.base import AsyncClient, Client, Transport
from mgmtbench.clients.http3 import Http3Target, authority, checked_body
from mgmtbench.clients.httpx.adapter import CONFIG, HEADERS, WARMUP, exec_path
from mgmtbench.clients.niquests_h3.knobs import HAPPY_EYEBALLS, KNOBS
from mgmtbench.clients.translate import Translator, optional_errors, translate_errors
from mgmtbench.clients.tuning import Knob
from mgmtbench.errors import ClientError, ClientTimeout, ConnectionFailed

try:
    import niquests
except ImportError:  # reported by Client.missing()
    niquests = None  # type: ignore[assignment]

__all__ = ["NiquestsH3AsyncClient", "NiquestsH3Client"]

TIMEOUT = 30.0
#: niquests' number for HTTP/3 in ``Response.http_version``.
HTTP3 = 30

ERRORS = optional_errors(
    {OSError: ConnectionFailed}, niquests, lambda: {
        niquests.exceptions.RequestException: ClientError,
        niquests.exceptions.ConnectionError: ConnectionFailed,
        niquests.exceptions.SSLError: ConnectionFailed,
        niquests.exceptions.Timeout: ClientTimeout,
    })


def _reused(response: Any) -> bool:
    """Whether the response came over a connection that was open before its request:
    urllib3-future copies its connection's info into each response, with the time it took to
    set the connection up, which is zero on a connection it reused."""
    info = response.conn_info
    if info is None or info.established_latency is None:
        raise ClientError("niquests: no connection information on the response")
    return bool(info.established_latency == timedelta(0))


class _Niquests(Http3Target):
    """What both adapters share: the session's settings, and each response's checks."""

    name: ClassVar[str]
    mode: str
    transport = Transport.HTTP3
    modes: ClassVar[tuple[str, ...]] = ("fresh-conn", "keep-alive", "batch-post")
    extra = "http3"
    needs: ClassVar[tuple[str, ...]] = ("niquests", "qh3")
    all_knobs: ClassVar[tuple[Knob, ...]] = KNOBS

    _kept = False  # True once setup has opened the kept connection

    def _session_options(self, happy_eyeballs: bool) -> dict[str, Any]:
        """The session's settings; ``happy_eyeballs``: the knob's."""
        target = getattr(self, "target")  # noqa: B009  # the Client's, set by its constructor
        return {"disable_http1": True, "disable_http2": True, "verify": str(target.ca_file),
                "base_url": f"https://{authority(target)}",
                "happy_eyeballs": happy_eyeballs}

    def _prepare(self, session: Any) -> Any:
        target = getattr(self, "target")  # noqa: B009
        session.trust_env = False
        session.auth = (target.username, target.password)
        session.headers.update(HEADERS)
        return session

    def _body(self, response: Any) -> str:
        """The body of an HTTP/3 200 answer on the right connection."""
        method, path = response.request.method, response.request.path_url
        if response.http_version != HTTP3:
            raise ClientError(f"{self.name}: {method} {path} was answered over HTTP/"
                              f"{response.http_version / 10:g}, not HTTP/3")
        if self._kept and not _reused(response):
            raise ClientError(f"{self.name}: {self.mode}: a request went out on a new "
                              "connection, not the one kept from setup")
        return checked_body(self.name, method, path, response.status_code, response.text or "")

    def _keep(self, response: Any) -> None:
        """From now on every response must come over ``response``'s connection."""
        self._body(response)
        self._kept = True

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)


class NiquestsH3Client(_Niquests, Client):
    """niquests.Session over HTTP/3."""

    name = "niquests-h3"
    _session: Any = None

    def _new_session(self) -> Any:
        return self._prepare(niquests.Session(
            **self._session_options(self.tuned_with(HAPPY_EYEBALLS.name))))

    def setup(self) -> None:
        """Untimed: the kept session and its connection."""
        if self.mode == "fresh-conn":
            return
        with self._translating():
            self._session = self._new_session()
            try:
                self._keep(self._session.get(exec_path([WARMUP]), timeout=TIMEOUT))
            except BaseException:
                self.teardown()  # a failed setup leaves nothing open
                raise

    def run(self, commands: list[str]) -> str:
        """One iteration in the adapter's mode."""
        with self._translating(), self._session_for_iteration() as session:
            if self.mode == "batch-post":
                return self._body(session.post(CONFIG, data="\n".join(commands).encode(),
                                               timeout=TIMEOUT))
            return "".join([self._body(session.get(exec_path([c]), timeout=TIMEOUT))
                            for c in commands])

    @contextlib.contextmanager
    def _session_for_iteration(self) -> Iterator[Any]:
        if self._session is not None:
            yield self._session
            return
        with self._new_session() as session:
            yield session

    def teardown(self) -> None:
        """Close the kept session."""
        if self._session is not None:
            with self._translating():
                self._session.close()
        self._session = None


class NiquestsH3AsyncClient(_Niquests, AsyncClient):
    """niquests.AsyncSession over HTTP/3."""

    name = "niquests-h3-async"
    _session: Any = None

    def _new_session(self) -> Any:
        return self._prepare(niquests.AsyncSession(
            **self._session_options(self.tuned_with(HAPPY_EYEBALLS.name))))

    async def setup(self) -> None:
        """Untimed: the kept session and its connection."""
        if self.mode == "fresh-conn":
            return
        async with self._translating():
            self._session = self._new_session()
            try:
                self._keep(await self._session.get(exec_path([WARMUP]), timeout=TIMEOUT))
            except BaseException:
                await self.teardown()  # a failed setup leaves nothing open
                raise

    async def run(self, commands: list[str]) -> str:
        """One iteration in the adapter's mode."""
        async with self._translating():
            if self._session is not None:
                return await self._iteration(self._session, commands)
            async with self._new_session() as session:
                return await self._iteration(session, commands)

    async def _iteration(self, session: Any, commands: list[str]) -> str:
        if self.mode == "batch-post":
            return self._body(await session.post(CONFIG, data="\n".join(commands).encode(),
                                                 timeout=TIMEOUT))
        return "".join([self._body(await session.get(exec_path([c]), timeout=TIMEOUT))
                        for c in commands])

    async def teardown(self) -> None:
        """Close the kept session."""
        if self._session is not None:
            async with self._translating():
                await self._session.close()
        self._session = None
