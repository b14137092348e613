"""tools/examples.py, the part of ``./dev examples`` after the benchmark: a saved run made the
docs' example (its folder, report and README line; the old example gone; the pointers moved),
on the real run kept in docs/. The benchmark itself is ``bench``'s job (nox -s examples)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAVED_RUN = ROOT / "docs" / "report-2026-11-22" / "nox-bench-run.json"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


examples = load("examples")


def block(line: str) -> str:
    return f"{examples.START}\n{line}\n{examples.END}"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with the two pointer files and an earlier example."""
    (tmp_path / "docs" / "examples" / "2026-01-02").mkdir(parents=True)
    (tmp_path / "docs" / "examples" / "2026-01-02" / "report.md").write_text("# old\n")
    (tmp_path / "README.md").write_text(f"# mgmtbench\n\n{block('The example: old.')}\n\nrest\n")
    (tmp_path / "docs" / "results.md").write_text(f"# Results\n\n{block('old')}\n")
    return tmp_path


def test_a_saved_run_becomes_the_example(repo: Path) -> None:
    folder = examples.write_example(SAVED_RUN, root=repo)
    assert folder == repo / "docs" / "examples" / "2026-11-22"
    assert sorted(p.name for p in (repo / "docs" / "examples").iterdir()) == ["2026-11-22"]
    assert (folder / "run.json").read_bytes() == SAVED_RUN.read_bytes()
    report = (folder / "report.md").read_text()
    assert "Runs: run.json" in report  # the report names the run beside it
    charts = sorted(p.name for p in folder.glob("*.png"))
    assert charts
    assert all(f"]({name})" in report for name in charts)
    readme = (folder / "README.md").read_text().splitlines()
    assert readme[0] == "# Example run of 2026-11-22"
    assert readme[2] == ("`./dev bench`'s job, run on 2026-11-22 at commit 7d055d1, "
                         "2-core machine.")
    top = (repo / "README.md").read_text()
    assert block("The example: [the report](docs/examples/2026-11-22/report.md) of `./dev "
                 "bench`'s job, run on 2026-11-22 at commit 7d055d1, 2-core machine, written "
                 "by `sudo ./dev examples`.") in top
    assert top.endswith("\n\nrest\n")
    assert "](examples/2026-11-22/report.md) of" in (repo / "docs" / "results.md").read_text()


def test_the_commit_and_arguments_given_are_named(repo: Path, tmp_path: Path) -> None:
    run = json.loads(SAVED_RUN.read_text())
    run["commit_info"]["dirty"] = True
    run["datetime"] = "2026-12-05T23:30:00-02:00"  # 2026-12-06 in UTC
    saved = tmp_path / "new.json"
    saved.write_text(json.dumps(run))
    folder = examples.write_example(saved, root=repo, commit="abc1234",
                                    arguments="-k regional")
    assert folder.name == "2026-12-06"
    assert (folder / "README.md").read_text().splitlines()[2] == (
        "`./dev bench`'s job with `-k regional`, run on 2026-12-06 at commit abc1234 with "
        "uncommitted changes, 2-core machine.")


def test_nothing_is_written_without_the_pointer_lines(repo: Path) -> None:
    (repo / "docs" / "results.md").write_text("# Results\n\nno example here\n")
    with pytest.raises(examples.ExampleError, match=r"results\.md needs exactly one block"):
        examples.write_example(SAVED_RUN, root=repo)
    assert sorted(p.name for p in (repo / "docs" / "examples").iterdir()) == ["2026-01-02"]
    assert "The example: old." in (repo / "README.md").read_text()


def test_a_run_without_benchmarks_is_refused(repo: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"datetime": "2026-12-05T10:00:00+00:00", "benchmarks": []}))
    with pytest.raises(examples.ExampleError, match="no benchmarks"):
        examples.write_example(empty, root=repo)
    assert examples.main([str(empty)]) == 2


def test_a_failed_report_leaves_the_old_example(repo: Path, tmp_path: Path) -> None:
    run = json.loads(SAVED_RUN.read_text())
    run["benchmarks"] = [{"name": "x", "stats": "fast"}]  # mgmtbench report refuses it
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(run))
    with pytest.raises(subprocess.CalledProcessError):
        examples.write_example(bad, root=repo)
    assert [p.name for p in (repo / "docs" / "examples").iterdir()] == ["2026-01-02"]
    assert "The example: old." in (repo / "README.md").read_text()
