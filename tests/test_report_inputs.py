"""``mgmtbench report`` under bad input and bad ``--out`` (issue 17, finding 6): one line saying
what is wrong, exit status 2, nothing partial left; big runs read as a stream, repeats averaged."""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mgmtbench.cli import main
from mgmtbench.results import load, runfile
from mgmtbench.results.load import load_run

ROOT = Path(__file__).resolve().parents[1]
DOCS_RUN = ROOT / "docs/report-2026-11-22/nox-bench-run.json"
sys.path.insert(0, str(ROOT / "tools"))
big_run: Any = importlib.import_module("big_run")  # tools/big_run.py (tools/ is no package)


def docs_run() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DOCS_RUN.read_text())
    return data


def small_run(path: Path, count: int = 12) -> Path:
    """The first ``count`` benchmarks of the saved transport run (a report with charts)."""
    data = docs_run()
    data["benchmarks"] = data["benchmarks"][:count]
    path.write_text(json.dumps(data))
    return path


def with_first(change: Callable[[dict[str, Any]], object]) -> str:
    """The saved run with its first benchmark changed by ``change``, as JSON."""
    data = docs_run()
    change(data["benchmarks"][0])
    return json.dumps(data)


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``mgmtbench report ARGS`` in this process: exit status, stdout, stderr."""
    code = main(["report", *args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code: int, err: str, *phrases: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1, err
    assert err.startswith("mgmtbench: error: "), err
    assert "Traceback" not in err
    for phrase in phrases:
        assert phrase in err, err


BAD_RUNS: list[tuple[str, str | bytes, str]] = [
    ("ints", json.dumps({"benchmarks": [1, 2, 3]}),
     "benchmarks[0] is the number 1, not an object"),
    ("stats-string", with_first(lambda b: b.update(stats="fast")),
     "'stats' is the string 'fast', not an object"),
    ("params-list", with_first(lambda b: b.update(params=["local", 5])),
     "'params' is a list, not an object"),
    ("commands-many", with_first(lambda b: b["params"].update(commands="many")),
     "params.commands is the string 'many', not a whole number"),
    ("commands-fraction", with_first(lambda b: b["params"].update(commands=2.5)),
     "params.commands is the number 2.5, not a whole number"),
    ("no-stats", with_first(lambda b: b.pop("stats")), "no 'stats'"),
    ("no-mean", with_first(lambda b: b["stats"].pop("mean")), "stats.mean is null"),
    ("no-name", with_first(lambda b: b.pop("name")), "'name' is null"),
    ("nan", with_first(lambda b: b["stats"].update(mean=math.nan)),
     "stats.mean is nan: times must be finite and not negative"),
    ("inf", with_first(lambda b: b["stats"].update(max=math.inf)),
     "stats.max is inf: times must be finite"),
    ("negative", with_first(lambda b: b["stats"].update(min=-0.001)),
     "stats.min is -0.001: times must be finite and not negative"),
    ("bool-time", with_first(lambda b: b["stats"].update(mean=True)),
     "stats.mean is true, not a time in seconds"),
    ("rounds-zero", with_first(lambda b: b["stats"].update(rounds=0)),
     "stats.rounds is the number 0, not a whole number of at least 1"),
    ("experiment-number", with_first(lambda b: b["extra_info"].update(experiment=5)),
     "extra_info.experiment is the number 5, not a name"),
    ("commit-string", json.dumps({**docs_run(), "commit_info": "abc"}),
     "'commit_info' is the string 'abc', not an object"),
    ("benchmarks-object", json.dumps({"benchmarks": {"a": 1}}),
     "'benchmarks' is an object, not a list"),
    ("top-level-list", json.dumps([{"benchmarks": []}]), "not pytest-benchmark JSON"),
    ("no-benchmarks", json.dumps({"hello": 1}), "not pytest-benchmark JSON (no 'benchmarks'"),
    ("zero-benchmarks", json.dumps({"benchmarks": []}), "the run has no benchmarks"),
    ("not-json", "not json at all", "not a JSON file"),
    ("empty", "", "empty, not a JSON file"),
    ("cut-short", json.dumps(docs_run())[:50_000], "not a JSON file"),
    ("trailing", json.dumps(docs_run()) + "{}", "not a JSON file"),
    ("deep", "[" * 100_000 + "]" * 100_000, "not pytest-benchmark JSON"),
    ("deep-inside", '{"benchmarks": [' + "[" * 100_000 + "]" * 100_000 + "]}",
     "nested too deeply"),
    ("not-utf8", b'{"benchmarks": [{"name": "\xff\xfe"}]}', "not UTF-8"),
]


@pytest.mark.parametrize(("content", "message"), [(c, m) for _, c, m in BAD_RUNS],
                         ids=[i for i, _, _ in BAD_RUNS])
def test_a_bad_run_file_is_one_line_naming_it(content: str | bytes, message: str,
                                              tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = report(capsys, str(bad), "--out", str(tmp_path / "out"))
    assert_one_line(code, err, f"{bad}: ", message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]  # no out, no leftovers


def test_missing_and_folder_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = report(capsys, str(tmp_path / "nope.json"), "--out", str(tmp_path / "o"))
    assert_one_line(code, err, "nope.json: no such file")
    code, _, err = report(capsys, str(tmp_path), "--out", str(tmp_path / "o"))
    assert_one_line(code, err, "a folder, not a run file")
    assert not (tmp_path / "o").exists()


def test_a_named_bad_run_fails_the_report_a_found_one_is_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Named on the command line, a bad run fails the whole report (its name, what is wrong);
    found under .benchmarks/, it is skipped with a one-line warning and the rest reported."""
    good = small_run(tmp_path / "good.json")
    bad = tmp_path / "bad.json"
    bad.write_text(with_first(lambda b: b["stats"].update(mean=-1)))
    code, _, err = report(capsys, str(good), str(bad), "--out", str(tmp_path / "out"))
    assert_one_line(code, err, "bad.json: benchmarks[0]", "stats.mean is the number -1")
    assert not (tmp_path / "out").exists()

    saved = tmp_path / ".benchmarks" / "Linux-CPython-3.11-64bit"
    saved.mkdir(parents=True)
    small_run(saved / "0001_good.json")
    (saved / "0002_bad.json").write_text('{"benchmarks": [1]}')
    monkeypatch.chdir(tmp_path)
    code, _, err = report(capsys, "--out", "found")
    assert code == 0, err
    assert err.startswith("mgmtbench: warning: skipped ")
    assert "0002_bad.json: benchmarks[0] is the number 1" in err
    assert err.count("\n") == 1
    text = (tmp_path / "found" / "report.md").read_text()
    assert "Runs: 0001_good.json\n" in text

    (saved / "0001_good.json").write_text("[]")  # none usable: an error, not an empty report
    code, _, err = report(capsys, "--out", "none")
    assert code == 2
    assert "none of the 2 run files could be used" in err
    assert not (tmp_path / "none").exists()


