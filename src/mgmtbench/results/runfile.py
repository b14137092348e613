"""One pytest-benchmark run file, read as a stream and checked benchmark by benchmark.

A run file can hold 150,000 benchmarks (200 MB); ``json.load`` would hold all of it as Python
objects at once (gigabytes). :class:`RunFile` decodes the top-level object's members one at a
time and the ``benchmarks`` list one benchmark at a time from a bounded text buffer, checks each
benchmark, and hands on only the flat row the results frame keeps (see
:mod:`mgmtbench.results.load`).

What a run file must be (anything else is a :class:`~mgmtbench.errors.ResultsError` naming the
file, the benchmark and what is wrong, in one line):

- a JSON object with a non-empty ``benchmarks`` list; ``commit_info`` and ``machine_info``
  objects (or absent), ``datetime`` a string (or absent);
- every benchmark an object with a ``name`` string and a ``stats`` object whose ``mean`` (and
  ``min``, ``max``, ``median``, ``stddev``, ``q1``, ``q3``, ``iqr`` where present) is a finite,
  non-negative number of seconds, ``rounds`` (where present) a whole number of at least 1;
- ``params`` and ``extra_info`` objects (or absent or null); ``commands`` and ``concurrency``
  among them whole numbers of at least 0 (or null); ``extra_info.experiment`` a string.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from mgmtbench.errors import ResultsError

STATS_MS = ("min", "max", "mean", "median", "stddev", "q1", "q3", "iqr")
_STATS_COLUMNS = tuple((key, f"{key}_ms") for key in STATS_MS)
#: Counts that tables group and sort by: whole numbers where a run records them.
WHOLE = ("commands", "concurrency")
#: The columns :mod:`mgmtbench.results.load` fills itself: a param of one of these names is
#: left out of the row rather than overwrite them.
RESERVED = ("run", "run_time", "commit", "dirty", "machine", "name", "group", "experiment")
CHUNK = 1 << 20  # characters read at a time
MAX_VALUE = 64 << 20  # characters of one benchmark (or other top-level value), at most
#: Numbers a run records are below this (2**53: floats hold every whole number up to it): a
#: larger one is a broken file, and huge integers overflow the frame's float columns.
MAX_NUMBER = 2**53
#: Result keys whose name ends in a unit are numbers (``measured_rtt_ms``, ``loss_pct``,
#: ``mb_per_s`` ...): text there is refused here, not met as a traceback in a chart.
_UNIT = re.compile(r"(?:_ms|_s|_pct|_bytes|_mbit|_per_signature|_per_s_total)$")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
_HINT = "make it with pytest --benchmark-json FILE or --benchmark-autosave"


class _Stream:
    """JSON values decoded one at a time from a text file, through a bounded buffer."""

    def __init__(self, file: TextIO, path: Path) -> None:
        self._file, self._path = file, path
        self._buf, self._pos, self._offset, self.eof = "", 0, 0, False

    def _read(self, size: int) -> None:
        chunk = self._file.read(size)
        if not chunk:
            self.eof = True
            return
        self._offset += self._pos
        self._buf = self._buf[self._pos:] + chunk
        self._pos = 0

    def peek(self) -> str:
        """The next character after whitespace, not consumed ("" at the end of the file)."""
        while True:
            self._pos = _WHITESPACE.match(self._buf, self._pos).end()  # type: ignore[union-attr]
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if self.eof:
                return ""
            self._read(CHUNK)

    def take(self, expected: str, what: str) -> str:
        """Consume the next character, one of ``expected``; otherwise not valid JSON."""
        char = self.peek()
        if not char or char not in expected:
            raise self.error(f"expected {what}")
        self._pos += 1
        return char

    def value(self) -> Any:
        """Decode the next JSON value (reading on while it runs past the buffer)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if self.eof:
                    raise self.error(exc.msg, exc.pos) from None
            except ValueError:  # an integer past Python's digit limit (4,300 digits)
                raise ResultsError(f"{self._path}: not a run file (a number of more than "
                                   f"{sys.get_int_max_str_digits()} digits near character "
                                   f"{self._offset + self._pos})") from None
            except RecursionError:
                raise ResultsError(f"{self._path}: not a run file (JSON nested too deeply)") from None
            else:
                # A value that ends where the buffer does may go on (a number cut in two).
                if end < len(self._buf) or self.eof:
                    self._pos = end
                    return value
            pending = len(self._buf) - self._pos
            if pending > MAX_VALUE:
                raise ResultsError(f"{self._path}: not a run file (a value of more than "
                                   f"{MAX_VALUE >> 20} MB at character {self._offset + self._pos})")
            self._read(max(CHUNK, pending))

    def error(self, message: str, pos: int | None = None) -> ResultsError:
        """``ResultsError``: not valid JSON at this point of the file."""
        where = self._offset + (self._pos if pos is None else pos)
        return ResultsError(f"{self._path}: not a JSON file ({message} at character {where})")


