"""``mgmtbench serve``: run the emulator in the foreground."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

from mgmtbench import loopthread
from mgmtbench.emulator.device.transcripts import available_platforms, check_login_privilege
from mgmtbench.emulator.guard import RateLimitFilter
from mgmtbench.emulator.https.tls import USER_AGENT_RULES
from mgmtbench.emulator.memtrim import TrimPolicy
from mgmtbench.emulator.options import (
    AUTH_METHODS,
    HOST_KEY_TYPES,
    Algorithms,
    Credentials,
    EmulatorOptions,
    Limits,
    SshServerOptions,
    env_name,
)
from mgmtbench.emulator.server import Emulator
from mgmtbench.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench serve``."""
    p = sub.add_parser(
        "serve",
        help="run the device emulator (SSH + HTTPS) in the foreground",
        description="Serve emulated devices over SSH (exec and shell) and the ASA-style HTTPS API "
        "until Ctrl-C. Every option can also come from the environment as MGMTBENCH_<OPTION> "
        "(MGMTBENCH_SSH_PORT=22, MGMTBENCH_HOSTNAME=R7, ...), as in the container image; an "
        "option on the command line wins.",
    )
    p.add_argument("--hostname", default="R1", help="device hostname (default: %(default)s)")
    p.add_argument("--hostnames", default=None, metavar="NAME,NAME,...",
                   help="one hostname per device, instead of HOSTNAME-001 ... (a shard of a "
                        "fleet served by several processes)")
    p.add_argument("--platform", default="cisco_ios",
                   help=f"transcript platform: {', '.join(available_platforms()) or 'none found'}"
                        " (default: %(default)s)")
    p.add_argument("--devices", type=int, default=1,
                   help="number of devices, each on its own ports (default: %(default)s)")
    p.add_argument("--bind", default="127.0.0.1",
                   help="address to listen on, or one address per device separated by commas "
                        "(then every device uses the same ports) (default: %(default)s)")
    p.add_argument("--ssh-port", type=_port, default=2222,
                   help="SSH port of the first device, 0 for any (default: %(default)s)")
    p.add_argument("--https-port", type=_port, default=8443,
                   help="HTTPS port of the first device, 0 for any (default: %(default)s)")
    p.add_argument("--http3-port", type=_port, default=None,
                   help="HTTP/3 port (UDP: the HTTPS API over QUIC) of the first device, 0 for "
                        "any (default: the HTTPS port's number)")
    p.add_argument("--no-http3", action="store_true",
                   help="serve no HTTP/3 (the HTTPS API over QUIC is on with HTTPS)")
    p.add_argument("--netconf-port", type=_port, default=None,
                   help="NETCONF port (the netconf SSH subsystem only, as IOS-XE's 830) of the "
                        "first device, 0 for any; NETCONF is also served on the SSH port "
                        "(default: 8300, or any free port with --ssh-port 0)")
    p.add_argument("--no-netconf", action="store_true",
                   help="serve no NETCONF (on platforms with YANG models it is on)")
    p.add_argument("--gnmi-port", type=_port, default=None,
                   help="gNMI port (gRPC over TLS, as devices' 9339) of the first device, 0 for "
                        "any (default: 9339, or any free port with --ssh-port 0)")
    p.add_argument("--no-gnmi", action="store_true",
                   help="serve no gNMI (on platforms with YANG models it is on)")
    p.add_argument("--gnmi-anonymous", action="store_true",
                   help="accept gNMI calls that carry no credentials (clibench's Go client "
                        "sends none); calls with credentials are still checked")
    p.add_argument("--username", default="admin", help="login user (default: %(default)s)")
    p.add_argument("--password", default="admin", help="login password (default: %(default)s)")
    p.add_argument("--enable-password", default=None,
                   help="enable secret (default: the login password)")
    p.add_argument("--authorized-keys", type=Path, default=None,
                   help="OpenSSH authorized_keys file for public-key login")
    add_ssh_server_arguments(p)
    p.add_argument("--tls-versions", type=_names, default=(), metavar="TLSv1.2,TLSv1.3",
                   help="TLS versions the HTTPS API offers (default: the platform's, as its "
                        "real image: TLSv1.2 on cisco_ios and cisco_asa)")
    p.add_argument("--user-agent-rule", choices=USER_AGENT_RULES, default="any",
                   help="'device': refuse /admin/ requests without the platform's User-Agent "
                        "(the ASA's ASDM/...), as the device; 'any': accept every agent "
                        "(default: %(default)s)")
    p.add_argument("--processing-delay", type=float, default=0.0, metavar="SECONDS",
                   help="device CPU time added to every command (default: 0)")
    p.add_argument("--clock-start", default=None, metavar="ISO8601|transcript",
                   help="what every device's clock reads when the emulator makes it: an ISO 8601 "
                        "time (UTC without a zone), or 'transcript' for the moment the "
                        "transcripts were captured (their outputs byte for byte) (default: the "
                        "host's time)")
    add_limit_arguments(p)
    p.add_argument("--file-system-size", type=int, default=Limits.file_system_size,
                   metavar="BYTES",
                   help="bytes each device's file system (flash:, disk0:) holds in memory for "
                        "SCP and SFTP (default: %(default)s, 64 MiB)")
    p.add_argument("--transcripts", type=Path, default=None,
                   help="folder of platform transcripts (default: the bundled ones)")
    p.add_argument("--state-dir", type=Path, default=None,
                   help="where to write the CA, known_hosts (default: a temporary folder)")
    p.add_argument("-v", "--verbose", action="store_true", help="log every connection")
    p.set_defaults(run=run)
    _defaults_from_environment(p, os.environ)


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """The :class:`Limits` flags: what a device refuses, and when (defaults: a real device's)."""
    g = p.add_argument_group(
        "limits", "Per device. Each gives a device-style refusal; defaults are a real device's "
        "or server's (in brackets).")
    d = Limits()

    def limit(flag: str, kind: type, text: str, metavar: str | None = None) -> None:
        default = getattr(d, flag.removeprefix("--").replace("-", "_"))
        g.add_argument(flag, type=kind, default=default, metavar=metavar,
                       help=f"{text} (default: %(default)s)")

    limit("--max-sessions", int, "logged-in SSH sessions; connections still logging in do "
          "not count")
    g.add_argument("--max-startups", type=_startups, default=d.max_startups,
                   metavar="START:RATE:FULL",
                   help="unauthenticated SSH connections: from START on, drop new ones with "
                        "RATE %% probability, rising to 100 %% at FULL [OpenSSH MaxStartups] "
                        "(default: 10:30:100)")
    limit("--max-startups-per-source", int, "unauthenticated SSH connections from one address "
          "[OpenSSH PerSourceMaxStartups]")
    limit("--login-timeout", float, "seconds to log in [IOS ip ssh time-out]", "SECONDS")
    limit("--auth-tries", int, "failed logins before an SSH connection is closed [IOS ip ssh "
          "authentication-retries]")
    limit("--auth-failure-delay", float, "seconds before a failed SSH or HTTPS login is "
          "answered, one source's in turn; a good login never waits [IOS login delay]",
          "SECONDS")
    limit("--max-channels", int, "open sessions per SSH connection [OpenSSH MaxSessions]")
    limit("--max-line", int, "characters of one command line")
    limit("--max-output", int, "bytes of output of one command", "BYTES")
    limit("--max-request-output", int, "bytes of output of one SSH exec request or HTTPS "
          "request", "BYTES")
    limit("--max-commands", int, "commands in one SSH exec request or HTTPS GET")
    limit("--max-body", int, "bytes of a POST /admin/config body", "BYTES")
    limit("--max-config-lines", int, "lines of one POST /admin/config body")
    limit("--max-config-size", int, "bytes of a device's running configuration: a line that "
          "would add past it is refused, however it comes", "BYTES")
    limit("--https-idle-timeout", float, "seconds an HTTPS connection may wait for a request's "
          "headers, idle keep-alive included [nginx keepalive_timeout]", "SECONDS")
    limit("--tls-handshake-timeout", float, "seconds for a TLS handshake [nginx "
          "ssl_handshake_timeout]", "SECONDS")
    limit("--body-timeout", float, "seconds for a request body, plus one per --body-min-rate "
          "bytes received [Apache mod_reqtimeout body=20,MinRate=500]", "SECONDS")
    limit("--body-min-rate", int, "bytes per second that extend --body-timeout", "BYTES")
    limit("--max-https-connections", int, "open HTTPS connections; a new one over it is closed "
          "at accept, before TLS")
    limit("--max-https-connections-per-source", int, "open HTTPS connections from one address "
          "[nginx limit_conn per address]")
    limit("--max-http3-connections", int, "open HTTP/3 (QUIC) connections; a new one over it is "
          "refused in its first packet, before TLS")
    limit("--max-http3-streams", int, "concurrent requests per HTTP/3 connection [nginx "
          "http3_max_concurrent_streams]")