# --- --out ------------------------------------------------------------------------------------


def test_bad_out_is_one_line_and_leaves_nothing(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = small_run(tmp_path / "run.json")
    a_file = tmp_path / "a-file"
    a_file.write_text("mine\n")
    code, _, err = report(capsys, str(run), "--out", str(a_file))
    assert_one_line(code, err, f"--out {a_file}: a file, not a folder")
    code, _, err = report(capsys, str(run), "--out", str(a_file / "sub" / "report"))
    assert_one_line(code, err, f"{a_file} is a file, not a folder")
    assert a_file.read_text() == "mine\n"

    users = tmp_path / "users"
    users.mkdir()
    (users / "notes.txt").write_text("keep\n")
    code, _, err = report(capsys, str(run), "--out", str(users))
    assert_one_line(code, err, "holds files a report does not write (notes.txt)")
    assert sorted(p.name for p in users.iterdir()) == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "run.json", "users"]


def test_an_earlier_report_is_replaced_whole_or_kept(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    run = small_run(tmp_path / "run.json")
    out = tmp_path / "deep" / "er" / "report"
    code, _, err = report(capsys, str(run), "--out", str(out))
    assert code == 0, err
    (out / "stale_chart.png").write_bytes(b"old")
    first = (out / "report.md").read_text()
    code, _, err = report(capsys, str(run), "--out", str(out))
    assert code == 0, err
    assert not (out / "stale_chart.png").exists()  # replaced whole
    assert (out / "report.md").read_text() == first
    assert sorted(p.name for p in out.parent.iterdir()) == ["report"]  # no staging leftovers

    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = report(capsys, str(bad), "--out", str(out))
    assert_one_line(code, err, "not a JSON file")
    assert (out / "report.md").read_text() == first  # a failed report keeps the earlier one
    assert sorted(p.name for p in out.parent.iterdir()) == ["report"]

    code, _, err = report(capsys, str(bad), "--out", str(tmp_path / "new" / "er" / "out"))
    assert code == 2
    assert not (tmp_path / "new").exists()  # the parents it made are gone too


@contextlib.contextmanager
def tmpfs(where: Path, size: str, read_only: bool = False) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``where`` (root only), unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                              str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        if read_only:
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def test_a_full_file_system_is_one_line_and_leaves_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = small_run(tmp_path / "run.json")
    with tmpfs(tmp_path / "tiny", "40k") as tiny:
        code, _, err = report(capsys, str(run), "--out", str(tiny / "report"))
        assert_one_line(code, err, f"--out {tiny / 'report'}: cannot write the report there "
                                   "(no space left on the file system); nothing was written")
        assert os.listdir(tiny) == []
        free = os.statvfs(tiny)
        assert free.f_bfree == free.f_blocks  # every block given back


def test_a_read_only_file_system_is_one_line(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run = small_run(tmp_path / "run.json")
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as ro:
        code, _, err = report(capsys, str(run), "--out", str(ro / "report"))
        assert_one_line(code, err, "(a read-only file system); nothing was written")


def test_no_traceback_from_the_real_command(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"benchmarks": [{"name": "x", "stats": "fast"}]}))
    result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(bad), "--out",
                             str(tmp_path / "o")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr == (f"mgmtbench: error: {bad}: benchmarks[0] (x): 'stats' is the "
                             "string 'fast', not an object\n")


