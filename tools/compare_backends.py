"""Compare the same transport benchmarks run through two link backends (netem and tun), mode by mode.

    python tools/compare_backends.py NETEM.json TUN.json [--timing] [--lab-check NETEM.json TUN.json]
        [--rtts-from-benchmarks]

Inputs are pytest-benchmark JSON files of ``benchmarks/test_transport_modes.py`` (same clients,
modes, profile and command count), and optionally the one-line JSON of ``mgmtbench lab check``
per backend. For every benchmark present in both it prints wire round trips per iteration, data
packets and all packets per iteration, the mean time and time in RTTs (mean / the lab's measured
RTT), and checks:

- wire round trips per iteration (``wire_rtts_per_iteration``, counted on the link by the lab's
  tap) agree within 0.5: the same client and server make the same exchanges whatever delays
  them. A benchmark without a wire count fails: without it nothing is compared. Not held for the
  modes that put several requests in flight at once by design (``pipelined``,
  ``h2-multiplex``): there the count is the number of direction changes, an upper bound of the
  round trips waited for that grows with every answer that comes back between two later
  requests, that is with how slow the client is against the server, not with the link (see
  :mod:`mgmtbench.lab.wiretap`); it is printed, marked ``*``;
- with ``--timing``: the mean time and time in RTTs agree within 5 % (meaningful on a real
  kernel; under software emulation the processes' own CPU time swamps the delay: see the
  README). Without it the spread is printed, not held;
- each lab's measured RTTs (TCP echo, and ICMP on the link) are at least the configured RTT and
  within ``--rtt-tolerance`` of it: every instrument's RTT is right. They come from ``mgmtbench
  lab check --json`` (``--lab-check``), or with ``--rtts-from-benchmarks`` from the benchmarks'
  own records, which hold the same two instruments (the lab's TCP echo calibration, and the
  wire tap's ICMP probes during the rounds: their median over the benchmarks), without a lab of
  their own to build.

Packet counts are printed, not held (``--packets N`` holds them to N per iteration): they count
every pure ACK, and whether a receiver's ACK goes out alone or rides on its next request depends
on how soon that request follows (delayed ACKs), that is on the speed of the processes, not on
the link. Data packets (payload, SYN or FIN) do not have that part and agree more closely.

Exit code 1 if a check fails.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WIRE_TOLERANCE = 0.5  # wire round trips per iteration
TIME_TOLERANCE = 0.05  # relative
WIRE = "wire_rtts_per_iteration"
# Modes with several requests in flight at once by design: their wire count is an upper bound
# that depends on the processes' speed (printed, not held; see the module docstring).
CONCURRENT_MODES = frozenset({"pipelined", "h2-multiplex"})


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
               wire_tolerance: float = WIRE_TOLERANCE,
               time_tolerance: float = TIME_TOLERANCE,
               packet_tolerance: float | None = None,
               allow: Mapping[str, float] | None = None) -> list[str]:
    """What disagrees between the two backends, one sentence each (empty: all agree).
    ``allow``: a wire tolerance of its own per mode (``--allow``)."""
    failures = []
    allow = allow or {}
    if not rows:
        failures.append("no benchmark ran through both backends")
    for row in rows:
        wa, wb = row.a.get(WIRE), row.b.get(WIRE)
        if concurrent(row):
            pass  # an upper bound that depends on the processes' speed: not held
        elif wa is None or wb is None:
            failures.append(f"{row.name}: no wire round trips recorded "
                            f"({'first' if wa is None else 'second'} backend)")
        elif abs(wa - wb) > allow.get(row.a.get("mode", ""), wire_tolerance) + 1e-9:
            failures.append(f"{row.name}: {wa} vs {wb} wire round trips per iteration "
                            f"(allowed {allow.get(row.a.get('mode', ''), wire_tolerance)})")
        if packet_tolerance is not None:
            pa, pb = row.a["packets_per_iteration"], row.b["packets_per_iteration"]
            if abs(pa - pb) > packet_tolerance + 1e-9:
                failures.append(f"{row.name}: {pa} vs {pb} packets per iteration "
                                f"(allowed {packet_tolerance})")
        if not timing:
            continue
        for key in ("mean_ms", "rtts"):
            va, vb = row.a.get(key), row.b.get(key)
            if va is None or vb is None:
                continue
            if relative(va, vb) > time_tolerance:
                failures.append(f"{row.name}: {key} {va:.2f} vs {vb:.2f} "
                                f"({relative(va, vb):.1%}, allowed {time_tolerance:.0%})")
    return failures


def concurrent(row: Row) -> bool:
    """Whether the benchmark's mode puts several requests in flight at once by design."""
    return row.a.get("mode") in CONCURRENT_MODES or row.b.get("mode") in CONCURRENT_MODES


def timing_spread(rows: Sequence[Row]) -> str:
    """How far apart time in RTTs is between the backends: median and largest relative
    difference, and how many benchmarks are within the timing tolerance."""
    diffs = [(relative(r.a["rtts"], r.b["rtts"]), r.name) for r in rows
             if r.a.get("rtts") is not None and r.b.get("rtts") is not None]
    if not diffs:
        return "time in RTTs: not recorded"
    worst = max(diffs)
    within = sum(d <= TIME_TOLERANCE for d, _ in diffs)
    return (f"time in RTTs between backends: median {statistics.median(d for d, _ in diffs):.1%}"
            f" apart, largest {worst[0]:.1%} ({worst[1].removeprefix('test_transport_mode')}); "
            f"{within} of {len(diffs)} within {TIME_TOLERANCE:.0%}")


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


