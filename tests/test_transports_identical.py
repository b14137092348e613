"""Every transcript command returns the same bytes over SSH exec, the SSH shell and HTTPS."""

from __future__ import annotations

import asyncio

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import SECRET
from mgmtbench.testing.shell import Shell, https_client, paging_off, ssh_connect


async def outputs_over_ssh(endpoint: DeviceEndpoint, commands: list[str]) -> tuple[
        list[bytes], list[bytes]]:
    async with ssh_connect(endpoint) as conn:
        execs = []
        for command in commands:
            result = await conn.run(command, encoding=None)
            assert result.exit_status == 0, command
            assert isinstance(result.stdout, bytes), command
            execs.append(result.stdout)
        shell = await Shell.open(conn)
        if endpoint.device.platform.style.login_privilege == 1:  # lands at host>: enable
            await shell.enable(SECRET)
        await shell.command(paging_off(endpoint))
        shells = [await shell.command(command) for command in commands]
    return execs, shells


#: Outputs that record what happens on the device (logins, configuration sessions).
EVENT_LOGS = frozenset({("show", "logging")})


@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa"])
def test_exec_shell_and_https_are_byte_identical(platform: str, emulator_for: object) -> None:
    emu: EmulatorThread = emulator_for(platform)  # type: ignore[operator]
    endpoint = emu.endpoints[0]
    # The device's event log gains a line at every login (the SSH connection, then HTTPS), so
    # it is not the same from one request to the next: tests/test_ios_state.py follows it.
    commands = [" ".join(words) for words in sorted(endpoint.device.platform.transcripts)
                if words not in EVENT_LOGS]
    commands.append("show bulk-output 100000")
    execs, shells = asyncio.run(outputs_over_ssh(endpoint, commands))
    with https_client(emu) as client:
        https = [client.get(endpoint.https_url(c)).content for c in commands]
    for command, over_exec, over_shell, over_https in zip(commands, execs, shells, https,
                                                          strict=True):
        assert len(over_exec) > 0, command
        # Stable forms: the device's clock, uptime and counters run between the requests.
        assert same_output(platform, over_exec, over_https), command
        # The shell carries the same bytes with a terminal's LF -> CR LF translation, nothing else.
        assert same_output(platform, over_shell, over_exec.replace(b"\n", b"\r\n")), command
