"""Serving devices: :class:`Emulator` on the caller's event loop, :class:`EmulatorThread` beside it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import shutil
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncssh

from mgmtbench.emulator.cli.configgrammar import config_grammar
from mgmtbench.emulator.device.device import HOSTNAME, Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import load_platform
from mgmtbench.emulator.guard import Descriptors, quiet_loop_errors
from mgmtbench.emulator.https.accept import ConnectionCaps
from mgmtbench.emulator.https.server import DeviceApi, serve_https
from mgmtbench.emulator.https.tls import TlsFiles, check_https, make_tls_files, server_context
from mgmtbench.emulator.memtrim import MemoryTrimmer, TrimPolicy
from mgmtbench.emulator.netconf.channel import netconf_subsystems
from mgmtbench.emulator.options import HOST_KEY_TYPES, EmulatorOptions
from mgmtbench.emulator.ssh.exec import Subsystems
from mgmtbench.emulator.ssh.server import (
    SshCounts,
    check_ssh_server,
    host_key_pair,
    listen_ssh,
)
from mgmtbench.emulator.yang.datastore import platform_families
from mgmtbench.errors import UsageError
from mgmtbench.listening import bind_error, bound
from mgmtbench.loopthread import LoopThread
from mgmtbench.openfiles import raise_open_files
from mgmtbench.privatefiles import create_new, private_folder, replace_private

log = logging.getLogger("mgmtbench.emulator")


@dataclass(frozen=True)
class DeviceEndpoint:
    """Where one served device answers."""

    device: Device
    host: str
    ssh_port: int | None
    https_port: int | None
    #: What the device's SSH server has accepted so far (connections, execs, shells, PTYs).
    ssh_counts: SshCounts = field(default_factory=SshCounts)
    #: The device's HTTPS connections: open now, and dropped at accept over a cap (None: no
    #: HTTPS).
    https_connections: ConnectionCaps | None = None
    #: The device's NETCONF-only SSH port (None: NETCONF on the SSH port only, or none).
    netconf_port: int | None = None
    #: The device's gNMI port (None: no gNMI).
    gnmi_port: int | None = None
    #: The device's HTTP/3 port, UDP (None: no HTTP/3); its counts are ``device.http3_counts``.
    http3_port: int | None = None

    @property
    def hostname(self) -> str:
        """The device's hostname."""
        return self.device.hostname

    def https_url(self, command: str) -> str:
        """The HTTPS API URL that runs ``command`` on this device."""
        return f"https://{self.host}:{self.https_port}/admin/exec/{command.replace(' ', '+')}"