# --- big runs -----------------------------------------------------------------------------------


def test_a_run_read_in_tiny_pieces_is_the_same_run(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The streamed reader cuts the file anywhere (here every 7 characters: numbers, strings
    and escapes split across reads) and still reads what ``json.load`` reads."""
    path = small_run(tmp_path / "run.json", count=40)
    whole = load_run(path)
    monkeypatch.setattr(runfile, "CHUNK", 7)
    pieces = load_run(path)
    assert pieces.equals(whole)
    expected = [b["stats"]["mean"] * 1000 for b in json.loads(path.read_text())["benchmarks"]]
    assert whole["mean_ms"].tolist() == expected
    assert set(whole["run"]) == {"run"}


def test_a_large_run_is_reported_with_repeats_averaged(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """12,000 benchmarks (tools/big_run.py: the saved transport and fleet runs copied, times
    scaled): a row each when loaded; one table row per cell in the report, its mean the mean of
    its copies' means; charts of bounded size."""
    path = tmp_path / "big.json"
    big_run.write(path, 12_000, list(big_run.TEMPLATES))
    frame = load.load_runs([path])
    assert len(frame) == 12_000
    assert frame["name"].is_unique
    transport = frame[(frame["experiment"] == "transport") & (frame["client"] == "httpx")
                      & (frame["mode"] == "batch-post") & (frame["profile"] == "local")
                      & (frame["commands"] == 5)]
    assert len(transport) == 50  # 12,000 / 240 templates (150 transport + 90 fleet)
    code, _, err = report(capsys, str(path), "--out", str(tmp_path / "out"))
    assert code == 0, err
    text = (tmp_path / "out" / "report.md").read_text()
    assert "7,500 benchmarks in 150 cells" in text  # the transport benchmarks
    row = next(line for line in text.splitlines() if line.startswith("| httpx | batch-post |"))
    assert row.split(" | ")[2] == f"{transport['mean_ms'].mean():.1f}"
    assert len(text) < 200_000
    for chart in (tmp_path / "out").glob("*.png"):
        assert chart.stat().st_size < 1_000_000
