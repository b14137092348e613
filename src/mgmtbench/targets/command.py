"""``mgmtbench inventory``: look at an inventory's hosts before benchmarking them.

``mgmtbench inventory check FILE [--limit PATTERN]`` reads the inventory (any format of
:mod:`mgmtbench.targets.inventory`), then probes every host (:mod:`mgmtbench.targets.probe`):
reachability, login, platform, RTT by TCP connect and by an SSH echo, the version string, SSH and
TLS facts; a table, or ``--json``. Exit status 0 when every host is fine, 1 when one is not, 2 for
a mistake in the inventory or the options. ``mgmtbench inventory list FILE`` only reads it.
Credentials are never printed.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path

from mgmtbench.targets.credentials import VARIABLES
from mgmtbench.targets.inventory import Inventory, load_inventory
from mgmtbench.targets.probe import SAMPLES, HostReport, probe_all
from mgmtbench.targets.safety import (
    PER_TARGET_RATE,
    PER_TARGET_SESSIONS,
    TargetGate,
    shared_addresses,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench inventory`` and its actions."""
    p = sub.add_parser("inventory", help="read and check an inventory of real devices",
                       description="Inventories (Nornir, Ansible, containerlab, mgmtbench TOML): "
                                   "the hosts the benchmarks' --inventory runs against. "
                                   f"Credentials: the inventory, then {', '.join(VARIABLES)}.")
    actions = p.add_subparsers(dest="inventory_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="probe every host: reachability, login, platform, "
                                             "RTT, SSH and TLS facts")
    _common(check)
    check.add_argument("--samples", type=_positive_int, default=SAMPLES,
                       help=f"TCP connects and SSH echoes per host (default: {SAMPLES})")
    check.add_argument("--parallel", type=_positive_int, default=8,
                       help="hosts probed at once (one session per host; default: 8)")
    check.add_argument("--per-target-rate", type=_rate, default=PER_TARGET_RATE,
                       metavar="PER_SECOND",
                       help="new connections a second to one address, however many hosts the "
                            "inventory gives it (default: %(default)s)")
    check.add_argument("--per-target-sessions", type=_positive_int, default=PER_TARGET_SESSIONS,
                       help="hosts probed at once on one address (default: %(default)s; a "
                            "device has few VTY lines)")
    check.add_argument("--json", action="store_true", help="print one JSON object")
    check.set_defaults(run=run_check)
    listing = actions.add_parser("list", help="the hosts as read: no connection is made")
    _common(listing)
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.set_defaults(run=run_list)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, metavar="FILE",
                   help="the inventory: Nornir hosts.yaml (or its folder), Ansible YAML, "
                        "containerlab topology-data.json or inspect JSON, mgmtbench TOML")
    p.add_argument("--format", default=None, help="the format, if the file does not tell "
                                                  "(nornir, ansible, containerlab, toml)")
    p.add_argument("--limit", default=None, metavar="PATTERN",
                   help="comma-separated globs on host name, address or group; !PATTERN excludes")
    p.add_argument("--ask-password", action="store_true",
                   help="prompt for a password the inventory and MGMTBENCH_PASSWORD do not give")
    p.add_argument("--timeout", type=_seconds, default=None, metavar="SECONDS",
                   help="per host, for hosts without a timeout of their own (default: 30)")


def _seconds(text: str) -> float:
    """A time-out: finite, above 0, a day at most (NaN and inf are no time-out)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value <= 86_400:
        raise argparse.ArgumentTypeError(f"give seconds above 0 up to 86400, not {text}")
    return value


def _rate(text: str) -> float:
    """Connections a second: finite and above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"give a rate above 0, not {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _load(args: argparse.Namespace) -> Inventory:
    return load_inventory(args.file, format=args.format, limit=args.limit,
                          prompt=getpass.getpass if args.ask_password else None,
                          timeout=args.timeout)


def run_list(args: argparse.Namespace) -> int:
    """``mgmtbench inventory list``."""
    inventory = _load(args)
    rows = [{"name": h.name, "address": h.target.host, "given_as": h.address,
             "platform": h.platform.name, "ssh_port": h.target.ssh_port,
             "https_port": h.target.https_port, "username": h.target.username,
             "auth": h.target.auth.value, "groups": list(h.groups),
             "ca_file": str(h.target.ca_file) if h.target.ca_file else None,
             "known_hosts": str(h.target.known_hosts) if h.target.known_hosts else None,
             "timeout_s": h.timeout} for h in inventory.hosts]
    if args.json:
        print(json.dumps({"inventory": str(inventory.path), "format": inventory.format,
                          "hosts": rows}, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{inventory.path} ({inventory.format}): {len(rows)} hosts")
    for column in ("name", "address", "platform", "ssh", "https", "user", "auth", "groups"):
        table.add_column(column)
    for h in inventory.hosts:
        t = h.target
        table.add_row(h.name, t.host, h.platform.name, str(t.ssh_port), str(t.https_port),
                      t.username, t.auth.value, ", ".join(h.groups))
    Console().print(table)
    return 0


def run_check(args: argparse.Namespace) -> int:
    """``mgmtbench inventory check``: 0 when every host is fine, else 1."""
    inventory = _load(args)
    shared = shared_addresses((h.target.host for h in inventory.hosts),
                              rate=args.per_target_rate, sessions=args.per_target_sessions)
    if shared:
        print(f"mgmtbench: note: {shared}", file=sys.stderr)
    targets = TargetGate(args.per_target_rate, args.per_target_sessions)
    reports = asyncio.run(probe_all(inventory.hosts, samples=args.samples,
                                    parallel=args.parallel, targets=targets))
    if args.json:
        print(json.dumps({"inventory": str(inventory.path), "format": inventory.format,
                          "hosts": [r.as_dict() for r in reports]}, indent=2))
    else:
        _table(inventory, reports)
    return 0 if all(r.ok for r in reports) else 1


def _table(inventory: Inventory, reports: list[HostReport]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{inventory.path} ({inventory.format}): {len(reports)} hosts")
    for column in ("host", "address", "platform", "login", "tcp rtt ms", "echo rtt ms",
                   "version", "ssh", "tls", "problem"):
        table.add_column(column, overflow="fold")
    for r in reports:
        platform = r.platform + ("" if r.platform_ok is not False else " (mismatch)")
        ssh = " ".join(v for v in (r.ssh.get("server"), r.ssh.get("host_key", "").split(" ")[0])
                       if v)
        tls = r.tls.get("error") or " ".join(str(v) for v in (
            r.tls.get("version"), r.tls.get("alpn"),
            "verified" if r.tls.get("verified") is True else "unverified") if v) if r.tls else ""
        table.add_row(r.name, f"{r.address}:{r.ssh_port}", platform, r.auth or "-",
                      _ms(r.tcp_rtt_ms), _ms(r.echo_rtt_ms), r.version or "-", ssh or "-",
                      tls or "-", "[red]" + r.error + "[/]" if r.error else "[green]ok[/]")
    Console().print(table)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
