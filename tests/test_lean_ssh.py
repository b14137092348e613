"""What the emulator's SSH connections leave out of asyncssh's defaults (:mod:`.ssh.lean`), and
the event loop it runs on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.loopthread import new_event_loop
from mgmtbench.testing.shell import ssh_connect


def test_an_exec_answer_is_its_channel_packets_alone(ios: DeviceEndpoint) -> None:
    """Open confirmation, request success, data, exit status, close: asyncssh's own server
    sends an SSH_MSG_IGNORE before each of them (10 packets), a device does not."""
    expected = ios.device.transcript(("show", "version"))

    async def packets_of_one_exec() -> tuple[int, str]:
        async with ssh_connect(ios) as conn:
            await conn.run("show version", check=True)  # window adjustments settle
            before = conn._recv_seq  # packets received so far
            result = await conn.run("show version", check=True)
            return conn._recv_seq - before, str(result.stdout)

    received, output = asyncio.run(packets_of_one_exec())
    assert output.splitlines()[:3] == expected.splitlines()[:3]
    assert 5 <= received <= 6, received  # (6: a window adjustment on the way)


def test_many_execs_and_logins_on_one_connection_and_many(ios: DeviceEndpoint) -> None:
    """Gathered writes lose and reorder nothing: back-to-back execs on a kept connection, and
    fresh logins (whose options are no longer reloaded) each get the whole answer."""
    expected = ios.device.transcript(("show", "running-config"))

    async def run_them() -> list[str]:
        outputs = []
        async with ssh_connect(ios) as conn:
            for _ in range(20):
                outputs.append(str((await conn.run("show running-config", check=True)).stdout))
        for _ in range(3):
            async with ssh_connect(ios, preferred_auth=["password"]) as conn:
                outputs.append(str((await conn.run("show running-config", check=True)).stdout))
        return outputs

    outputs = asyncio.run(run_them())
    assert len(outputs) == 23
    assert {len(o) for o in outputs} == {len(outputs[0])}
    assert outputs[0].splitlines()[-1] == expected.splitlines()[-1]


def test_the_emulator_runs_on_uvloop_where_installed(
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    uvloop = pytest.importorskip("uvloop")
    assert isinstance(new_event_loop(), uvloop.Loop)

    async def running_loop() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    assert isinstance(emulator_for("cisco_ios").call(running_loop()), uvloop.Loop)
