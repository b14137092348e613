"""``mgmtbench coverage``: run NAPALM, Ansible and pyATS against a served device of each
platform and print, per tool and platform, what the tool got done, how many of the lines it sent
the device answered, and how many answered show commands ntc-templates and Genie parse.

Exit status 0 once the table is printed (the numbers are the answer, not a verdict), 2 for an
unknown tool or platform, or a tool that is not installed.
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import asdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from mgmtbench.emulator.coverage import ToolRun
from mgmtbench.emulator.coverage.measure import measure
from mgmtbench.emulator.coverage.parsers import PARSERS
from mgmtbench.emulator.coverage.tools import TOOLS, drivers
from mgmtbench.emulator.device.transcripts import available_platforms
from mgmtbench.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``mgmtbench coverage``."""
    p = sub.add_parser("coverage", help="how much of what NAPALM, Ansible and pyATS send the "
                                        "emulator answers, and ntc-templates and Genie parse",
                       description=__doc__)
    p.add_argument("--tools", default=",".join(TOOLS),
                   help=f"comma-separated tools (default: {','.join(TOOLS)})")
    p.add_argument("--platforms", default="",
                   help="comma-separated platforms (default: every one a tool has a driver for)")
    p.add_argument("--json", type=Path, metavar="FILE",
                   help="also write every run (outcomes, lines sent and answered) as JSON")
    p.add_argument("--refused", action="store_true",
                   help="list the lines each platform did not answer")
    p.set_defaults(run=run_coverage)


def _names(text: str, known: tuple[str, ...] | list[str], what: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"--{what} {','.join(unknown)}: unknown (known: {', '.join(known)})")
    return names


def run_coverage(args: argparse.Namespace) -> int:
    """Measure each tool on each platform it has a driver for; print the table."""
    tools = _names(args.tools, TOOLS, "tools")
    platforms = _names(args.platforms, available_platforms(), "platforms") if args.platforms \
        else None
    logging.getLogger("napalm").setLevel(logging.CRITICAL)
    console = Console()
    runs: list[ToolRun] = []
    for tool_name in tools:
        for platform in drivers(tool_name):
            if platforms is not None and platform not in platforms:
                continue
            console.print(f"[dim]{tool_name} on {platform} ...[/dim]")
            runs.append(measure(tool_name, platform))
    console.print(table(runs))
    if args.refused:
        for run in runs:
            if run.refused:
                console.print(f"[bold]{run.tool} / {run.platform}[/bold] refused: "
                              + "; ".join(run.refused))
    if args.json is not None:
        args.json.write_text(json.dumps([asdict(r) for r in runs], indent=1))
    return 0


def table(runs: list[ToolRun]) -> Table:
    """The tools x platforms table."""
    grid = Table(title="What tools send the emulator: answered / sent, parsed / tried")
    for column in ("tool", "platform", "driver", "done", "answered", *PARSERS, "error"):
        grid.add_column(column)
    for run in runs:
        done = sum(o.ok for o in run.outcomes)
        grid.add_row(run.tool, run.platform, run.driver, f"{done}/{len(run.outcomes)}",
                     f"{run.answered}/{len(run.sent)}",
                     *(f"{p}/{t}" for p, t in (run.parsed[name] for name in PARSERS)),
                     run.error)
    return grid


def markdown(runs: list[ToolRun]) -> str:
    """The same table in Markdown (for notes and docs)."""
    head = ["tool", "platform", "driver", "done", "answered", *PARSERS]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for run in runs:
        done = sum(o.ok for o in run.outcomes)
        cells = [run.tool, run.platform, run.driver, f"{done}/{len(run.outcomes)}",
                 f"{run.answered}/{len(run.sent)}",
                 *(f"{p}/{t}" for p, t in (run.parsed[name] for name in PARSERS))]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"
