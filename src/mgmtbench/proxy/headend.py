"""The tunnel's head-end (``mgmtbench headend``): an SSH server next to the client that sends what
it is asked over HTTPS to the edge proxy, for tools that must speak SSH.

An unmodified SSH client (OpenSSH ``ssh``, paramiko, asyncssh ...) logs in to the head-end
(password, or a key of ``--authorized-keys``) and sends exec requests. Each one becomes one
request to the proxy for the head-end's ``--device``, as the study's head-end (clibench v0.7.0)
makes it: a one-line command is ``GET /device/<device>/admin/exec/<command>``, a request of
several lines (a batch) ``POST /device/<device>/admin/config`` with the lines as its body. The
answer is the exec's output, exit status 0; a failure is one line on stderr
(``%Error: 502 device R1 unreachable ...``) and exit status 1. The connections to the proxy
are kept (:mod:`mgmtbench.proxy.upstream`: HTTPS keep-alive, or with ``--proxy-http3`` one QUIC
connection to the proxy's HTTP/3, dialled again when it is gone, as the study's ``ssh-http3-ssh``
head-end), so the WAN costs one round trip per request once warm.

A shell (what Netmiko and Scrapli open, with or without a PTY) is the device's terminal, made from
the emulator's own pieces (:mod:`mgmtbench.emulator.ssh.shell`'s line editing and ``--More--`` paging,
:class:`~mgmtbench.emulator.cli.session.CliSession`'s prompt and terminal settings) for the
head-end's ``--platform`` and ``--hostname`` (default: the device's name at the proxy). The login
lands where the platform's does (``R1#`` on IOS, ``asa1>`` on an ASA). What only changes the
terminal is answered here, as the device answers it, without a round trip: ``terminal length`` /
``pager``, ``terminal width``, ``enable`` (its password prompt; ``--enable-password``),
``disable``, ``exit``/``logout``/``quit`` (the shell closes). Every other line is one GET to the
proxy, its output written back (paged when paging is on); a failure is the line
``%Error: <status> <reason>``.

Configuration mode is carried by the shell, one round trip per configuration session: after
``configure terminal`` the shell's own session of the platform (the emulator's command engine)
prints the device's prompts (``R1(config)#``, ``R1(config-if)#``) and refuses what the platform
refuses (``% Invalid input`` with its caret) without a round trip, and keeps the lines it accepts.
Leaving configuration mode (``end``, Ctrl-Z, Ctrl-C, ``exit`` at the top level, or the client
going away) sends them as ONE ``POST .../admin/config``, which the proxy runs on the device
between ``configure terminal`` and ``end``; what the device answers (nothing, unless it refuses
a line) is printed before the next prompt. An exec command from configuration mode (``do show
running-config``) first sends the lines kept so far, then is one GET; the lines after it go in
the next POST after the line that opened the sub-mode they are in (``interface ...``), so they
land where they were typed. (The study's head-end is the same trade: lines reach the device when
the batch does, so a refusal that only the real device makes shows after ``end``.)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hmac
import logging
import os
import signal
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import quote, quote_plus

import asyncssh

from mgmtbench.emulator import memtrim
from mgmtbench.emulator.cli.grammar import CommandTree, ParseError
from mgmtbench.emulator.cli.session import CliSession, Mode, Reply
from mgmtbench.emulator.device.config import ConfigLine
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import available_platforms, load_platform
from mgmtbench.emulator.guard import AuthThrottle, RateLimitFilter, source_of
from mgmtbench.emulator.memtrim import MemoryTrimmer, TrimPolicy
from mgmtbench.emulator.options import Limits
from mgmtbench.emulator.ssh.shell import Terminal, _Interrupted, _page, _read_secret
from mgmtbench.errors import UsageError
from mgmtbench.proxy.secrets import secret
from mgmtbench.proxy.upstream import Upstream, upstream_for

log = logging.getLogger("mgmtbench.headend")
READY = "Press Ctrl-C to stop."
#: The first line of a known_hosts the head-end wrote: one without it is never overwritten.
KNOWN_HOSTS_MARK = "# written by mgmtbench headend: its host key, new at each start"
HEADEND_PASSWORD = "MGMTBENCH_HEADEND_PASSWORD"
PROXY_PASSWORD = "MGMTBENCH_PROXY_PASSWORD"


@dataclass(frozen=True)
class HeadendOptions:
    """Where the head-end listens, whom it lets in, and where it sends the commands."""

    proxy_url: str  # https://proxy:port
    proxy_ca: Path
    device: str  # the device's name at the proxy
    username: str = "admin"
    password: str = "admin"
    proxy_username: str | None = None  # None: the same as username
    proxy_password: str | None = None
    authorized_keys: Path | None = None
    bind: str = "127.0.0.1"
    port: int = 0
    state_dir: Path | None = None  # where known_hosts goes (None: a temporary folder)
    timeout: float = 60.0
    platform: str = "cisco_ios"  # the shell's prompt, paging and login level
    hostname: str | None = None  # the shell's prompt (None: ``device``)
    enable_secret: str = "admin"  # what the shell's ``enable`` asks for
    proxy_http3: bool = False  # HTTP/3 to the proxy (one QUIC connection kept), not HTTPS
    #: Failed logins per connection (then disconnected) and the delay of each, per source in
    #: turn: the emulator's (IOS ``ip ssh authentication-retries 3``, OpenSSH MaxAuthTries).
    auth_tries: int = Limits.auth_tries
    auth_failure_delay: float = Limits.auth_failure_delay


class _Login(asyncssh.SSHServer):
    """One client connection's login: a wrong password costs ``auth_failure_delay`` (one
    source's failures answered in turn, :class:`~mgmtbench.emulator.guard.AuthThrottle`), and
    ``auth_tries`` of them disconnect, as the emulator's SSH server does."""

    def __init__(self, options: HeadendOptions,
                 connections: set[asyncssh.SSHServerConnection], throttle: AuthThrottle) -> None:
        self.options = options
        self.connections = connections
        self.throttle = throttle
        self.conn: asyncssh.SSHServerConnection | None = None
        self.peer: object = None
        self.failures = 0

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        self.peer = conn.get_extra_info("peername")
        self.connections.add(conn)

    def connection_lost(self, exc: Exception | None) -> None:
        memtrim.connection_closed()  # counted for the trimmer, however short it was
        if self.conn is not None:
            self.connections.discard(self.conn)

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    async def validate_password(self, username: str, password: str) -> bool:
        ok = hmac.compare_digest(username.encode(), self.options.username.encode()) & (
            hmac.compare_digest(password.encode(), self.options.password.encode()))
        if ok:
            return True
        self.failures += 1
        tries = self.options.auth_tries
        log.warning("headend ssh %s: bad password for user %r (%d of %d tries)",
                    _address(self.peer), username, self.failures, tries)
        await self.throttle.failed(source_of(self.peer))
        if self.failures >= tries:
            raise asyncssh.DisconnectError(asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE,
                                           "Too many authentication failures")
        return False


