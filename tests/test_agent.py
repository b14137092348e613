"""The ssh-agent experiment's parts, for real: a real ``ssh-agent`` holding real keys of every
kind, the raw protocol client's signatures checked with ``cryptography``, every signer, the
concurrency harness running N clients at once, logins through an agent by the client adapters
against the emulator and a real sshd (every user key type, RSA and ECDSA host keys), and the
report sections on a synthetic run."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncssh
import pytest

from mgmtbench.clients import adapter
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_output, stable_output
from mgmtbench.errors import ClientError, ConnectionFailed, UsageError
from mgmtbench.targets import Auth, Login, Target
from mgmtbench.testing import PASSWORD, SECRET, USERNAME, Driver, credentials
from mgmtbench.testing.agent import SshAgent
from mgmtbench.testing.agent_load import ClientPool, SignJob, messages
from mgmtbench.testing.agent_protocol import RawAgentClient, public_blob
from mgmtbench.testing.fixtures import emulator_target, hostname_for
from mgmtbench.testing.keys import KEY_ALGORITHMS, KeySet
from mgmtbench.testing.signers import SIGNERS, signer, verify
from mgmtbench.testing.sshd import SshdDevice

pytestmark = pytest.mark.openssh  # a real ssh-agent and sshd

KINDS = list(KEY_ALGORITHMS)


@pytest.fixture
def loaded(ssh_agent: SshAgent, user_keys: KeySet) -> SshAgent:
    """The test's agent holding the session's key of every kind."""
    for keys in user_keys.keys.values():
        ssh_agent.add(keys.private)
    return ssh_agent


def test_raw_client_lists_what_ssh_add_lists(loaded: SshAgent, user_keys: KeySet) -> None:
    with RawAgentClient(loaded.socket) as client:
        held = client.identities()
    assert len(held) == len(loaded.fingerprints()) == len(KINDS)
    assert {i.blob for i in held} == {public_blob(k.public.read_text())
                                      for k in user_keys.keys.values()}
    assert {i.algorithm for i in held} == {"ssh-ed25519", "ecdsa-sha2-nistp256",
                                           "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                                           "ssh-rsa"}


@pytest.mark.parametrize("kind", KINDS)
def test_raw_signatures_verify_with_the_public_key(loaded: SshAgent, user_keys: KeySet,
                                                   kind: str) -> None:
    keys = user_keys.keys[kind]
    blob = public_blob(keys.public.read_text())
    with RawAgentClient(loaded.socket) as client:
        identity = next(i for i in client.identities() if i.blob == blob)
        for size in (32, 16384):
            data = os.urandom(size)
            signature = client.sign(blob, data, identity.flags)
            assert verify(keys.public, data, signature)
            assert not verify(keys.public, data + b"x", signature)
    expected = "rsa-sha2-512" if kind.startswith("rsa") else identity.algorithm
    assert signature[4:4 + len(expected)] == expected.encode()


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa-p384", "rsa-2048"])
def test_every_signer_makes_a_valid_signature(loaded: SshAgent, user_keys: KeySet,
                                              kind: str) -> None:
    keys = user_keys.keys[kind]
    data = os.urandom(256)
    made = {}
    for name in SIGNERS:
        with signer(name, loaded.socket, keys) as one:
            made[name] = one.sign(data)
        assert verify(keys.public, data, made[name]), name
    if kind != "ecdsa-p384":  # ed25519 and RSA PKCS#1 v1.5 are deterministic: one signature
        assert len(set(made.values())) == 1


def test_the_raw_client_says_what_went_wrong(ssh_agent: SshAgent, user_keys: KeySet,
                                             tmp_path: Path) -> None:
    with pytest.raises(ConnectionFailed, match="cannot connect to the agent"):
        RawAgentClient(tmp_path / "no-such.sock")
    with RawAgentClient(ssh_agent.socket) as client:  # the agent holds no key
        assert client.identities() == []
        blob = public_blob(user_keys.keys["ed25519"].public.read_text())
        with pytest.raises(ClientError, match="refused to sign"):
            client.sign(blob, b"data")
    with pytest.raises(UsageError, match="does not hold"):
        signer("raw", ssh_agent.socket, user_keys.keys["ed25519"])


def test_messages_are_unique_or_the_same() -> None:
    unique = [m for client in range(3) for burst in range(2)
              for m in messages(64, True, 50, client, burst)]
    assert len(set(unique)) == len(unique) == 300
    assert {len(m) for m in unique} == {64}
    same = messages(16384, False, 10, 0, 0) + messages(16384, False, 10, 5, 7)
    assert len(set(same)) == 1
    assert len(same[0]) == 16384


@pytest.mark.parametrize("how", ["processes", "threads"])
def test_the_pool_runs_n_clients_at_once(loaded: SshAgent, user_keys: KeySet, how: str) -> None:
    keys = user_keys.keys["rsa-2048"]  # slow enough signatures that the clients must overlap
    with ClientPool(4, how) as pool:
        job = SignJob("raw", loaded.socket, keys, 32, True, 20)
        pool.prepare(4, job)
        burst = pool.burst()
        assert [c.signatures for c in burst.clients] == [20] * 4
        assert burst.overlapped()  # the last to start started before the first to end ended
        assert burst.wall >= max(c.end for c in burst.clients) - min(c.start
                                                                      for c in burst.clients)
        pids = pool.pids(4)
        if how == "processes":
            assert len(set(pids)) == 4
            assert os.getpid() not in pids
            assert all(Path(f"/proc/{pid}").exists() for pid in pids)
        else:
            assert pids == [os.getpid()]
        pool.prepare(2, job)  # fewer clients, the same connections
        assert len(pool.burst().clients) == 2
        with pytest.raises(UsageError, match="cannot run 5"):
            pool.prepare(5, job)
        with pytest.raises(ClientError, match="does not hold"):
            pool.prepare(1, SignJob("raw", loaded.socket, _stranger(keys), 32, True, 1))


def _stranger(keys: Any) -> Any:
    """``keys`` with a public key the agent does not hold."""
    from dataclasses import replace

    from mgmtbench.testing.keys import make_key

    folder = keys.private.parent / "stranger"
    folder.mkdir(exist_ok=True)
    return replace(keys, private=make_key(folder, "ed25519").private,
                   public=folder / "id_ed25519.pub")


# Item 4: every user key type logs in (through an agent holding only that key), against the
# emulator and a real OpenSSH sshd; RSA and ECDSA host keys on both.

@pytest.mark.parametrize("kind", KINDS)
def test_the_emulator_and_sshd_accept_every_user_key_type(
        ssh_agent: SshAgent, user_keys: KeySet, fresh_emulator: Callable[..., EmulatorThread],
        sshd_device: Callable[..., SshdDevice], kind: str) -> None:
    ssh_agent.add(user_keys.keys[kind].private)
    emu = fresh_emulator(credentials=credentials(user_keys.authorized_keys))
    sshd = sshd_device("cisco_ios", authorized_keys=user_keys.authorized_keys)
    for host, port, user in ((emu.endpoints[0].host, emu.endpoints[0].ssh_port or 0, USERNAME),
                             (sshd.host, sshd.port, sshd.user)):
        assert stable_output("cisco_ios", _agent_login(host, port, user, ssh_agent, kind)) == \
            stable_output("cisco_ios", expected_output(
                "cisco_ios", hostname_for("cisco_ios"), "198.18.0.1", ["show clock"]))


@pytest.mark.parametrize("host_key", ["ecdsa", "rsa"])
def test_rsa_and_ecdsa_host_keys(ssh_agent: SshAgent, user_keys: KeySet, host_key: str,
                                 fresh_emulator: Callable[..., EmulatorThread],
                                 sshd_device: Callable[..., SshdDevice]) -> None:
    ssh_agent.add(user_keys.keys["ed25519"].private)
    emu = fresh_emulator(host_key_type=host_key,
                         credentials=credentials(user_keys.authorized_keys))
    sshd = sshd_device("cisco_ios", host_key_type=host_key,
                       authorized_keys=user_keys.authorized_keys)
    want = {"ecdsa": "ecdsa-sha2-nistp256", "rsa": "ssh-rsa"}[host_key]
    for host, port, user in ((emu.endpoints[0].host, emu.endpoints[0].ssh_port or 0, USERNAME),
                             (sshd.host, sshd.port, sshd.user)):
        _agent_login(host, port, user, ssh_agent, "ed25519", host_key_type=want)


def _agent_login(host: str, port: int, user: str, agent: SshAgent, kind: str,
                 host_key_type: str | None = None) -> str:
    """``show clock`` after an asyncssh login with the agent's one key, which must be of
    ``kind``; the server's host key must be of ``host_key_type`` when given."""
    async def run() -> str:
        async with asyncssh.connect(host, port, username=user, agent_path=str(agent.socket),
                                    password=None, known_hosts=None) as conn:
            key = conn.get_server_host_key()
            if host_key_type is not None:
                assert key is not None
                assert key.algorithm.decode() == host_key_type
            done = await conn.run("show clock", check=True)
            return str(done.stdout)

    held = asyncio.run(_agent_keys(agent))
    assert held == [KEY_ALGORITHMS[kind][0]]
    return asyncio.run(run())


