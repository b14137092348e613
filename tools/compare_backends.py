"""Compare the same transport benchmarks run through two link backends (netem and tun), mode by mode.

    python tools/compare_backends.py NETEM.json TUN.json [--timing] [--lab-check NETEM.json TUN.json]

Inputs are pytest-benchmark JSON files of ``benchmarks/test_transport_modes.py`` (same clients,
modes, profile and command count), and optionally the one-line JSON of ``mgmtbench lab check``
per backend. For every benchmark present in both it prints packets per iteration, the mean time,
time in RTTs (mean / the lab's measured RTT) and, when recorded, ``wire_rtts_per_iteration``, and
checks:

- packets per iteration agree within 0.5 (what crosses the link does not depend on how it is
  delayed);
- with ``--timing``: the mean time, time in RTTs and wire RTTs per iteration agree within 5 %
  (meaningful on a real kernel; under software emulation the clients' own CPU time swamps the
  delay: see the README);
- each lab's measured RTTs (TCP echo, and ICMP on the link) are at least the configured RTT and
  within ``--rtt-tolerance`` of it: every instrument's RTT is right.

Exit code 1 if a check fails.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKET_TOLERANCE = 0.5  # packets per iteration
TIME_TOLERANCE = 0.05  # relative


@dataclass(frozen=True)
class Row:
    """One benchmark through both backends."""

    name: str
    a: Mapping[str, Any]
    b: Mapping[str, Any]


def load_benchmarks(path: Path) -> dict[str, dict[str, Any]]:
    """Benchmark name -> {mean_ms, and the extra_info}, from a pytest-benchmark JSON file."""
    data = json.loads(path.read_text())
    out: dict[str, dict[str, Any]] = {}
    for bench in data["benchmarks"]:
        out[bench["name"]] = {"mean_ms": bench["stats"]["mean"] * 1000, **bench["extra_info"]}
    return out


def relative(a: float, b: float) -> float:
    """|a - b| relative to their mean."""
    return abs(a - b) / ((a + b) / 2) if a + b else 0.0


def pair(a: Mapping[str, dict[str, Any]], b: Mapping[str, dict[str, Any]]) -> list[Row]:
    """The benchmarks present in both runs, in name order."""
    return [Row(name, a[name], b[name]) for name in sorted(a.keys() & b.keys())]


def check_rows(rows: Sequence[Row], *, timing: bool,
               packet_tolerance: float = PACKET_TOLERANCE,
               time_tolerance: float = TIME_TOLERANCE) -> list[str]:
    """What disagrees between the two backends, one sentence each (empty: all agree)."""
    failures = []
    if not rows:
        failures.append("no benchmark ran through both backends")
    for row in rows:
        pa, pb = row.a["packets_per_iteration"], row.b["packets_per_iteration"]
        if abs(pa - pb) > packet_tolerance:
            failures.append(f"{row.name}: {pa} vs {pb} packets per iteration "
                            f"(allowed {packet_tolerance})")
        if not timing:
            continue
        for key in ("mean_ms", "rtts", "wire_rtts_per_iteration"):
            va, vb = row.a.get(key), row.b.get(key)
            if va is None or vb is None:
                continue
            if relative(va, vb) > time_tolerance:
                failures.append(f"{row.name}: {key} {va:.2f} vs {vb:.2f} "
                                f"({relative(va, vb):.1%}, allowed {time_tolerance:.0%})")
    return failures


def check_lab(name: str, info: Mapping[str, Any], rtt_tolerance: float) -> list[str]:
    """The lab check's instruments against its configured RTT: never below, at most
    ``rtt_tolerance`` (relative) above."""
    failures = []
    configured = info["configured_rtt_ms"]
    for key in ("link_rtt_ms", "measured_rtt_ms"):
        value = info.get(key)
        if value is None:
            failures.append(f"{name}: lab check recorded no {key}")
        elif not configured <= value <= configured * (1 + rtt_tolerance):
            failures.append(f"{name}: {key} {value:.3f} ms, configured {configured} ms "
                            f"(allowed {configured} .. {configured * (1 + rtt_tolerance):.3f})")
    return failures


def table(rows: Sequence[Row], names: tuple[str, str]) -> str:
    """A plain-text side-by-side table."""
    a, b = names

    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    header = (f"{'benchmark':<44} {'pkts ' + a:>11} {'pkts ' + b:>11} {'ms ' + a:>10} "
              f"{'ms ' + b:>10} {'rtts ' + a:>10} {'rtts ' + b:>10} {'wire ' + a:>10} "
              f"{'wire ' + b:>10}")
    lines = [header]
    for row in rows:
        short = row.name.removeprefix("test_transport_mode")
        lines.append(
            f"{short:<44} {fmt(row.a['packets_per_iteration'], '.1f'):>11} "
            f"{fmt(row.b['packets_per_iteration'], '.1f'):>11} {fmt(row.a['mean_ms'], '.1f'):>10} "
            f"{fmt(row.b['mean_ms'], '.1f'):>10} {fmt(row.a.get('rtts'), '.2f'):>10} "
            f"{fmt(row.b.get('rtts'), '.2f'):>10} "
            f"{fmt(row.a.get('wire_rtts_per_iteration'), '.2f'):>10} "
            f"{fmt(row.b.get('wire_rtts_per_iteration'), '.2f'):>10}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="compare_backends.py", description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path, help="benchmark JSON through the first backend (netem)")
    parser.add_argument("second", type=Path, help="benchmark JSON through the second backend (tun)")
    parser.add_argument("--names", default="netem,tun", help="the two backends' names")
    parser.add_argument("--timing", action="store_true",
                        help=f"also hold time, RTTs and wire RTTs per iteration to {TIME_TOLERANCE:.0%}")
    parser.add_argument("--lab-check", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="mgmtbench lab check --json output per backend")
    parser.add_argument("--rtt-tolerance", type=float, default=0.05,
                        help="how far above the configured RTT a lab check may measure (relative)")
    args = parser.parse_args(argv)
    first, second = args.names.split(",")
    rows = pair(load_benchmarks(args.first), load_benchmarks(args.second))
    print(table(rows, (first, second)))
    failures = check_rows(rows, timing=args.timing)
    if args.lab_check:
        for name, path in zip((first, second), args.lab_check, strict=True):
            info = json.loads(path.read_text().strip().splitlines()[-1])
            print(f"lab check {name}: backend {info.get('backend')}, configured "
                  f"{info['configured_rtt_ms']} ms, link (ICMP) {info.get('link_rtt_ms')} ms, "
                  f"TCP echo {info.get('measured_rtt_ms')} ms")
            if info.get("backend") != name:
                failures.append(f"lab check {path} ran backend {info.get('backend')}, not {name}")
            failures += check_lab(name, info, args.rtt_tolerance)
    for failure in failures:
        print(f"DIFFERS: {failure}", file=sys.stderr)
    print(f"{len(rows)} benchmarks compared, {'timing held too' if args.timing else 'packets only'}"
          f": {'OK' if not failures else f'{len(failures)} checks failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
