"""Write a large pytest-benchmark run file, for measuring ``mgmtbench report`` on big inputs.

    python tools/big_run.py OUT.json [--benchmarks 150000] [--template RUN.json ...]

The benchmarks are the templates' (default: the saved transport and fleet runs under docs/)
repeated until there are ``--benchmarks`` of them, each copy with its own name and its times
scaled by a few per cent, as a run file grown by copying real benchmarks would be (the shape of
the 200 MB, 145,000-benchmark file of issue 17). Written one benchmark at a time: the generator
itself stays small.

    /usr/bin/time -v mgmtbench report OUT.json --out /tmp/big-report
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = (ROOT / "docs/report-2026-11-22/nox-bench-run.json",
             ROOT / "docs/fleet-2026-11-22/nox-fleet-run.json")
TIMES = ("min", "max", "mean", "median", "stddev", "q1", "q3", "iqr", "ld15iqr", "hd15iqr",
         "total")


def copy_of(bench: dict[str, Any], copy: int, rng: random.Random) -> dict[str, Any]:
    """``bench`` renamed for its ``copy`` and its times scaled by 0.97-1.03."""
    scale = rng.uniform(0.97, 1.03)
    stats = dict(bench["stats"])
    for key in TIMES:
        if isinstance(stats.get(key), float):
            stats[key] *= scale
    name, _, rest = bench["name"].partition("[")
    suffix = f"copy{copy}"
    return {**bench, "stats": stats,
            "name": f"{name}[{rest[:-1]}-{suffix}]" if rest else f"{name}[{suffix}]",
            "fullname": f"{bench['fullname']}-{suffix}"}


def write(out: Path, count: int, templates: list[Path], seed: int = 17) -> int:
    """Write ``count`` benchmarks copied from ``templates`` to ``out``; return the file's size."""
    runs = [json.loads(path.read_text(encoding="utf-8")) for path in templates]
    pool = [bench for run in runs for bench in run["benchmarks"]]
    rng = random.Random(seed)
    head = {key: value for key, value in runs[0].items() if key != "benchmarks"}
    with out.open("w", encoding="utf-8") as file:
        file.write(json.dumps(head)[:-1] + ', "benchmarks": [\n')
        for index in range(count):
            bench = copy_of(pool[index % len(pool)], index // len(pool), rng)
            file.write(("" if index == 0 else ",\n") + json.dumps(bench))
        file.write("\n]}\n")
    return out.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--benchmarks", type=int, default=150_000)
    parser.add_argument("--template", type=Path, action="append", default=None,
                        help="a run whose benchmarks are copied (repeatable; default: docs/ runs)")
    args = parser.parse_args()
    size = write(args.out, args.benchmarks, args.template or list(TEMPLATES))
    print(f"{args.out}: {args.benchmarks:,} benchmarks, {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