def _startups(text: str) -> tuple[int, int, int]:
    parts = text.split(":")
    try:
        values = [int(part) for part in parts]
    except ValueError:
        values = []
    if len(values) == 1:  # OpenSSH's form for start = full
        values = [values[0], 100, values[0]]
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"{text!r}: give START:RATE:FULL, like OpenSSH's "
                                         "10:30:100")
    return values[0], values[1], values[2]


def limits_from_args(args: argparse.Namespace) -> Limits:
    """The :class:`Limits` of :func:`add_limit_arguments`' flags (and --file-system-size)."""
    names = [f for f in Limits.__dataclass_fields__ if hasattr(args, f)]
    return Limits(**{name: getattr(args, name) for name in names})


def add_ssh_server_arguments(p: argparse.ArgumentParser) -> None:
    """The SSH server's algorithm lists, host key and login methods (``serve`` and ``lab``)."""
    p.add_argument("--host-key", choices=sorted(HOST_KEY_TYPES), default=None,
                   help="type of the SSH host key generated for this run (default: the "
                        "platform's, as its real image has: rsa on cisco_ios and cisco_asa)")
    for flag, what in (("--kex", "key exchange"), ("--ciphers", "cipher"), ("--macs", "MAC"),
                       ("--host-key-algs", "host key (signature)")):
        p.add_argument(flag, type=_names, default=None, metavar="NAME,NAME,...",
                       help=f"{what} algorithms the SSH server offers (default: the platform's, "
                            "as its real image offers them: [ssh] in its platform.toml)")
    p.add_argument("--auth-methods", type=_names, default=AUTH_METHODS, metavar="METHOD,...",
                   help=f"login methods offered, of {', '.join(AUTH_METHODS)} (default: all "
                        "that the credentials allow)")
    p.add_argument("--login-privilege", type=_privilege, default=None, metavar="1|15",
                   help="privilege level an SSH shell starts at: 15 lands at host#, 1 at host> "
                        "(enable needed) (default: the platform's, cisco_ios 15, cisco_asa 1)")


