"""A report killed with SIGKILL leaves its hidden staging folder; the next report to the same
``--out`` removes it (its writer is gone), says so in one line, and leaves alone the staging
folders of a writer that still runs (issue 17, finding 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mgmtbench.cli import main
from mgmtbench.lab.procfs import start_time

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "docs/report-2026-11-22/nox-bench-run.json"  # a real run: seconds of charts


def staging(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_killed_reports_partial_folder_is_removed_by_the_next(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    process = subprocess.Popen([sys.executable, "-m", "mgmtbench.cli", "report", str(RUN),
                                "--out", str(out)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while not staging(tmp_path) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    left = staging(tmp_path)
    assert len(left) == 1, left
    assert left[0].startswith(f".r.{process.pid}-")
    assert left[0].endswith(".partial")
    assert not out.exists()

    # A report still being written to the same folder (this process, alive) is left alone.
    alive = tmp_path / f".r.{os.getpid()}-{start_time(os.getpid())}.abc123.partial"
    alive.mkdir()
    assert main(["report", str(RUN), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err == (f"mgmtbench: a report to {out} was killed before: removed {left[0]}\n")
    assert staging(tmp_path) == [alive.name]
    assert (out / "report.md").is_file()


def test_an_earlier_report_stranded_by_a_kill_is_put_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    # Killed between moving the earlier report aside and renaming the new one into place.
    dead = subprocess.Popen([sys.executable, "-c", "pass"])  # a writer that is gone
    dead.wait()
    old = tmp_path / f".r.{dead.pid}-1.x9y8.old"
    old.mkdir()
    (old / "report.md").write_text("# the earlier report\n")
    partial = tmp_path / f".r.{dead.pid}-1.x9y8.partial"
    partial.mkdir()
    (partial / "report.md").write_text("# half")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["report", str(bad), "--out", str(out)]) == 2  # this report fails ...
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"mgmtbench: a report to {out} was killed before: ")
    assert f"put the earlier report back from {old.name}" in err[0]
    assert f"removed {partial.name}" in err[0]
    assert staging(tmp_path) == []  # ... and the earlier one is where it was
    assert (out / "report.md").read_text() == "# the earlier report\n"
