"""The emulator against a real OpenSSH sshd, through the OpenSSH client, at 0 ms.

One ``show version`` exec per round (TCP + handshake + auth + channel + exec + close): the
``emulator / openssh-sshd`` ratio says how much of a benchmark's time the emulator itself adds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from mgmtbench.emulator import EmulatorThread
from mgmtbench.testing import USERNAME, ClientKeys, record
from mgmtbench.testing.sshd import SshdDevice, ssh_command

Target = tuple[int, str, Path, str]  # port, user, known_hosts, expected output


@pytest.fixture
def sshd_target(sshd_device: Callable[..., SshdDevice],
                emulator_for: Callable[[str], EmulatorThread]) -> Target:
    expected = emulator_for("cisco_ios").endpoints[0].device.transcript(("show", "version"))
    device = sshd_device("cisco_ios")
    return device.port, device.user, device.known_hosts, expected


@pytest.fixture
def emulator_target(emulator_for: Callable[[str], EmulatorThread]) -> Target:
    emu = emulator_for("cisco_ios")
    endpoint = emu.endpoints[0]
    assert endpoint.ssh_port is not None
    expected = endpoint.device.transcript(("show", "version"))
    return endpoint.ssh_port, USERNAME, emu.emulator.known_hosts, expected


@pytest.mark.parametrize("kex", ["default-kex", "curve25519-sha256"])
@pytest.mark.parametrize("server", ["emulator", "openssh-sshd"])
def test_openssh_exec_show_version(benchmark: BenchmarkFixture, request: pytest.FixtureRequest,
                                   client_keys: ClientKeys, server: str, kex: str) -> None:
    port, user, known_hosts, expected = request.getfixturevalue(
        "emulator_target" if server == "emulator" else "sshd_target")
    argv = ssh_command("127.0.0.1", port, user, client_keys.private, known_hosts, "show version")
    if kex != "default-kex":  # OpenSSH 9.x prefers sntrup761x25519, which asyncssh lacks
        argv[1:1] = ["-o", f"KexAlgorithms={kex}"]

    def exec_once() -> str:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout

    benchmark.group = f"openssh exec show version, 0 ms, {kex}"
    record(benchmark, "emulator-baseline", server=server, client="openssh", profile="local",
           kex=kex)
    output = benchmark.pedantic(exec_once, rounds=30, warmup_rounds=3)
    assert output == expected
