"""Errors at the client boundary: every library's failures become mgmtbench's own errors, the same
kind for the same cause whatever the library (real emulator, real sockets)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest

from mgmtbench.clients import ADAPTERS, Target, adapter, pairs
from mgmtbench.clients.fleet import FLEET_RUNNERS, fleet_runner
from mgmtbench.clients.fleet.worker import _target, _target_dict
from mgmtbench.clients.pty import output_of, prompt_for
from mgmtbench.clients.translate import ErrorMap, translate_errors
from mgmtbench.clients.tuning import shipped_name
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    UsageError,
    WrongOutput,
)
from mgmtbench.targets import Auth, SshAlgorithms
from tests.clients_support import available, drive

CLIENTS = list(ADAPTERS)
#: Clients that log in with the target's password (the OpenSSH binary logs in with a key).
PASSWORD_CLIENTS = [
    pytest.param(c, marks=pytest.mark.xfail(
        strict=True, raises=ClientError,
        reason="libscrapli's ssh2 transport reports a refused password as 'Transport:' with no "
               "text (only its log says 'failed password authentication')"))
    if shipped_name(c) == "scrapli-ssh2" else c
    for c in CLIENTS if c != "openssh" and not adapter(c).blocks_other_threads]
#: parallel-ssh leaves its socket open when the TCP connect fails (a ResourceWarning at GC).
LEAKS_ON_REFUSED = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- the registry ------------------------------------------------------------------------------

def test_clients_keep_their_order() -> None:
    # Libraries as shipped (a ``+tuned`` client follows its library: tests/test_tuning.py).
    assert [c for c in CLIENTS if "+" not in c] == [
        "paramiko", "ssh2", "hussh", "pssh-ssh2", "pssh-ssh", "asyncssh", "openssh", "httpx",
        "httpx-async", "netmiko", "scrapli-bin", "scrapli-ssh2", "ncclient", "scrapli-netconf",
        "asyncssh-netconf", "httpx-restconf", "httpx-restconf-h2", "httpx-restconf-async",
        "pygnmi", "grpc-gnmi", "aioquic-h3", "niquests-h3", "niquests-h3-async"]
    assert [c for c in FLEET_RUNNERS if "+" not in c] == [
        "paramiko", "hussh", "pssh-ssh2", "pssh-ssh", "asyncssh", "openssh", "httpx-async",
        "netmiko", "scrapli-bin", "scrapli-ssh2"]
    assert next(c for c, _ in pairs()) == "paramiko"
    for name in FLEET_RUNNERS:
        assert fleet_runner(name).adapter is adapter(name)


def test_unknown_client_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown client 'telnet'"):
        adapter("telnet")
    with pytest.raises(UsageError, match="no fleet runner for client 'ssh2'"):
        fleet_runner("ssh2")


def test_the_registry_imports_no_optional_library() -> None:
    code = ("import sys, mgmtbench.clients, mgmtbench.clients.fleet; "
            "print([m for m in ('paramiko', 'ssh2', 'ssh', 'pssh', 'netmiko', 'scrapli', 'httpx')"
            " if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd="/")
    assert done.stdout.strip() == "[]"


# --- the translation ---------------------------------------------------------------------------

class LibraryError(Exception):
    pass


class LibraryAuthError(LibraryError):
    pass


MAPPING: ErrorMap = {LibraryError: ClientError, LibraryAuthError: AuthenticationFailed,
           OSError: ConnectionFailed, TimeoutError: ClientTimeout}


@pytest.mark.parametrize(("raised", "expected"), [
    (LibraryAuthError("denied\nsecond line"), AuthenticationFailed),
    (LibraryError("broken"), ClientError),
    (ConnectionRefusedError(111, "refused"), ConnectionFailed),
    (TimeoutError("slow"), ClientTimeout),
])
def test_most_specific_mapping_wins_and_message_is_one_line(raised: Exception,
                                                            expected: type[ClientError]) -> None:
    with pytest.raises(expected) as caught, translate_errors("lib", MAPPING):
        raise raised
    assert type(caught.value) is expected
    assert caught.value.__cause__ is raised
    assert str(caught.value).startswith("lib: ")
    assert "\n" not in str(caught.value)


def test_translation_passes_client_errors_and_unmapped_errors() -> None:
    with pytest.raises(WrongOutput), translate_errors("lib", MAPPING):
        raise WrongOutput("no echo")
    with pytest.raises(KeyError), translate_errors("lib", MAPPING):
        raise KeyError("a bug, not a device failure")


def test_translation_works_with_async_with() -> None:
    async def go() -> None:
        async with translate_errors("lib", MAPPING):
            await asyncio.sleep(0)
            raise LibraryAuthError("denied")

    with pytest.raises(AuthenticationFailed, match="lib: denied"):
        asyncio.run(go())


def test_a_missing_echo_is_wrong_output() -> None:
    with pytest.raises(WrongOutput, match="no echo"):
        output_of("show clock", b"something else\r\nR1#", prompt_for(b"R1"))
    with pytest.raises(WrongOutput, match="no prompt"):
        output_of("show clock", b"show clock\r\n12:00\r\n", prompt_for(b"R1"))


# --- every client, against the emulator --------------------------------------------------------

@pytest.mark.parametrize("name", PASSWORD_CLIENTS)
def test_wrong_password_is_authentication_failed(name: str, ios_target: Target) -> None:
    cls = available(name)
    wrong = replace(ios_target, password="wrong-password")
    with pytest.raises(AuthenticationFailed, match="^" + re.escape(name.split('-')[0])):
        drive(cls(wrong, cls.modes[0]), ["show clock"])


def test_unknown_key_is_authentication_failed_for_openssh(ios_target: Target,
                                                          tmp_path: Path) -> None:
    stranger = tmp_path / "id_stranger"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    stranger.chmod(0o600)
    cls = available("openssh")
    with pytest.raises(AuthenticationFailed, match="Permission denied"):
        drive(cls(replace(ios_target, key_file=stranger), "fresh-conn"), ["show clock"])


@pytest.mark.parametrize("name", [pytest.param(c, marks=LEAKS_ON_REFUSED)
                                  if c.startswith("pssh") else c for c in CLIENTS])
def test_closed_port_is_connection_failed(name: str, ios_target: Target) -> None:
    cls = available(name)
    port = closed_port()
    nowhere = replace(ios_target, ssh_port=port, https_port=port, netconf_port=port,
                      gnmi_port=port, http3_port=port)
    with pytest.raises(ConnectionFailed):
        drive(cls(nowhere, cls.modes[0]), ["show clock"])


# --- what a library cannot do is refused up front -----------------------------------------------

CHOSEN = SshAlgorithms(ciphers=("aes128-ctr",))


@pytest.mark.parametrize(("name", "change"), [
    ("netmiko", {"algorithms": CHOSEN}),
    ("netmiko", {"auth": Auth.AGENT, "agent_socket": Path("/nowhere")}),
    ("scrapli-bin", {"algorithms": CHOSEN}),
    ("scrapli-ssh2", {"auth": Auth.AGENT, "agent_socket": Path("/nowhere")}),
    ("pssh-ssh2", {"algorithms": CHOSEN}),
    ("pssh-ssh", {"auth": Auth.AGENT, "agent_socket": Path("/nowhere")}),
    ("paramiko", {"algorithms": SshAlgorithms(ciphers=("rot13",))}),
    ("asyncssh", {"algorithms": SshAlgorithms(kex=("no-such-kex",))}),
    ("paramiko", {"auth": Auth.AGENT}),
])
def test_options_a_library_cannot_honour_are_refused(name: str, change: dict[str, object],
                                                     ios_target: Target) -> None:
    cls = available(name)
    with pytest.raises(UsageError) as caught:
        cls(replace(ios_target, **change), cls.modes[0])  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_worker_round_trips_the_new_target_fields(ios_target: Target) -> None:
    target = replace(ios_target, auth=Auth.AGENT, agent_socket=Path("/run/agent.sock"),
                     algorithms=SshAlgorithms(kex=("curve25519-sha256",),
                                              ciphers=("aes128-ctr", "aes256-ctr"),
                                              macs=("hmac-sha2-256",),
                                              host_key=("ssh-ed25519",)))
    for original in (target, ios_target):
        assert _target(json.loads(json.dumps(_target_dict(original)))) == original
