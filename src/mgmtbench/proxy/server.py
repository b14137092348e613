"""Serving the edge proxy: :class:`EdgeProxy` on the caller's event loop, :class:`ProxyThread`
beside it (tests, notebooks).

HTTPS as the emulator serves it (:func:`mgmtbench.emulator.https.server.serve_https`: Hypercorn,
HTTP/1.1 keep-alive and HTTP/2 over ALPN, TLS 1.3 with a throwaway CA from
:mod:`mgmtbench.emulator.https.tls`); the CA goes to ``STATE_DIR/tls/ca.pem`` for clients to trust.
And HTTP/3 as the devices serve it (:func:`mgmtbench.emulator.http3.server.serve_http3`: QUIC on
UDP, the same port number, certificate and :class:`~mgmtbench.proxy.app.ProxyApi`; session
tickets, 0-RTT with RFC 8470's 425 for what is not safe to replay), unless ``http3`` is off;
its counts (QUIC connections, handshakes, resumptions) are in ``/proxy/stats``.

HTTPS connections are capped at accept, before TLS, as a device caps them
(:class:`~mgmtbench.emulator.https.accept.ConnectionCaps` of ``policy.limits``: in all and per
source address), and :func:`~mgmtbench.proxy.descriptors.open_files_for` raises the process's
open-files limit to what those caps and the pool can hold, so a flood is refused at the cap
instead of running the proxy out of descriptors. A
:class:`~mgmtbench.emulator.memtrim.MemoryTrimmer` gives the C heap back to the system once
connections have closed and things are quiet (as the emulator's does; after one connection
rather than 64, since a proxy's big answers free tens of MiB on a single connection).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from mgmtbench.emulator.device.http3 import Http3Counts
from mgmtbench.emulator.http3.server import serve_http3
from mgmtbench.emulator.https.server import serve_https
from mgmtbench.emulator.https.tls import TlsFiles, make_tls_files, server_context
from mgmtbench.emulator.memtrim import MemoryTrimmer, TrimPolicy
from mgmtbench.errors import UsageError
from mgmtbench.listening import bound
from mgmtbench.loopthread import LoopThread
from mgmtbench.proxy.app import ProxyApi, ProxyPolicy
from mgmtbench.proxy.descriptors import open_files_for
from mgmtbench.proxy.inventory import Inventory
from mgmtbench.proxy.pool import PoolSettings, SshPool
from mgmtbench.targets import Login


@dataclass(frozen=True)
class ProxyOptions:
    """Everything ``mgmtbench proxy`` configures."""

    inventory: Inventory
    device_login: Login  # how the proxy logs in to the devices
    policy: ProxyPolicy = field(default_factory=ProxyPolicy)
    pool: PoolSettings = field(default_factory=PoolSettings)
    bind: str = "127.0.0.1"
    port: int = 0  # 0: any free port
    known_hosts: Path | None = None  # the devices' host keys (None: not checked)
    state_dir: Path | None = None  # the CA and certificate (None: a temporary folder)
    tls_names: tuple[str, ...] = ()  # more names the certificate is valid for
    http3: bool = True  # serve HTTP/3 too, on UDP, the HTTPS port's number


class EdgeProxy:
    """The proxy on the running event loop: :meth:`start`, then :meth:`stop`."""

    def __init__(self, options: ProxyOptions) -> None:
        self.options = options
        self.port = 0
        self.tls: TlsFiles | None = None
        self.api: ProxyApi | None = None
        self.http3_counts = Http3Counts()
        self._sockets: list[socket.socket] = []
        self._udp: list[socket.socket] = []
        self._task: asyncio.Task[None] | None = None
        self._http3_task: asyncio.Task[None] | None = None
        self._trim_task: asyncio.Task[None] | None = None
        self._shutdown = asyncio.Event()
        self._state_dir: Path | None = None

    @property
    def url(self) -> str:
        """``https://bind:port``."""
        return f"https://{self.options.bind}:{self.port}"

    async def start(self) -> None:
        """Bind, make the certificate and serve; a UsageError if the port is taken or the
        known_hosts file cannot be read."""
        opts = self.options
        known = None
        if opts.known_hosts is not None:
            try:
                known = asyncssh.read_known_hosts(str(opts.known_hosts))
            except (OSError, ValueError) as exc:
                raise UsageError(f"cannot read the devices' known_hosts {opts.known_hosts}: "
                                 f"{exc}") from exc
        self._state_dir = opts.state_dir or Path(tempfile.mkdtemp(prefix="mgmtbench-proxy-"))
        self.tls = make_tls_files(self._state_dir / "tls", [opts.bind, *opts.tls_names])
        open_files_for(opts.policy.limits, opts.pool, len(opts.inventory))
        self._sockets, self._udp = _bind(opts.bind, opts.port, opts.http3)
        self.port = int(self._sockets[0].getsockname()[1])
        self.api = ProxyApi(opts.inventory, SshPool(opts.pool, opts.device_login, known),
                            opts.policy)
        loop = asyncio.get_running_loop()
        self._trim_task = loop.create_task(MemoryTrimmer(TrimPolicy(min_closed=1)).run())
        self._task = loop.create_task(
            _serve(serve_https(self.api, self._sockets, server_context(self.tls), self._shutdown,
                               opts.policy.limits, names=["proxy"])))
        if self._udp:
            self.api.http3 = self.http3_counts
            self._http3_task = loop.create_task(_serve(serve_http3(
                self.api, self._udp, self.tls, self._shutdown, names=["proxy"],
                counts=[self.http3_counts])))

    async def serve_forever(self) -> None:
        """Return once :meth:`request_stop` is called."""
        await self._shutdown.wait()

    def request_stop(self) -> None:
        """Make :meth:`serve_forever` return."""
        self._shutdown.set()

    async def stop(self) -> None:
        """Stop serving, close the pool's connections, remove a temporary state folder."""
        self._shutdown.set()
        for task in (self._task, self._http3_task):
            if task is not None:
                done, _ = await asyncio.wait({task}, timeout=3)
                if not done:
                    task.cancel()
                    await asyncio.wait({task}, timeout=3)
        self._task = self._http3_task = None
        if self._trim_task is not None:
            self._trim_task.cancel()
            await asyncio.wait({self._trim_task}, timeout=3)
            self._trim_task = None
        if self.api is not None:
            await self.api.pool.close()
        for sock in [*self._sockets, *self._udp]:
            sock.close()
        self._sockets.clear()
        self._udp.clear()
        if self.options.state_dir is None and self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)


