"""The report's opening: findings computed from a run, its warnings, and the readable charts."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from mgmtbench.results.findings import find, markdown
from mgmtbench.results.heatmap import heatmap, nice_ticks
from mgmtbench.results.load import load_runs
from mgmtbench.results.minimums import minimum
from mgmtbench.results.mode_charts import speedup_chart, time_vs_commands, time_vs_rtt
from mgmtbench.results.report import write_report
from mgmtbench.results.ways import best_per_way, reference_count, ways
from tests.report_support import CLIENTS, PROFILES, every_transport_run, mean_ms

ROOT = Path(__file__).resolve().parents[1]
DOCS_RUN = ROOT / "docs" / "report-2026-11-22" / "nox-bench-run.json"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path: Path = every_transport_run(tmp_path_factory.mktemp("run") / "every.json")
    return path


def test_ways_label_payloads_and_pick_each_ways_best_client(run: Path) -> None:
    rows = ways(load_runs([run]))
    assert reference_count(rows) == 5
    assert set(rows["transport"]) == set(CLIENTS)
    assert not rows[rows["mode"] == "edit-commit"]["reads"].any()  # a status, not the outputs
    best = best_per_way(rows[(rows["profile"] == "regional") & (rows["commands"] == 5)])
    pty = best[best["way"] == "ssh pty-fresh"].iloc[0]
    assert pty["plain_client"] == "asyncssh"  # not netmiko, not paramiko
    assert pty["rtts"] == pytest.approx(mean_ms("ssh", "pty-fresh", "asyncssh", "regional", 5)
                                        / PROFILES["regional"][1])
    local = rows[rows["profile"] == "local"]
    assert local["rtts"].isna().all()  # below a 1 ms RTT: read in ms


def test_findings_say_the_fastest_way_and_what_leaving_pty_fresh_saves(run: Path) -> None:
    found = find(load_runs([run]))
    assert found is not None
    assert "over SSH, HTTPS, NETCONF, RESTCONF, gNMI, HTTP/3" in found.scope
    titles = [p.title for p in found.profiles]
    assert titles == ["local (measured RTT 0.020 ms), 5 commands",
                      "regional (measured RTT 30.3 ms), 5 commands",
                      "intercontinental (measured RTT 150.4 ms), 5 commands"]
    regional = found.profiles[1].sentences
    batch = mean_ms("https", "batch-post", "httpx", "regional", 5)
    pty = mean_ms("ssh", "pty-fresh", "asyncssh", "regional", 5)
    assert regional[0] == (f"The fastest way to run 5 commands is https batch-post (httpx): "
                           f"{batch:.1f} ms ({batch / 30.3:.1f} RTTs) per iteration, "
                           f"{batch / 10:.1f} s for 100 devices one after another.")
    assert regional[1].startswith("Fastest per transport: SSH pipelined (asyncssh), ")
    for transport in ("HTTPS batch-post (httpx)", "NETCONF batch-rpc (ncclient)",
                      "RESTCONF keep-alive (httpx-restconf)",  # batch-patch answers a status
                      "gNMI subscribe-once (pygnmi)", "HTTP/3 batch-post (aioquic-h3)"):
        assert transport in regional[1]
    assert regional[2].startswith(f"A PTY session per device (ssh pty-fresh, the Netmiko/Ansible "
                                  f"way; its best client here, asyncssh) takes {pty:.1f} ms")
    assert (f"moving to https batch-post (httpx) saves {pty - batch:.1f} ms "
            f"({pty / batch:.1f}x faster)") in regional[2]
    # Slower than pty-fresh at local (the client's own time dominates): said so.
    assert "to netconf batch-rpc (ncclient) is 15.7 ms slower (0.35x)" in \
        found.profiles[0].sentences[2]
    text = "\n".join(markdown(found))
    assert "|" not in text  # sentences, not tables


def test_warnings_come_from_what_the_run_recorded(run: Path, tmp_path: Path) -> None:
    found = find(load_runs([run]))
    assert found is not None
    warnings = "\n".join(found.warnings)
    assert "within 1 ms or 5 %: +0.02 ms at local, +0.30 ms at regional" in warnings
    assert ("Round trips above the protocol minimum (counted on the link, more than one round "
            "trip and 10 % over the README's mode table) in 6 of ") in warnings
    assert "paramiko ssh fresh-conn at regional, 1 command: 11.0 against 8 (+3.0)" in warnings
    assert ("Host settings differ from the device side's at regional and intercontinental: "
            "net.ipv4.tcp_slow_start_after_idle is 1") in warnings

    data = json.loads(run.read_text())
    for bench in data["benchmarks"]:
        info = bench["extra_info"]
        if info["profile"] == "regional":
            info["rtt_error_ms"] = 4.2
            info["measured_rtt_ms"] = 34.2
            info["rtt_error_under_load_ms"] = 9.0 if info["client"] == "paramiko" else 0.1
            info["tcp"] = {**info["tcp"], "mismatches": ["device side MTU is 9000, not 1500"]}
            info["tcp_retransmits"] = 3 if info["mode"] == "keep-alive" else 0
    skewed = tmp_path / "skewed.json"
    skewed.write_text(json.dumps(data))
    found = find(load_runs([skewed]))
    assert found is not None
    warnings = "\n".join(found.warnings)
    assert ("Instrument error at regional: the lab measured 34.2 ms against the profile's 30 ms "
            "RTT") in warnings
    assert ("Under load at regional, the link's RTT left the profile's 30 ms in 18 of 105 "
            "benchmarks (worst +9.0 ms, paramiko") in warnings
    assert ("The link was not as its profile asks at regional: device side MTU is 9000, not "
            "1500.") in warnings
    assert "TCP retransmitted segments" in warnings


def test_a_run_from_before_the_study_names_is_warned_about() -> None:
    found = find(load_runs([DOCS_RUN]))
    assert found is not None
    assert found.warnings[0].startswith("The run was recorded before the mode names meant the "
                                        "study's")
    assert [p.title.split(" (")[0] for p in found.profiles] == ["local", "regional",
                                                                "intercontinental"]


def test_no_transport_benchmarks_no_findings() -> None:
    frame = pd.DataFrame({"name": ["a"], "mean_ms": [1.0], "experiment": ["lab-throughput"]})
    assert find(frame) is None


def test_protocol_minimums_follow_the_mode_table() -> None:
    assert minimum("ssh", "pty-fresh", 5) == 17
    assert minimum("ssh", "pty-fresh", 5, "cisco_asa") == 19  # enable at host>
    assert minimum("https", "fresh-conn", 5) == 20  # TLS 1.2, the larger
    assert minimum("gnmi", "fresh-conn", 50) == 5
    assert minimum("netconf", "batch-rpc", 5) is None


def test_charts_have_few_series_and_every_transport(run: Path, tmp_path: Path) -> None:
    rows = ways(load_runs([run]))
    paths = [heatmap(rows, tmp_path, "regional", 5), speedup_chart(rows, tmp_path, 5),
             time_vs_rtt(rows, tmp_path, 5), time_vs_commands(rows, tmp_path, "regional")]
    assert [p.name for p in paths if p] == ["heatmap_regional_5cmd.png", "speedup_5cmd.png",
                                            "modes_rtt_5cmd.png", "modes_commands_regional.png"]
    for path in paths:
        assert path is not None
        assert path.read_bytes()[:8] == PNG
        assert 10_000 < path.stat().st_size < 1_000_000
    assert heatmap(rows, tmp_path, "geo", 5) is None
    one = rows[rows["profile"] == "regional"]
    assert time_vs_rtt(one, tmp_path, 5) is None  # one profile: no line to draw
    assert nice_ticks(1.13, 20.2) == [1.13, 2, 5, 10, 20.2]


def test_the_report_opens_with_the_findings_and_keeps_its_sections(run: Path,
                                                                  tmp_path: Path) -> None:
    text = write_report([run], tmp_path / "report").read_text()
    first_section = text.index("\n## ")
    opening = text[:first_section]
    assert opening.index("**What this run found.**") < opening.index("**Warnings from the run.**")
    assert "![regional, 5 commands: every client and mode](heatmap_regional_5cmd.png)" in opening
    assert "(speedup_5cmd.png)" in opening
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## local, 1 commands"  # the sections as before
    assert "## Every transport on the same work" in headings
    for chart in (tmp_path / "report").glob("*.png"):
        assert f"]({chart.name})" in text
    assert (tmp_path / "report" / "report.html").is_file()
