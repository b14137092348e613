"""Issue 17, findings 3 and 5: credentials never in a process's arguments or in files others can
read, a user's files never overwritten by ``--state-dir``, and the device image's HTTPS API
answering when bound to every address (0.0.0.0), as the image and its compose file run it."""

from __future__ import annotations

import asyncio
import os
import re
import ssl
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncssh
import httpx
import pytest

from mgmtbench.emulator import Credentials
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import has_net_admin

SERVE = [sys.executable, "-m", "mgmtbench.cli", "serve"]
SECRET_PASSWORD = "pw-Kq7vX2-not-in-argv"
SECRET_ENABLE = "en-R4mZ9-not-in-argv"


@contextmanager
def serving(env: dict[str, str], *args: str) -> Iterator[list[str]]:
    """``mgmtbench serve`` with ``env`` added to its environment; its ready lines."""
    process = subprocess.Popen([*SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, **env})
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Press Ctrl-C"):
                break
        else:
            raise AssertionError(f"serve ended: {process.stderr.read() if process.stderr else ''}")
        yield lines
    finally:
        process.terminate()
        process.communicate(timeout=15)


def image_environment(state: Path) -> dict[str, str]:
    """The device image's own settings (docker/Dockerfile's ENV), on free ports, as its compose
    file adds credentials."""
    return {"MGMTBENCH_BIND": "0.0.0.0", "MGMTBENCH_SSH_PORT": "0", "MGMTBENCH_HTTPS_PORT": "0",
            "MGMTBENCH_STATE_DIR": str(state), "MGMTBENCH_HOSTNAME": "R1",
            "MGMTBENCH_USERNAME": "admin", "MGMTBENCH_PASSWORD": "admin"}


def test_https_answers_when_bound_to_every_address(tmp_path: Path) -> None:
    """Bound to 0.0.0.0 (the image's default), the HTTPS API answers with the device's output
    on the address it is reached at, as SSH does (it answered 404 "no device on this port")."""
    with serving(image_environment(tmp_path / "state")) as lines:
        text = "\n".join(lines)
        https_port = int(re.findall(r"https://0\.0\.0\.0:(\d+)/admin/exec/", text)[0])
        ssh_port = int(re.findall(r"ssh -p (\d+)", text)[0])
        context = ssl.create_default_context(cafile=str(tmp_path / "state" / "tls" / "ca.pem"))
        with httpx.Client(verify=context, auth=("admin", "admin"), timeout=10) as client:
            answer = client.get(f"https://127.0.0.1:{https_port}/admin/exec/show+version")
            refused = client.get(f"https://127.0.0.1:{https_port}/admin/exec/show+version",
                                 auth=("admin", "wrong"))
        assert answer.status_code == 200, answer.text
        assert "R1 uptime is" in answer.text
        assert refused.status_code == 401

        async def ssh_output() -> str:
            async with asyncssh.connect("127.0.0.1", ssh_port, username="admin",
                                        password="admin", known_hosts=None) as conn:
                return str((await conn.run("show version")).stdout)

        assert asyncio.run(ssh_output()) == answer.text  # one engine, the same bytes


def test_state_dir_is_private_and_never_overwrites_a_users_known_hosts(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    users = "# the user's own\n198.18.0.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG\n"
    (mine / "known_hosts").write_text(users)
    result = subprocess.run([*SERVE, "--ssh-port", "0", "--https-port", "0", "--state-dir",
                             str(mine)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr
    assert "known_hosts that mgmtbench did not write" in result.stderr
    assert (mine / "known_hosts").read_text() == users  # untouched
    assert sorted(p.name for p in mine.iterdir()) == ["known_hosts"]  # nothing added

    fresh = tmp_path / "fresh" / "state"  # made by serve: 0700, every file 0600
    for _ in range(2):  # and a second start in the folder it made replaces its own files
        with serving({}, "--ssh-port", "0", "--https-port", "0", "--state-dir", str(fresh)):
            assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
            files = [p for p in fresh.rglob("*") if p.is_file()]
            assert {p.name for p in files} >= {"known_hosts", "ca.pem", "server.pem",
                                               "server.key", ".mgmtbench-state"}
            assert {oct(stat.S_IMODE(p.stat().st_mode)) for p in files} == {oct(0o600)}
            assert stat.S_IMODE((fresh / "tls").stat().st_mode) == 0o700


def test_a_symlink_planted_as_known_hosts_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("precious\n")
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "known_hosts").symlink_to(target)
    result = subprocess.run([*SERVE, "--ssh-port", "0", "--https-port", "0", "--state-dir",
                             str(folder)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert target.read_text() == "precious\n"


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (from /proc/PID/task/*/children)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            try:
                queue += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
    return found


@pytest.mark.skipif(not has_net_admin(), reason="a lab needs root or CAP_NET_ADMIN")
def test_lab_processes_take_no_password_in_argv_and_their_files_are_private() -> None:
    """Every process a lab starts (two emulator processes, the echo server, what they start):
    the passwords are in none of their /proc/PID/cmdline; the lab's folder is 0700, the
    processes' output files (the emulator prints the password when ready) 0600."""
    credentials = Credentials(username="admin", password=SECRET_PASSWORD,
                              enable_secret=SECRET_ENABLE)
    with Lab(resolve("regional"), devices=2, emulator_processes=2, credentials=credentials,
             calibration_samples=3) as lab:
        assert lab.state is not None
        started = [pid for record in lab.state.pids for pid in descendants(record)]
        assert len(started) >= 3
        for pid in started:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            assert SECRET_PASSWORD.encode() not in cmdline, cmdline
            assert SECRET_ENABLE.encode() not in cmdline, cmdline
        # 0711: other users may pass through the lab's folder (the sshd runtime's lab user must)
        # but not list it; the files that show credentials are 0600 (below).
        assert stat.S_IMODE(lab.folder.stat().st_mode) == 0o711
        outputs = [p for p in lab.folder.iterdir() if p.name.startswith(("emulator", "echo"))
                   and p.suffix in (".out", ".log")]
        assert len(outputs) == 6  # two emulator processes and the echo server
        assert any(SECRET_PASSWORD in p.read_text() for p in outputs)  # what the modes guard
        for path in outputs:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        # And the devices answer with those credentials.
        device = lab.devices[0]
        context = ssl.create_default_context(cafile=str(lab.ca_file))
        answer = httpx.get(f"https://{device.address}:{device.https_port}/admin/exec/"
                           "show+version", verify=context, auth=("admin", SECRET_PASSWORD),
                           timeout=30)
        assert answer.status_code == 200