class Headend:
    """The head-end on the running event loop: :meth:`start`, then :meth:`stop`."""

    def __init__(self, options: HeadendOptions) -> None:
        self.options = options
        self.port = 0
        self.known_hosts: Path | None = None
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._upstream: Upstream | None = None
        self._connections: set[asyncssh.SSHServerConnection] = set()
        self._shutdown = asyncio.Event()
        self._device: Device | None = None
        self._local: CommandTree[bool] | None = None
        self._throttle = AuthThrottle(Limits(auth_failure_delay=options.auth_failure_delay))
        #: Gives the memory of big answers back once their connections closed (as the proxy).
        self._trim_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen; write the host key to ``STATE_DIR/known_hosts``."""
        opts = self.options
        if opts.platform not in available_platforms():
            raise UsageError(f"unknown platform {opts.platform!r}: choose "
                             f"{', '.join(available_platforms())}")
        platform = load_platform(opts.platform)
        facts = DeviceFacts.for_hostname(opts.hostname or opts.device,
                                         form=platform.style.identity.facts)
        self._device = Device(platform, facts, enable_secret=opts.enable_secret)
        self._local = _local_commands(platform.style.paging, platform.style.config_commands)
        try:
            authorized = (asyncssh.read_authorized_keys(str(opts.authorized_keys))
                          if opts.authorized_keys is not None else None)
        except (OSError, ValueError) as exc:
            raise UsageError(f"the head-end cannot read its trust files: {exc}") from exc
        self._upstream = upstream_for(opts.proxy_url, opts.proxy_ca,
                                      opts.proxy_username or opts.username,
                                      opts.proxy_password or opts.password, opts.timeout,
                                      opts.proxy_http3)
        key = asyncssh.generate_private_key("ssh-ed25519")
        folder = opts.state_dir or Path(tempfile.mkdtemp(prefix="mgmtbench-headend-"))
        known_hosts = _own_known_hosts(folder)
        try:
            self._acceptor = await asyncssh.listen(
                opts.bind, opts.port, server_host_keys=[key], authorized_client_keys=authorized,
                server_factory=lambda: _Login(opts, self._connections, self._throttle),
                process_factory=self._handle, encoding=None)
        except OSError as exc:
            raise UsageError(f"the head-end cannot listen on {opts.bind}:{opts.port}: "
                             f"{exc.strerror or exc}") from exc
        self.port = int(self._acceptor.get_port())
        self._trim_task = asyncio.get_running_loop().create_task(
            MemoryTrimmer(TrimPolicy(min_closed=1)).run())
        host = opts.bind if self.port == 22 else f"[{opts.bind}]:{self.port}"
        self.known_hosts = known_hosts
        known_hosts.write_text(
            f"{KNOWN_HOSTS_MARK}\n{host} {key.export_public_key('openssh').decode().strip()}\n")

    async def serve_forever(self) -> None:
        """Return once :meth:`request_stop` is called."""
        await self._shutdown.wait()

    def request_stop(self) -> None:
        """Make :meth:`serve_forever` return."""
        self._shutdown.set()

    async def stop(self) -> None:
        """Stop listening, close the clients' connections and those to the proxy."""
        if self._trim_task is not None:
            self._trim_task.cancel()
            await asyncio.wait({self._trim_task}, timeout=3)
            self._trim_task = None
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None
        connections = list(self._connections)
        for conn in connections:
            conn.close()
        await asyncio.gather(*(c.wait_closed() for c in connections), return_exceptions=True)
        if self._upstream is not None:
            await self._upstream.aclose()
            self._upstream = None

    async def forward(self, command: str) -> tuple[int, str]:
        """The proxy's answer to one exec request: (status, body); status 0 and the reason when
        the proxy cannot be reached."""
        lines = command.strip().split("\n")
        if len(lines) == 1:
            return await self._request("GET", f"exec/{quote_plus(lines[0].strip(), safe='')}")
        return await self._request("POST", "config", command.encode())

    async def configure(self, lines: list[str]) -> tuple[int, str]:
        """The proxy's answer to ``lines`` run in configuration mode on the device (one POST,
        even of one line): (status, body) as :meth:`forward`."""
        return await self._request("POST", "config", "\n".join(lines).encode())

    async def _request(self, method: str, path: str, body: bytes = b"") -> tuple[int, str]:
        assert self._upstream is not None
        return await self._upstream.request(
            method, f"/device/{quote(self.options.device, safe='')}/admin/{path}", body)

    async def _handle(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        command = process.command
        if command is None:
            with contextlib.suppress(*_PEER_GONE):
                await self._shell(process)
                process.exit(0)
            return
        status, body = await self.forward(command)
        if status == 200:
            process.stdout.write(body.encode("ascii", "replace"))
            process.exit(0)
        else:
            line = " ".join(body.split())
            process.stderr.write(f"%Error: {status} {line}\n".encode("ascii", "replace"))
            process.exit(1)


    async def _shell(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        """The device's terminal (see the module docstring) until exit or end of input."""
        assert self._device is not None
        style = self._device.platform.style
        session = CliSession(self._device,
                             mode=Mode.PRIV if style.login_privilege == 15 else Mode.USER,
                             user=str(process.get_extra_info("username") or ""))  # Junos's
        term = Terminal(process, session.max_line)
        batch = _ConfigBatch()
        term.write("\n")
        while True:
            term.write(session.prompt)
            await term.drain()
            try:
                line = await term.read_line()
            except _Interrupted:
                if session.mode is Mode.CONFIG:  # Ctrl-C and Ctrl-Z leave configuration mode
                    session.end_config()
                    term.write(await self._commit(batch))
                continue
            if line is None:
                if session.mode is Mode.CONFIG:  # a device has applied them by now
                    await self._commit(batch)
                return
            await term.drain()  # the echo goes out before the command runs, as on a device
            reply = await self._shell_reply(session, batch, line)
            if reply.ask_secret:
                reply = await _read_secret(term, session)
            await _page(term, session, reply)
            if reply.close:
                await term.drain()
                return

    async def _shell_reply(self, session: CliSession, batch: _ConfigBatch, line: str) -> Reply:
        """One typed line's reply: from the local session for terminal commands and
        configuration mode, else the proxy's."""
        assert self._local is not None
        if not line.strip():
            return Reply()
        if session.mode is Mode.CONFIG:
            return await self._config_reply(session, batch, line)
        try:
            self._local.match(line)
        except ParseError:
            return _answer(*await self.forward(line))
        return session.execute(line)  # `configure terminal` too: the platform's banner

    async def _config_reply(self, session: CliSession, batch: _ConfigBatch, line: str) -> Reply:
        """A line typed in configuration mode (see the module docstring)."""
        try:
            found = _EXEC_FROM_CONFIG.match(line)
        except ParseError:
            found = None
        if found is not None:  # `do show ...`: the lines so far, then the command
            sent = await self._commit(batch, staying=True)
            command = found.args[0] if found.words == ("do",) else " ".join(
                (*found.words, *found.args))
            reply = _answer(*await self.forward(command))
            return replace(reply, output=sent + reply.output)
        block = session.block
        reply = session.execute(line)
        if not reply.ok:
            return reply  # refused as the device refuses it: not sent
        if session.mode is not Mode.CONFIG:  # end, exit: the lines go to the device
            return replace(reply, output=await self._commit(batch) + reply.output)
        batch.lines.append(line)
        if session.block is not block:
            batch.openers = _openers(batch.openers, session.block, line)
        return reply

    async def _commit(self, batch: _ConfigBatch, *, staying: bool = False) -> str:
        """Send the lines kept (one POST); what the device printed for them, or the error.
        ``staying``: configuration mode goes on, the next lines in the same sub-mode."""
        lines = batch.head + batch.lines
        pending = bool(batch.lines)
        batch.lines = []
        batch.head = [text for _, text in batch.openers] if staying else []
        if not staying:
            batch.openers = []
        if not pending:
            return ""
        return _answer(*await self.configure(lines)).output


def _own_known_hosts(folder: Path) -> Path:
    """``folder/known_hosts`` if the head-end may write it: it does not exist yet (made empty
    now, so nobody else's appears in between), or the head-end wrote it (its first line is
    :data:`KNOWN_HOSTS_MARK`). Someone else's (``--state-dir ~/.ssh``) is never overwritten:
    a one-line UsageError instead."""
    path = folder / "known_hosts"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with path.open("x"):
            return path
    except FileExistsError:
        pass
    except OSError as exc:
        raise UsageError(f"the head-end cannot write {path}: {exc.strerror or exc}") from None
    try:
        with path.open("rb") as handle:
            first = handle.readline(len(KNOWN_HOSTS_MARK) + 2).decode("utf-8", "replace")
    except OSError as exc:
        raise UsageError(f"the head-end cannot read {path}: {exc.strerror or exc}") from None
    if first.rstrip("\n") != KNOWN_HOSTS_MARK and os.path.getsize(path) > 0:
        raise UsageError(f"{path} exists and is not the head-end's: give a --state-dir of its "
                         "own (it writes known_hosts there)")
    return path


def _address(peer: object) -> str:
    return (f"{peer[0]}:{peer[1]}" if isinstance(peer, (tuple, list)) and len(peer) > 1
            else "?")


@dataclass
class _ConfigBatch:
    """A shell's configuration lines not sent yet, and the sub-mode they are in."""

    lines: list[str] = field(default_factory=list)
    # The lines that opened the current sub-mode and those it is nested in, outermost first
    # (`router bgp 65000`, `address-family ipv4`), each with its block.
    openers: list[tuple[ConfigLine, str]] = field(default_factory=list)
    head: list[str] = field(default_factory=list)  # what the next POST starts with (after a `do`)


def _openers(openers: list[tuple[ConfigLine, str]], block: ConfigLine | None,
             line: str) -> list[tuple[ConfigLine, str]]:
    """The chain of sub-mode openers once ``line`` moved the session to ``block``: back up to it
    (`exit`), down into it from the block it is nested in, or a chain of its own."""
    if block is None:
        return []
    for depth, (opened, _) in enumerate(openers):
        if opened is block:  # back up to a sub-mode already open
            return openers[:depth + 1]
    for depth in range(len(openers), 0, -1):
        if any(child is block for child in openers[depth - 1][0].children):
            return [*openers[:depth], (block, line)]  # nested in that one
    return [(block, line)]


def _answer(status: int, body: str) -> Reply:
    """The shell's reply for a proxy's answer."""
    if status == 200:
        return Reply(body)
    return Reply(f"%Error: {status} {' '.join(body.split())}\n", ok=False)


_PEER_GONE = (ConnectionError, asyncssh.Error)  # the client went away
#: Exec commands typed in configuration mode (as the emulator's session takes them).
_EXEC_FROM_CONFIG: CommandTree[bool] = CommandTree()
_EXEC_FROM_CONFIG.add_all({"do <line>": True, "show <line>": True})


def _local_commands(paging: tuple[str, ...], configure: tuple[str, ...]) -> CommandTree[bool]:
    """The commands the head-end's shell answers itself (from its session of the platform)."""
    tree: CommandTree[bool] = CommandTree()
    tree.add_all({"enable": True, "disable": True, "exit": True, "logout": True, "quit": True,
                  "terminal width <0-512>": True, "terminal no monitor": True,
                  "configure terminal": True})
    for pattern in (*paging, *configure):
        tree.add(pattern, True)
    return tree


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench headend``."""
    p = sub.add_parser(
        "headend", help="run the SSH-over-HTTPS tunnel's head-end in front of an edge proxy",
        description="An SSH server whose exec requests go to an edge proxy as HTTPS requests for "
                    "one device (one line: GET .../admin/exec/..., several: POST .../admin/config); "
                    "a shell is the device's terminal, a GET per command line, a POST per "
                    "configuration session.")
    p.add_argument("--proxy", required=True, metavar="URL", help="the edge proxy, https://HOST:PORT")
    p.add_argument("--proxy-ca", type=Path, required=True, help="the proxy's CA file")
    p.add_argument("--proxy-http3", action="store_true",
                   help="talk HTTP/3 to the proxy (UDP, the --proxy port's number; one QUIC "
                        "connection kept) instead of HTTPS")
    p.add_argument("--device", required=True, help="the device's name at the proxy")
    p.add_argument("--bind", default="127.0.0.1", help="(default: %(default)s)")
    p.add_argument("--port", type=int, default=2223, help="SSH port (default: %(default)s)")
    p.add_argument("--username", default="admin", help="login user (default: admin); also the "
                   "proxy's unless --proxy-username")
    p.add_argument("--password", default=None,
                   help=f"(default: admin); visible in ps: prefer --password-file or "
                        f"{HEADEND_PASSWORD}")
    p.add_argument("--password-file", type=Path, default=None, metavar="FILE",
                   help="the login password: the file's first line")
    p.add_argument("--proxy-username", default=None)
    p.add_argument("--proxy-password", default=None,
                   help=f"(default: the login password); prefer --proxy-password-file or "
                        f"{PROXY_PASSWORD}")
    p.add_argument("--proxy-password-file", type=Path, default=None, metavar="FILE")
    p.add_argument("--auth-tries", type=int, default=Limits.auth_tries,
                   help="failed logins per connection, then disconnected (default: "
                        "%(default)s)")
    p.add_argument("--auth-failure-delay", type=float, default=Limits.auth_failure_delay,
                   metavar="SECONDS", help="before a wrong password is answered, one source's "
                   "in turn (default: %(default)s)")
    p.add_argument("--authorized-keys", type=Path, default=None,
                   help="OpenSSH authorized_keys for public-key login")
    p.add_argument("--platform", default="cisco_ios",
                   help="the shell's prompt, paging and login level (default: %(default)s)")
    p.add_argument("--hostname", default=None,
                   help="the shell's prompt's host name (default: the --device name)")
    p.add_argument("--enable-password", default=None,
                   help="what the shell's enable asks for (default: admin); prefer "
                        "--enable-password-file or MGMTBENCH_ENABLE_SECRET")
    p.add_argument("--enable-password-file", type=Path, default=None, metavar="FILE")
    p.add_argument("--state-dir", type=Path, default=None,
                   help="where known_hosts goes (default: a temporary folder)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s",
                        stream=sys.stderr)
    for handler in logging.getLogger().handlers:  # a password guesser: a few lines, a count
        handler.addFilter(RateLimitFilter())
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    if args.auth_tries < 1 or not 0 <= args.auth_failure_delay < float("inf"):
        raise UsageError("--auth-tries must be >= 1 and --auth-failure-delay a number >= 0")
    password = secret(flag="--password", given=args.password, file=args.password_file,
                      env=HEADEND_PASSWORD, environ=os.environ, default="admin")
    assert password is not None
    proxy_password = secret(flag="--proxy-password", given=args.proxy_password,
                            file=args.proxy_password_file, env=PROXY_PASSWORD,
                            environ=os.environ, default=None)
    enable = secret(flag="--enable-password", given=args.enable_password,
                    file=args.enable_password_file, env="MGMTBENCH_ENABLE_SECRET",
                    environ=os.environ, default="admin")
    assert enable is not None
    options = HeadendOptions(
        proxy_url=args.proxy, proxy_ca=args.proxy_ca, device=args.device,
        username=args.username, password=password, proxy_username=args.proxy_username,
        proxy_password=proxy_password, authorized_keys=args.authorized_keys,
        auth_tries=args.auth_tries, auth_failure_delay=args.auth_failure_delay,
        bind=args.bind, port=args.port, state_dir=args.state_dir, platform=args.platform,
        hostname=args.hostname, enable_secret=enable,
        proxy_http3=args.proxy_http3)
    return asyncio.run(_serve(options))


async def _serve(options: HeadendOptions) -> int:
    headend = Headend(options)
    await headend.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, headend.request_stop)
    try:
        print(f"mgmtbench headend: ssh -p {headend.port} -o UserKnownHostsFile="
              f"{headend.known_hosts} {options.username}@{options.bind} -> {options.proxy_url} "
              f"{'(HTTP/3) ' if options.proxy_http3 else ''}device {options.device}")
        print(READY, flush=True)
        await headend.serve_forever()
    finally:
        await headend.stop()
    print("mgmtbench: head-end stopped", file=sys.stderr, flush=True)
    return 0
