"""The hussh client against ``mgmtbench serve`` in a process of its own.

hussh's blocking calls hold the GIL for their whole network wait, so the tests' usual in-process
emulator (a thread of the test process) can never answer them: here the device is a separate
process, as in the lab. Right answers in every mode, key login, errors translated, what hussh
cannot do refused, and the fleet runner's sessions."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mgmtbench.clients import Target, adapter
from mgmtbench.clients.fleet import fleet_runner
from mgmtbench.emulator.oracle import expected_output, stable_output
from mgmtbench.errors import AuthenticationFailed, ConnectionFailed, UsageError
from mgmtbench.targets import Auth, Login, SshAlgorithms, make_target
from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME
from mgmtbench.testing.keys import ClientKeys
from tests.clients_support import drive, drive_rounds
from tests.serve_support import serve

pytest.importorskip("hussh")

COMMANDS = ["show version", "show clock", "show ip interface brief", "show inventory",
            "show ip route"]
HUSSH = adapter("hussh")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, client_keys: ClientKeys) -> Iterator[Target]:
    """A cisco_ios device served by ``mgmtbench serve`` on loopback, as a target."""
    folder = tmp_path_factory.mktemp("hussh-serve")
    with serve(folder, "--username", USERNAME, "--password", PASSWORD, "--enable-password",
               SECRET, "--authorized-keys", str(client_keys.authorized_keys), "--no-http3",
               "--no-netconf", "--no-gnmi") as device:
        login = Login(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                      key_file=client_keys.private)
        yield make_target("127.0.0.1", device.ssh_port, device.https_port, platform="cisco_ios",
                          login=login)


def stable(text: str) -> str:
    return stable_output("cisco_ios", text)


def expected(commands: list[str]) -> str:
    return expected_output("cisco_ios", "R1", "198.18.0.1", commands)


@pytest.mark.parametrize("mode", HUSSH.modes)
def test_every_mode_returns_the_transcripts(mode: str, served: Target) -> None:
    outputs, _ = drive_rounds(HUSSH(served, mode), COMMANDS)
    assert [stable(o) for o in outputs] == [stable(expected(COMMANDS))] * 2


def test_key_login_uses_the_key_file(served: Target) -> None:
    keyed = replace(served, auth=Auth.KEY, password="wrong-password")
    assert stable(drive(HUSSH(keyed, "fresh-conn"), ["show clock"])) == stable(
        expected(["show clock"]))


def test_wrong_password_is_authentication_failed(served: Target) -> None:
    with pytest.raises(AuthenticationFailed, match=r"^hussh: "):
        drive(HUSSH(replace(served, password="wrong-password"), "reuse-conn"), ["show clock"])


def test_closed_port_is_connection_failed(served: Target, tmp_path: Path) -> None:
    from mgmtbench.testing.sshd import free_port

    with pytest.raises(ConnectionFailed, match="Connection refused"):
        drive(HUSSH(replace(served, ssh_port=free_port()), "fresh-conn"), ["show clock"])


@pytest.mark.parametrize("change", [
    {"auth": Auth.AGENT, "agent_socket": Path("/nowhere")},
    {"algorithms": SshAlgorithms(ciphers=("aes128-ctr",))},
])
def test_what_hussh_cannot_do_is_refused(change: dict[str, object], served: Target) -> None:
    with pytest.raises(UsageError) as caught:
        HUSSH(replace(served, **change), "reuse-conn")  # type: ignore[arg-type]
    assert "\n" not in str(caught.value)


def test_the_pty_modes_and_pipelining_are_left_out(served: Target) -> None:
    for mode in ("pty-fresh", "pty-reuse", "pty-kept", "pipelined"):
        with pytest.raises(ValueError, match="does not support"):
            HUSSH(served, mode)


def test_the_fleet_runner_gets_every_sessions_answers(served: Target) -> None:
    runner = fleet_runner("hussh")()
    try:
        sessions = runner.run([served] * 3, "show ip interface brief")
    finally:
        runner.close()
    assert [s.error for s in sessions] == [None] * 3
    digests = {digest for s in sessions for digest in s.digests}
    assert len(digests) == 1
    assert all(s.finish is None and s.read_output is None and s.close is not None
               for s in sessions)


def test_a_waiting_call_stops_every_other_thread() -> None:
    """Why this file serves the device from another process: while hussh waits on the network
    (here for the banner of a server that never sends one, until its 1 s time-out) no other Python
    thread of the process runs."""
    import socket
    import threading
    import time

    import hussh

    ticks: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.005)

    with socket.create_server(("127.0.0.1", 0)) as silent:  # the kernel accepts; no banner
        ticker = threading.Thread(target=tick)
        ticker.start()
        try:
            time.sleep(0.1)
            before = len(ticks)
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                hussh.Connection("127.0.0.1", port=silent.getsockname()[1], username="admin",
                                 password="x", timeout=1000)
            waited = time.monotonic() - started
            during = len(ticks) - before
        finally:
            stop.set()
            ticker.join()
    assert waited >= 0.9
    assert during <= 2  # ~200 ticks if the thread could run
