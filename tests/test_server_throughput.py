"""The server throughput experiment's parts: pinning that really applies (read back from /proc),
CPU accounting of a process tree against a known busy loop, the report section on a synthetic
run, and a tiny real run of the benchmark (both servers on loopback)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mgmtbench.clients.openssh.bulk import BulkConnections, zero_file
from mgmtbench.lab import proctree
from mgmtbench.results import load_runs
from mgmtbench.results.sections import discover
from mgmtbench.results.sections.base import ReportContext
from mgmtbench.testing.keys import ClientKeys
from mgmtbench.testing.throughput import (
    BulkServer,
    algorithms,
    cpu_split,
    emulator_server,
    measure,
    sshd_server,
)

ROOT = Path(__file__).resolve().parents[1]
ONE_CPU = {max(os.sched_getaffinity(0))}


@pytest.fixture(params=["emulator", "sshd"])
def server(request: pytest.FixtureRequest, client_keys: ClientKeys,
           tmp_path: Path) -> Iterator[BulkServer]:
    """Each server, on loopback in a process of its own."""
    start = emulator_server if request.param == "emulator" else sshd_server
    with start(tmp_path / request.param, client_keys.authorized_keys, client_keys.private) as made:
        yield made


def test_pinning_reaches_every_thread_and_every_connection_process(server: BulkServer) -> None:
    server.pin(ONE_CPU)
    target = replace(server.target, algorithms=algorithms("aes128-gcm@openssh.com"))
    with BulkConnections(target, 2) as bulk:  # sshd forks a process per connection after pinning
        members = [pid for root in server.pids for pid in proctree.tree(root)]
        if server.name == "sshd":
            assert len(members) > 1, "sshd has no per-connection process"
        for pid in members:
            for thread in proctree.threads(pid):
                assert proctree.cpus_allowed(thread) == ONE_CPU, (pid, thread)
        assert all(cpus == ONE_CPU for cpus in server.cpus().values())
        every = proctree.all_cpus()
        server.pin(every)  # and back: the processes already there follow
        assert all(cpus == every for cpus in server.cpus().values())
        result = measure(server, bulk, 2, "download", 20_000_000)  # >> a 10 ms tick of CPU
    assert result.mb_per_s_total > 0
    assert result.server_cpu_s > 0


def test_cpu_split_gives_the_server_one_core_and_the_client_the_rest() -> None:
    assert cpu_split(True, {0, 1, 2, 3}) == ({3}, {0, 1, 2})
    assert cpu_split(False, {0, 1}) == ({0, 1}, {0, 1})
    assert cpu_split(True, {0}) == ({0}, {0})  # one CPU: they share it


BUSY = textwrap.dedent("""
    import os, sys, time
    def spin(seconds):
        end = time.process_time() + seconds
        while time.process_time() < end:
            pass
    child = os.fork()
    if child == 0:
        spin(0.4)
        os._exit(0)
    os.waitpid(child, 0)  # reaped: its time moves to our cutime
    spin(0.3)
    print(time.process_time(), flush=True)  # our own CPU time
    sys.stdin.read()  # stay alive until told
