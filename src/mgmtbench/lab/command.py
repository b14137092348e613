"""``mgmtbench lab``: check, bring up, tear down and list labs and profiles."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from mgmtbench import progress
from mgmtbench.emulator.command import add_ssh_server_arguments, ssh_server_from_args
from mgmtbench.emulator.options import Credentials
from mgmtbench.errors import UsageError
from mgmtbench.lab.backends import BACKENDS
from mgmtbench.lab.calibrate import split_reply_ms
from mgmtbench.lab.cleanup import clean
from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.lab import ECHO_PORT, Lab, has_net_admin
from mgmtbench.lab.local import LocalLab
from mgmtbench.lab.opening import open_lab
from mgmtbench.lab.profiles import BUILTIN, IMPAIRED, LinkProfile, load_profiles, resolve
from mgmtbench.lab.runtimes import DEFAULT_IMAGE, RUNTIMES
from mgmtbench.lab.state import known_labs
from mgmtbench.targets.base import Service


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench lab`` and its actions."""
    p = sub.add_parser("lab", help="build, check and remove lab networks",
                       description="Lab networks: devices in a namespace behind an impaired link.")
    lab_sub = p.add_subparsers(dest="lab_command", metavar="ACTION", required=True)

    check = lab_sub.add_parser("check", help="bring a lab up, measure its RTT, tear it down")
    _lab_options(check)
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(run=run_check)

    up = lab_sub.add_parser("up", help="bring a lab up and keep it until Ctrl-C")
    _lab_options(up)
    up.add_argument("--devices", type=int, default=1, help="devices in the lab (default: 1)")
    up.add_argument("--platform", default="cisco_ios", help="device platform (default: cisco_ios)")
    up.add_argument("--password", default=None, help=argparse.SUPPRESS)  # refused: see run_up
    up.add_argument("--ask-password", action="store_true",
                    help="ask for the devices' login password (default: MGMTBENCH_PASSWORD, "
                         "else admin); never on the command line, where every user sees it")
    up.add_argument("--authorized-keys", type=Path, default=None, metavar="FILE",
                    help="OpenSSH authorized_keys file for public-key login to the devices")
    up.add_argument("--inventory-out", type=Path, default=None, metavar="FILE",
                    help="write the lab's devices as a TOML inventory for --inventory and "
                         "`mgmtbench inventory check` (no password in it: export "
                         "MGMTBENCH_PASSWORD)")
    up.set_defaults(run=run_up)

    down = lab_sub.add_parser("down", help="remove labs left behind by runs that were killed")
    down.add_argument("--all", action="store_true", help="also remove labs whose owner still runs")
    down.set_defaults(run=run_down)

    profiles = lab_sub.add_parser("profiles", help="list the link profiles")
    profiles.add_argument("--profiles-file", type=Path, default=None)
    profiles.set_defaults(run=run_profiles)


def _lab_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default="regional",
                   help=f"{', '.join([*BUILTIN, *IMPAIRED])}, a name from --profiles-file, or a spec such as "
                        "rtt=80,jitter=2,loss=0.1,rate=50 (default: %(default)s)")
    p.add_argument("--profiles-file", type=Path, default=None,
                   help="TOML file of user profiles ([profiles.NAME] rtt_ms = ...)")
    p.add_argument("--link-backend", default="auto", choices=["auto", *BACKENDS],
                   help="how to impair the link (default: netem if the kernel has it; else tbf "
                        "for a rate-only link, tun for the rest)")
    p.add_argument("--device-runtime", default="netns", choices=list(RUNTIMES),
                   help="how the devices run: netns (one emulator process in the lab's "
                        "namespace), docker (a container per device) or sshd (a real OpenSSH "
                        "sshd per device, SSH exec only) (default: %(default)s)")
    p.add_argument("--image", default=DEFAULT_IMAGE,
                   help="device image for --device-runtime docker (default: %(default)s)")
    p.add_argument("--emulator-processes", type=int, default=1, metavar="P",
                   help="netns runtime: emulator processes sharing the devices, to use more "
                        "cores for a large fleet (default: 1)")
    p.add_argument("--samples", type=int, default=20, help="calibration samples (default: 20)")
    p.add_argument("--progress", choices=progress.CHOICES, default="auto",
                   help="steps done and the time left on stderr while the lab comes up: auto (on "
                        "a terminal, unless MGMTBENCH_PROGRESS=0; default), on, off")
    add_ssh_server_arguments(p)