def ssh_server_from_args(args: argparse.Namespace) -> SshServerOptions:
    """The :class:`SshServerOptions` of :func:`add_ssh_server_arguments`' flags."""
    return SshServerOptions(
        algorithms=Algorithms(kex=args.kex, ciphers=args.ciphers, macs=args.macs,
                              host_key_algs=args.host_key_algs),
        host_key_type=args.host_key, auth_methods=args.auth_methods,
        login_privilege=args.login_privilege)


def _privilege(text: str) -> int:
    try:
        return check_login_privilege(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a login privilege level: choose 1 "
                                         "or 15") from None


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _defaults_from_environment(parser: argparse.ArgumentParser, environ: Mapping[str, str]) -> None:
    """MGMTBENCH_SSH_PORT=22 is the default of ``--ssh-port``. argparse applies an option's type
    to a string default, so a bad value gets the same message as on the command line."""
    for action in parser._actions:
        option = next((o for o in action.option_strings if o.startswith("--")), None)
        if option is None or action.nargs == 0:  # flags such as --verbose stay off
            continue
        value = environ.get(env_name(option))
        if value is None:
            continue
        if action.choices is not None and value not in action.choices:
            raise UsageError(f"{env_name(option)}={value}: choose "
                             f"{', '.join(map(str, action.choices))}")
        action.default = value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0-65535)")
    return value


