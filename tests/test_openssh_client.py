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
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.oracle import same_output, stable_output
from mgmtbench.emulator.server import DeviceEndpoint
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
    assert same_output(endpoint.device.platform.name, result.stdout,
                       endpoint.device.transcript(("show", "version")))


@pytest.mark.openssh
def test_exec_unknown_command_fails(endpoint: DeviceEndpoint,
                                    emulator_for: Callable[[str], EmulatorThread],
                                    client_keys: ClientKeys) -> None:
    args = ssh_args(endpoint, emulator_of(endpoint, emulator_for), client_keys)
    result = run([*args, "show bogus"])
    assert result.returncode == 1, result.stderr.decode(errors="replace")
    # The platform's own error (IOS: "% Invalid input detected at '^' marker.").
    expected = CliSession(endpoint.device, mode=Mode.PRIV,
                          user=USERNAME).execute("show bogus").output
    assert result.stdout == expected.encode()


@pytest.mark.openssh
def test_interactive_session(endpoint: DeviceEndpoint,
                             emulator_for: Callable[[str], EmulatorThread],
                             client_keys: ClientKeys) -> None:
    args = ssh_args(endpoint, emulator_of(endpoint, emulator_for), client_keys, "-tt")
    paging = endpoint.device.platform.style.paging_off
    result = run(args, stdin=f"{paging}\nshow version\nexit\n".encode())
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    # The prompt the login lands at: IOS and NX-OS R1#, ASA asa1>, Junos "\nadmin@R1> ".
    lands = Mode.PRIV if endpoint.device.platform.style.login_privilege == 15 else Mode.USER
    prompt = CliSession(endpoint.device, mode=lands, user=USERNAME).prompt
    prompt_bytes = prompt.replace("\n", "\r\n").encode()
    version = endpoint.device.transcript(("show", "version")).replace("\n", "\r\n").encode()
    # Each line is echoed after the prompt; the output follows with CR LF line endings (the
    # running uptime masked: stable forms, mgmtbench.emulator.oracle).
    name = endpoint.device.platform.name

    def stable(data: bytes) -> bytes:
        return stable_output(name, data.decode("ascii")).encode()

    assert_in_order(stable(result.stdout), [stable(part) for part in (
        prompt_bytes + paging.encode() + b"\r\n",
        prompt_bytes + b"show version\r\n" + version + prompt_bytes,
        b"exit\r\n",
    )])
    assert result.stdout.endswith(prompt_bytes + b"exit\r\n")


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
    assert same_output(endpoint.device.platform.name, result.stdout,
                       endpoint.device.transcript(("show", "version")))
