"""``mgmtbench serve`` as a user runs it: a real process, ready lines, Ctrl-C, clear errors."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import asyncssh
import pytest

SERVE = [sys.executable, "-m", "mgmtbench.cli", "serve"]


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    process = subprocess.Popen([*SERVE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            if line.startswith("Press Ctrl-C"):
                break
        else:
            raise AssertionError(f"serve ended early: {process.stderr.read() if process.stderr else ''}")
        yield process, lines
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def test_serve_prints_ready_lines_serves_and_stops_on_ctrl_c() -> None:
    with serving("--ssh-port", "0", "--https-port", "0", "--devices", "3", "--hostname", "lab",
                 "--password", "pw") as (process, lines):
        text = "\n".join(lines)
        ports = [int(p) for p in re.findall(r"ssh -p (\d+)", text)]
        assert len(ports) == 3
        assert re.search(r"curl -u admin:pw --cacert \S+ca\.pem https://127\.0\.0\.1:\d+/admin/"
                         r"exec/show\+version", text)
        assert all(f"lab-00{i}:" in text for i in (1, 2, 3))

        async def hostnames() -> list[str]:
            names = []
            for port in ports:
                async with asyncssh.connect("127.0.0.1", port, username="admin", password="pw",
                                            known_hosts=None) as conn:
                    result = await conn.run("show running-config")
                    names.append(re.findall(r"^hostname (\S+)", str(result.stdout), re.M)[0])
            return names

        assert asyncio.run(hostnames()) == ["lab-001", "lab-002", "lab-003"]
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=15)
        assert process.returncode == 0, err
        assert "emulator stopped" in out
        assert "Traceback" not in err


def error_of(*args: str) -> tuple[int, str]:
    result = subprocess.run([*SERVE, *args], capture_output=True, text=True, timeout=30)
    return result.returncode, result.stderr.strip()


def test_port_in_use_is_one_clear_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = error_of("--ssh-port", str(port), "--https-port", "0")
    assert code == 2
    assert err == (f"mgmtbench: error: SSH port {port} on 127.0.0.1 is already in use: "
                   "pick another port or stop what is using it")


@pytest.mark.parametrize(("args", "message"), [
    (["--platform", "junos"], "mgmtbench: error: unknown platform 'junos': choose one of"),
    (["--devices", "0"], "mgmtbench: error: --devices must be between 1 and 10000"),
    (["--hostname", "bad name"], "mgmtbench: error: bad hostname 'bad name'"),
    (["--devices", "3", "--hostnames", "a,b"], "mgmtbench: error: 2 hostnames for 3 devices"),
    (["--devices", "2", "--hostnames", "a,a"], "mgmtbench: error: 2 hostnames for 2 devices"),
    (["--devices", "2", "--hostnames", "a,b c"], "mgmtbench: error: bad hostname 'b c'"),
    (["--ssh-port", "70000"], "argument --ssh-port: 70000 is not a port number"),
    (["--authorized-keys", "/nonexistent/keys"], "mgmtbench: error: cannot read authorized keys"),
])
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    code, err = error_of(*args, "--ssh-port", "0", "--https-port", "0") if "--ssh-port" not in \
        args else error_of(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in err