def options_from_args(args: argparse.Namespace) -> EmulatorOptions:
    """The :class:`EmulatorOptions` of ``serve``'s parsed flags."""
    devices = len(args.bind.split(",")) if "," in args.bind else args.devices
    names = tuple(n.strip() for n in args.hostnames.split(",")) if args.hostnames else ()
    options = EmulatorOptions(
        hostname=args.hostname,
        names=names,
        platform=args.platform,
        devices=devices,
        bind=args.bind.split(",")[0],
        addresses=tuple(args.bind.split(",")) if "," in args.bind else (),
        ssh_port=args.ssh_port,
        https_port=args.https_port,
        http3=not args.no_http3,
        http3_port=args.http3_port,
        netconf=not args.no_netconf,
        netconf_port=(args.netconf_port if args.netconf_port is not None
                      else 0 if args.ssh_port == 0 else 8300),
        gnmi=not args.no_gnmi,
        gnmi_anonymous=args.gnmi_anonymous,
        gnmi_port=(args.gnmi_port if args.gnmi_port is not None
                   else 0 if args.ssh_port == 0 else 9339),
        credentials=Credentials(
            username=args.username,
            password=args.password,
            enable_secret=args.enable_password if args.enable_password is not None
            else args.password,
            authorized_keys=args.authorized_keys,
        ),
        limits=limits_from_args(args),
        processing_delay=args.processing_delay,
        transcripts=args.transcripts,
        state_dir=args.state_dir,
        tls_versions=args.tls_versions,
        user_agent_rule=args.user_agent_rule,
        clock_start=args.clock_start,
    )
    return options.with_ssh_server(ssh_server_from_args(args))


def run(args: argparse.Namespace) -> int:
    """Serve until Ctrl-C or SIGTERM."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    for handler in logging.getLogger().handlers:  # a flood of one event: a few lines, a count
        handler.addFilter(RateLimitFilter())
    logging.getLogger("asyncssh").setLevel(logging.WARNING)
    return loopthread.run(_serve(options_from_args(args)))  # uvloop's loop where installed


async def _serve(options: EmulatorOptions) -> int:
    emulator = Emulator(options, trim=TrimPolicy(collect=True))
    await emulator.start()
    # What exists once the devices are up lives as long as the process: frozen, it is left out
    # of every full collection, so that the trimmer's collection after a load (and CPython's
    # own) passes over only what came since (one device: 87,000 objects, 34 ms a collection).
    gc.collect()
    gc.freeze()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, emulator.request_stop)
    try:
        _print_ready(emulator)
        await emulator.serve_forever()
    finally:
        await emulator.stop()
    print("mgmtbench: emulator stopped", flush=True)
    return 0


def _print_ready(emulator: Emulator) -> None:
    opts = emulator.options
    creds = opts.credentials
    count = len(emulator.endpoints)
    print(f"mgmtbench emulator: {count} {opts.platform} device{'s' if count > 1 else ''} "
          f"on {opts.bind} (state in {emulator.state_dir})")
    shown = emulator.endpoints[:5]
    for endpoint in shown:
        print(f"  {endpoint.hostname}:")
        if endpoint.ssh_port:
            print(f"    ssh -p {endpoint.ssh_port} -o UserKnownHostsFile={emulator.known_hosts} "
                  f"{creds.username}@{endpoint.host}")
        if endpoint.https_port and emulator.tls is not None:
            agent = endpoint.device.platform.style.identity.https.user_agent
            agent_flag = (f"-A '{agent}/ Java/1.8.0_131' "
                          if agent and opts.user_agent_rule == "device" else "")
            print(f"    curl {agent_flag}-u {creds.username}:{creds.password} --cacert "
                  f"{emulator.tls.ca} {endpoint.https_url('show version')}")
        if endpoint.http3_port:
            print(f"    http3: udp port {endpoint.http3_port} (the same API; curl --http3-only)")
        if endpoint.netconf_port:
            print(f"    netconf: ssh -s -p {endpoint.netconf_port} {creds.username}@"
                  f"{endpoint.host} netconf")
        if endpoint.gnmi_port and emulator.tls is not None:
            print(f"    gnmi: gnmic -a {endpoint.host}:{endpoint.gnmi_port} -u {creds.username} "
                  f"-p {creds.password} --tls-ca {emulator.tls.ca} get --path /system/state")
    if count > len(shown):
        last = emulator.endpoints[-1]
        print(f"  ... {count - len(shown)} more, up to {last.hostname} "
              f"(ssh port {last.ssh_port}, https port {last.https_port})")
    print(f"  login password: {creds.password}; enable secret: {creds.enable_secret}")
    print("Press Ctrl-C to stop.", flush=True)
