"""What a host of an inventory is like, measured from here: reachability, login, platform, RTT
and SSH/TLS facts (``mgmtbench inventory check``, and the facts a benchmark records).

Per host, within its time-out, nothing but its own address and ports:

1. **TCP connect RTT**: ``samples`` TCP connects to the SSH port (the HTTPS port if SSH is
   closed), each timed from ``connect()`` to the kernel's answer, closed at once; the median.
   It is the network's round trip (the device's kernel answers the SYN).
2. **SSH**: one login with the host's credentials (asyncssh), then the **echo RTT**: ``samples``
   SSH global requests (``keepalive@openssh.com``, want-reply, the request OpenSSH's
   ``ServerAliveInterval`` sends), each answered by the device's SSH server: an application-level
   round trip, what a lab's echo server measures (its median is what results record as
   ``measured_rtt_ms``); then ``show version`` on an exec channel: the device's own version string
   (the platform's ``version`` pattern), which also says whether the platform is right. SSH facts:
   the server's version string, cipher and MAC, host key type and SHA256 fingerprint.
3. **TLS** on the HTTPS port: handshake time, protocol version, cipher, ALPN (h2 or http/1.1
   offered), the certificate's subject and expiry, and whether it verified against the host's
   ``ca_file`` (without one it is not verified, and says so).

Failures are facts of the host (``error``), not exceptions: one host that does not answer does not
stop the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from mgmtbench.errors import AuthenticationFailed, ClientError, UsageError
from mgmtbench.targets.inventory import InventoryHost
from mgmtbench.targets.safety import TargetGate

SAMPLES = 5


@dataclass
class HostReport:
    """What :func:`probe` found out about one host (milliseconds)."""

    name: str
    address: str
    platform: str
    ssh_port: int
    https_port: int
    reachable: bool = False  # a TCP connect succeeded (SSH port, else HTTPS port)
    tcp_rtt_ms: float | None = None
    echo_rtt_ms: float | None = None
    auth: str | None = None  # "ok", or why the login failed
    version: str | None = None  # the device's version string from `show version`
    platform_ok: bool | None = None  # the platform's version pattern matched `show version`
    ssh: dict[str, str] = field(default_factory=dict)
    tls: dict[str, Any] = field(default_factory=dict)
    error: str | None = None  # the first thing that went wrong, one line

    @property
    def ok(self) -> bool:
        """Reachable, logged in, and the platform is what the inventory says."""
        return self.error is None and self.auth == "ok" and self.platform_ok is not False

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (no credentials: none are kept here)."""
        return {**asdict(self), "ok": self.ok}


async def probe(host: InventoryHost, *, samples: int = SAMPLES) -> HostReport:
    """Measure ``host`` (see the module docstring) within ``host.timeout`` seconds."""
    t = host.target
    report = HostReport(host.name, t.host, host.platform.name, t.ssh_port, t.https_port)
    try:
        async with asyncio.timeout(host.timeout):
            await _reach(report, samples)
            if report.reachable:
                await _ssh(host, report, samples)
                await _tls(host, report)
    except TimeoutError:
        report.error = report.error or f"no answer within {host.timeout:g} s"
    return report


async def probe_all(hosts: tuple[InventoryHost, ...] | list[InventoryHost], *,
                    samples: int = SAMPLES, parallel: int = 8,
                    targets: TargetGate | None = None) -> list[HostReport]:
    """:func:`probe` every host, at most ``parallel`` at once, in the inventory's order; per
    address at most ``targets``' sessions at once and connections a second (a probe opens
    ``samples`` + 2: the TCP connects, SSH, TLS), however many hosts share the address."""
    gate = asyncio.Semaphore(parallel)
    targets = targets or TargetGate()

    async def one(host: InventoryHost) -> HostReport:
        async with targets.session(host.target.host, samples + 2), gate:
            return await probe(host, samples=samples)

    return list(await asyncio.gather(*(one(h) for h in hosts)))


async def _timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return (time.perf_counter() - start) * 1000


async def _connect_times(address: str, port: int, samples: int) -> list[float]:
    """Milliseconds of ``samples`` TCP connects, each closed at once."""
    loop = asyncio.get_running_loop()
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    times = []
    for _ in range(samples):
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setblocking(False)
            start = time.perf_counter()
            await loop.sock_connect(sock, (address, port))
            times.append((time.perf_counter() - start) * 1000)
    return times


async def _reach(report: HostReport, samples: int) -> None:
    problems = []
    for port in (report.ssh_port, report.https_port):
        try:
            times = await _connect_times(report.address, port, samples)
        except OSError as exc:
            why = os.strerror(exc.errno) if exc.errno else str(exc) or type(exc).__name__
            problems.append(f"port {port}: {why}")
            continue
        report.reachable = True
        report.tcp_rtt_ms = round(statistics.median(times), 3)
        return
    report.error = f"unreachable ({'; '.join(problems)})"


