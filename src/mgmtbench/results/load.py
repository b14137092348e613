"""Load pytest-benchmark JSON runs into one tidy pandas DataFrame: a row per benchmark.

Columns: ``run`` (the file's stem), ``run_time``, ``commit``, ``machine``, ``name``, ``group``,
the benchmark's params (``client``, ``mode``, ``profile``, ``commands`` ...), its stats in
milliseconds (``min_ms`` ... ``stddev_ms``, ``rounds``) and its ``extra_info`` (``backend``,
``measured_rtt_ms``, ``rtts``, ``p95_ms``, ``packets_per_iteration`` ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from mgmtbench.errors import UsageError

STATS_MS = ("min", "max", "mean", "median", "stddev", "q1", "q3", "iqr")


class ResultsError(UsageError):
    """A results file cannot be used (not pytest-benchmark JSON, empty, unreadable)."""


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
        row: dict[str, Any] = {
            "run": path.stem,
            "run_time": data.get("datetime"),
            "commit": (commit.get("id") or "")[:12],
            "dirty": commit.get("dirty"),
            "machine": machine.get("node"),
            "name": bench.get("name"),
            "group": bench.get("group"),
        }
        row.update(bench.get("params") or {})
        for key in STATS_MS:
            if key in stats:
                row[f"{key}_ms"] = stats[key] * 1000
        row["rounds"] = stats.get("rounds")
        for key, value in (bench.get("extra_info") or {}).items():
            row.setdefault(key, json.dumps(value, sort_keys=True) if isinstance(value, dict)
                           else value)
        rows.append(row)
    return rows