def _profile(args: argparse.Namespace) -> LinkProfile:
    extra = load_profiles(args.profiles_file) if args.profiles_file else None
    return resolve(args.profile, extra)


def _open(args: argparse.Namespace, **kwargs: Any) -> Lab | LocalLab:
    lab = open_lab(_profile(args), backend=args.link_backend, runtime=args.device_runtime,
                   image=args.image, emulator_processes=args.emulator_processes,
                   ssh=ssh_server_from_args(args), calibration_samples=args.samples, **kwargs)
    if isinstance(lab, LocalLab):
        print("mgmtbench: no root or CAP_NET_ADMIN: the local profile runs on 127.0.0.1 "
              "without a lab network", file=sys.stderr)
    return lab


def run_check(args: argparse.Namespace) -> int:
    """``mgmtbench lab check``: bring a lab up, measure it, tear it down."""
    logging.basicConfig(level=logging.WARNING, format="mgmtbench: %(message)s")
    with progress.board(sys.stderr, args.progress):  # the lab's steps, until it is up
        lab = _open(args)
    with lab:
        info = lab.facts().as_dict()
        if isinstance(lab, Lab) and lab.echo_address is not None:
            info["split_reply_ms"] = round(split_reply_ms(lab.echo_address, ECHO_PORT), 3)
        cal = lab.calibration.as_dict() if lab.calibration is not None else {}
        info["calibration"] = cal
    if args.json:
        print(json.dumps(info))
    else:
        print(f"profile {info['profile']} over backend {info['backend']}: configured RTT "
              f"{info['configured_rtt_ms']} ms, measured {info['measured_rtt_ms']} ms "
              f"(p95 {info['measured_rtt_p95_ms']} ms, TCP connect p50 "
              f"{cal.get('connect_p50_ms', float('nan')):.3f} ms)")
        if isinstance(lab, Lab) and lab.tcp is not None:
            print(f"TCP: {lab.tcp.summary()}")
            for difference in lab.tcp.differs:
                print(f"  warning: {difference}")
    return 0


def _password(args: argparse.Namespace) -> str:
    """The devices' login password: asked (``--ask-password``), else ``MGMTBENCH_PASSWORD``,
    else ``admin``. ``--password VALUE`` is refused: a command line is world-readable
    (``/proc/PID/cmdline``, ``ps``), which is why OpenSSH has no such flag and ``docker login``
    reads ``--password-stdin``."""
    if args.password is not None:
        raise UsageError("--password puts the password where every user sees it (ps): export "
                         "MGMTBENCH_PASSWORD or use --ask-password")
    if args.ask_password:
        import getpass

        try:
            return getpass.getpass("device password: ")
        except EOFError:
            raise UsageError("--ask-password: no password given (end of input)") from None
    return os.environ.get("MGMTBENCH_PASSWORD") or "admin"