class Emulator:
    """One or many devices served over SSH and HTTPS on one asyncio loop."""

    def __init__(self, options: EmulatorOptions, trim: TrimPolicy | None = None) -> None:
        _validate(options)
        self.options = options
        self._trim_policy = trim
        self.endpoints: list[DeviceEndpoint] = []
        self.host_key: asyncssh.SSHKey | None = None
        self._host_key_pair: asyncssh.SSHKeyPair | None = None
        self.tls: TlsFiles | None = None
        self._state_dir: Path | None = None
        self._own_state_dir = False
        self._acceptors: list[asyncssh.SSHAcceptor] = []
        self._ssh_connections: set[asyncssh.SSHServerConnection] = set()
        self._https_sockets: list[socket.socket] = []
        self._https_task: asyncio.Task[None] | None = None
        self._http3_sockets: list[socket.socket] = []
        self._http3_task: asyncio.Task[None] | None = None
        self._gnmi_servers: list[Any] = []
        self._gnmi_tls: Any = None
        #: Each device's gNMI service (by hostname), for its counts.
        self.gnmi_services: dict[str, Any] = {}
        # Gives the memory of closed connections back to the system (emulator/memtrim.py).
        self._trim_task: asyncio.Task[None] | None = None
        self._shutdown = asyncio.Event()

    @property
    def state_dir(self) -> Path:
        """Where the CA, keys and known_hosts are (once started)."""
        if self._state_dir is None:
            raise RuntimeError("the emulator is not started")
        return self._state_dir

    @property
    def known_hosts(self) -> Path:
        """An OpenSSH known_hosts file with every device's host key."""
        return self.state_dir / "known_hosts"

    async def start(self) -> None:
        """Bind every port and start serving; raises :class:`UsageError` if a port is taken."""
        opts = self.options
        platform = load_platform(opts.platform, opts.transcripts)
        limit = open_files_for(opts)  # before anything is written: it may refuse to start
        self.descriptors = Descriptors(connection_budget(opts, limit))
        quiet_loop_errors(asyncio.get_running_loop())
        self._state_dir = opts.state_dir or Path(tempfile.mkdtemp(prefix="mgmtbench-emulator-"))
        self._own_state_dir = opts.state_dir is None
        claim_state_dir(self._state_dir)
        try:
            authorized = _authorized_keys(opts.credentials.authorized_keys)
            ssh = platform.style.identity.ssh
            key_type = opts.host_key_type or ssh.host_key
            self.host_key = asyncssh.generate_private_key(HOST_KEY_TYPES[key_type])
            # The platform's host key algorithms go with its own key type only.
            self._host_key_pair = host_key_pair(
                self.host_key, opts.algorithms.host_key_algs
                or (ssh.host_key_algs if key_type == ssh.host_key else None))
            if opts.https or opts.gnmi:
                self.tls = make_tls_files(self._state_dir / "tls", _tls_names(opts))
            devices = [
                Device(platform, DeviceFacts.for_hostname(name, opts.mgmt_ip(index),
                                                         platform.style.identity.facts),
                       enable_secret=opts.credentials.enable_secret,
                       processing_delay=opts.processing_delay,
                       file_system_size=opts.limits.file_system_size,
                       max_config_size=opts.limits.max_config_size,
                       clock_start=opts.clock_start)
                for index, name in enumerate(opts.hostnames())
            ]
            # The configuration grammar is read now (~50 ms for IOS), not in the time of the first
            # configuration line a client sends.
            config_grammar(platform)
            by_https_socket: dict[tuple[str, int], Device] = {}
            for index, device in enumerate(devices):
                counts = SshCounts()
                subsystems = netconf_subsystems(device, opts.netconf)
                ssh_port = (await self._listen_ssh(device, index, authorized, counts,
                                                   subsystems) if opts.ssh else None)
                netconf_port = None
                if opts.ssh and subsystems and opts.netconf_port is not None:
                    netconf_port = await self._listen_ssh(device, index, authorized, counts,
                                                          subsystems, opts.netconf_port)
                https_port = http3_port = None
                if opts.https:
                    https_port = self._bind_https(index)
                    by_https_socket[(opts.address(index), https_port)] = device
                    if opts.http3:
                        http3_port = self._bind_http3(index, https_port)
                        by_https_socket[(opts.address(index), http3_port)] = device
                gnmi_port = await self._serve_gnmi(device, index)
                self.endpoints.append(DeviceEndpoint(
                    device, opts.address(index), ssh_port, https_port, counts,
                    ConnectionCaps(opts.limits, budget=self.descriptors)
                    if https_port is not None else None,
                    netconf_port, gnmi_port, http3_port))
            if opts.https and self.tls is not None:
                api = DeviceApi(by_https_socket, opts.credentials, opts.limits,
                                user_agent=(platform.style.identity.https.user_agent
                                            if opts.user_agent_rule == "device" else None))
                self._https_task = asyncio.create_task(self._serve_https(api))
                if self._http3_sockets:
                    self._http3_task = asyncio.create_task(self._serve_http3(api))
            self._trim_task = asyncio.create_task(MemoryTrimmer(self._trim_policy).run())
            self._write_known_hosts()
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        """Stop serving and remove what :meth:`start` wrote (unless the user chose the folder)."""
        self._shutdown.set()
        for acceptor in self._acceptors:
            acceptor.close()
        for acceptor in self._acceptors:
            await acceptor.wait_closed()
        self._acceptors.clear()
        # Closing a listener leaves its connections open: close them, as a rebooting device does.
        connections = list(self._ssh_connections)
        for conn in connections:
            conn.close()
        await asyncio.gather(*(c.wait_closed() for c in connections), return_exceptions=True)
        servers, self._gnmi_servers = self._gnmi_servers, []
        await asyncio.gather(*(server.stop(0.5) for server in servers), return_exceptions=True)
        if self._https_task is not None:
            await _finish(self._https_task, grace=2.0)
            self._https_task = None
        if self._http3_task is not None:
            await _finish(self._http3_task, grace=2.0)
            self._http3_task = None
        if self._trim_task is not None:
            self._trim_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._trim_task
            self._trim_task = None
        for sock in [*self._https_sockets, *self._http3_sockets]:
            sock.close()
        self._https_sockets.clear()
        self._http3_sockets.clear()
        if self._own_state_dir and self._state_dir is not None:
            shutil.rmtree(self._state_dir, ignore_errors=True)

    async def serve_forever(self) -> None:
        """Return once :meth:`request_stop` is called."""
        await self._shutdown.wait()

    def request_stop(self) -> None:
        """Make :meth:`serve_forever` return."""
        self._shutdown.set()

    async def _listen_ssh(self, device: Device, index: int, authorized: list[asyncssh.SSHKey],
                          counts: SshCounts, subsystems: Subsystems,
                          netconf_only: int | None = None) -> int:
        """Start one SSH listener: the device's SSH port, or with ``netconf_only`` (a port
        number, 0 for any) a port that serves only the ``subsystems`` (IOS-XE's 830)."""
        opts = self.options
        base = opts.ssh_port if netconf_only is None else netconf_only
        port, host = opts.port(base, index), opts.address(index)
        assert self._host_key_pair is not None
        try:
            acceptor = await listen_ssh(
                device, host, port, host_key=self._host_key_pair,
                credentials=opts.credentials, limits=opts.limits,
                ssh=opts.ssh_server, authorized=authorized,
                connections=self._ssh_connections, counts=counts, subsystems=subsystems,
                cli_allowed=netconf_only is None, descriptors=self.descriptors)
        except OSError as exc:
            raise bind_error("SSH" if netconf_only is None else "NETCONF", host, port,
                              exc) from exc
        except (ValueError, asyncssh.Error) as exc:
            raise UsageError(f"cannot start the SSH server: {exc}") from exc
        self._acceptors.append(acceptor)
        return int(acceptor.get_port())

    async def _serve_gnmi(self, device: Device, index: int) -> int | None:
        """Start the device's gNMI server (if asked for and its platform has models); its
        port."""
        opts = self.options
        if not opts.gnmi or platform_families(device.platform) is None:
            return None
        from mgmtbench.emulator.gnmi import protos

        reason = protos.missing()
        if reason is not None:
            raise UsageError(f"{reason} (or serve with --no-gnmi)")
        from mgmtbench.emulator.gnmi.server import serve_gnmi, server_credentials
        from mgmtbench.emulator.gnmi.service import Credentials

        assert self.tls is not None
        if self._gnmi_tls is None:
            self._gnmi_tls = server_credentials(self.tls.cert, self.tls.key)
        creds = opts.credentials
        server, port, service = await serve_gnmi(
            device, opts.address(index), opts.port(opts.gnmi_port, index),
            Credentials(creds.username, creds.password, opts.gnmi_anonymous), self._gnmi_tls)
        self._gnmi_servers.append(server)
        self.gnmi_services[device.hostname] = service
        return port

    def _bind_https(self, index: int) -> int:
        opts = self.options
        port, host = opts.port(opts.https_port, index), opts.address(index)
        sock = bound("HTTPS", host, port, socket.SOCK_STREAM)
        self._https_sockets.append(sock)
        return int(sock.getsockname()[1])

    def _bind_http3(self, index: int, https_port: int) -> int:
        """Bind device ``index``'s UDP socket for HTTP/3: on its HTTPS port's number unless
        ``http3_port`` says otherwise."""
        opts = self.options
        host = opts.address(index)
        port = https_port if opts.http3_port is None else opts.port(opts.http3_port, index)
        sock = bound("HTTP/3 (UDP)", host, port, socket.SOCK_DGRAM)
        self._http3_sockets.append(sock)
        return int(sock.getsockname()[1])

    async def _serve_http3(self, api: DeviceApi) -> None:
        from mgmtbench.emulator.http3.server import serve_http3

        assert self.tls is not None
        served = [e.device for e in self.endpoints if e.http3_port is not None]
        await serve_http3(api, self._http3_sockets, self.tls, self._shutdown, self.options.limits,
                          names=[d.hostname for d in served],
                          counts=[d.http3_counts for d in served])

    async def _serve_https(self, api: DeviceApi) -> None:
        assert self.tls is not None
        opts = self.options
        identity = load_platform(opts.platform, opts.transcripts).style.identity.https
        context = server_context(self.tls, versions=opts.tls_versions or identity.tls_versions)
        served = [(e.device.hostname, e.https_connections) for e in self.endpoints
                  if e.https_connections is not None]
        await serve_https(api, self._https_sockets, context, self._shutdown, opts.limits,
                          names=[name for name, _ in served], caps=[caps for _, caps in served])

    def _write_known_hosts(self) -> None:
        if self.host_key is None:
            return
        public = self.host_key.export_public_key("openssh").decode().strip()
        # OpenSSH's form: a bare host for port 22, "[host]:port" otherwise.
        # A line per device naming every port its SSH server answers on (its SSH port, its
        # NETCONF port), as OpenSSH's comma-separated host patterns.
        lines = [",".join(e.host if port == 22 else f"[{e.host}]:{port}"
                          for port in (e.ssh_port, e.netconf_port) if port) + f" {public}"
                 for e in self.endpoints if e.ssh_port]
        replace_private(self.known_hosts, "\n".join(lines) + "\n")