def kind(value: object) -> str:
    """What a JSON value is, for messages: ``a string ("fast")``, ``a list`` ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    return "a list" if isinstance(value, list) else "an object"


class RunFile:
    """One run file: :meth:`rows` yields a checked row per benchmark; after it, the run's own
    fields (``datetime``, ``commit``, ``dirty``, ``machine``)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self.datetime: str | None = None
        self.commit = ""
        self.dirty: object = None
        self.machine: str | None = None
        self._cells: dict[tuple[Any, ...], str] = {}

    def rows(self) -> Iterator[dict[str, Any]]:
        """The benchmarks' rows, in file order."""
        try:
            with self.path.open(encoding="utf-8", newline="") as file:
                yield from self._members(_Stream(file, self.path))
        except FileNotFoundError:
            raise ResultsError(f"{self.path}: no such file") from None
        except IsADirectoryError:
            raise ResultsError(f"{self.path}: a folder, not a run file") from None
        except UnicodeDecodeError:
            raise ResultsError(f"{self.path}: not a JSON file (not UTF-8 text)") from None
        except OSError as exc:
            raise ResultsError(f"{self.path}: cannot read it ({exc.strerror or exc})") from None

    def _bad(self, message: str) -> ResultsError:
        return ResultsError(f"{self.path}: {message}")

    def _members(self, stream: _Stream) -> Iterator[dict[str, Any]]:
        first = stream.peek()
        if not first:
            raise self._bad("empty, not a JSON file")
        if first != "{":
            # Only a scalar is decoded to say what it is (a list may be nested without end).
            kind_ = {"[": "a list", '"': "a string"}.get(first) or kind(stream.value())
            raise self._bad(f"not pytest-benchmark JSON (it is {kind_}, not an object with a "
                            f"'benchmarks' list); {_HINT}")
        stream.take("{", "an object")
        header: dict[str, Any] = {}
        seen = False
        if stream.peek() != "}":
            while True:
                if stream.peek() != '"':
                    raise stream.error("a member name")
                key = stream.value()
                stream.take(":", "':'")
                if key == "benchmarks":
                    if seen:
                        raise self._bad("two 'benchmarks' lists")
                    seen = True
                    yield from self._benchmarks(stream)
                else:
                    header[key] = stream.value()
                if stream.take(",}", "',' or '}'") == "}":
                    break
        else:
            stream.take("}", "'}'")
        if stream.peek():
            raise stream.error("nothing after the top-level object")
        if not seen:
            raise self._bad(f"not pytest-benchmark JSON (no 'benchmarks' list); {_HINT}")
        if not self.count:
            raise self._bad("the run has no benchmarks (all skipped or failed?)")
        self._header(header)

    def _benchmarks(self, stream: _Stream) -> Iterator[dict[str, Any]]:
        if stream.peek() != "[":
            raise self._bad(f"'benchmarks' is {kind(stream.value())}, not a list; {_HINT}")
        stream.take("[", "'['")
        if stream.peek() == "]":
            stream.take("]", "']'")
            return
        while True:
            yield self._row(stream.value(), self.count)
            self.count += 1
            if stream.take(",]", "',' or ']'") == "]":
                return

    def _header(self, header: dict[str, Any]) -> None:
        commit = _member_object(header, "commit_info", self._bad)
        machine = _member_object(header, "machine_info", self._bad)
        for key, holder, name in (("datetime", header, "datetime"), ("id", commit, "commit_info.id"),
                                  ("node", machine, "machine_info.node")):
            if not isinstance(holder.get(key), str | None):
                raise self._bad(f"{name} is {kind(holder[key])}, not a string")
        self.datetime = header.get("datetime")
        self.commit = (commit.get("id") or "")[:12]
        self.dirty = commit.get("dirty")
        self.machine = machine.get("node")

    def _row(self, bench: object, index: int) -> dict[str, Any]:
        """The row of benchmark ``index``: checked, flat, times in ms. (Run 150,000 times for a
        big file: the checks are plain type tests; messages are made only for an error.)"""
        if type(bench) is not dict:
            raise self._bad(f"benchmarks[{index}] is {kind(bench)}, not an object (a benchmark)")
        name = bench.get("name")
        if type(name) is not str or not name:
            raise self._bad(f"benchmarks[{index}]: 'name' is {kind(name)}, not the benchmark's "
                            "name")

        def bad(message: str) -> ResultsError:
            shown = name if len(name) <= 60 else name[:57] + "..."
            return self._bad(f"benchmarks[{index}] ({shown}): {message}")

        stats = bench.get("stats")
        if type(stats) is not dict:
            raise bad("no 'stats' (its times)" if "stats" not in bench
                      else f"'stats' is {kind(stats)}, not an object")
        params = _member_object(bench, "params", bad)
        extra = _member_object(bench, "extra_info", bad)
        group = bench.get("group")
        if group is not None and type(group) is not str:
            raise bad(f"'group' is {kind(group)}, not a string")
        experiment = extra.get("experiment")
        if experiment is not None and type(experiment) is not str:
            raise bad(f"extra_info.experiment is {kind(experiment)}, not a name")
        row: dict[str, Any] = {"name": name, "group": group,
                               "experiment": experiment or infer_experiment(bench)}
        for key, value in params.items():
            if key not in RESERVED:
                row[key] = self._cell(value) if isinstance(value, dict | list) else value
        for key, column in _STATS_COLUMNS:
            value = stats.get(key)
            if value is None and key != "mean":
                continue  # not recorded
            if type(value) is not float and (type(value) is not int):
                raise bad(f"stats.{key} is {kind(value)}, not a time in seconds")
            if not 0 <= value < MAX_NUMBER:  # NaN fails both comparisons
                shown = _shown(value) if type(value) is int else repr(value)
                raise bad(f"stats.{key} is {shown}: times must be finite and not negative")
            row[column] = value * 1000
        rounds = stats.get("rounds")
        if rounds is not None and (_whole(rounds) or 0) < 1:
            raise bad(f"stats.rounds is {kind(rounds)}, not a whole number of at least 1")
        row["rounds"] = rounds
        for key, value in extra.items():
            if key not in row:
                row[key] = self._cell(value) if type(value) is dict else value
        for key, value in row.items():
            if _UNIT.search(key) and value is not None and not _finite(value):
                raise bad(f"{key} is {_shown(value)}, not a finite number (its name says a unit)")
        for key in WHOLE:
            value = row.get(key)
            if value is None:
                continue
            whole = value if type(value) is int and 0 <= value <= MAX_NUMBER else _whole(value)
            if whole is None:
                source = "params" if key in params else "extra_info"
                raise bad(f"{source}.{key} is {kind(value)}, not a whole number")
            row[key] = whole
        return row

    def _cell(self, value: dict[str, Any] | list[Any]) -> str:
        """An object or list as a table cell: its JSON text (hashable, comparable); the same
        small objects (``versions`` ...) encoded once."""
        try:
            key = tuple(value.items()) if isinstance(value, dict) else None
            cached = self._cells.get(key) if key is not None else None
        except TypeError:  # unhashable values inside
            key = cached = None
        if cached is None:
            cached = json.dumps(value, sort_keys=True)
            if key is not None and len(self._cells) < 10_000:
                self._cells[key] = cached
        return cached


