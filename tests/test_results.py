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


# The published study's tables (mgmtbench.results.study), from runs with known means.

RTT = {"local": (0.0, 0.02), "regional": (30.0, 30.0)}  # profile: (configured, measured) ms
# (transport, mode): (ms per iteration, ms per command) at regional for asyncssh and httpx;
# paramiko takes twice as long (never the best client).
MODEL = {("ssh", "fresh-conn"): (300.0, 60.0), ("ssh", "reuse-conn"): (0.0, 60.0),
         ("ssh", "batch-exec"): (270.0, 0.0), ("ssh", "pty-fresh"): (420.0, 30.0),
         ("ssh", "pty-reuse"): (180.0, 30.0), ("ssh", "pipelined"): (60.0, 1.0),
         ("https", "fresh-conn"): (0.0, 90.0), ("https", "keep-alive"): (0.0, 30.0),
         ("https", "batch-post"): (30.0, 0.0), ("https", "multi-cmd"): (32.0, 0.0)}


def model_ms(client: str, transport: str, mode: str, profile: str, commands: int) -> float:
    fixed, per_command = MODEL[(transport, mode)]
    ms = (fixed + per_command * commands) * (2 if client == "paramiko" else 1)
    return ms if profile == "regional" else ms / 10


def study_run(path: Path, rows: list[tuple[str, str, str, str, int]],
              aligned: bool = True) -> Path:
    """A pytest-benchmark JSON file with a benchmark per (client, transport, mode, profile,
    commands), its mean from ``model_ms``."""
    benchmarks = []
    for client, transport, mode, profile, commands in rows:
        mean_ms = model_ms(client, transport, mode, profile, commands)
        configured, measured = RTT[profile]
        extra = {"experiment": "transport", "transport": transport, "backend": "tun",
                 "configured_rtt_ms": configured, "measured_rtt_ms": measured,
                 "rtts": round(mean_ms / measured, 2) if measured >= 1 else None,
                 "wire_rtts_per_iteration": 7.0}
        if aligned:
            extra["rtt_error_ms"] = round(measured - configured, 3)
        benchmarks.append({
            "name": f"test_transport_mode[{profile}-{commands}cmd-{client}-{mode}]",
            "group": f"{profile}, {commands} commands",
            "params": {"profile": profile, "commands": commands, "client": client, "mode": mode},
            "stats": {"mean": mean_ms / 1000, "median": mean_ms / 1000, "min": mean_ms / 1000,
                      "max": mean_ms / 1000, "stddev": 0.0, "rounds": 3},
            "extra_info": extra})
    path.write_text(json.dumps({"datetime": "2026-11-23T00:00:00", "benchmarks": benchmarks}))
    return path


def every(clients: tuple[str, ...] = ("asyncssh", "paramiko", "httpx"),
          profiles: tuple[str, ...] = ("local", "regional"),
          counts: tuple[int, ...] = (1, 5, 50)) -> list[tuple[str, str, str, str, int]]:
    return [(client, transport, mode, profile, n) for profile in profiles for n in counts
            for client in clients for transport, mode in MODEL
            if (transport == "https") == (client == "httpx")]


def test_the_published_figures_are_the_issues() -> None:
    from mgmtbench.results.study import MODES, PUBLISHED

    assert MODES[:5] == ("ssh fresh-conn", "ssh reuse-conn", "ssh batch-exec", "ssh pty-fresh",
                         "ssh pty-reuse")
    assert [round(PUBLISHED[m].mean_ms) for m in MODES] == [507, 331, 268, 547, 325,
                                                           498, 162, 34, 34]
    assert [round(PUBLISHED[m].rtts_600) for m in MODES] == [16, 10, 8, 17, 10, 15, 5, 1, 1]