#: In a state folder: mgmtbench wrote it, and may replace what it wrote there.
STATE_MARK = ".mgmtbench-state"
#: What the emulator writes in its state folder (besides the mark).
STATE_FILES = ("known_hosts", "tls")


def claim_state_dir(folder: Path) -> None:
    """Make ``folder`` (mode 0700), or take an existing one that mgmtbench marked as its own or
    that is empty, and mark it. Any other folder is refused (:class:`UsageError`) and left as
    it is: the emulator writes only in folders that are its own, as ``git clone`` and ``initdb``
    refuse a non-empty target (``--state-dir /etc`` once wrote known_hosts and tls/ there)."""
    try:
        private_folder(folder)
        if (folder / STATE_MARK).exists():
            return
        with os.scandir(folder) as entries:
            other = next((entry.name for entry in entries if entry.name != STATE_MARK), None)
        if other is not None and not (folder / STATE_MARK).exists():  # not marked meanwhile
            taken = next((name for name in STATE_FILES if os.path.lexists(folder / name)), None)
            what = f"a {taken} that" if taken else f"files ({other} ...) that"
            raise UsageError(f"--state-dir {folder}: it has {what} mgmtbench did not write, "
                             "left as they are: give an empty or new folder")
        with contextlib.suppress(FileExistsError):  # another emulator marked it meanwhile
            create_new(folder / STATE_MARK, "mgmtbench serve writes known_hosts and tls/ (its "
                       "CA, certificate and key) here, and replaces them when it starts.\n")
    except OSError as exc:
        raise UsageError(f"--state-dir {folder}: cannot use it ({exc.strerror or exc})") from None