COLUMNS = (  # (heading, key, format)
    ("wire", WIRE, ".1f"),
    ("data", "data_packets_per_iteration", ".1f"),
    ("pkts", "packets_per_iteration", ".1f"),
    ("ms", "mean_ms", ".0f"),
    ("rtts", "rtts", ".2f"),
)


def lab_rtts(benchmarks: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A lab check's RTT fields from benchmark records of one lab: its backend, configured and
    TCP echo RTT (the same in every record), and the tap's ICMP RTT under load (the median)."""
    records = list(benchmarks.values())
    if not records:
        return {"configured_rtt_ms": 0}
    first = records[0]
    probes = [r["link_rtt_under_load_ms"] for r in records if r.get("link_rtt_under_load_ms")]
    return {"backend": first.get("backend"), "configured_rtt_ms": first["configured_rtt_ms"],
            "measured_rtt_ms": first.get("measured_rtt_ms"),
            "link_rtt_ms": statistics.median(probes) if probes else None}


def table(rows: Sequence[Row], names: tuple[str, str]) -> str:
    """A plain-text side-by-side table: each column for the first and the second backend."""
    a, b = names

    def fmt(value: Any, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    width = 9
    header = f"{'benchmark':<40}" + "".join(
        f" {head + ' ' + a:>{width}} {head + ' ' + b:>{width}}" for head, _, _ in COLUMNS)
    lines = [header]
    for row in rows:  # * : wire round trips not held (requests in flight together)
        short = row.name.removeprefix("test_transport_mode") + ("*" if concurrent(row) else "")
        lines.append(f"{short:<40}" + "".join(
            f" {fmt(row.a.get(key), spec):>{width}} {fmt(row.b.get(key), spec):>{width}}"
            for _, key, spec in COLUMNS))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="compare_backends.py", description=__doc__.split("\n")[0])
    parser.add_argument("first", type=Path, help="benchmark JSON through the first backend (netem)")
    parser.add_argument("second", type=Path, help="benchmark JSON through the second backend (tun)")
    parser.add_argument("--names", default="netem,tun", help="the two backends' names")
    parser.add_argument("--timing", action="store_true",
                        help=f"also hold time and time in RTTs to {TIME_TOLERANCE:.0%}")
    parser.add_argument("--wire-tolerance", type=float, default=WIRE_TOLERANCE,
                        help="wire round trips per iteration the backends may differ by")
    parser.add_argument("--allow", action="append", default=[], metavar="MODE=N",
                        help="a wire tolerance of its own for one mode (repeatable)")
    parser.add_argument("--packets", type=float, default=None, metavar="N",
                        help="also hold packets per iteration to N (default: printed only)")
    parser.add_argument("--lab-check", nargs=2, type=Path, metavar=("FIRST", "SECOND"),
                        help="mgmtbench lab check --json output per backend")
    parser.add_argument("--rtts-from-benchmarks", action="store_true",
                        help="check each backend's RTTs from its benchmark records (the lab's "
                             "TCP echo, the tap's ICMP probes) instead of a lab check's")
    parser.add_argument("--rtt-tolerance", type=float, default=0.05,
                        help="how far above the configured RTT a lab check may measure (relative)")
    args = parser.parse_args(argv)
    first, second = args.names.split(",")
    inputs = [args.first, args.second, *(args.lab_check or [])]
    absent = [str(path) for path in inputs if not path.is_file()]
    if absent:  # the step that writes it failed: said above it
        print(f"DIFFERS: nothing to compare: no {', '.join(absent)}", file=sys.stderr)
        return 1
    rows = pair(load_benchmarks(args.first), load_benchmarks(args.second))
    print(table(rows, (first, second)))
    print(timing_spread(rows))
    allow = {mode: float(n) for mode, _, n in (a.partition("=") for a in args.allow)}
    failures = check_rows(rows, timing=args.timing, wire_tolerance=args.wire_tolerance,
                          packet_tolerance=args.packets, allow=allow)
    if args.lab_check:
        for name, path in zip((first, second), args.lab_check, strict=True):
            info = json.loads(path.read_text().strip().splitlines()[-1])
            print(f"lab check {name}: backend {info.get('backend')}, configured "
                  f"{info['configured_rtt_ms']} ms, link (ICMP) {info.get('link_rtt_ms')} ms, "
                  f"TCP echo {info.get('measured_rtt_ms')} ms")
            if info.get("backend") != name:
                failures.append(f"lab check {path} ran backend {info.get('backend')}, not {name}")
            failures += check_lab(name, info, args.rtt_tolerance)
    if args.rtts_from_benchmarks:
        for name, path in zip((first, second), (args.first, args.second), strict=True):
            info = lab_rtts(load_benchmarks(path))
            print(f"benchmarks {name}: backend {info.get('backend')}, configured "
                  f"{info['configured_rtt_ms']} ms, link (ICMP, under load) "
                  f"{info.get('link_rtt_ms')} ms, TCP echo {info.get('measured_rtt_ms')} ms")
            if info.get("backend") != name:
                failures.append(f"{path} ran backend {info.get('backend')}, not {name}")
            failures += check_lab(name, info, args.rtt_tolerance)
    for failure in failures:
        print(f"DIFFERS: {failure}", file=sys.stderr)
    held = "wire round trips" + (", time" if args.timing else "") + (
        ", packets" if args.packets is not None else "")
    print(f"{len(rows)} benchmarks compared ({held} held): "
          f"{'OK' if not failures else f'{len(failures)} checks failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