async def _serve(server: Awaitable[None]) -> None:
    await server


#: Tries at a port for both TCP and UDP when any free port will do (the TCP port's number can
#: be taken on UDP).
ANY_PORT_TRIES = 20


def _bind(host: str, port: int, udp: bool) -> tuple[list[socket.socket], list[socket.socket]]:
    """The HTTPS listener and (``udp``) the HTTP/3 socket on the same port number."""
    for _ in range(ANY_PORT_TRIES if port == 0 and udp else 1):
        tcp = bound("proxy", host, port, socket.SOCK_STREAM)
        if not udp:
            return [tcp], []
        try:
            return [tcp], [bound("UDP", host, int(tcp.getsockname()[1]), socket.SOCK_DGRAM)]
        except UsageError:
            tcp.close()
            if port != 0:
                raise
    raise UsageError(f"no port on {host} free on both TCP and UDP after {ANY_PORT_TRIES} tries: "
                     "give --port, or --no-http3")


class ProxyThread(LoopThread):
    """An :class:`EdgeProxy` on its own event loop in a background thread::

        with ProxyThread(options) as proxy:
            httpx.get(f"{proxy.url}/device/R1/admin/exec/show+clock", ...)
    """

    def __init__(self, options: ProxyOptions) -> None:
        self.proxy = EdgeProxy(options)
        super().__init__(self.proxy, "mgmtbench-proxy")

    @property
    def url(self) -> str:
        """``https://bind:port``."""
        return self.proxy.url

    @property
    def ca_file(self) -> Path:
        """The CA that verifies the proxy's certificate."""
        assert self.proxy.tls is not None
        return self.proxy.tls.ca
