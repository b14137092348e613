"""Load pytest-benchmark JSON runs into one tidy pandas DataFrame: a row per benchmark.

Columns: ``run`` (the file's stem), ``run_time``, ``commit``, ``machine``, ``name``, ``group``,
``experiment``, the benchmark's params (``client``, ``mode``, ``profile``, ``commands`` ...), its
stats in milliseconds (``min_ms`` ... ``stddev_ms``, ``rounds``) and its ``extra_info``
(``backend``, ``measured_rtt_ms``, ``rtts``, ``p95_ms``, ``packets_per_iteration`` ...).

``experiment`` names the benchmark that made the row, and picks its report section
(``mgmtbench.results.sections``). Benchmarks record it as ``extra_info["experiment"]``. Runs saved
before they did (such as ``docs/report-2026-11-22/nox-bench-run.json`` and
``docs/fleet-2026-11-22/nox-fleet-run.json``) get it inferred, first rule that applies:

1. a ``mode`` (param or extra_info): ``"transport"``;
2. a ``concurrency``: ``"concurrency"``;
3. the test file in the benchmark's ``fullname``, then its test function, as they were named
   then (``LEGACY_FILES``, ``LEGACY_FUNCTIONS``): ``benchmarks/test_lab_throughput.py`` ->
   ``"lab-throughput"`` ...;
4. otherwise ``"other"``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from mgmtbench.errors import ResultsError

STATS_MS = ("min", "max", "mean", "median", "stddev", "q1", "q3", "iqr")
# Experiments of runs saved without extra_info["experiment"], by test file and by test function.
# Frozen: they describe those old runs, not the benchmarks of today.
LEGACY_FILES = {"test_transport_modes": "transport", "test_concurrency": "concurrency",
                "test_fleet_lab": "fleet-lab", "test_emulator_baseline": "emulator-baseline",
                "test_emulator_capacity": "emulator-capacity",
                "test_lab_throughput": "lab-throughput"}
LEGACY_FUNCTIONS = {"test_transport_mode": "transport", "test_fleet": "concurrency",
                    "test_fleet_sweep": "fleet-lab",
                    "test_openssh_exec_show_version": "emulator-baseline",
                    "test_concurrent_idle_sessions": "emulator-capacity",
                    "test_bulk_throughput": "lab-throughput"}


def saved_runs(storage: Path = Path(".benchmarks")) -> list[Path]:
    """The runs pytest-benchmark saved under ``storage`` (``--benchmark-autosave``), oldest first."""
    return sorted(storage.glob("*/*.json"), key=lambda p: p.name)


def load_runs(paths: Iterable[Path | str] | None = None,
              storage: Path = Path(".benchmarks")) -> pd.DataFrame:
    """Rows of every benchmark in ``paths`` (default: every saved run under ``storage``)."""
    files = [Path(p) for p in paths] if paths is not None else saved_runs(storage)
    if not files:
        raise ResultsError(f"no runs to load: give JSON files or save runs under {storage}/ "
                           "(pytest --benchmark-autosave)")
    rows = [row for path in files for row in _rows(path)]
    frame = pd.DataFrame(rows)
    for column in ("commands", "concurrency"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def _rows(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ResultsError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ResultsError(f"{path}: not a JSON file ({exc.__class__.__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
        raise ResultsError(f"{path}: not pytest-benchmark JSON (no 'benchmarks' list); make it "
                           "with pytest --benchmark-json FILE or --benchmark-autosave")
    if not data["benchmarks"]:
        raise ResultsError(f"{path}: the run has no benchmarks (all skipped or failed?)")
    commit = data.get("commit_info") or {}
    machine = data.get("machine_info") or {}
    rows = []
    for bench in data["benchmarks"]:
        stats = bench.get("stats") or {}
        params = bench.get("params") or {}
        extra = bench.get("extra_info") or {}
        row: dict[str, Any] = {
            "run": path.stem,
            "run_time": data.get("datetime"),
            "commit": (commit.get("id") or "")[:12],
            "dirty": commit.get("dirty"),
            "machine": machine.get("node"),
            "name": bench.get("name"),
            "group": bench.get("group"),
            "experiment": str(extra.get("experiment") or infer_experiment(bench)),
        }
        row.update(params)
        for key in STATS_MS:
            if key in stats:
                row[f"{key}_ms"] = stats[key] * 1000
        row["rounds"] = stats.get("rounds")
        for key, value in extra.items():
            row.setdefault(key, json.dumps(value, sort_keys=True) if isinstance(value, dict)
                           else value)
        rows.append(row)
    return rows


def infer_experiment(bench: dict[str, Any]) -> str:
    """The experiment of a benchmark saved without ``extra_info["experiment"]``: the rules in
    this module's docstring."""
    known = {**(bench.get("extra_info") or {}), **(bench.get("params") or {})}
    if known.get("mode") is not None:
        return "transport"
    if known.get("concurrency") is not None:
        return "concurrency"
    test_file = Path(str(bench.get("fullname") or "").partition("::")[0]).stem
    function = str(bench.get("name") or "").partition("[")[0]
    return LEGACY_FILES.get(test_file) or LEGACY_FUNCTIONS.get(function) or "other"