async def _agent_keys(agent: SshAgent) -> list[str]:
    async with asyncssh.connect_agent(str(agent.socket)) as client:
        return [k.algorithm.decode() for k in await client.get_keys()]


@pytest.mark.parametrize("client", ["asyncssh", "paramiko", "openssh"])
@pytest.mark.parametrize("kind", ["ecdsa-p521", "rsa-4096"])
def test_client_adapters_log_in_through_the_agent(
        ssh_agent: SshAgent, user_keys: KeySet, fresh_emulator: Callable[..., EmulatorThread],
        client: str, kind: str) -> None:
    cls = adapter(client)
    if cls.missing():
        pytest.skip(str(cls.missing()))
    ssh_agent.add(user_keys.keys[kind].private)
    emu = fresh_emulator(credentials=credentials(user_keys.authorized_keys),
                         auth_methods=("publickey",))  # no password to fall back on
    login = Login(USERNAME, PASSWORD, SECRET, auth=Auth.AGENT, agent_socket=ssh_agent.socket)
    target: Target = emulator_target(emu, login)
    driver = Driver(cls(target, "batch-exec"))
    driver.setup()
    try:
        out = driver.run(["show clock"])
    finally:
        driver.teardown()
    assert stable_output("cisco_ios", out) == stable_output(
        "cisco_ios", emu.endpoints[0].device.transcript(("show", "clock")))


