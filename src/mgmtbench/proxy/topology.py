"""The edge proxy's lab: the WAN to the proxy, a campus link from the proxy to the devices.

::

    this namespace --wan (profile)--> proxy namespace --campus (2 ms)--> devices
       clients                          mgmtbench proxy                 emulator(s)

A :class:`~mgmtbench.lab.chain.LabChain` of two links with the proxy started in the middle hop
(on its service address, port 443) once the devices are up: its inventory is the devices behind
the campus link, their host keys checked. The direct path (clients here straight to the devices,
through the proxy's namespace as a router) crosses the same two links, so direct and proxied
modes are measured over one path. With ``headend=True`` the chain has a third link in front, the
access link (campus by default) from here to the tunnel's head-end (:mod:`mgmtbench.proxy.headend`):
an unmodified SSH client here talks SSH to the head-end, which sends the commands over the WAN
as HTTPS requests to the proxy, which runs them over SSH on the device, as the study's
``ssh-https-ssh`` modes do.

Every result records each link's configured and measured RTT (:meth:`EdgeLab.link_facts`).
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from mgmtbench.emulator.options import Credentials
from mgmtbench.errors import UsageError
from mgmtbench.lab.chain import ChainLink, LabChain
from mgmtbench.lab.profiles import LinkProfile, resolve
from mgmtbench.lab.runtimes.hop import HopRuntime
from mgmtbench.proxy.inventory import Inventory, ProxyDevice
from mgmtbench.proxy.pool import PoolSettings

PROXY_PORT = 443
HEADEND_PORT = 22
#: The SSH port of the head-end that talks HTTP/3 to the proxy (on the HTTPS one's address).
HEADEND_HTTP3_PORT = 2222


@dataclass(frozen=True)
class Endpoint:
    """Where a service of the edge lab answers, and what a client trusts it with."""

    address: str
    port: int
    trust: Path  # the proxy's CA file, or the head-end's known_hosts
    pid: int | None = None


class EdgeLab:
    """A two-link lab (three with the head-end) with the edge proxy between the links."""

    def __init__(
        self,
        wan: LinkProfile,
        campus: LinkProfile | None = None,
        *,
        headend: bool = False,
        headend_http3: bool = False,
        access: LinkProfile | None = None,
        devices: int = 1,
        platform: str = "cisco_ios",
        credentials: Credentials | None = None,
        authorized_keys: Path | None = None,
        backend: str = "auto",
        runtime: str = "netns",
        image: str | None = None,
        emulator_processes: int = 1,
        pool: PoolSettings | None = None,
        calibration_samples: int = 20,
    ) -> None:
        self.credentials = credentials or Credentials()
        self.authorized_keys = authorized_keys
        self.pool = pool or PoolSettings(per_device=4)
        links = [ChainLink("wan", wan), ChainLink("campus", campus or resolve("campus"))]
        if headend:
            links.insert(0, ChainLink("access", access or resolve("campus")))
        self.headend_enabled = headend
        self.headend_http3_enabled = headend_http3
        if headend_http3 and not headend:
            raise UsageError("the HTTP/3 head-end sits on the access link: ask for headend=True")
        self.chain = LabChain(links, devices=devices, platform=platform,
                              credentials=self.credentials, backend=backend, runtime=runtime,
                              image=image, emulator_processes=emulator_processes,
                              calibration_samples=calibration_samples)
        self.platform = platform
        self.proxy: Endpoint | None = None
        self.headend: Endpoint | None = None
        self.headend_http3: Endpoint | None = None  # the one that talks HTTP/3 to the proxy

    @property
    def proxy_hop(self) -> HopRuntime:
        """The proxy's namespace."""
        return self.chain.hops[-1]

    def link_facts(self) -> dict[str, Any]:
        """Each link's configured and measured RTT (``wan_measured_rtt_ms`` ...)."""
        return self.chain.link_facts()

    def proxy_stats(self) -> dict[str, Any]:
        """The proxy's counters (``GET /proxy/stats``): requests by status, its pool."""
        assert self.proxy is not None, "the edge lab is not up"
        request = urllib.request.Request(
            f"https://{self.proxy.address}:{self.proxy.port}/proxy/stats")
        creds = self.credentials
        token = base64.b64encode(f"{creds.username}:{creds.password}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        context = ssl.create_default_context(cafile=str(self.proxy.trust))
        with urllib.request.urlopen(request, context=context, timeout=10) as answer:
            stats: dict[str, Any] = json.loads(answer.read())
        return stats

    def up(self) -> Self:
        """Build the chain, then start the proxy (and the head-end)."""
        if self.proxy is not None:
            return self
        self.chain.up()
        try:
            self.proxy = self._start_proxy()
            if self.headend_enabled:
                self.headend = self._start_headend(self.proxy)
            if self.headend_http3_enabled:
                self.headend_http3 = self._start_headend(self.proxy, http3=True)
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Stop the services and remove the chain. Safe to call twice."""
        self.proxy = self.headend = self.headend_http3 = None
        self.chain.down()

    def __enter__(self) -> Self:
        return self.up()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.down()

    # --- services ---------------------------------------------------------------------------

    def _start_proxy(self) -> Endpoint:
        hop = self.proxy_hop
        inventory = hop.folder / "inventory.json"
        Inventory(ProxyDevice(d.hostname, d.address, d.ssh_port, self.platform)
                  for d in self.chain.devices).save(inventory)
        creds, pool = self.credentials, self.pool
        argv = [sys.executable, "-m", "mgmtbench.cli", "proxy", "--bind", hop.address,
                "--port", str(PROXY_PORT), "--inventory", str(inventory),
                "--known-hosts", str(self.chain.known_hosts),
                "--username", creds.username,
                "--password-file", str(_secret_file(hop.folder, "proxy", creds.password)),
                "--enable-password-file",
                str(_secret_file(hop.folder, "proxy-enable", creds.enable_secret)),
                "--pool-size", str(pool.size), "--per-device", str(pool.per_device),
                "--idle-timeout", str(pool.idle_timeout), "--state-dir", str(hop.folder)]
        process = hop.start_service("proxy", argv, "Press Ctrl-C")
        return Endpoint(hop.address, PROXY_PORT, hop.ca_file, process.pid)

    def _start_headend(self, proxy: Endpoint, http3: bool = False) -> Endpoint:
        """The head-end on the access hop: HTTPS to the proxy on port 22, or (``http3``) HTTP/3
        on :data:`HEADEND_HTTP3_PORT` with its own state folder (its own host key)."""
        hop = self.chain.hops[0]
        creds = self.credentials
        device = self.chain.devices[0]
        port, name = (HEADEND_HTTP3_PORT, "headend-h3") if http3 else (HEADEND_PORT, "headend")
        folder = hop.folder / name if http3 else hop.folder
        argv = [sys.executable, "-m", "mgmtbench.cli", "headend", "--bind", hop.address,
                "--port", str(port), "--proxy", f"https://{proxy.address}:{proxy.port}",
                "--proxy-ca", str(proxy.trust), "--device", device.hostname,
                "--platform", self.platform, "--enable-password-file",
                str(_secret_file(hop.folder, f"{name}-enable", creds.enable_secret)),
                "--username", creds.username,
                "--password-file", str(_secret_file(hop.folder, name, creds.password)),
                "--state-dir", str(folder), *(["--proxy-http3"] if http3 else [])]
        if self.authorized_keys is not None:
            argv += ["--authorized-keys", str(self.authorized_keys)]
        process = hop.start_service(name, argv, "Press Ctrl-C")
        return Endpoint(hop.address, port, folder / "known_hosts" if http3 else hop.known_hosts,
                        process.pid)


def _secret_file(folder: Path, name: str, secret: str) -> Path:
    """``folder/NAME.secret``, readable by its owner only, holding ``secret``: how a service's
    password reaches it without being in its argv (``/proc/PID/cmdline`` is world-readable)."""
    path = folder / f"{name}.secret"
    path.unlink(missing_ok=True)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
        handle.write(secret + "\n")
    return path