def _member_object(holder: dict[str, Any], key: str,
                   bad: Any) -> dict[str, Any]:
    """``holder[key]``, an object; {} if absent or null; otherwise a ``bad(...)`` error."""
    value = holder.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(f"'{key}' is {kind(value)}, not an object")
    return value


def _whole(value: object) -> int | None:
    """``value`` as a whole number >= 0 (5 or 5.0), None if it is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():
        return None
    return int(value) if 0 <= value <= MAX_NUMBER else None


def _finite(value: object) -> bool:
    """Whether ``value`` is a number (not a bool), finite and under :data:`MAX_NUMBER`."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return -MAX_NUMBER < value < MAX_NUMBER


def _shown(value: object) -> str:
    """A value for a message: :func:`kind`, a huge integer by its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_NUMBER:
        return f"a number of {len(str(abs(value)))} digits"
    return kind(value)


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


def infer_experiment(bench: dict[str, Any]) -> str:
    """The experiment of a benchmark saved without ``extra_info["experiment"]``: the rules in
    :mod:`mgmtbench.results.load`'s docstring."""
    extra, params = bench.get("extra_info"), bench.get("params")
    known = {**(extra if isinstance(extra, dict) else {}),
             **(params if isinstance(params, dict) else {})}
    if known.get("mode") is not None:
        return "transport"
    if known.get("concurrency") is not None:
        return "concurrency"
    test_file = str(bench.get("fullname") or "").partition("::")[0].rpartition("/")[2]
    test_file = test_file.removesuffix(".py")  # the file's stem, as Path(...).stem (faster)
    function = str(bench.get("name") or "").partition("[")[0]
    return LEGACY_FILES.get(test_file) or LEGACY_FUNCTIONS.get(function) or "other"
