"""The plugin's real OpenSSH parts: an ``sshd`` device and an ``ssh-agent``, each used for real by
the OpenSSH client and by asyncssh."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable

import asyncssh
import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_output, stable_output
from mgmtbench.errors import UsageError
from mgmtbench.targets import SshAlgorithms
from mgmtbench.testing import USERNAME, ClientKeys
from mgmtbench.testing.agent import SshAgent
from mgmtbench.testing.credentials import credentials
from mgmtbench.testing.sshd import SshdDevice, ssh_command

pytestmark = pytest.mark.openssh


def test_sshd_device_answers_like_the_emulator(sshd_device: Callable[..., SshdDevice],
                                               client_keys: ClientKeys) -> None:
    device = sshd_device("cisco_ios")
    argv = ssh_command(device.host, device.port, device.user, client_keys.private,
                       device.known_hosts, "show version")
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert stable_output("cisco_ios", done.stdout) == stable_output(
        "cisco_ios", expected_output("cisco_ios", "R1", "198.18.0.1", ["show version"]))
    wrong = subprocess.run([*argv[:-1], "reload"], capture_output=True, text=True, timeout=30)
    assert wrong.returncode == 1
    assert "% Invalid input" in wrong.stdout


@pytest.mark.parametrize(("host_key_type", "key_name"), [("ed25519", "ssh-ed25519"),
                                                         ("rsa", "rsa-sha2-512")])
def test_sshd_device_takes_host_key_and_algorithms(sshd_device: Callable[..., SshdDevice],
                                                   client_keys: ClientKeys, host_key_type: str,
                                                   key_name: str) -> None:
    device = sshd_device("cisco_ios", host_key_type=host_key_type,
                         algorithms=SshAlgorithms(ciphers=("aes128-ctr",),
                                                  macs=("hmac-sha2-256",)))

    async def negotiate() -> tuple[object, object, object]:
        async with asyncssh.connect(device.host, device.port, username=device.user,
                                    client_keys=[str(client_keys.private)],
                                    known_hosts=str(device.known_hosts)) as conn:
            host_key = conn.get_server_host_key()
            assert host_key is not None
            return (conn.get_extra_info("send_cipher"), conn.get_extra_info("send_mac"),
                    host_key.get_algorithm())

    cipher, mac, host_key = asyncio.run(negotiate())
    assert (cipher, mac) == ("aes128-ctr", "hmac-sha2-256")
    assert host_key in (key_name, "ssh-rsa" if host_key_type == "rsa" else key_name)


def test_sshd_device_refuses_a_bad_configuration(sshd_device: Callable[..., SshdDevice]) -> None:
    with pytest.raises(UsageError, match="sshd refuses its configuration"):
        sshd_device("cisco_ios", algorithms=SshAlgorithms(ciphers=("no-such-cipher",)))


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p256", "rsa-2048"])
def test_agent_holds_keys_and_logs_in(ssh_agent: SshAgent, agent_key: Callable[[str], ClientKeys],
                                      fresh_emulator: Callable[..., EmulatorThread],
                                      kind: str) -> None:
    assert ssh_agent.fingerprints() == []
    keys = agent_key(kind)
    assert len(ssh_agent.fingerprints()) == 1
    emu = fresh_emulator(credentials=credentials(keys.authorized_keys))
    endpoint = emu.endpoints[0]

    async def login() -> str:
        async with asyncssh.connect(endpoint.host, endpoint.ssh_port, username=USERNAME,
                                    agent_path=str(ssh_agent.socket),
                                    password=None, known_hosts=None) as conn:
            done = await conn.run("show clock", check=True)
            return str(done.stdout)

    assert stable_output("cisco_ios", asyncio.run(login())) == stable_output(
        "cisco_ios", endpoint.device.transcript(("show", "clock")))


def test_agent_without_the_key_cannot_log_in(ssh_agent: SshAgent,
                                             fresh_emulator: Callable[..., EmulatorThread],
                                             client_keys: ClientKeys) -> None:
    emu = fresh_emulator(credentials=credentials(client_keys.authorized_keys))
    endpoint = emu.endpoints[0]

    async def login() -> None:
        async with asyncssh.connect(endpoint.host, endpoint.ssh_port, username=USERNAME,
                                    agent_path=str(ssh_agent.socket),
                                    password=None, known_hosts=None):
            pass

    with pytest.raises(asyncssh.PermissionDenied):
        asyncio.run(login())
