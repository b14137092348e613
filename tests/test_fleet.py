"""Fleet runners against real emulated devices: every library at (small) concurrency, each
session to its own device; the worker's accounting; projections from measured curves."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest

from mgmtbench.clients import Target
from mgmtbench.clients.fleet import FLEET_RUNNERS, PHASES, fleet_runner
from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_digest
from mgmtbench.errors import FleetWorkerError, UsageError
from mgmtbench.lab import Lab
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.profiles import resolve
from mgmtbench.lab.usage import usage
from mgmtbench.results.projection import project, projection_table
from mgmtbench.targets import Login, lab_targets
from mgmtbench.testing import ClientKeys, credentials, expected_digests
from mgmtbench.testing.fixtures import emulator_options, emulator_target

COMMAND = "show interfaces"
DEVICES = 3


@pytest.fixture(scope="module")
def fleet(client_keys: ClientKeys, login: Login) -> Iterator[tuple[list[Target], list[str]]]:
    emu = EmulatorThread(emulator_options("cisco_ios", client_keys, devices=DEVICES)).start()
    targets = [emulator_target(emu, login, index) for index in range(DEVICES)]
    digests = [expected_digest("cisco_ios", e.hostname, e.device.facts.mgmt_ip, [COMMAND])
               for e in emu.endpoints]
    assert len(set(digests)) == DEVICES  # each device answers with its own name
    yield targets, digests
    emu.stop()


@pytest.mark.parametrize("client", list(FLEET_RUNNERS))
def test_runner_runs_every_session_and_checks_outputs(
        client: str, fleet: tuple[list[Target], list[str]]) -> None:
    cls = fleet_runner(client)
    if cls.missing():
        pytest.skip(cls.missing() or "")
    targets, digests = fleet
    with FleetWorker(client) as worker:
        report = worker.run(targets, COMMAND, digests)
        wrong = worker.run(targets, COMMAND, [digests[1], digests[1], digests[1]])
    sessions = report["sessions"]
    assert [s["error"] for s in sessions] == [None] * DEVICES
    assert all(s["output_bytes"] > 2 * 26_000 for s in sessions)
    for session in sessions:
        for phase in PHASES:
            if phase in cls.merged:
                assert session[phase] is None, phase
            else:
                assert session[phase] is not None, phase
                assert session[phase] >= 0, phase
        assert sum(session[p] or 0 for p in PHASES) <= report["wall"] * 1.01
    assert report["cpu_user"] + report["cpu_system"] > 0
    assert report["peak_rss"] > 20 * 2**20
    # The same outputs against the wrong digests: devices 0 and 2 are caught answering wrongly.
    assert [s["error"] for s in wrong["sessions"]] == ["wrong output", None, "wrong output"]


def test_session_errors_are_reported_not_raised(fleet: tuple[list[Target], list[str]]) -> None:
    targets, digests = fleet
    bad = [targets[0], Target(**{**targets[1].__dict__, "password": "wrong"})]
    with FleetWorker("asyncssh") as worker:
        report = worker.run(bad, COMMAND, digests[:2])
    errors = [s["error"] for s in report["sessions"]]
    assert errors[0] is None
    assert errors[1]
    assert "Permission denied" in errors[1]


@pytest.mark.parametrize("client", ["paramiko", "asyncssh", "pssh-ssh2"])
def test_runners_log_in_with_the_key_and_chosen_cipher_like_their_adapters(
        client: str, fleet: tuple[list[Target], list[str]]) -> None:
    from dataclasses import replace

    from mgmtbench.targets import Auth, SshAlgorithms

    targets, digests = fleet
    algorithms = SshAlgorithms() if client == "pssh-ssh2" else SshAlgorithms(ciphers=("aes128-ctr",))
    by_key = [replace(t, auth=Auth.KEY, password="not-the-password", algorithms=algorithms)
              for t in targets]
    with FleetWorker(client) as worker:
        report = worker.run(by_key, COMMAND, digests)
    assert [s["error"] for s in report["sessions"]] == [None] * DEVICES


def test_unknown_client_is_one_clear_error() -> None:
    with pytest.raises(UsageError, match="no fleet runner for client 'telnet'"):
        fleet_runner("telnet")
    with pytest.raises(FleetWorkerError, match="no fleet runner"):
        FleetWorker("telnet")


def _curve(client: str, points: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame([{"profile": "regional", "client": client, "concurrency": c,
                          "median_ms": ms, "makespan_ms": ms, "connect_exec_ms": 60.0,
                          "finish_ms": 10.0, "exec_again_ms": 10.0, "read_output_ms": 10.0,
                          "close_ms": 0.0} for c, ms in points.items()])


def test_projection_marks_what_is_measured_and_what_is_not() -> None:
    frame = _curve("a", {1: 100.0, 10: 120.0, 100: 300.0, 200: 500.0})
    two = project(frame, devices=(100, 1000, 10000), workers=100, commands=2).set_index("devices")
    assert two.loc[100, "basis"] == "measured"
    assert two.loc[100, "seconds"] == pytest.approx(0.3)
    assert two.loc[1000, "basis"] == "projected"  # 10 waves of a measured 100
    assert two.loc[1000, "seconds"] == pytest.approx(3.0)
    assert two.loc[10000, "seconds"] == pytest.approx(30.0)
    # 5 commands: setup = 60 + 10 + 0 - 20 = 50 ms, per command 20 ms: (50+100)/(50+40) longer.
    five = project(frame, devices=(100,), workers=100, commands=5)
    assert five["basis"].tolist() == ["projected"]
    assert five["seconds"].iloc[0] == pytest.approx(0.3 * 150 / 90)
    between = project(frame, devices=(1000,), workers=150, commands=2)
    assert between["basis"].tolist() == ["interpolated"]
    assert between["seconds"].iloc[0] == pytest.approx(7 * 0.4)  # ceil(1000/150) waves of 400 ms
    beyond = project(frame, devices=(1000,), workers=400, commands=2)
    assert beyond["basis"].tolist() == ["extrapolated"]
    assert beyond["seconds"].iloc[0] == pytest.approx(3 * 0.9)  # 500 + 2 * 200 ms per 100
    wide = projection_table(project(frame, workers=100, commands=2))
    assert wide.loc[0, "1,000 devices"] == "3.0 s (projected)"
    assert wide.loc[0, "100 devices"] == "0.3 s (measured)"


def test_projection_with_one_point_does_not_invent_a_curve() -> None:
    frame = _curve("a", {10: 120.0})
    out = project(frame, devices=(100,), workers=100, commands=2)
    assert out["basis"].tolist() == ["extrapolated"]
    assert out["seconds"].isna().all()
    assert projection_table(out).loc[0, "100 devices"] == "-"


@pytest.mark.skipif(not has_net_admin(), reason="a fleet lab needs root or CAP_NET_ADMIN")
def test_fleet_lab_serves_each_device_on_its_own_address(login: Login) -> None:
    """A lab of 200 devices, one emulator process: 200 sessions at once, each device answers
    with its own hostname and address; the emulator's CPU and memory are readable."""
    size = 200
    with Lab(resolve("local"), devices=size, credentials=credentials()) as lab:
        assert len({d.address for d in lab.devices}) == size
        assert len({d.hostname for d in lab.devices}) == size
        pids = lab.device_pids()
        assert pids
        before = usage(pids)
        targets = lab_targets(lab, login)
        digests = expected_digests(lab, "show version")
        with FleetWorker("asyncssh") as worker:
            report = worker.run(targets, "show version", digests)
        after = usage(pids)
    assert [s["error"] for s in report["sessions"] if s["error"]] == []
    assert after.cpu_s > before.cpu_s
    assert 20 * 2**20 < after.rss_bytes < 1024 * 2**20


