"""``mgmtbench proxy``: run the edge proxy in the foreground."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from mgmtbench.emulator.guard import RateLimitFilter, quiet_loop_errors
from mgmtbench.emulator.options import Limits
from mgmtbench.errors import UsageError
from mgmtbench.proxy import headend
from mgmtbench.proxy.app import ProxyPolicy
from mgmtbench.proxy.inventory import SESSIONS, Inventory, parse_device
from mgmtbench.proxy.pool import PoolSettings
from mgmtbench.proxy.secrets import secret
from mgmtbench.proxy.server import EdgeProxy, ProxyOptions
from mgmtbench.targets import Login

READY = "Press Ctrl-C to stop."
#: The environment variables a password can come from instead of argv.
PROXY_PASSWORD = "MGMTBENCH_PROXY_PASSWORD"
DEVICE_PASSWORD = "MGMTBENCH_PASSWORD"  # as targets/credentials.py reads a device's
ENABLE_SECRET = "MGMTBENCH_ENABLE_SECRET"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench proxy`` (and the tunnel's ``mgmtbench headend``)."""
    headend.register(sub)
    p = sub.add_parser(
        "proxy", help="run the edge proxy: the HTTPS API for devices reached over SSH",
        description="Serve the ASA-style HTTPS API (GET /device/NAME/admin/exec/..., POST "
        "/device/NAME/admin/config) for the devices of an inventory, running the commands on "
        "each device over SSH, on a fresh connection per request or a pooled one.")
    p.add_argument("--bind", default="127.0.0.1", help="address to listen on (default: "
                   "%(default)s)")
    p.add_argument("--port", type=int, default=8444, help="HTTPS port, 0 for any (default: "
                   "%(default)s)")
    p.add_argument("--inventory", type=Path, default=None,
                   help='devices as JSON: {"devices": [{"name": "R1", "address": "10.0.0.1", '
                        '"port": 22, "platform": "cisco_ios", "session": "auto"}]}')
    p.add_argument("--device", action="append", default=[], metavar="NAME=ADDRESS[:PORT]",
                   help="a device (repeat for more), of --platform")
    p.add_argument("--platform", default="cisco_ios",
                   help="platform of the --device devices (default: %(default)s)")
    p.add_argument("--session", choices=SESSIONS, default="auto",
                   help="how --device devices run commands: exec (a channel per command), pty "
                        "(a shell per request) or auto (exec on IOS, a shell elsewhere)")
    p.add_argument("--known-hosts", type=Path, default=None,
                   help="the devices' host keys (default: not checked)")
    p.add_argument("--username", default="admin", help="the proxy's user (default: admin)")
    p.add_argument("--password", default=None,
                   help=f"the proxy's password (default: admin); visible in ps: prefer "
                        f"--password-file or {PROXY_PASSWORD}")
    p.add_argument("--password-file", type=Path, default=None, metavar="FILE",
                   help="the proxy's password: the file's first line")
    p.add_argument("--device-username", default=None, help="login on the devices (default: "
                   "--username)")
    p.add_argument("--device-password", default=None,
                   help=f"(default: the proxy's password); prefer --device-password-file or "
                        f"{DEVICE_PASSWORD}")
    p.add_argument("--device-password-file", type=Path, default=None, metavar="FILE")
    p.add_argument("--enable-password", default=None,
                   help=f"the devices' enable secret (default: the device password); prefer "
                        f"--enable-password-file or {ENABLE_SECRET}")
    p.add_argument("--enable-password-file", type=Path, default=None, metavar="FILE")
    p.add_argument("--ssh", choices=("pooled", "fresh"), default="pooled",
                   help="SSH connection per request unless X-SSH-Connection says otherwise "
                        "(default: %(default)s)")
    p.add_argument("--pool-size", type=int, default=PoolSettings.size,
                   help="idle SSH connections kept, all devices (default: %(default)s)")
    p.add_argument("--per-device", type=int, default=PoolSettings.per_device,
                   help="SSH connections to one device at once (default: %(default)s)")
    p.add_argument("--idle-timeout", type=float, default=PoolSettings.idle_timeout,
                   metavar="SECONDS", help="close idle connections after (default: %(default)s)")
    p.add_argument("--timeout", type=float, default=ProxyPolicy.timeout, metavar="SECONDS",
                   help="a request's SSH work, then 504 (default: %(default)s)")
    add_limit_arguments(p)
    p.add_argument("--state-dir", type=Path, default=None,
                   help="where the CA and certificate go (default: a temporary folder)")
    p.add_argument("--no-http3", dest="http3", action="store_false",
                   help="serve HTTPS only (default: HTTP/3 too, on UDP, the same port number)")
    p.add_argument("-v", "--verbose", action="store_true", help="log failures")
    p.set_defaults(run=run)