def _tls_names(opts: EmulatorOptions) -> list[str]:
    """The names the HTTPS certificate is valid for: the addresses served on; on a wildcard
    address (a container's 0.0.0.0) also this machine's hostname and its addresses, so clients
    on a container network can verify ``https://r1/``."""
    names = [opts.bind, *opts.addresses]
    if opts.bind in ("0.0.0.0", "::"):
        hostname = socket.gethostname()
        names.append(hostname)
        with contextlib.suppress(OSError):  # a hostname that does not resolve
            names += socket.gethostbyname_ex(hostname)[2]
    return names


async def _finish(task: asyncio.Task[None], grace: float) -> None:
    """Wait for a server task to wind down, then cancel it.

    Hypercorn waits for open keep-alive TLS connections to close; an idle client that never reads
    its socket would hold a graceful shutdown for asyncio's 30 s TLS shutdown timeout.
    """
    done, _ = await asyncio.wait({task}, timeout=grace)
    if not done:
        asyncio.get_running_loop().set_exception_handler(_quiet_cancellations)
        task.cancel()
        await asyncio.wait({task}, timeout=grace)
    if task.done() and not task.cancelled() and task.exception() is not None:
        log.debug("HTTPS server stopped with %r", task.exception())


def _quiet_cancellations(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
    """While stopping: Python 3.11's stream callbacks report cancelled connection tasks as errors."""
    if isinstance(context.get("exception"), asyncio.CancelledError):
        return
    loop.default_exception_handler(context)


async def _cancel_leftovers() -> None:
    """Cancel tasks still running on the loop (connections being torn down) and wait for them."""
    tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def _validate(options: EmulatorOptions) -> None:
    if options.host_key_type is not None and options.host_key_type not in HOST_KEY_TYPES:
        raise UsageError(f"unknown host key type {options.host_key_type!r}: "
                         f"choose one of {', '.join(HOST_KEY_TYPES)}")
    check_ssh_server(options.ssh_server)
    check_https(options.tls_versions, options.user_agent_rule)
    if not 1 <= options.devices <= 10_000:
        raise UsageError(f"--devices must be between 1 and 10000, not {options.devices}")
    for name in (options.hostname, *options.names):
        if not HOSTNAME.match(name):
            raise UsageError(f"bad hostname {name!r}: use letters, digits, '-', '_', '.'")
    if options.names and (len(options.names) != options.devices
                          or len(set(options.names)) != len(options.names)):
        raise UsageError(f"{len(options.names)} hostnames for {options.devices} devices: give "
                         "one distinct name per device")
    if options.addresses and len(options.addresses) != options.devices:
        raise UsageError(f"{len(options.addresses)} addresses for {options.devices} devices: "
                         "give one address per device")
    for name, port in (("SSH", options.ssh_port), ("HTTPS", options.https_port),
                       ("gNMI", options.gnmi_port), ("HTTP/3", options.http3_port or 0)):
        if port and not 1 <= port + options.devices - 1 <= 65535:
            raise UsageError(f"{name} ports {port}..{port + options.devices - 1} are out of range")
    _validate_http3_ports(options)
    if options.processing_delay < 0:
        raise UsageError("the processing delay cannot be negative")
    if not (options.ssh or options.https):
        raise UsageError("nothing to serve: enable SSH or HTTPS")


def _validate_http3_ports(options: EmulatorOptions) -> None:
    """One device's HTTP/3 port may be its HTTPS port's number, not another device's: the API
    finds the device by the port a request came in on."""
    h3, https, count = options.http3_port, options.https_port, options.devices
    if not (h3 and https) or h3 == https or options.addresses:
        return
    if h3 < https + count and https < h3 + count:
        raise UsageError(f"HTTP/3 ports {h3}..{h3 + count - 1} overlap other devices' HTTPS "
                         f"ports {https}..{https + count - 1}: give --http3-port the HTTPS port "
                         "or one outside that range")


def _authorized_keys(path: Path | None) -> list[asyncssh.SSHKey]:
    if path is None:
        return []
    try:
        lines = path.read_text().splitlines()
        return [asyncssh.import_public_key(line) for line in lines
                if line.strip() and not line.lstrip().startswith("#")]
    except (OSError, ValueError, asyncssh.KeyImportError) as exc:
        raise UsageError(f"cannot read authorized keys {path}: {exc}") from exc


def open_files_needed(options: EmulatorOptions) -> int:
    """File descriptors the emulator may hold with its limits reached: five per device (its SSH
    listener, its HTTPS listener and the HTTPS server's copy of it, its HTTP/3 socket and the
    HTTP/3 server's copy; QUIC connections share it), one device's logged-in
    sessions (``max_sessions``), unauthenticated ones (MaxStartups' ``full``) and HTTPS
    connections (``max_https_connections``), and 256 for the rest (a fleet's sessions spread
    over its devices)."""
    limits = options.limits
    sessions = limits.max_sessions + limits.max_startups[2]
    return 5 * options.devices + sessions + limits.max_https_connections + 256


#: Descriptors kept from the connection budget: the listeners (five per device), the log, the
#: state files, gNMI's and the loop's own.
DESCRIPTOR_RESERVE = 256


def connection_budget(options: EmulatorOptions, open_files: int) -> int:
    """SSH and HTTPS connections every device of the process may hold together: the open-files
    limit in force less five descriptors per device and :data:`DESCRIPTOR_RESERVE`
    (:class:`~mgmtbench.emulator.guard.Descriptors`)."""
    if open_files == resource.RLIM_INFINITY:
        return 1 << 30
    return max(1, open_files - 5 * options.devices - DESCRIPTOR_RESERVE)


def open_files_for(options: EmulatorOptions) -> int:
    """Raise the soft limit on open files (``ulimit -n``, often 1024) to what
    :func:`open_files_needed` says, up to the hard limit; a :class:`UsageError` when the hard
    limit is lower. Returns the soft limit in force."""
    return raise_open_files(
        open_files_needed(options),
        f"{options.devices} device(s) with --max-sessions {options.limits.max_sessions}",
        ", LimitNOFILE= in a systemd unit, --ulimit nofile= for docker) or lower "
        "--max-sessions or --max-https-connections")


class EmulatorThread(LoopThread):
    """Run an :class:`Emulator` on its own event loop in a background thread.

    Used as a context manager by tests, benchmarks and the lab::

        with EmulatorThread(EmulatorOptions()) as emu:
            port = emu.endpoints[0].ssh_port
    """

    def __init__(self, options: EmulatorOptions) -> None:
        from mgmtbench.emulator.lograte import THREAD, limit_embedded_logs

        limit_embedded_logs()  # a flood of one event: a few lines and a count, as in `serve`
        self.emulator = Emulator(options)
        super().__init__(self.emulator, THREAD)

    @property
    def endpoints(self) -> list[DeviceEndpoint]:
        """Where each served device answers."""
        return self.emulator.endpoints

    async def _stop_service(self) -> None:
        """Stop the emulator, then cancel the connection tasks still being torn down."""
        await self.emulator.stop()
        await _cancel_leftovers()
