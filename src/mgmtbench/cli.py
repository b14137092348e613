"""The ``mgmtbench`` command. Each part of the product adds its own sub-commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from mgmtbench import __version__
from mgmtbench.emulator import command as serve_command
from mgmtbench.emulator.coverage import command as coverage_command
from mgmtbench.errors import MgmtbenchError
from mgmtbench.lab import command as lab_command
from mgmtbench.proxy import command as proxy_command
from mgmtbench.results import command as report_command
from mgmtbench.targets import command as inventory_command


def build_parser() -> argparse.ArgumentParser:
    """The ``mgmtbench`` parser with every part's sub-commands."""
    parser = argparse.ArgumentParser(
        prog="mgmtbench",
        description="Benchmark SSH and HTTPS management of network devices.",
    )
    parser.add_argument("--version", action="version", version=f"mgmtbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve_command.register(sub)
    lab_command.register(sub)
    proxy_command.register(sub)
    report_command.register(sub)
    inventory_command.register(sub)
    coverage_command.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one sub-command; mgmtbench's own errors become one line on stderr and exit status 2."""
    try:
        args = build_parser().parse_args(argv)  # MGMTBENCH_* defaults are checked here
        return int(args.run(args))
    except MgmtbenchError as exc:
        print(f"mgmtbench: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