async def _ssh(host: InventoryHost, report: HostReport, samples: int) -> None:
    import asyncssh

    from mgmtbench.clients.asyncssh.connect import ERRORS, connect_options
    from mgmtbench.clients.translate import translate_errors

    t = host.target
    known = str(t.known_hosts) if t.known_hosts is not None else None
    options = connect_options(t, known)
    try:
        async with translate_errors("ssh", ERRORS), \
                asyncssh.connect(**options, connect_timeout=host.timeout) as conn:
            report.auth = "ok"
            await _ssh_facts(conn, host, report, samples, checked=known is not None)
    except AuthenticationFailed as exc:
        report.auth = "refused"
        report.error = report.error or str(exc)
    except (ClientError, UsageError) as exc:
        report.error = report.error or str(exc)


async def _ssh_facts(conn: Any, host: InventoryHost, report: HostReport, samples: int, *,
                     checked: bool) -> None:
    key = conn.get_server_host_key()
    report.ssh = {
        "server": str(conn.get_extra_info("server_version") or ""),
        "cipher": str(conn.get_extra_info("send_cipher") or ""),
        "mac": str(conn.get_extra_info("send_mac") or ""),
        "host_key": f"{key.get_algorithm()} {key.get_fingerprint()}" if key else "",
        "host_key_checked": "yes" if checked else "no (no known_hosts)",
    }
    echoes = [await _timed(lambda: _global_request(conn)) for _ in range(samples)]
    report.echo_rtt_ms = round(statistics.median(echoes), 3)
    result = await conn.run("show version", timeout=host.timeout, encoding=None)
    text = bytes(result.stdout or b"").decode("ascii", "replace")
    report.version = host.platform.version_of(text)
    report.platform_ok = report.version is not None
    if not report.platform_ok:
        report.error = (f"`show version` does not look like {host.platform.name}: check the "
                        "inventory's platform")


#: SSH_MSG_REQUEST_SUCCESS and SSH_MSG_REQUEST_FAILURE (RFC 4254): either is the server's answer.
GLOBAL_ANSWERS = (81, 82)
ECHO_REQUEST = b"keepalive@openssh.com"


async def _global_request(conn: Any) -> None:
    """One SSH global request with want-reply (``keepalive@openssh.com``, what OpenSSH's
    ``ServerAliveInterval`` sends), and the server's answer (success or failure): one round trip
    through the device's SSH server.

    The one use of a private asyncssh API in mgmtbench, kept in this function. asyncssh (2.24)
    has no public call that sends a global request and waits for the answer: its own keepalive
    timer (``keepalive_interval``) calls ``_make_global_request``, which is what this calls; the
    public calls that send one (``forward_remote_port``, ``forward_remote_path``) ask the device
    to open a listener, a side effect no probe of a real device may have, and an exec of a no-op
    command is a channel open, a request and a close (several round trips, and the device's CLI),
    not an echo. ``tests/test_probe_echo.py`` fails loudly if asyncssh renames the method or
    changes what it returns; here, a missing method is one line for the host (its error)."""
    request = getattr(conn, "_make_global_request", None)
    if request is None:
        import asyncssh

        raise UsageError(f"asyncssh {asyncssh.__version__} has no _make_global_request: the SSH "
                         "echo RTT needs asyncssh 2.x as tested (pip install 'asyncssh<3')")
    answer, _ = await request(ECHO_REQUEST)
    if answer not in GLOBAL_ANSWERS:
        raise ClientError(f"the SSH echo got message {answer} instead of an answer to a global "
                          "request (is the connection closed?)")


async def _tls(host: InventoryHost, report: HostReport) -> None:
    t = host.target
    verified: bool | str = "no ca_file"
    context = ssl.create_default_context(cafile=str(t.ca_file)) if t.ca_file else _unverified()
    context.set_alpn_protocols(["h2", "http/1.1"])
    try:
        elapsed, writer = await _handshake(t.host, t.https_port, context)
        verified = bool(t.ca_file)
    except ssl.SSLCertVerificationError as exc:
        verified = f"no: {exc.verify_message}"
        context = _unverified()
        context.set_alpn_protocols(["h2", "http/1.1"])
        try:
            elapsed, writer = await _handshake(t.host, t.https_port, context)
        except (OSError, ssl.SSLError) as again:
            report.tls = {"error": str(again)}
            return
    except (OSError, ssl.SSLError) as exc:
        report.tls = {"error": exc.strerror or str(exc) if isinstance(exc, OSError) else str(exc)}
        return
    try:
        tls: ssl.SSLObject = writer.get_extra_info("ssl_object")
        report.tls = {"handshake_ms": round(elapsed, 3), "version": tls.version(),
                      "cipher": (tls.cipher() or ("",))[0],
                      "alpn": tls.selected_alpn_protocol(), "verified": verified,
                      **_certificate(tls.getpeercert(binary_form=True))}
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):  # a reset at close: the facts are in
            await writer.wait_closed()


async def _handshake(address: str, port: int,
                     context: ssl.SSLContext) -> tuple[float, asyncio.StreamWriter]:
    start = time.perf_counter()
    _, writer = await asyncio.open_connection(address, port, ssl=context,
                                              server_hostname=address)
    return (time.perf_counter() - start) * 1000, writer


def _unverified() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _certificate(der: bytes | None) -> dict[str, str]:
    if not der:
        return {}
    from cryptography import x509

    cert = x509.load_der_x509_certificate(der)
    return {"subject": cert.subject.rfc4514_string(),
            "expires": cert.not_valid_after_utc.strftime("%Y-%m-%d")}
