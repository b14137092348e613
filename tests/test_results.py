"""Results: real benchmark runs loaded, compared, charted, reported, and the notebook executed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from mgmtbench.results import ResultsError, deltas, load_runs, speedups

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two small real runs of the transport-mode benchmark (asyncssh, local, 1 and 5 commands)."""
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for index in (1, 2):
        path = folder / f"run{index}.json"
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "benchmarks/test_transport_modes.py", "-q",
             "-p", "no:cacheprovider", "--profiles", "local", "--clients", "asyncssh",
             "--commands", "1,5", f"--benchmark-json={path}"],
            cwd=ROOT, capture_output=True, text=True, timeout=300,
            env={**os.environ, "MGMTBENCH_ROUND_SECONDS": "0.3"})
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        paths.append(path)
    return paths


def test_load_gives_a_row_per_benchmark(runs: list[Path]) -> None:
    frame = load_runs(runs)
    assert len(frame) == 2 * 6 * 2  # runs x asyncssh modes x command counts
    assert set(frame["run"]) == {"run1", "run2"}
    for column in ("client", "mode", "profile", "commands", "mean_ms", "p95_ms", "rtts",
                   "backend", "runtime", "measured_rtt_ms", "packets_per_iteration", "commit",
                   "machine"):
        assert column in frame, column
    assert (frame["mean_ms"] > 0).all()
    assert set(frame["runtime"]) <= {"netns", "in-process"}  # root: a lab; else loopback


def test_speedups_against_a_baseline(runs: list[Path]) -> None:
    table = speedups(load_runs(runs[:1]), baseline=("asyncssh", "fresh-conn"))
    base = table[(table["mode"] == "fresh-conn")]
    assert (base["speedup"] - 1).abs().max() < 1e-9
    assert (table.groupby(["profile", "commands"])["speedup"].max() > 1).all()
    with pytest.raises(ResultsError, match="baseline paramiko/nope"):
        speedups(load_runs(runs[:1]), baseline=("paramiko", "nope"))


def test_deltas_flag_only_changes_beyond_noise() -> None:
    base = pd.DataFrame({"client": ["a", "b"], "mode": ["m", "m"], "profile": ["p", "p"],
                         "commands": [5, 5], "mean_ms": [100.0, 100.0],
                         "stddev_ms": [5.0, 5.0], "rounds": [20, 20]})
    new = base.copy()
    new.loc[0, "mean_ms"] = 200.0  # far beyond the noise
    new.loc[1, "mean_ms"] = 101.0  # within it
    flagged = deltas(base, new).set_index("client")["significant"]
    assert bool(flagged["a"]) is True
    assert bool(flagged["b"]) is False
    other = base.assign(profile="q")
    with pytest.raises(ResultsError, match="no benchmark in common"):
        deltas(base, other)