def test_study_tables_compute_from_known_means(tmp_path: Path) -> None:
    from mgmtbench.results import study

    frame = load_runs([study_run(tmp_path / "run.json", every())])

    pty = study.pty_overhead(frame).set_index(["profile", "client", "pty_mode"])
    row = pty.loc[("regional", "asyncssh", "pty-fresh")]
    assert row["exec_mode"] == "fresh-conn"
    assert row["overhead_ms"] == pytest.approx((420 + 150) - (300 + 300))  # at 5 commands
    assert row["overhead_rtts"] == pytest.approx(-30 / 30)
    assert row["clibench_overhead_ms"] == pytest.approx(546.7 - 507.4)
    reuse = pty.loc[("regional", "paramiko", "pty-reuse")]
    assert reuse["overhead_ms"] == pytest.approx(2 * ((180 + 150) - 300))
    assert reuse["clibench_overhead_ms"] == pytest.approx(325.0 - 331.0)
    assert pty.loc[("local", "asyncssh", "pty-fresh")]["overhead_rtts"] != \
        pty.loc[("local", "asyncssh", "pty-fresh")]["overhead_rtts"]  # NaN: RTT below 1 ms
    assert set(pty.index.get_level_values("client")) == {"asyncssh", "paramiko"}  # SSH only

    speed = study.speedup_vs_pty_fresh(frame).set_index(["profile", "mode"])
    batch = speed.loc[("regional", "https batch-post")]
    assert batch["client"] == "httpx"
    assert batch["baseline_client"] == "asyncssh"  # the best pty-fresh, not paramiko's
    assert batch["speedup"] == pytest.approx((420 + 150) / 30)
    assert batch["clibench_speedup"] == pytest.approx(546.7 / 33.9)
    assert speed.loc[("regional", "ssh fresh-conn")]["speedup"] == pytest.approx(570 / 600)
    assert speed.loc[("regional", "https fresh-conn")]["speedup"] == pytest.approx(570 / 450)
    assert speed.loc[("regional", "ssh pty-fresh")]["speedup"] == pytest.approx(1.0)
    assert "ssh pipelined" not in speed.index.get_level_values("mode")  # ours, not the study's

    scaling = study.command_scaling(frame).set_index(["profile", "mode"])
    assert list(scaling.columns[:4]) == ["client", "1 cmd", "5 cmd", "50 cmd"]
    reuse_conn = scaling.loc[("regional", "ssh reuse-conn")]
    assert reuse_conn["ms_per_command"] == pytest.approx(60.0)
    assert reuse_conn["rtts_per_command"] == pytest.approx(2.0)
    assert reuse_conn["50 cmd"] == pytest.approx(3000.0)
    assert scaling.loc[("regional", "https batch-post")]["growth"] == pytest.approx(1.0)
    assert scaling.loc[("regional", "ssh pty-fresh")]["growth"] == pytest.approx(1920 / 450)

    serial = study.serial_fleet(frame).set_index(["profile", "mode"])
    assert serial.loc[("regional", "ssh pty-fresh")]["seconds"] == pytest.approx(57.0)
    assert serial.loc[("regional", "ssh pty-fresh")]["clibench_seconds"] == pytest.approx(54.67)
    assert serial.loc[("local", "https keep-alive")]["seconds"] == pytest.approx(1.5)
    assert serial.loc[("local", "https keep-alive")]["clibench_seconds"] != \
        serial.loc[("local", "https keep-alive")]["clibench_seconds"]  # NaN: not its profile

    versus = study.versus_study(frame).set_index("mode")
    assert list(versus.index) == list(study.MODES)
    assert set(versus["profile"]) == {"regional"}
    assert versus.loc["https fresh-conn", "mean_ms"] == pytest.approx(450.0)
    assert versus.loc["ssh fresh-conn", "mean_ms"] == pytest.approx(600.0)
    assert versus.loc["ssh fresh-conn", "ratio"] == pytest.approx(600 / 507.4)
    assert versus.loc["https keep-alive", "rtts"] == pytest.approx(5.0)
    assert versus.loc["https keep-alive", "clibench_rtts_600"] == pytest.approx(5.01)
    assert versus.loc["https fresh-conn", "clibench_round_trips"] == 10


