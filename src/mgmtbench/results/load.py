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

NETCONF benchmarks also record a ``payload`` (``cli``, the study's envelope, or ``yang``):
a ``yang`` row's ``client`` reads ``"<client> (yang)"``, so every table, chart and comparison
keyed by client and mode keeps the two payloads apart while the mode keeps the study's name.

Each file is read as a stream and checked as it is read (:mod:`mgmtbench.results.runfile`: what
a run file must hold, and the one-line errors), its rows gathered column by column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from mgmtbench.errors import ResultsError
from mgmtbench.results.runfile import (
    LEGACY_FILES,
    LEGACY_FUNCTIONS,
    STATS_MS,
    RunFile,
    infer_experiment,
)

__all__ = ["LEGACY_FILES", "LEGACY_FUNCTIONS", "STATS_MS", "infer_experiment", "load_run",
           "load_runs", "saved_runs"]


def saved_runs(storage: Path = Path(".benchmarks")) -> list[Path]:
    """The runs pytest-benchmark saved under ``storage`` (``--benchmark-autosave``), oldest first."""
    return sorted(storage.glob("*/*.json"), key=lambda p: p.name)


def load_runs(paths: Iterable[Path | str] | None = None,
              storage: Path = Path(".benchmarks"),
              skip: Callable[[ResultsError], None] | None = None) -> pd.DataFrame:
    """Rows of every benchmark in ``paths`` (default: every saved run under ``storage``).

    A file that is not a usable run raises :class:`ResultsError` (its name and what is wrong);
    with ``skip``, it is passed the error instead and the file left out (an error still if no
    file is left)."""
    files = [Path(p) for p in paths] if paths is not None else saved_runs(storage)
    if not files:
        raise ResultsError(f"no runs to load: give JSON files or save runs under {storage}/ "
                           "(pytest --benchmark-autosave)")
    frames = []
    for path in files:
        try:
            frames.append(load_run(path))
        except ResultsError as exc:
            if skip is None:
                raise
            skip(exc)
    if not frames:
        raise ResultsError(f"none of the {len(files)} run files could be used")
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


def load_run(path: Path) -> pd.DataFrame:
    """One run file's rows (see the module's docstring), read as a stream: memory grows with
    the rows kept, not with the file's JSON."""
    run = RunFile(path)
    columns = _Columns(path)
    for row in run.rows():
        columns.add(row)
    frame = pd.DataFrame(columns.data)
    for position, (column, value) in enumerate((
            ("run", path.stem), ("run_time", run.datetime), ("commit", run.commit),
            ("dirty", run.dirty), ("machine", run.machine))):
        frame.insert(position, column, value)
    for column in ("commands", "concurrency"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    if "payload" in frame and "client" in frame:
        modelled = frame["payload"].fillna("cli") != "cli"
        frame.loc[modelled, "client"] = (frame.loc[modelled, "client"].astype(str) + " ("
                                         + frame.loc[modelled, "payload"].astype(str) + ")")
    return frame


#: Different columns (params and extra_info keys) of one run, at most. A run has a few dozen;
#: every new one costs a cell per row already read, so a new key per benchmark would make the
#: frame quadratic (40,000 benchmarks: 1.6 billion cells).
MAX_COLUMNS = 1000


class _Columns:
    """Rows gathered column by column (a list per column, None where a row has no value), the
    way a DataFrame is built cheaply: no dict per row is kept, and repeated short strings
    (client, mode, profile ...) are stored once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, list[Any]] = {}
        self.count = 0
        self._strings: dict[str, str] = {}

    def add(self, row: dict[str, Any]) -> None:
        """Append one row."""
        data, count, strings = self.data, self.count, self._strings
        for key, value in row.items():
            column = data.get(key)
            if column is None:
                if len(data) >= MAX_COLUMNS:
                    raise ResultsError(f"{self.path}: more than {MAX_COLUMNS:,} different params "
                                       "and extra_info keys: not a benchmark run the report reads")
                column = data[key] = [None] * count
            if type(value) is str and len(value) <= 64 and key != "name":
                value = strings.setdefault(value, value)
            column.append(value)
        self.count = count = count + 1
        if len(row) != len(data):
            for column in data.values():
                if len(column) < count:
                    column.append(None)