def test_report_command_writes_markdown_and_charts(runs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", *map(str, runs),
                             "--out", str(out), "--baseline", "asyncssh/fresh-conn"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    text = (out / "report.md").read_text()
    assert "## local, 1 commands" in text
    assert "## local, 5 commands" in text
    assert "## run2.json against run1.json" in text
    charts = sorted(out.glob("*.png"))
    assert charts
    for chart in charts:
        assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({chart.name})" in text


@pytest.mark.parametrize(("content", "message"), [
    ("not json at all", "not a JSON file"),
    (json.dumps({"hello": 1}), "not pytest-benchmark JSON"),
    (json.dumps({"benchmarks": []}), "the run has no benchmarks"),
])
def test_bad_input_is_one_clear_line(content: str, message: str, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(bad),
                             "--out", str(tmp_path / "out")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_the_notebook_runs_on_real_results(runs: list[Path], fleet_run: Path,
                                           tmp_path: Path) -> None:
    notebook = nbformat.read(ROOT / "notebooks" / "compare.ipynb",  # type: ignore[no-untyped-call]
                             as_version=4)
    os.environ["MGMTBENCH_RUNS"] = os.pathsep.join(map(str, [*runs, fleet_run]))
    os.environ["MGMTBENCH_CHARTS"] = str(tmp_path / "charts")
    try:
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        del os.environ["MGMTBENCH_RUNS"], os.environ["MGMTBENCH_CHARTS"]
    errors = [o for cell in notebook.cells for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    charts = {p.name for p in (tmp_path / "charts").glob("*.png")}
    assert "concurrency_makespan_local.png" in charts
    assert any(name.startswith("bars_") for name in charts)
    projection = notebook.cells[-1]["outputs"][-1]["data"]["text/plain"]
    assert "1,000 devices" in projection
    assert "(extrapolated)" in projection  # 100 workers: beyond the 3 sessions measured


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small real concurrency run (asyncssh and httpx, 1 and 3 sessions, local)."""
    path = tmp_path_factory.mktemp("fleet") / "fleet.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "benchmarks/test_concurrency.py", "-q",
         "-p", "no:cacheprovider", "--fleet-profiles", "local", "--clients",
         "asyncssh,httpx-async", "--concurrency", "1,3", f"--benchmark-json={path}"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={**os.environ, "MGMTBENCH_FLEET_SECONDS": "0.2"})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return path


def test_fleet_run_reports_curves_and_projections(fleet_run: Path, tmp_path: Path) -> None:
    """The concurrency run in the same JSON, then the report: per-concurrency table, curves,
    projection marked measured/projected."""
    path = fleet_run
    frame = load_runs([path])
    assert sorted(frame["concurrency"].tolist()) == [1, 1, 3, 3]
    assert (frame["errors"] == 0).all()
    assert (frame["connect_exec_ms"] > 0).all()
    out = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(path), "--out",
                           str(out), "--workers", "3", "--project-commands", "2"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    text = (out / "report.md").read_text()
    assert "## Concurrency: local" in text
    assert "## Projection: 2 commands per device, 3 workers" in text
    row = next(line for line in text.splitlines() if line.startswith("| local | asyncssh |"))
    assert "(projected)" in row  # 100 devices = 34 waves of a measured 3
    assert (out / "concurrency_makespan_local.png").stat().st_size > 10_000
    bad = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(path),
                          "--workers", "0"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0
    assert "must be at least 1" in bad.stderr
    assert "Traceback" not in bad.stderr


DOCS_RUNS = {"transport": ROOT / "docs" / "report-2026-11-22" / "nox-bench-run.json",
             "concurrency": ROOT / "docs" / "fleet-2026-11-22" / "nox-fleet-run.json"}


def test_experiment_is_inferred_for_runs_saved_without_it(tmp_path: Path) -> None:
    from mgmtbench.results.load import infer_experiment

    transport = load_runs([DOCS_RUNS["transport"]])
    assert set(transport["experiment"]) == {"transport"}
    fleet = load_runs([DOCS_RUNS["concurrency"]]).set_index("name")["experiment"]
    assert set(fleet[fleet.index.str.startswith("test_fleet[")]) == {"concurrency"}
    assert fleet["test_fleet_sweep[local]"] == "fleet-lab"  # no mode, no concurrency: its file
    assert infer_experiment({"name": "test_bulk_throughput[tun-30ms-1MiB]"}) == "lab-throughput"
    assert infer_experiment({"name": "test_something_new"}) == "other"
    recorded = {"name": "test_x", "fullname": "benchmarks/test_transport_modes.py::test_x",
                "params": {"mode": "fresh-conn"}, "stats": {"mean": 0.1},
                "extra_info": {"experiment": "ssh-algorithms"}}
    path = tmp_path / "new.json"
    path.write_text(json.dumps({"benchmarks": [recorded]}))
    assert load_runs([path])["experiment"].tolist() == ["ssh-algorithms"]  # recorded wins


def test_experiments_without_a_section_get_the_generic_table(tmp_path: Path) -> None:
    from mgmtbench.results.report import render_sections, write_report
    from mgmtbench.results.sections import discover
    from mgmtbench.results.sections.base import ReportContext

    modules = discover()
    assert {"transport", "concurrency"} <= set(modules)
    assert modules["concurrency"].keys == ("client", "profile", "concurrency")
    frame = load_runs([DOCS_RUNS["concurrency"]])
    sections = render_sections(frame, ReportContext(tmp_path, workers=10), modules)
    assert [s.lines[0] for s in sections] == [
        "## Concurrency: local", "## fleet-lab"]  # fleet-lab has no section module
    assert "| test_fleet_sweep[regional] | 8006.5 |" in "\n".join(sections[1].lines)
    assert {c.name for c in sections[0].charts} >= {"concurrency_makespan_local.png"}
    # Run against run: matched per experiment by its keys (client, profile, concurrency).
    again = tmp_path / "again.json"
    again.write_bytes(DOCS_RUNS["concurrency"].read_bytes())
    text = write_report([DOCS_RUNS["concurrency"], again], tmp_path / "report").read_text()
    assert "90 benchmarks in common; 0 changed by more than their noise" in text


def test_a_section_module_is_found_by_discovery(runs: list[Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A new module on the sections package's path reports on its experiment, with no list to
    edit; transport comes first, the others alphabetically."""
    from mgmtbench.results import sections

    folder = tmp_path / "more_sections"
    folder.mkdir()
    (folder / "example_throughput.py").write_text(
        "from mgmtbench.results.sections.base import Section, markdown_table\n"
        "EXPERIMENT = 'lab-throughput'\n"
        "def render(frame, context):\n"
        "    return Section(['## Throughput', '', markdown_table(frame[['name', 'mb_s']]), ''])\n")
    monkeypatch.setattr(sections, "__path__", [*sections.__path__, str(folder)])
    data = json.loads(runs[0].read_text())
    stats = {"mean": 0.5, "median": 0.5, "stddev": 0.01, "min": 0.49, "max": 0.51, "rounds": 3}
    data["benchmarks"] += [
        {"name": "test_bulk_throughput[netem-0ms-1MiB]", "stats": stats,
         "extra_info": {"experiment": "lab-throughput", "mb_s": 42.5}},
        {"name": "test_concurrent_idle_sessions[200]", "stats": stats,
         "extra_info": {"experiment": "emulator-capacity"}}]
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(data))
    from mgmtbench.results.report import write_report

    try:
        text = write_report([mixed], tmp_path / "report").read_text()
    finally:
        sys.modules.pop(f"{sections.__name__}.example_throughput", None)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:2] == ["## local, 1 commands", "## local, 5 commands"]
    assert headings[-2:] == ["## emulator-capacity", "## Throughput"]
    assert "| test_bulk_throughput[netem-0ms-1MiB] | 42.5 |" in text
    assert "| test_concurrent_idle_sessions[200] | 500.0 | 500.0 |" in text