#: The proxy's limits: flag, default, help. The defaults are the device API's (the proxy answers
#: for many devices at once, but one address should no more take all of it than all of one).
_LIMITS = (
    ("--max-connections", int, Limits.max_https_connections,
     "open HTTPS connections in all; more are closed at accept, before TLS"),
    ("--max-connections-per-source", int, Limits.max_https_connections_per_source,
     "open HTTPS connections from one address"),
    ("--auth-failure-delay", float, Limits.auth_failure_delay,
     "seconds before a wrong password is answered, one source's in turn"),
    ("--body-timeout", float, Limits.body_timeout,
     "seconds for a request body, plus one per --body-min-rate bytes; then 408"),
    ("--body-min-rate", int, Limits.body_min_rate, "bytes per second a body may be sent at"),
    ("--idle-connection-timeout", float, Limits.https_idle_timeout,
     "seconds a keep-alive connection waits for its next request"),
    ("--tls-handshake-timeout", float, Limits.tls_handshake_timeout,
     "seconds for a client's TLS handshake"),
    ("--max-output", int, ProxyPolicy.max_output,
     "bytes of device output one request may bring back (streamed); past it the answer ends "
     "with a line '%% proxy: device output over N bytes' (502 if nothing was sent yet)"),
    ("--per-source", int, None,
     "SSH connections to one device one client address may hold at once"),
    ("--queue-timeout", float, PoolSettings.queue_timeout,
     "seconds a request waits for an SSH connection to its device; then 503"),
)


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """The proxy's limits, each also from MGMTBENCH_<FLAG> (as ``serve``'s)."""
    g = p.add_argument_group("limits", "What the proxy refuses, and when. Each can also come "
                             "from the environment: MGMTBENCH_<FLAG>, e.g. "
                             "MGMTBENCH_MAX_CONNECTIONS=2000")
    for flag, kind, default, text in _LIMITS:
        g.add_argument(flag, type=kind, default=default,
                       help=f"{text} (default: {'--per-device - 1' if default is None else default})")


def _limit(args: argparse.Namespace, environ: Mapping[str, str], flag: str,
           kind: type[int] | type[float]) -> float:
    """A limit's value: the flag if given, else MGMTBENCH_<FLAG>, else the default; a number
    >= 0 that is finite, or a one-line UsageError."""
    name = flag.removeprefix("--").replace("-", "_")
    value = getattr(args, name)
    env = "MGMTBENCH_" + name.upper()
    default = next(d for f, _, d, _ in _LIMITS if f == flag)
    if value == default and env in environ:
        try:
            value = kind(environ[env])
        except ValueError:
            raise UsageError(f"{env}={environ[env]!r} is not a number") from None
    if value is not None and not 0 <= value < float("inf"):
        raise UsageError(f"{flag} must be a number >= 0, not {value}")
    return float(value) if value is not None else -1.0


def options_from_args(args: argparse.Namespace,
                      environ: Mapping[str, str] | None = None) -> ProxyOptions:
    """The :class:`ProxyOptions` of ``proxy``'s flags (and the environment's passwords and
    MGMTBENCH_<FLAG> limits)."""
    env = os.environ if environ is None else environ
    devices = list(Inventory.load(args.inventory)) if args.inventory else []
    devices += [parse_device(spec, args.platform, args.session) for spec in args.device]
    if not devices:
        raise UsageError("the proxy needs devices: give --inventory FILE or --device NAME=ADDRESS")
    own = secret(flag="--password", given=args.password, file=args.password_file,
                 env=PROXY_PASSWORD, environ=env, default="admin")
    assert own is not None
    password = secret(flag="--device-password", given=args.device_password,
                      file=args.device_password_file, env=DEVICE_PASSWORD, environ=env,
                      default=own)
    assert password is not None
    enable = secret(flag="--enable-password", given=args.enable_password,
                    file=args.enable_password_file, env=ENABLE_SECRET, environ=env,
                    default=password)
    assert enable is not None
    login = Login(username=args.device_username or args.username, password=password,
                  enable_secret=enable)

    def limit(flag: str, kind: type[int] | type[float]) -> float:
        return _limit(args, env, flag, kind)

    limits = Limits(
        max_https_connections=int(limit("--max-connections", int)),
        max_https_connections_per_source=int(limit("--max-connections-per-source", int)),
        auth_failure_delay=limit("--auth-failure-delay", float),
        body_timeout=limit("--body-timeout", float),
        body_min_rate=int(limit("--body-min-rate", int)),
        https_idle_timeout=limit("--idle-connection-timeout", float),
        tls_handshake_timeout=limit("--tls-handshake-timeout", float))
    per_source = int(limit("--per-source", int))
    return ProxyOptions(
        inventory=Inventory(devices), device_login=login,
        policy=ProxyPolicy(username=args.username, password=own,
                           fresh_ssh=args.ssh == "fresh", timeout=args.timeout,
                           max_output=int(limit("--max-output", int)), limits=limits),
        pool=PoolSettings(size=args.pool_size, per_device=args.per_device,
                          idle_timeout=args.idle_timeout,
                          per_source=per_source if per_source >= 0 else None,
                          queue_timeout=limit("--queue-timeout", float)).check(),
        bind=args.bind, port=args.port, known_hosts=args.known_hosts,
        state_dir=args.state_dir, http3=args.http3)


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:  # a flood of one event: a few lines, a count
        handler.addFilter(RateLimitFilter())
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    return asyncio.run(_serve(options_from_args(args)))


async def _serve(options: ProxyOptions) -> int:
    loop = asyncio.get_running_loop()
    quiet_loop_errors(loop)  # a client's reset or an accept() at the cap: one line, no traceback
    proxy = EdgeProxy(options)
    await proxy.start()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy.request_stop)
    try:
        assert proxy.tls is not None
        first = options.inventory.devices[0]
        policy = options.policy
        print(f"mgmtbench proxy: {len(options.inventory)} device(s) on {proxy.url} "
              f"{'(TCP and UDP: HTTP/3 too) ' if options.http3 else ''}"
              f"(SSH {'fresh' if policy.fresh_ssh else 'pooled'} by default)")
        print(f"  curl -u {policy.username} --cacert {proxy.tls.ca} "
              f"{proxy.url}/device/{first.name}/admin/exec/show+version")
        print(READY, flush=True)
        await proxy.serve_forever()
    finally:
        await proxy.stop()
    print("mgmtbench: proxy stopped", flush=True)
    return 0