@pytest.mark.skipif(not has_net_admin(), reason="a fleet lab needs root or CAP_NET_ADMIN")
def test_fleet_lab_shared_among_emulator_processes(login: Login) -> None:
    """``emulator_processes=3``: 10 devices in three processes (4+3+3), one CA bundle and one
    known_hosts for all: SSH host keys and HTTPS certificates of every shard verify."""
    size = 10
    with Lab(resolve("local"), devices=size, credentials=credentials(),
             emulator_processes=3) as lab:
        assert len(lab.device_pids()) == 3
        assert lab.facts().emulator_processes == 3
        assert len(lab.known_hosts.read_text().splitlines()) == size
        assert lab.ca_file.read_text().count("BEGIN CERTIFICATE") == 3
        targets = lab_targets(lab, login)
        digests = expected_digests(lab, "show version")
        for client in ("asyncssh", "httpx-async"):
            with FleetWorker(client) as worker:
                report = worker.run(targets, "show version", digests)
            assert [s["error"] for s in report["sessions"]] == [None] * size, client
    assert [d.hostname for d in lab.devices] == [f"R1-{i:03d}" for i in range(1, size + 1)]


def test_emulator_processes_are_checked_before_anything_starts() -> None:
    from mgmtbench.lab.runtimes import RuntimeOptions, choose

    with pytest.raises(UsageError, match="apply to the netns runtime"):
        choose("docker", RuntimeOptions(processes=2))
    with pytest.raises(UsageError, match="at least 1, not 0"):
        choose("netns", RuntimeOptions(processes=0))