# Item 5: the report sections, on a synthetic run with known figures.

def _bench(name: str, mean_s: float, **extra: Any) -> dict[str, Any]:
    stats = {"mean": mean_s, "median": mean_s, "min": mean_s, "max": mean_s, "stddev": 0.0,
             "rounds": 10}
    return {"name": name, "group": None, "params": {}, "stats": stats, "extra_info": extra}


def _synthetic_run(path: Path) -> Path:
    benches = []
    ms = {"ed25519": 1.0, "rsa-4096": 8.0}
    for signer_name, factor in (("raw", 1.0), ("paramiko", 1.5), ("in-process", 0.1)):
        for kind, base in ms.items():
            for size in (32, 16384):
                for message, extra_ms in (("unique", 0.0), ("same", 0.2)):
                    value = base * factor + extra_ms
                    benches.append(_bench(
                        f"test_agent_signing[{signer_name}-{kind}-{size}-{message}]",
                        value / 1000, experiment="agent-signing", signer=signer_name,
                        how="x", kind=kind, size=size, message=message, clients=1,
                        ms_per_signature=value, signatures_per_s=1000 / value,
                        agent_cpu_ms_per_signature=value / 2))
    for clients in (1, 2, 4, 8):
        benches.append(_bench(
            f"test_agent_concurrency[raw-processes-rsa-4096-c{clients}]", 0.4,
            experiment="agent-signing", signer="raw", how="processes", kind="rsa-4096",
            size=32, message="unique", clients=clients, signatures_per_s=125.0,
            ms_per_signature=8.0, client_ms_per_signature=8.0 * clients, agent_cpu_pct=99.0,
            agent_cpu_ms_per_signature=8.0, agent_threads=1))
    lab = {"backend": "tun", "runtime": "netns", "configured_rtt_ms": 30.0,
           "measured_rtt_ms": 30.2, "command": "show clock"}
    for client in ("asyncssh", "openssh"):
        if client != "openssh":
            benches.append(_bench(f"test_login[{client}-password-regional]", 0.300,
                                  experiment="agent-login", client=client, auth="password",
                                  kind="password", profile="regional", sessions=1,
                                  server="emulator", host_key="ed25519", **lab))
        for auth, seconds in (("key", 0.310), ("agent", 0.320)):
            benches.append(_bench(f"test_login[{client}-{auth}-rsa-4096-regional]", seconds,
                                  experiment="agent-login", client=client, auth=auth,
                                  kind="rsa-4096", profile="regional", sessions=1,
                                  server="emulator", host_key="ed25519",
                                  agent_cpu_ms_per_login=8.0 if auth == "agent" else None,
                                  **lab))
    for host_key, seconds in (("ed25519", 0.010), ("rsa", 0.014)):
        benches.append(_bench(f"test_host_key_login[emulator-{host_key}]", seconds,
                              experiment="agent-login", client="asyncssh", auth="key",
                              kind="ed25519", profile="loopback", sessions=1,
                              server="emulator", host_key=host_key))
    benches.append(_bench("test_agent_fleet[asyncssh-agent-rsa-4096-c200-regional]", 2.0,
                          experiment="agent-login", client="asyncssh", auth="agent",
                          kind="rsa-4096", profile="regional", sessions=200,
                          server="emulator", host_key="ed25519", makespan_ms=2000.0,
                          connect_exec_ms=900.0, connect_exec_p95_ms=1700.0,
                          agent_cpu_pct=80.0, agent_cpu_ms_per_login=8.0, client_cpu_pct=60.0,
                          **lab))
    path.write_text(json.dumps({"benchmarks": benches, "datetime": "2026-11-22T00:00:00"}))
    return path


