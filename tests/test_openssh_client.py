"""Real command-line clients against the emulator: OpenSSH's ``ssh`` and ``curl``.

``ssh`` logs in with a public key and checks the emulator's host key strictly against its
known_hosts file; ``curl`` verifies the HTTPS certificate against the emulator's CA.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.emulator.session import CliSession, Mode
from mgmtbench.testing import PASSWORD, USERNAME, ClientKeys

TIMEOUT = 20  # seconds for one client run; each takes well under one


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: these tests need the real {name} client on PATH")
    return path


def emulator_of(endpoint: DeviceEndpoint,
                emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for(endpoint.device.platform.name)


def ssh_args(endpoint: DeviceEndpoint, emu: EmulatorThread, keys: ClientKeys,
             *options: str) -> list[str]:
    """``ssh`` logging in with the test key only, checking the host key strictly, never asking."""
    return [
        tool("ssh"), *options,
        "-F", os.devnull,  # keep the user's ~/.ssh/config out of the test
        "-p", str(endpoint.ssh_port),
        "-i", str(keys.private),
        "-o", f"UserKnownHostsFile={emu.emulator.known_hosts}",
        "-o", "StrictHostKeyChecking=yes",
        "-o", "BatchMode=yes",
        "-o", "IdentitiesOnly=yes",
        f"{USERNAME}@{endpoint.host}",
    ]


def run(args: Sequence[str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(args, input=stdin, capture_output=True, timeout=TIMEOUT, check=False)


def assert_in_order(data: bytes, parts: Sequence[bytes]) -> None:
    """Each of ``parts`` appears in ``data``, one after the other."""
    position = 0
    for part in parts:
        found = data.find(part, position)
        assert found >= 0, f"{part!r} not found after byte {position} of {data!r}"
        position = found + len(part)


@pytest.mark.openssh
def test_exec_returns_transcript_bytes(endpoint: DeviceEndpoint,
                                       emulator_for: Callable[[str], EmulatorThread],
                                       client_keys: ClientKeys) -> None:
    args = ssh_args(endpoint, emulator_of(endpoint, emulator_for), client_keys)
    result = run([*args, "show version"])
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    # No PTY: the output is the transcript as it is, LF line endings and all.
    assert result.stdout == endpoint.device.transcript(("show", "version")).encode()


@pytest.mark.openssh
def test_exec_unknown_command_fails(endpoint: DeviceEndpoint,
                                    emulator_for: Callable[[str], EmulatorThread],
                                    client_keys: ClientKeys) -> None:
    args = ssh_args(endpoint, emulator_of(endpoint, emulator_for), client_keys)
    result = run([*args, "show bogus"])
    assert result.returncode == 1, result.stderr.decode(errors="replace")
    assert b"% Invalid input detected at '^' marker." in result.stdout
    expected = CliSession(endpoint.device, mode=Mode.PRIV).execute("show bogus").output
    assert result.stdout == expected.encode()


@pytest.mark.openssh
def test_interactive_session(endpoint: DeviceEndpoint,
                             emulator_for: Callable[[str], EmulatorThread],
                             client_keys: ClientKeys) -> None:
    args = ssh_args(endpoint, emulator_of(endpoint, emulator_for), client_keys, "-tt")
    paging = endpoint.device.platform.style.paging_off
    result = run(args, stdin=f"{paging}\nshow clock\nexit\n".encode())
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    suffix = endpoint.device.platform.style.prompt_suffix
    lands = "#" if endpoint.device.platform.style.login_privilege == 15 else ">"  # IOS #, ASA >
    prompt = f"{endpoint.hostname}{lands}{suffix}".encode()
    clock = endpoint.device.transcript(("show", "clock")).replace("\n", "\r\n").encode()
    # Each line is echoed after the prompt; the output follows with CR LF line endings.
    assert_in_order(result.stdout, [
        prompt + paging.encode() + b"\r\n",
        prompt + b"show clock\r\n" + clock + prompt,
        b"exit\r\n",
    ])
    assert result.stdout.endswith(prompt + b"exit\r\n")


def test_curl_exec_returns_transcript(endpoint: DeviceEndpoint,
                                      emulator_for: Callable[[str], EmulatorThread]) -> None:
    emu = emulator_of(endpoint, emulator_for)
    assert emu.emulator.tls is not None
    result = run([
        tool("curl"), "-sS", "--fail-with-body", "--max-time", str(TIMEOUT),
        "-u", f"{USERNAME}:{PASSWORD}",
        "--cacert", str(emu.emulator.tls.ca),
        f"https://{endpoint.host}:{endpoint.https_port}/admin/exec/show+version",
    ])
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert result.stdout == endpoint.device.transcript(("show", "version")).encode()
