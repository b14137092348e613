"""Inventories against real servers on real sockets: ``mgmtbench serve`` processes stand in for
real devices on loopback. ``mgmtbench inventory check`` (reachability, login, platform, RTTs,
SSH/TLS facts, exit status, Ctrl-C) and the benchmarks run with ``--inventory`` (what results
record, what is refused and skipped, credentials kept out of everything written)."""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mgmtbench.testing.keys import ClientKeys

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-m", "mgmtbench.cli"]
SECRET = "pw-7c1f0e52-not-in-results"


@dataclass(frozen=True)
class Served:
    """One ``mgmtbench serve`` process: its devices' (ssh, https) ports and its trust files."""

    ports: list[tuple[int, int]]
    state: Path

    @property
    def ca_file(self) -> Path:
        return self.state / "tls" / "ca.pem"

    @property
    def known_hosts(self) -> Path:
        return self.state / "known_hosts"


@contextmanager
def serve(state: Path, *args: str) -> Iterator[Served]:
    process = subprocess.Popen(
        [*CLI, "serve", "--ssh-port", "0", "--https-port", "0", "--password", SECRET,
         "--state-dir", str(state), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        text = "".join(lines)
        ssh = [int(p) for p in re.findall(r"ssh -p (\d+)", text)]
        https = [int(p) for p in re.findall(r"https://127\.0\.0\.1:(\d+)/", text)]
        assert ssh, text
        assert len(ssh) == len(https), text
        yield Served(list(zip(ssh, https, strict=True)), state)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


@pytest.fixture(scope="module")
def ios(tmp_path_factory: pytest.TempPathFactory, client_keys: ClientKeys) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("ios"), "--devices", "2", "--authorized-keys",
               str(client_keys.authorized_keys)) as served:
        yield served


@pytest.fixture(scope="module")
def asa(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serve(tmp_path_factory.mktemp("asa"), "--platform", "cisco_asa",
               "--hostname", "asa1") as served:
        yield served


def toml_host(name: str, ports: tuple[int, int], served: Served, **extra: str) -> str:
    lines = [f"[hosts.{name}]", 'host = "127.0.0.1"', f"ssh_port = {ports[0]}",
             f"https_port = {ports[1]}", f'ca_file = "{served.ca_file}"',
             f'known_hosts = "{served.known_hosts}"', *[f'{k} = "{v}"' for k, v in extra.items()]]
    return "\n".join(lines) + "\n"


def run(*args: str, env: dict[str, str] | None = None,
        timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout,
                          env={**_env(), **(env or {})}, cwd=ROOT)


def _env() -> dict[str, str]:
    import os

    keep = {k: v for k, v in os.environ.items() if not k.startswith(("MGMTBENCH_", "SSH_AUTH"))}
    return {**keep, "MGMTBENCH_USERNAME": "admin", "MGMTBENCH_PASSWORD": SECRET,
            "COLUMNS": "250"}


# --- mgmtbench inventory check ------------------------------------------------------------------

def test_check_reports_every_host_and_fails_for_the_bad_ones(
        tmp_path: Path, ios: Served, asa: Served) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: refused
        port = closed.getsockname()[1]
        path = tmp_path / "lab.toml"
        path.write_text('[defaults]\nplatform = "cisco_xe"\n'
                        + toml_host("r1", ios.ports[0], ios)
                        + toml_host("fw1", asa.ports[0], asa, platform="asa")
                        + toml_host("wrongplatform", ios.ports[1], ios, platform="asa")
                        + f'[hosts.down]\nhost = "127.0.0.1"\nssh_port = {port}\n'
                          f'https_port = {port}\n')
        result = run("inventory", "check", str(path), "--json", "--samples", "3")
    assert result.returncode == 1, result.stderr
    hosts = {h["name"]: h for h in json.loads(result.stdout)["hosts"]}
    r1, fw1 = hosts["r1"], hosts["fw1"]
    assert r1["ok"]
    assert fw1["ok"]
    assert r1["version"] == "Cisco IOS XE Software, Version 17.09.04a"
    assert fw1["version"] == "Cisco Adaptive Security Appliance Software Version 9.16(4)"
    for host in (r1, fw1):
        assert host["auth"] == "ok"
        assert 0 < host["tcp_rtt_ms"] < 100
        assert 0 < host["echo_rtt_ms"] < 200
        assert host["ssh"]["server"].startswith("SSH-2.0-")
        assert host["ssh"]["server"] == "SSH-2.0-Cisco-1.25"  # as the real images
        assert host["ssh"]["host_key"].startswith("ssh-rsa SHA256:")
        assert host["ssh"]["host_key_checked"] == "yes"
        assert host["tls"]["verified"] is True
        assert host["tls"]["version"] == "TLSv1.2"  # IOS-XE 17.9 and ASA 9.16 offer TLS 1.2
        assert host["tls"]["alpn"] in ("h2", "http/1.1")
        assert "CN=127.0.0.1" in host["tls"]["subject"]
    assert not hosts["wrongplatform"]["ok"]
    assert hosts["wrongplatform"]["platform_ok"] is False
    assert "does not look like cisco_asa" in hosts["wrongplatform"]["error"]
    assert hosts["down"]["reachable"] is False
    assert "Connection refused" in hosts["down"]["error"]
    assert SECRET not in result.stdout + result.stderr


def test_check_says_when_a_login_is_refused(tmp_path: Path, ios: Served) -> None:
    path = tmp_path / "hosts.yaml"  # Nornir, with a host of its own (wrong) password
    path.write_text(f"r1:\n  hostname: 127.0.0.1\n  port: {ios.ports[0][0]}\n  platform: ios\n"
                    f"  password: not-the-password\n  data: {{https_port: {ios.ports[0][1]}}}\n")
    result = run("inventory", "check", str(path), "--json", "--samples", "1")
    [host] = json.loads(result.stdout)["hosts"]
    assert result.returncode == 1
    assert host["auth"] == "refused"
    assert "Permission denied" in host["error"]
    assert "not-the-password" not in result.stdout + result.stderr


def test_check_table_exits_0_when_every_host_is_fine(tmp_path: Path, ios: Served) -> None:
    path = tmp_path / "lab.toml"
    path.write_text('[defaults]\nplatform = "ios"\n' + toml_host("r1", ios.ports[0], ios)
                    + toml_host("r2", ios.ports[1], ios))
    result = run("inventory", "check", str(path), "--limit", "r2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "r2" in result.stdout
    assert "r1 " not in result.stdout  # --limit
    assert "TLSv1.2" in result.stdout
    assert "Cisco IOS XE Software" in result.stdout


def test_list_reads_without_connecting_and_shows_no_secret(tmp_path: Path) -> None:
    path = tmp_path / "hosts.yaml"
    path.write_text("r1: {hostname: 198.18.0.1, platform: cisco_xe, username: ops, "
                    f"password: {SECRET}, groups: [edge]}}\n"
                    "fw1: {hostname: 198.18.0.2, platform: asa, port: 2222}\n")
    (tmp_path / "groups.yaml").write_text("edge: {data: {https_port: 8443}}\n")
    result = run("inventory", "list", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)
    assert listed["format"] == "nornir"
    assert [(h["name"], h["address"], h["platform"], h["ssh_port"], h["https_port"],
             h["username"], h["groups"]) for h in listed["hosts"]] == [
        ("r1", "198.18.0.1", "cisco_ios", 22, 8443, "ops", ["edge"]),
        ("fw1", "198.18.0.2", "cisco_asa", 2222, 443, "admin", [])]
    assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize(("text", "says"), [
    ('[hosts.r1]\nhost = "127.0.0.1"\nplatform = "vrp"\n',
     "mgmtbench: error: host r1: unknown platform 'vrp': known platforms are arista_eos"),
    ('[hosts.r1]\nhost = "127.0.0.1"\nplatform = "ios"\nkey_file = "nope"\n',
     "mgmtbench: error: host r1: key file"),
    ("[hosts.r1\n", "not valid TOML"),
])
def test_a_mistake_is_one_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    result = run("inventory", "check", str(path))
    assert result.returncode == 2
    assert says in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_ctrl_c_stops_a_check_at_once(tmp_path: Path) -> None:
    """A device that accepts connections and never answers: Ctrl-C ends the check cleanly."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def hold() -> None:
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(silent.accept()[0])
            except TimeoutError:
                continue

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    port = silent.getsockname()[1]
    path = tmp_path / "i.toml"
    path.write_text(f'[hosts.mute]\nhost = "127.0.0.1"\nplatform = "ios"\nssh_port = {port}\n'
                    f"https_port = {port}\ntimeout = 120\n")
    process = subprocess.Popen([*CLI, "inventory", "check", str(path)], env=_env(), cwd=ROOT,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while len(accepted) < 2 and time.monotonic() < deadline:  # into the SSH login by then
            time.sleep(0.05)
        assert len(accepted) >= 2, "the check never connected"
        time.sleep(0.3)
        start = time.monotonic()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=10)
        assert time.monotonic() - start < 5
    finally:
        if process.poll() is None:
            process.kill()
        stop.set()
        holder.join()
        for conn in accepted:
            conn.close()
        silent.close()
    assert process.returncode == 130
    assert "Traceback" not in err


# --- the benchmarks through an inventory --------------------------------------------------------

def pytest_run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**_env(), "MGMTBENCH_ROUND_SECONDS": "0.2", "MGMTBENCH_FLEET_SECONDS": "0.2"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs",
                           "--tb=line", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=ROOT)


def failures(result: subprocess.CompletedProcess[str]) -> str:
    """What went wrong in a pytest run: its error lines, not its tables."""
    lines = [line for line in result.stdout.splitlines()
             if line.startswith(("E ", "FAILED", "ERROR", "/")) or "Error" in line]
    return "\n".join(lines[:40]) + result.stderr[-1000:]


def test_benchmarks_run_against_inventory_hosts(tmp_path: Path, ios: Served,
                                                client_keys: ClientKeys) -> None:
    path = tmp_path / "inventory.yml"  # Ansible, with the OpenSSH client's key beside the password
    path.write_text(
        "all:\n  vars:\n    ansible_network_os: cisco.ios.ios\n    ansible_user: admin\n"
        f"    ansible_ssh_private_key_file: {client_keys.private}\n    mgmtbench_auth: password\n"
        f"    mgmtbench_ca_file: {ios.ca_file}\n    mgmtbench_known_hosts: {ios.known_hosts}\n"
        "  hosts:\n"
        + "".join(f"    r{i + 1}: {{ansible_host: 127.0.0.1, ansible_port: {s}, "
                  f"mgmtbench_https_port: {h}}}\n" for i, (s, h) in enumerate(ios.ports)))
    out, fleet_out = tmp_path / "out.json", tmp_path / "fleet.json"
    result = pytest_run("benchmarks/test_transport_modes.py", "--inventory", str(path),
                        "--limit", "r1,r2", "--clients", "paramiko,httpx,openssh",
                        "--modes", "fresh-conn,reuse-conn,keep-alive", f"--benchmark-json={out}")
    assert result.returncode == 0, failures(result)
    fleet_run = pytest_run("benchmarks/test_concurrency.py", "--inventory", str(path),
                           "--clients", "asyncssh", "--concurrency", "2,3",
                           f"--benchmark-json={fleet_out}")
    assert fleet_run.returncode == 0, failures(fleet_run)
    benches = {b["name"]: b["extra_info"] for file in (out, fleet_out)
               for b in json.loads(file.read_text())["benchmarks"]}
    transport = benches["test_transport_mode[r1-5cmd-paramiko-reuse-conn]"]
    assert transport["target"] == "inventory"
    assert transport["profile"] == "inventory:r1"
    assert transport["host"] == "r1"
    assert transport["device_version"] == "Cisco IOS XE Software, Version 17.09.04a"
    assert transport["measured_rtt_ms"] > 0
    assert transport["configured_rtt_ms"] is None
    assert transport["app_rtts_per_iteration"] == 10.0  # 5 commands, a channel each
    assert "wire_rtts_per_iteration" not in transport  # loopback: no lab link to tap
    assert "packets_per_iteration" not in transport
    assert "test_transport_mode[r2-5cmd-httpx-keep-alive]" in benches
    assert "test_transport_mode[r1-5cmd-openssh-fresh-conn]" in benches
    fleet = benches["test_fleet[inventory-c2-asyncssh]"]
    assert (fleet["target"], fleet["hosts"], fleet["errors"]) == ("inventory", ["r1", "r2"], 0)
    assert "3 sessions need more devices: the inventory has 2" in fleet_run.stdout  # c3 skipped
    written = "".join([out.read_text(), fleet_out.read_text(), result.stdout, result.stderr,
                       fleet_run.stdout, fleet_run.stderr])
    assert SECRET not in written


def test_only_show_commands_unless_allowed_and_lab_benchmarks_skip(tmp_path: Path,
                                                                 ios: Served) -> None:
    path = tmp_path / "lab.toml"
    path.write_text('[defaults]\nplatform = "ios"\n' + toml_host("r1", ios.ports[0], ios))
    result = pytest_run("benchmarks/test_concurrency.py", "benchmarks/test_fleet_lab.py",
                        "--inventory", str(path), "--clients", "asyncssh", "--concurrency", "1",
                        "--fleet-command", "configure terminal")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "runs 'configure terminal', not a show command: real targets run show commands only " \
           "unless --allow-config" in result.stdout
    assert "a lab benchmark: with --inventory only the benchmarks marked inventory run" \
        in result.stdout
    assert " passed" not in result.stdout.splitlines()[-1]
    allowed = pytest_run("benchmarks/test_concurrency.py", "--inventory", str(path),
                         "--clients", "asyncssh", "--concurrency", "1", "--allow-config",
                         "--fleet-command", "configure terminal")
    assert "1 passed" in allowed.stdout.splitlines()[-1], allowed.stdout[-3000:]


def test_a_bad_inventory_stops_pytest_in_one_line(tmp_path: Path) -> None:
    result = pytest_run("benchmarks/test_transport_modes.py", "--inventory",
                        str(tmp_path / "missing.yaml"))
    assert result.returncode == 4  # pytest's usage error
    assert "--inventory: " in result.stderr
    assert "missing.yaml: no such inventory file or folder" in result.stderr
    assert "Traceback" not in result.stderr