def test_the_agent_sections_on_a_synthetic_run(tmp_path: Path) -> None:
    from mgmtbench.results.report import write_report
    from mgmtbench.results.sections import discover

    modules = discover()
    assert modules["agent-signing"].keys[:3] == ("signer", "how", "kind")
    assert "agent-login" in modules
    text = write_report([_synthetic_run(tmp_path / "run.json")], tmp_path / "report").read_text()
    assert "## ssh-agent signing" in text
    # raw: rows key/size, columns unique/same, the ratio against ed25519 (8.0 / 1.0).
    assert "| rsa-4096 | 32 B | 8.000 | 8.200 | 1.025 | 8.000 | 6.833 |" in text
    assert "| ed25519 | 16 KB | 1.000 | 1.200 | 1.200 | 1.000 | 1.000 |" in text
    # Against the study: 8.0 ms / 7.6 ms, with the agent's CPU per signature.
    assert "| raw | rsa-4096 | 32 B | unique | 8.000 | 7.600 | 1.053 | 4.000 |" in text
    assert text.index("| raw | ed25519 | 32 B | unique |") < text.index(
        "| raw | ed25519 | 32 B | same |") < text.index("| raw | ed25519 | 16 KB | unique |")
    # Side by side: the agent adds raw - in-process.
    assert "| rsa-4096 | 32 B | 8.000 | 12.000 | 0.800 | 7.200 |" in text
    # Concurrency: flat throughput, one-core ceiling 1000 / 8 ms.
    assert "| raw | processes | rsa-4096 | 8 | 125.00 | 1.00 | 64.00 | 99.00 | 8.00 | 125.00 | 1 |" \
        in text
    assert "## What agent-based login costs" in text
    assert "| asyncssh | rsa-4096 | 300.00 | 310.00 | 320.00 | 10.00 | 1.03 | 8.00 |" in text
    assert "| openssh | rsa-4096 | - | 310.00 | 320.00 | 10.00 | 1.03 | 8.00 |" in text
    assert "| emulator | 10.0 | 14.0 |" in text
    assert "| regional | asyncssh | 200 | rsa-4096 | agent | 2000.0 | 900.0 | 1700.0 | 80.0 | 8.0" \
        in text
    charts = {p.name for p in (tmp_path / "report").glob("*.png")}
    assert {"agent_signing.png", "agent_concurrency.png", "agent_login_regional.png"} <= charts


def test_the_sampled_matrices_hold_the_issues_figures() -> None:
    from benchmarks.test_agent_signing import KINDS as SIGNING_KINDS
    from benchmarks.test_agent_signing import load_cells, sign_cells

    sampled = {str(c) for c in sign_cells(full=False)}
    for kind in SIGNING_KINDS:  # every key type at both ends, unique and same, for the floor
        for end in ("32B", "16KB"):
            assert {f"raw-{kind}-{end}-unique", f"raw-{kind}-{end}-same",
                    f"in-process-{kind}-{end}-unique"} <= sampled
    for name in ("asyncssh", "paramiko"):
        assert {f"{name}-ed25519-32B-same", f"{name}-rsa-4096-16KB-unique"} <= sampled
    assert {"raw-rsa-4096-64B-unique", "raw-ed25519-1KB-unique"} <= sampled
    assert len(sampled) < len(sign_cells(full=True)) == 4 * 6 * 5 * 2
    assert {str(c) for c in load_cells(full=False)} == {
        f"raw-processes-{k}-c{n}" for k in ("ed25519", "rsa-4096") for n in (1, 2, 4, 8)}