def test_study_tables_say_in_one_line_what_a_run_lacks(tmp_path: Path) -> None:
    """No pty modes, one command count, no regional: a line instead of each table; a profile
    without ssh pty-fresh is named under the speed-up table."""
    from mgmtbench.results import study
    from mgmtbench.results.report import write_report

    rows = [r for r in every(("asyncssh", "httpx"), ("local",), (5,))
            if r[2] not in ("pty-fresh", "pty-reuse")]
    run = study_run(tmp_path / "thin.json", rows)
    frame = load_runs([run])
    with pytest.raises(ResultsError, match="no PTY overhead: it needs ssh pty-fresh"):
        study.pty_overhead(frame)
    with pytest.raises(ResultsError, match="no profile of this run has ssh pty-fresh"):
        study.speedup_vs_pty_fresh(frame)
    with pytest.raises(ResultsError, match=r"one command count \(5\)"):
        study.command_scaling(frame)
    with pytest.raises(ResultsError, match=r"this run has local \(0 ms\) at 5 commands"):
        study.versus_study(frame)
    text = write_report([run], tmp_path / "report").read_text()
    assert "Traceback" not in text
    block = text[text.index("## The study's tables"):text.index("## Charts")]
    for heading in ("### Against the study: regional, 5 commands", "### PTY overhead, 5 commands",
                    "### Speed-up against ssh pty-fresh, 5 commands",
                    "### Time against command count"):
        after = block[block.index(heading):].splitlines()
        assert after[2].startswith("Not in this run: no "), heading  # the note, one line
        assert after[3] == "", heading
        assert after[4].startswith("### "), heading  # and no table
    serial = block[block.index("### 100 devices serially, 5 commands"):].splitlines()
    assert serial[4].startswith("| mode | client | local |")
    assert "| https batch-post | httpx | 0.3 s |" in block

    # A second profile with pty-fresh: the speed-up table, and the profile without it named.
    more = rows + every(("asyncssh",), ("regional",), (5,))
    frame = load_runs([study_run(tmp_path / "more.json", more)])
    speed = study.speedup_vs_pty_fresh(frame)
    assert set(speed["profile"]) == {"regional"}
    lines = study.render(frame)
    assert "No ssh pty-fresh at 5 commands, so no speed-up, in: local." in lines


def test_runs_from_before_the_study_names_get_no_study_tables(tmp_path: Path) -> None:
    from mgmtbench.results import study

    for frame in (load_runs([DOCS_RUNS["transport"]]),
                  load_runs([study_run(tmp_path / "old.json", every(), aligned=False)])):
        lines = study.render(frame)
        assert lines[:2] == ["## The study's tables", ""]
        assert lines[2].startswith("Not in this run: the run was recorded before the mode names")
        assert not any(line.startswith("|") for line in lines)


def test_report_on_a_real_run_has_the_study_tables(runs: list[Path], tmp_path: Path) -> None:
    """``mgmtbench report`` on a real run (asyncssh at local, 1 and 5 commands): the tables it
    has data for, and the note for the comparison that needs regional."""
    out = tmp_path / "report"
    result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "report", str(runs[0]),
                             "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    text = (out / "report.md").read_text()
    block = text[text.index("## The study's tables"):text.index("## Charts")]
    assert "Not in this run: no comparison with the study: it needs a profile with a configured " \
           "RTT of 30 ms" in block
    assert "| local | asyncssh | pty-fresh | fresh-conn |" in block
    assert "| local | asyncssh | pty-reuse | reuse-conn |" in block
    assert "| ssh pty-fresh | asyncssh | 1.0x |" in block
    assert "| profile | mode | client | 1 cmd | 5 cmd | ms_per_command |" in block
    assert "| local | ssh batch-exec | asyncssh |" in block
    assert "### 100 devices serially, 5 commands" in block
    frame = load_runs([runs[0]])
    pty_fresh = frame[(frame["mode"] == "pty-fresh") & (frame["commands"] == 5)]["mean_ms"]
    seconds = float(pty_fresh.iloc[0]) * 100 / 1000
    assert f"| ssh pty-fresh | asyncssh | {seconds:.1f} s |" in block