def run_up(args: argparse.Namespace) -> int:
    """``mgmtbench lab up``: a lab until Ctrl-C."""
    logging.basicConfig(level=logging.WARNING, format="mgmtbench: %(message)s")
    keys = args.authorized_keys
    if keys is not None and not keys.is_file():
        raise UsageError(f"--authorized-keys {keys}: no such file")
    if args.inventory_out is not None:
        from mgmtbench.lab.inventory_out import check_inventory_path

        check_inventory_path(args.inventory_out)  # before the lab is built
    password = _password(args)
    creds = Credentials(password=password, enable_secret=password,
                        authorized_keys=keys.resolve() if keys is not None else None)
    with progress.board(sys.stderr, args.progress):  # the lab's steps, until it is up
        lab = _open(args, devices=args.devices, platform=args.platform, credentials=creds)
    with lab:
        info = lab.facts().as_dict()
        if args.inventory_out is not None:
            _write_inventory(args, lab, creds)
        print(f"lab up: profile {info['profile']} ({info['configured_rtt_ms']} ms configured, "
              f"{info['measured_rtt_ms']} ms measured) over {info['backend']}, devices on "
              f"{info['runtime']}")
        for device in lab.devices[:5]:
            print(f"  {device.hostname}: ssh -p {device.ssh_port} -o UserKnownHostsFile="
                  f"{lab.known_hosts} admin@{device.address}")
            if lab.unsupported(Service.HTTPS) is None:
                print(f"      curl -u admin --cacert {lab.ca_file} "
                      f"https://{device.address}:{device.https_port}/admin/exec/show+version")
        if len(lab.devices) > 5:
            print(f"  ... and {len(lab.devices) - 5} more up to {lab.devices[-1].address}")
        print("Press Ctrl-C to tear the lab down.", flush=True)
        stop = signal.sigwait if hasattr(signal, "sigwait") else None
        try:
            if stop is not None:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
                stop({signal.SIGINT, signal.SIGTERM})
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    print("lab down", flush=True)
    return 0


def _write_inventory(args: argparse.Namespace, lab: Lab | LocalLab,
                     creds: Credentials) -> None:
    """``--inventory-out``: the lab's devices as a TOML inventory (no password in it)."""
    from mgmtbench.lab.inventory_out import lab_inventory, private_key_for, write_inventory

    lab_id = lab.state.lab_id if isinstance(lab, Lab) and lab.state is not None else "local"
    text = lab_inventory(lab.devices, lab_id=lab_id, profile=lab.profile.name,
                         platform=args.platform, username=creds.username,
                         ca_file=lab.ca_file, known_hosts=lab.known_hosts,
                         key_file=private_key_for(creds.authorized_keys))
    write_inventory(args.inventory_out, text)
    print(f"inventory written to {args.inventory_out} (export MGMTBENCH_PASSWORD to use it)")


def run_down(args: argparse.Namespace) -> int:
    """``mgmtbench lab down``: remove what killed runs left behind."""
    if not has_net_admin():
        raise UsageError("removing labs needs root or CAP_NET_ADMIN")
    done = clean(everything=args.all)
    removed = done.names()
    with lab_failures("could not list the labs"):
        left = [s.lab_id for s in known_labs()]
    stopped = done.processes
    print(f"removed {len(removed)} lab(s){': ' + ', '.join(removed) if removed else ''}; "
          f"stopped {len(stopped)} process(es) they left"
          f"{': ' + ', '.join(p.describe() for p in stopped) if stopped else ''}; "
          f"{len(left)} still running")
    return 0


def run_profiles(args: argparse.Namespace) -> int:
    """``mgmtbench lab profiles``: the built-in and user profiles."""
    table = {**BUILTIN, **IMPAIRED,
             **(load_profiles(args.profiles_file) if args.profiles_file else {})}
    print(f"{'name':<18}{'rtt ms':>8}{'jitter':>8}{'loss %':>8}{'rate Mbit':>11}  "
          f"{'TCP (device/client cc, MTU, initcwnd)':<40}source")
    for p in table.values():
        tcp = f"{p.device_cc}/{p.client_cc}, {p.mtu}, {p.initcwnd}"
        print(f"{p.name:<18}{p.rtt_ms:>8g}{p.jitter_ms:>8g}{p.loss_pct:>8g}{p.rate_mbit:>11g}  "
              f"{tcp:<40}{p.source}")
    return 0
