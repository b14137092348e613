"""Every client adapter in every mode it declares, against the emulator: right answers, errors
translated at the boundary, nothing left open."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest

from mgmtbench.clients import AsyncClient, Client, ClientError, Target, adapter, pairs
from mgmtbench.emulator.oracle import expected_output, stable_output

COMMANDS = ["show version", "show clock", "show ip interface brief", "show inventory",
            "show ip route"]
PAIRS = pairs(same_process=True)  # the emulator runs in this process


def expected(commands: list[str], hostname: str = "R1") -> str:
    """What the session's cisco_ios device (on loopback: it reports 198.18.0.1) answers."""
    return expected_output("cisco_ios", hostname, "198.18.0.1", commands)


def stable(text: str) -> str:
    return stable_output("cisco_ios", text)


def drive(client: Client | AsyncClient, commands: list[str], rounds: int = 2) -> list[str]:
    """setup, ``rounds`` runs, teardown, the way a benchmark drives a client."""
    if isinstance(client, AsyncClient):
        async def go() -> list[str]:
            await client.setup()
            try:
                return [await client.run(commands) for _ in range(rounds)]
            finally:
                await client.teardown()

        return asyncio.run(go())
    client.setup()
    try:
        return [client.run(commands) for _ in range(rounds)]
    finally:
        client.teardown()


@pytest.mark.parametrize(("name", "mode"), PAIRS, ids=[f"{c}-{m}" for c, m in PAIRS])
def test_adapter_mode_returns_the_transcripts(name: str, mode: str, ios_target: Target) -> None:
    cls = adapter(name)
    hint = cls.missing()
    if hint:
        pytest.fail(hint)
    outputs = drive(cls(ios_target, mode), COMMANDS)
    if mode == "edit-commit":  # NETCONF's edit and commit answer <ok/> each
        assert outputs == ["ok\nok\n"] * 2
        return
    if mode == "batch-patch":  # the study's RESTCONF batch answers its patch status
        assert outputs == ['{"ietf-yang-patch:yang-patch-status":{"ok":{}}}'] * 2
        return
    if mode == "batch-set":  # gNMI's Set answers a result per update
        assert outputs == ["ok\n" * len(COMMANDS)] * 2
        return
    # Stable forms: the device clock and uptime run (mgmtbench.emulator.oracle).
    assert [stable(o) for o in outputs] == [stable(expected(COMMANDS))] * 2


@pytest.mark.parametrize("name", sorted({c for c, _ in PAIRS}))
def test_library_errors_become_client_errors(name: str, ios_target: Target,
                                             tmp_path: Path) -> None:
    cls = adapter(name)
    stranger = tmp_path / "id_stranger"  # a key the device does not accept (openssh logs in by key)
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    stranger.chmod(0o600)
    wrong = replace(ios_target, password="wrong-password", key_file=stranger)
    mode = cls.modes[0]
    with pytest.raises(ClientError):
        drive(cls(wrong, mode), ["show clock"], rounds=1)


def test_unsupported_mode_is_refused(ios_target: Target) -> None:
    with pytest.raises(ValueError, match="does not support"):
        adapter("paramiko")(ios_target, "h2-multiplex")
