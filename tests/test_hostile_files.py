"""Hostile files and options (issue 33, items 5 and 6): every file and option a user gives is read
with bounded memory and time and refused in one line when wrong; state folders are the
project's own; inventory checks count what reaches each address, whatever the hosts are called.

The hostile inputs are ``tools/hostile/files.py``'s (its probes print the figures); here each is
refused (or, for an aliased Ansible group tree, read in linear time) with a one-line error."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from mgmtbench.emulator.options import EmulatorOptions, Limits
from mgmtbench.errors import ResultsError, UsageError
from mgmtbench.results.load import load_run
from mgmtbench.targets.inventory import load_inventory
from mgmtbench.targets.probe import probe_all
from mgmtbench.targets.safety import TargetGate
from tests.serve_support import serve


def _hostile() -> ModuleType:
    """``tools/hostile/files.py``: its hostile inputs (a script, not a package)."""
    path = Path(__file__).resolve().parents[1] / "tools" / "hostile" / "files.py"
    spec = importlib.util.spec_from_file_location("hostile_files", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hostile = _hostile()

CLI = [sys.executable, "-m", "mgmtbench.cli"]
ENV = {"MGMTBENCH_USERNAME": "admin", "MGMTBENCH_PASSWORD": "admin"}


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize(("name", "text", "said"), [
    ("inv.yaml", hostile.laughs_yaml(), "aliases expand to more than"),
    ("inv.yaml", "all:\n  hosts:\n    r1:\n      v: " + "[" * 5000 + "]" * 5000 + "\n",
     "nested more than 64 deep"),
    ("inv.yaml", f"all:\n  hosts:\n    r1:\n      ansible_port: {'9' * 5000}\n", "digits"),
    ("inv.toml", f'[hosts.r1]\nhost = "127.0.0.70"\nssh_port = {"9" * 5000}\n', "digits"),
    ("topo.clab.json", '{"name": "lab", "topology": {"nodes": {"r1": {"x": '
     + "[" * 100_000 + "]" * 100_000 + "}}}}", "nested too deeply"),
])
def test_a_hostile_inventory_is_refused_in_one_line(tmp_path: Path, name: str, text: str,
                                                     said: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(UsageError, match=said) as caught:
        load_inventory(path, env=ENV)
    assert "\n" not in str(caught.value)


def test_an_aliased_ansible_group_tree_is_read_in_linear_time(tmp_path: Path) -> None:
    """10,000 group visits (10 aliased children, 4 deep) for one host: each layer once, found in a
    set (a list scan made this quadratic: > 200 s at 5 deep)."""
    path = tmp_path / "inv.yaml"
    path.write_text(hostile.alias_groups_yaml(depth=4).replace(
        "ansible_host: 127.0.0.70", "ansible_host: 127.0.0.70, ansible_network_os: ios"))
    start = time.monotonic()
    inventory = load_inventory(path, env=ENV)
    assert [h.name for h in inventory.hosts] == ["r1"]
    assert time.monotonic() - start < 8  # quadratic: minutes


def run_file(tmp_path: Path, benches: list[str]) -> Path:
    path = tmp_path / "run.json"
    path.write_text('{"benchmarks": [' + ",".join(benches) + "]}")
    return path


@pytest.mark.parametrize(("extra", "said"), [
    ('"commands": ' + "9" * 5000, "a number of more than 4300 digits"),
    ('"commands": ' + "9" * 40, "not a whole number"),
    ('"measured_rtt_ms": "fast"', "measured_rtt_ms is the string 'fast', not a finite number"),
    ('"loss_pct": true', "loss_pct is true, not a finite number"),
])
def test_a_run_with_a_hostile_number_is_refused_in_one_line(tmp_path: Path, extra: str,
                                                            said: str) -> None:
    with pytest.raises(ResultsError, match=said) as caught:
        load_run(run_file(tmp_path, [hostile._bench(0, extra)]))
    assert "\n" not in str(caught.value)


def test_a_new_result_key_per_benchmark_is_refused_before_the_frame_grows(tmp_path: Path) -> None:
    """A column per key costs a cell per row already read: 1,001 keys are refused at once."""
    path = run_file(tmp_path, [hostile._bench(i, f'"k{i}": {i}') for i in range(5000)])
    with pytest.raises(ResultsError, match="more than 1,000 different params and extra_info"):
        load_run(path)


def test_report_to_a_name_too_long_is_one_line(tmp_path: Path) -> None:
    run = run_file(tmp_path, [hostile._bench(0)])
    result = subprocess.run([*CLI, "report", str(run), "--out", str(tmp_path / ("o" * 300))],
                            capture_output=True, text=True, timeout=60)
    assert "File name too long" in one_line_error(result)


@pytest.mark.parametrize(("field", "value"), [
    ("login_timeout", math.nan), ("https_idle_timeout", 0.0), ("body_timeout", math.inf),
    ("tls_handshake_timeout", -1.0), ("auth_failure_delay", math.nan), ("max_sessions", 0),
    ("max_startups", (10, 30, 5)), ("max_startups", (10, 130, 100)),
])
def test_serve_refuses_a_limit_out_of_range(field: str, value: object) -> None:
    flag = "--max-startups" if field == "max_startups" else "--" + field.replace("_", "-")
    with pytest.raises(UsageError, match=flag):
        Limits(**{field: value})  # type: ignore[arg-type]


def test_serve_refuses_an_infinite_processing_delay_and_a_zero_time_out(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--processing-delay inf"):
        EmulatorOptions(processing_delay=math.inf)
    result = subprocess.run([*CLI, "serve", "--ssh-port", "0", "--https-port", "0",
                             "--state-dir", str(tmp_path / "state"), "--https-idle-timeout", "0"],
                            capture_output=True, text=True, timeout=60)
    assert "--https-idle-timeout 0.0: give seconds, above 0" in one_line_error(result)
    assert not (tmp_path / "state").exists() or not any((tmp_path / "state").iterdir())


def test_serve_never_writes_into_a_folder_it_did_not_make(tmp_path: Path) -> None:
    """As ``--state-dir /etc`` would: a non-empty folder without mgmtbench's mark is refused,
    and nothing is written into it."""
    foreign = tmp_path / "etc"
    foreign.mkdir()
    (foreign / "passwd").write_text("root:x:0:0::/root:/bin/sh\n")
    result = subprocess.run([*CLI, "serve", "--ssh-port", "0", "--https-port", "0",
                             "--state-dir", str(foreign)], capture_output=True, text=True,
                            timeout=60)
    assert "files (passwd ...) that mgmtbench did not write" in one_line_error(result)
    assert [p.name for p in foreign.iterdir()] == ["passwd"]


def test_lab_up_refuses_a_password_on_the_command_line() -> None:
    result = subprocess.run([*CLI, "lab", "up", "--password", "s3cret"], capture_output=True,
                            text=True, timeout=60)
    assert "export MGMTBENCH_PASSWORD or use --ask-password" in one_line_error(result)
    assert "s3cret" not in result.stderr + result.stdout


@pytest.mark.parametrize("address", ["169.254.169.254", "0.0.0.0", "224.0.0.1"])
def test_an_inventory_pointing_at_no_device_is_refused(tmp_path: Path, address: str) -> None:
    path = tmp_path / "inv.toml"
    path.write_text(f'[hosts.r1]\nhost = "{address}"\nplatform = "cisco_ios"\n')
    with pytest.raises(UsageError, match=f"host r1: {address} is .*not a device: refused"):
        load_inventory(path, env=ENV)


def test_hosts_that_share_an_address_are_paced_as_one_device(tmp_path: Path) -> None:
    """Six names for one emulator on loopback: with one session and 6 connections a second per
    address, six probes of 3 connections each cannot take less than 2.5 s (they took a tenth of
    that, all at once, when safety counted hosts)."""
    with serve(tmp_path, "--no-http3") as served:
        path = tmp_path / "many.toml"
        path.write_text("".join(
            f'[hosts.r{i}]\nhost = "127.0.0.1"\nplatform = "cisco_ios"\nusername = "admin"\n'
            f"ssh_port = {served.ssh_port}\nhttps_port = {served.https_port}\n"
            for i in range(6)))
        inventory = load_inventory(path, env=ENV, timeout=30)
        start = time.monotonic()
        reports = asyncio.run(probe_all(inventory.hosts, samples=1, parallel=6,
                                        targets=TargetGate(rate=6.0, sessions=1)))
        elapsed = time.monotonic() - start
    assert [r.reachable for r in reports] == [True] * 6, [r.error for r in reports]
    assert elapsed >= 2.4, elapsed


def test_inventory_check_says_in_one_sentence_that_hosts_share_an_address(tmp_path: Path) -> None:
    path = tmp_path / "many.toml"
    path.write_text("".join(f'[hosts.r{i}]\nhost = "127.0.0.71"\nplatform = "cisco_ios"\n'
                            'username = "admin"\nssh_port = 9\nhttps_port = 9\n'
                            for i in range(3)))
    result = subprocess.run([*CLI, "inventory", "check", str(path), "--json", "--timeout", "2",
                             "--samples", "1"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **ENV})
    assert "3 hosts share 1 address(es) (3 on 127.0.0.71)" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(json.loads(result.stdout)["hosts"]) == 3