""")


def test_tree_cpu_counts_a_busy_loop_and_its_reaped_child() -> None:
    with subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        own = float(process.stdout.readline())
        time.sleep(0.05)
        total = proctree.tree_cpu_seconds(process.pid)
    # Interpreter start-up counts too; ticks are 10 ms.
    assert own >= 0.3
    assert own + 0.4 - 0.03 <= total <= own + 0.4 + 0.15, (own, total)


def test_tree_cpu_counts_a_live_descendant() -> None:
    code = ("import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', "
            "'import time\\nend = time.process_time() + 0.5\\nwhile time.process_time() < end: "
            "pass\\nprint(1, flush=True)\\nimport sys; sys.stdin.read()'], stdin=sys.stdin); "
            "p.wait()")
    with subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "1"
        children = proctree.descendants(process.pid)
        assert len(children) == 1
        assert proctree.tree_cpu_seconds(process.pid) >= 0.5 - 0.02


def test_cpu_list_parsing() -> None:
    assert proctree.parse_cpu_list("0-2,5\n") == {0, 1, 2, 5}
    assert proctree.parse_cpu_list("3") == {3}


def _bench(server: str, cipher: str, pinning: str, connections: int,
           total: float) -> dict[str, object]:
    seconds = connections * 100 / total
    return {
        "name": f"test_server_throughput[local-{cipher}-upload-c{connections}-{pinning}-{server}]",
        "group": "g",
        "params": {"link": "local", "cipher": cipher, "direction": "upload",
                   "connections": connections, "pinning": pinning, "server": server},
        "stats": {"min": seconds, "max": seconds, "mean": seconds, "median": seconds,
                  "stddev": 0.0, "rounds": 1},
        "extra_info": {"experiment": "throughput", "backend": "none", "link": "local",
                       "server": server, "cipher": cipher, "direction": "upload",
                       "connections": connections, "pinned": pinning == "pinned",
                       "bytes_per_connection": 100_000_000, "mb_per_s_total": total,
                       "mb_per_s_per_connection": total / connections,
                       "server_cpu_pct": 99.0, "client_cpu_pct": 40.0, "other_cpu_pct": 5.0,
                       "mb_per_server_cpu_s": 100.0 if server == "emulator" else 200.0,
                       "server_version": "x"},
    }


def test_report_section_on_a_synthetic_run(tmp_path: Path) -> None:
    # sshd twice the emulator pinned (ratio 0.5), equal unpinned (ratio 1), flat in connections.
    benches = [_bench(server, cipher, pinning, n,
                      {"pinned": 50.0, "unpinned": 150.0}[pinning] * (
                          2 if server == "sshd" and pinning == "pinned" else 1))
               for server in ("emulator", "sshd") for cipher in ("aes128-gcm", "chacha20-poly1305")
               for pinning in ("pinned", "unpinned") for n in (1, 2, 5)]
    benches.append({"name": "test_link_ceiling[local]", "params": {"ceiling_link": "local"},
                    "stats": {"mean": 0.05, "stddev": 0.0, "rounds": 1},
                    "extra_info": {"experiment": "throughput", "link": "local", "server": "tcp",
                                   "cipher": "none", "connections": 1, "pinned": False,
                                   "mb_per_s_total": 1850.0, "link_cpu_pct": None}})
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"benchmarks": benches}))
    frame = load_runs([path])
    module = discover()["throughput"]
    section = module.render(frame[frame["experiment"] == "throughput"], ReportContext(tmp_path))
    text = "\n".join(section.lines)
    assert "## Server throughput: local, upload" in text
    assert "ceiling (plain TCP, one connection, no SSH): 1850.0 MB/s" in text
    header = next(line for line in text.splitlines() if line.startswith("| cipher"))
    assert header == ("| cipher | connections | emulator pinned | sshd pinned | ratio pinned | "
                      "emulator unpinned | sshd unpinned | ratio unpinned |")
    assert "| aes128-gcm | 5 | 50.0 | 100.0 | 0.50 | 150.0 | 150.0 | 1.00 |" in text
    assert "| aes128-gcm | 100.0 | 200.0 | 0.50 |" in text  # MB per server CPU second
    assert text.count("### ") == 4  # a table per server and cipher
    [chart] = section.charts
    assert chart.exists()
    assert chart.stat().st_size > 10_000


def test_a_tiny_real_run(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    result = subprocess.run(
        [sys.executable, "-m", "pytest", str(ROOT / "benchmarks" / "test_server_throughput.py"),
         "-p", "no:cacheprovider", "--rootdir", str(ROOT), "-q",
         "--throughput-links", "loopback", "--throughput-ciphers", "aes128-gcm",
         "--throughput-connections", "1,2", "--throughput-mb", "2",
         "--throughput-directions", "upload,download", f"--benchmark-json={out}"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    frame = load_runs([out])
    assert len(frame) == 2 * 2 * 2 * 2  # servers x pinning x connections x directions
    assert set(frame["server"]) == {"emulator", "sshd"}
    assert (frame["mb_per_s_total"] > 0).all()
    # 2 MB moves in a few ms of CPU: some rows read 0 ticks (10 ms), never a negative.
    for column in ("server_cpu_pct", "client_cpu_pct", "other_cpu_pct"):
        assert (frame[column] >= 0).all()
        assert frame[column].sum() > 0
    assert set(frame[frame["pinned"]]["server_cpus"]) == {str(max(os.sched_getaffinity(0)))}
    assert frame["server_version"].str.contains("OpenSSH").any()
    assert set(frame["backend"]) == {"loopback"}


def test_zero_file_is_the_size_asked(tmp_path: Path) -> None:
    path = zero_file(12345, tmp_path)
    assert path.stat().st_size == 12345
    assert path.read_bytes() == bytes(12345)


def test_the_matrix_options_are_checked_in_one_sentence() -> None:
    from mgmtbench.errors import UsageError
    from mgmtbench.testing.throughput import ThroughputMatrix

    good = {"links": ["local", "1000mbit", "loopback"], "servers": ["sshd", "emulator"],
            "ciphers": ["chacha20-poly1305@openssh.com", "aes128-gcm"],
            "directions": ["upload"], "connections": [1, 20], "pinning": ["pinned"], "mb": 0.5}
    matrix = ThroughputMatrix.parse(**good)  # type: ignore[arg-type]
    assert matrix.servers == ("emulator", "sshd")
    assert matrix.ciphers == ("aes128-gcm", "chacha20-poly1305")
    assert matrix.size == 500_000
    assert ThroughputMatrix.full_name("aes128-gcm") == "aes128-gcm@openssh.com"
    for key, bad, words in (("links", ["1gbit"], "--throughput-links: link '1gbit'"),
                            ("ciphers", ["3des"], "--throughput-ciphers: choose from"),
                            ("mb", 0, "--throughput-mb takes a positive size")):
        with pytest.raises(UsageError, match="^" + words):
            ThroughputMatrix.parse(**{**good, key: bad})  # type: ignore[arg-type]
