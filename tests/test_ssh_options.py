"""The SSH server's options end to end: algorithm lists, host key algorithms and login methods,
from ``mgmtbench serve``'s flags (and their MGMTBENCH_* environment) to netns, docker and sshd
devices.

Real servers, real sockets: asyncssh as the client, offering what the server offers or only
something else.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import asyncssh
import pytest

from mgmtbench.cli import build_parser
from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.command import options_from_args
from mgmtbench.emulator.options import AUTH_METHODS, Algorithms, SshServerOptions
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import UsageError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.runtimes.docker import DockerRuntime
from mgmtbench.lab.runtimes.sshd import SshdRuntime
from mgmtbench.testing import PASSWORD, USERNAME, ClientKeys, credentials

FreshEmulator = Callable[..., EmulatorThread]


def connect(host: str, port: int, **options: Any) -> dict[str, object]:
    """Log in, run one command; what was negotiated (asyncssh's extra info)."""
    options.setdefault("username", USERNAME)
    options.setdefault("password", PASSWORD)
    options.setdefault("known_hosts", None)

    async def go() -> dict[str, object]:
        async with asyncssh.connect(host, port, **options) as conn:
            result = await conn.run("show clock", check=True)
            assert result.stdout
            return {name: conn.get_extra_info(name) for name in ("send_cipher", "send_mac")}

    return asyncio.run(go())


# No algorithm in common: the client reports it, or sees the server hang up first having found it.
NO_COMMON_ALGORITHM = (asyncssh.KeyExchangeFailed, asyncssh.ConnectionLost)


def endpoint_of(emu: EmulatorThread) -> tuple[str, int]:
    endpoint: DeviceEndpoint = emu.endpoints[0]
    assert endpoint.ssh_port
    return endpoint.host, endpoint.ssh_port


# --- algorithm lists -----------------------------------------------------------------------------

ALGORITHM_CASES = [
    # (server's list, the client option naming it, the offered name, something else)
    pytest.param(Algorithms(kex=("diffie-hellman-group14-sha256",)), "kex_algs",
                 "diffie-hellman-group14-sha256", "curve25519-sha256", id="kex"),
    pytest.param(Algorithms(ciphers=("aes192-ctr",)), "encryption_algs", "aes192-ctr",
                 "aes256-gcm@openssh.com", id="cipher"),
    pytest.param(Algorithms(ciphers=("aes128-ctr",), macs=("hmac-sha2-512",)), "mac_algs",
                 "hmac-sha2-512", "hmac-sha2-256", id="mac"),
]


@pytest.mark.parametrize(("algorithms", "client_option", "offered", "other"), ALGORITHM_CASES)
def test_restricted_algorithm_lists(fresh_emulator: FreshEmulator, algorithms: Algorithms,
                                    client_option: str, offered: str, other: str) -> None:
    host, port = endpoint_of(fresh_emulator(algorithms=algorithms))
    negotiated = connect(host, port, **{client_option: [offered]})
    if algorithms.ciphers:
        assert negotiated["send_cipher"] == algorithms.ciphers[0]
    if algorithms.macs:
        assert negotiated["send_mac"] == algorithms.macs[0]
    with pytest.raises(NO_COMMON_ALGORITHM):
        connect(host, port, **{client_option: [other]})


@pytest.mark.parametrize(("key_type", "offered", "other"), [
    ("rsa", "rsa-sha2-512", "rsa-sha2-256"),
    ("rsa", "ssh-rsa", "rsa-sha2-512"),
])
def test_host_key_algorithms(fresh_emulator: FreshEmulator, key_type: str, offered: str,
                             other: str) -> None:
    emu = fresh_emulator(host_key_type=key_type, algorithms=Algorithms(host_key_algs=(offered,)))
    host, port = endpoint_of(emu)
    connect(host, port, server_host_key_algs=[offered],
            known_hosts=str(emu.emulator.known_hosts))
    with pytest.raises(NO_COMMON_ALGORITHM):
        connect(host, port, server_host_key_algs=[other])


# --- login methods -------------------------------------------------------------------------------

# A client limited to one login method (asyncssh answers keyboard-interactive with the password).
CLIENT_METHODS: dict[str, dict[str, bool]] = {
    "password": {"password_auth": True, "kbdint_auth": False, "public_key_auth": False},
    "keyboard-interactive": {"password_auth": False, "kbdint_auth": True,
                             "public_key_auth": False},
    "publickey": {"password_auth": False, "kbdint_auth": False, "public_key_auth": True},
}


@pytest.mark.parametrize("offered", [("publickey",), ("password",), ("keyboard-interactive",),
                                     AUTH_METHODS], ids="+".join)
@pytest.mark.parametrize("client_method", list(CLIENT_METHODS))
def test_auth_methods(fresh_emulator: FreshEmulator, client_keys: ClientKeys,
                      offered: tuple[str, ...], client_method: str) -> None:
    host, port = endpoint_of(fresh_emulator(auth_methods=offered))
    options: dict[str, Any] = {**CLIENT_METHODS[client_method],
                               "client_keys": [str(client_keys.private)], "agent_path": None}
    if client_method in offered:
        connect(host, port, **options)
    else:
        with pytest.raises(asyncssh.PermissionDenied):
            connect(host, port, **options)


# --- refusals: one line naming the bad name and the supported ones --------------------------------

@pytest.mark.parametrize(("ssh", "bad", "listed"), [
    (SshServerOptions(Algorithms(kex=("curve25519-sha256", "dh-nope"))), "'dh-nope'",
     "curve25519-sha256"),
    (SshServerOptions(Algorithms(ciphers=("nope-ctr",))), "'nope-ctr'", "aes128-ctr"),
    (SshServerOptions(Algorithms(macs=("hmac-nope",))), "'hmac-nope'", "hmac-sha2-256"),
    (SshServerOptions(Algorithms(host_key_algs=("ssh-nope",))), "'ssh-nope'", "rsa-sha2-256"),
    (SshServerOptions(auth_methods=("gssapi",)), "'gssapi'", "keyboard-interactive"),
    (SshServerOptions(Algorithms(host_key_algs=("rsa-sha2-256",)), host_key_type="ed25519"),
     "rsa-sha2-256", "ssh-ed25519"),  # a valid name that the ed25519 host key cannot sign with
], ids=["kex", "cipher", "mac", "host-key-alg", "auth-method", "host-key-mismatch"])
def test_unsupported_names_are_one_clear_line(ssh: SshServerOptions, bad: str,
                                              listed: str) -> None:
    with pytest.raises(UsageError) as refused:
        EmulatorThread(EmulatorOptions(ssh_port=0, https=False).with_ssh_server(ssh)).start()
    message = str(refused.value)
    assert bad in message
    assert listed in message
    assert "\n" not in message


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_serve_refuses_an_unknown_cipher_in_one_line(how: str) -> None:
    argv = [sys.executable, "-m", "mgmtbench.cli", "serve", "--ssh-port", "0", "--https-port",
            "0"]
    env = None
    if how == "flag":
        argv += ["--ciphers", "aes128-ctr,nope-cbc"]
    else:
        env = {**SshServerOptions(Algorithms(ciphers=("aes128-ctr", "nope-cbc"))).environment(),
               "PATH": "/usr/bin:/bin"}
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "'nope-cbc'" in lines[0]
    assert "aes128-ctr" in lines[0]


SERVER_OPTIONS = [
    SshServerOptions(),
    SshServerOptions(Algorithms(kex=("curve25519-sha256",), ciphers=("aes128-ctr", "aes256-ctr"),
                                macs=("hmac-sha2-256",), host_key_algs=("rsa-sha2-512",)),
                     host_key_type="rsa", auth_methods=("publickey",)),
]


@pytest.mark.parametrize("ssh", SERVER_OPTIONS, ids=["defaults", "restricted"])
@pytest.mark.parametrize("how", ["flags", "environment"])
def test_serve_reads_what_a_runtime_passes(ssh: SshServerOptions, how: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The netns runtime passes ``flags()``, the docker runtime ``environment()``: both give
    ``mgmtbench serve`` the same options back."""
    argv = ["serve"]
    if how == "flags":
        for flag, value in ssh.flags().items():
            argv += [flag, value]
    else:
        for name, value in ssh.environment().items():
            monkeypatch.setenv(name, value)
    assert options_from_args(build_parser().parse_args(argv)).ssh_server == ssh


# --- labs: the options reach the devices of each runtime ----------------------------------------

NO_DOCKER = DockerRuntime.unavailable()
NO_SSHD = SshdRuntime.unavailable()
RUNTIMES = [
    pytest.param("netns", id="netns"),
    pytest.param("docker", id="docker", marks=pytest.mark.skipif(
        NO_DOCKER is not None, reason=f"docker runtime: {NO_DOCKER}")),
    pytest.param("sshd", id="sshd", marks=pytest.mark.skipif(
        NO_SSHD is not None, reason=f"sshd runtime: {NO_SSHD}")),
]


@pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_lab_devices_serve_the_configured_algorithms(runtime: str, client_keys: ClientKeys,
                                                     request: pytest.FixtureRequest) -> None:
    ssh = SshServerOptions(Algorithms(ciphers=("aes192-ctr",)), host_key_type="rsa",
                           auth_methods=("password",))
    image = str(request.config.getoption("--device-image"))
    with Lab(resolve("campus"), credentials=credentials(client_keys.authorized_keys),
             runtime=runtime, image=image, ssh=ssh, calibration_samples=3) as lab:
        device = lab.devices[0]
        negotiated = connect(device.address, device.ssh_port, known_hosts=str(lab.known_hosts),
                             client_keys=None, agent_path=None)
        assert negotiated["send_cipher"] == "aes192-ctr"
        with pytest.raises(NO_COMMON_ALGORITHM):
            connect(device.address, device.ssh_port, encryption_algs=["aes128-ctr"])
        with pytest.raises(asyncssh.PermissionDenied):  # publickey is not offered
            connect(device.address, device.ssh_port, password_auth=False, kbdint_auth=False,
                    client_keys=[str(client_keys.private)], agent_path=None)
