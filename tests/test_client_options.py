"""The client side of SSH options against the emulator: algorithm choices are negotiated (seen
from the emulator's side, asyncssh's own log of the kex result) and key / agent logins work."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest

from mgmtbench.clients import Target
from mgmtbench.targets import Auth, SshAlgorithms
from tests.clients_support import available, drive

ALGORITHM_CLIENTS = ["paramiko", "ssh2", "asyncssh", "openssh"]
#: Every SSH client that can log in with a key file.
KEY_CLIENTS = ["paramiko", "ssh2", "pssh-ssh2", "pssh-ssh", "asyncssh", "openssh", "netmiko",
               "scrapli-bin", "scrapli-ssh2"]
AGENT_CLIENTS = ["paramiko", "ssh2", "asyncssh", "openssh"]
#: Not asyncssh's first choice (chacha20-poly1305), so a default negotiation would not pick it.
CIPHER = "aes128-ctr"


@pytest.mark.parametrize("name", ALGORITHM_CLIENTS)
def test_the_emulator_sees_the_chosen_cipher(name: str, ios_target: Target,
                                             caplog: pytest.LogCaptureFixture) -> None:
    cls = available(name)
    chosen = replace(ios_target, algorithms=SshAlgorithms(ciphers=(CIPHER,)))
    asyncssh.set_debug_level(2)
    try:
        with caplog.at_level(logging.DEBUG, logger="asyncssh"):
            assert drive(cls(chosen, "fresh-conn"), ["show clock"])
    finally:
        asyncssh.set_debug_level(1)
    seen = {r.getMessage().split(":", 1)[1].strip() for r in caplog.records
            if "Encryption alg:" in r.getMessage()}
    assert seen == {CIPHER}


def test_paramiko_reports_the_chosen_algorithms(ios_target: Target) -> None:
    available("paramiko")
    from mgmtbench.clients.paramiko.connect import connect

    chosen = replace(ios_target, algorithms=SshAlgorithms(
        kex=("ecdh-sha2-nistp256",), ciphers=(CIPHER,), macs=("hmac-sha2-256",)))
    client = connect(chosen, timeout=30)
    try:
        transport = client.get_transport()
        assert transport is not None
        assert (transport.local_cipher, transport.remote_cipher) == (CIPHER, CIPHER)
        assert transport.local_mac == "hmac-sha2-256"
    finally:
        client.close()


@pytest.mark.parametrize("name", KEY_CLIENTS)
def test_key_login_uses_the_key_file(name: str, ios_target: Target) -> None:
    cls = available(name)
    by_key = replace(ios_target, auth=Auth.KEY, password="not-the-password")
    assert "R1" in drive(cls(by_key, cls.modes[0]), ["show version"])


@pytest.fixture
def agent_socket(tmp_path: Path, ios_target: Target) -> Iterator[Path]:
    from mgmtbench.testing.agent import ssh_agent

    assert ios_target.key_file is not None
    with ssh_agent(tmp_path / "agent") as agent:
        agent.add(ios_target.key_file)
        yield agent.socket


@pytest.mark.parametrize("name", AGENT_CLIENTS)
def test_agent_login_uses_the_agent_socket(name: str, ios_target: Target,
                                           agent_socket: Path) -> None:
    cls = available(name)
    by_agent = replace(ios_target, auth=Auth.AGENT, agent_socket=agent_socket,
                       password="not-the-password", key_file=None)
    assert "R1" in drive(cls(by_agent, cls.modes[0]), ["show version"])
