"""``mgmtbench report RUN.json [RUN2.json ...] --out DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mgmtbench.errors import ResultsError, UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench report`` to the CLI's subcommands."""
    p = sub.add_parser("report", help="Markdown report with tables and charts from saved runs",
                       description="Write DIR/report.md and its PNG charts; with two or more "
                                   "runs, the last is compared with the one before it.")
    p.add_argument("runs", nargs="*", type=Path,
                   help="pytest-benchmark JSON files (default: every run saved under .benchmarks/)")
    p.add_argument("--out", type=Path, default=Path("report"), help="output folder (default: report)")
    p.add_argument("--baseline", default=None, metavar="CLIENT/MODE",
                   help="speed-ups against this client/mode (default: the slowest)")
    p.add_argument("--workers", type=_positive, default=100, metavar="W",
                   help="projection: concurrent sessions running the fleet (default: 100)")
    p.add_argument("--project-commands", type=_positive, default=5, metavar="K",
                   help="projection: commands per device (default: 5)")
    p.add_argument("--top", type=_positive, default=10, metavar="N",
                   help="rankings (the SSH algorithm matrix's fastest cells): rows shown "
                        "(default: 10)")
    p.add_argument("--match", action="append", default=[], metavar="HOST=PROFILE",
                   help="emulated vs real: compare inventory host HOST with lab profile PROFILE "
                        "(repeatable; default: the profile whose configured RTT is nearest the "
                        "host's measured RTT)")
    p.add_argument("--match-all", default=None, metavar="PROFILE",
                   help="emulated vs real: compare every inventory host without a --match "
                        "with lab profile PROFILE")
    p.set_defaults(run=run)


def _warn_skipped(error: ResultsError) -> None:
    print(f"mgmtbench: warning: skipped {' '.join(str(error).split())}", file=sys.stderr)


def _notice(message: str) -> None:
    print(f"mgmtbench: {message}", file=sys.stderr)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def run(args: argparse.Namespace) -> int:
    """Write the report; wrong input is a ``UsageError`` (one line, exit status 2)."""
    try:
        from mgmtbench.results.load import saved_runs
        from mgmtbench.results.report import write_report
    except ImportError as exc:
        raise UsageError(f"reports need pandas and matplotlib: pip install 'mgmtbench[results]' "
                         f"({exc.name} is missing)") from exc
    baseline = None
    if args.baseline:
        client, sep, mode = args.baseline.partition("/")
        if not sep:
            raise UsageError(f"--baseline {args.baseline!r}: use CLIENT/MODE, e.g. paramiko/fresh-conn")
        baseline = (client, mode)
    from mgmtbench.results.emulated_vs_real import Pairing

    matches: dict[str, str] = {}
    for given in args.match:
        host, sep, profile = given.partition("=")
        if not (sep and host and profile):
            raise UsageError(f"--match {given!r}: use HOST=PROFILE, e.g. r1=regional")
        matches[host] = profile
    runs = args.runs or saved_runs()
    if not runs:
        raise UsageError("no runs: give JSON files or run `nox -s bench` first")
    # A run named on the command line must be usable; one found under .benchmarks/ is skipped
    # with a warning if it is not (the others still make a report).
    skip = None if args.runs else _warn_skipped
    path = write_report(list(runs), args.out, baseline, workers=args.workers,
                        commands=args.project_commands, top=args.top, skip=skip,
                        pairing=Pairing(matches, args.match_all), notice=_notice)
    print(f"report written to {path}")
    return 0
