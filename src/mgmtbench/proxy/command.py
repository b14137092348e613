"""``mgmtbench proxy``: run the edge proxy in the foreground."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.proxy import headend
from mgmtbench.proxy.app import ProxyPolicy
from mgmtbench.proxy.inventory import SESSIONS, Inventory, parse_device
from mgmtbench.proxy.pool import PoolSettings
from mgmtbench.proxy.server import EdgeProxy, ProxyOptions
from mgmtbench.targets import Login

READY = "Press Ctrl-C to stop."


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
    p.add_argument("--password", default="admin", help="the proxy's password (default: admin)")
    p.add_argument("--device-username", default=None, help="login on the devices (default: "
                   "--username)")
    p.add_argument("--device-password", default=None, help="(default: --password)")
    p.add_argument("--enable-password", default=None,
                   help="the devices' enable secret (default: the device password)")
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
    p.add_argument("--state-dir", type=Path, default=None,
                   help="where the CA and certificate go (default: a temporary folder)")
    p.add_argument("--no-http3", dest="http3", action="store_false",
                   help="serve HTTPS only (default: HTTP/3 too, on UDP, the same port number)")
    p.add_argument("-v", "--verbose", action="store_true", help="log failures")
    p.set_defaults(run=run)


def options_from_args(args: argparse.Namespace) -> ProxyOptions:
    """The :class:`ProxyOptions` of ``proxy``'s flags."""
    devices = list(Inventory.load(args.inventory)) if args.inventory else []
    devices += [parse_device(spec, args.platform, args.session) for spec in args.device]
    if not devices:
        raise UsageError("the proxy needs devices: give --inventory FILE or --device NAME=ADDRESS")
    password = args.device_password if args.device_password is not None else args.password
    login = Login(username=args.device_username or args.username, password=password,
                  enable_secret=args.enable_password if args.enable_password is not None
                  else password)
    return ProxyOptions(
        inventory=Inventory(devices), device_login=login,
        policy=ProxyPolicy(username=args.username, password=args.password,
                           fresh_ssh=args.ssh == "fresh", timeout=args.timeout),
        pool=PoolSettings(size=args.pool_size, per_device=args.per_device,
                          idle_timeout=args.idle_timeout).check(),
        bind=args.bind, port=args.port, known_hosts=args.known_hosts,
        state_dir=args.state_dir, http3=args.http3)


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    return asyncio.run(_serve(options_from_args(args)))


async def _serve(options: ProxyOptions) -> int:
    proxy = EdgeProxy(options)
    await proxy.start()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, proxy.request_stop)
    try:
        assert proxy.tls is not None
        first = options.inventory.devices[0]
        policy = options.policy
        print(f"mgmtbench proxy: {len(options.inventory)} device(s) on {proxy.url} "
              f"{'(TCP and UDP: HTTP/3 too) ' if options.http3 else ''}"
              f"(SSH {'fresh' if policy.fresh_ssh else 'pooled'} by default)")
        print(f"  curl -u {policy.username}:{policy.password} --cacert {proxy.tls.ca} "
              f"{proxy.url}/device/{first.name}/admin/exec/show+version")
        print(READY, flush=True)
        await proxy.serve_forever()
    finally:
        await proxy.stop()
    print("mgmtbench: proxy stopped", flush=True)
    return 0
