"""The knobs of scrapli-netconf, asyncssh-netconf and hussh (:mod:`mgmtbench.clients.tuning`): each
knob client still gets the device's answers, and each knob changes what it says it changes.

scrapli-netconf and asyncssh-netconf against the in-process emulator's NETCONF port; hussh against
``mgmtbench serve`` in a process of its own (hussh holds the GIL while it waits:
``tests/test_hussh.py``), its ``proxy-nodelay`` knob only where socat is installed."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from mgmtbench.clients import Target
from mgmtbench.clients.asyncssh_netconf.adapter import AsyncsshNetconfClient
from mgmtbench.clients.hussh.adapter import HusshClient
from mgmtbench.clients.registry import knobs_of
from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output, stable_output
from mgmtbench.targets import Login, make_target
from mgmtbench.testing.credentials import PASSWORD, SECRET, USERNAME
from tests.clients_support import available, drive_rounds
from tests.serve_support import serve

COMMANDS = ["show version", "show clock"]


@pytest.fixture(scope="module")
def netconf_target() -> Iterator[Target]:
    """A cisco_ios emulator (hostname R1, admin/admin) in this process, on its NETCONF port."""
    emu = EmulatorThread(EmulatorOptions(https=False)).start()
    device = emu.endpoints[0]
    assert device.netconf_port
    assert device.ssh_port
    login = Login(username="admin", password="admin", enable_secret="admin")
    yield make_target(device.host, device.ssh_port, 0, platform="cisco_ios", login=login,
                      known_hosts=emu.emulator.known_hosts, netconf_port=device.netconf_port)
    emu.stop()


NETCONF_KNOBS = [f"{library}+{knob.name}" for library in ("scrapli-netconf", "asyncssh-netconf")
                 for knob in knobs_of(library)]


@pytest.mark.parametrize("mode", ["fresh-session", "reuse-session"])
@pytest.mark.parametrize("name", NETCONF_KNOBS)
def test_every_netconf_knob_client_gets_the_device_answers(name: str, mode: str,
                                                           netconf_target: Target) -> None:
    outputs, _ = drive_rounds(available(name)(netconf_target, mode, "cli"), COMMANDS)
    want = expected_output("cisco_ios", "R1", "198.18.0.1", COMMANDS)
    assert all(same_output("cisco_ios", got, want) for got in outputs)


def _asyncssh_session(name: str, target: Target) -> tuple[bool, int, int]:
    """An asyncssh-netconf client's kept session: whether it frames in chunks, and the receive
    window and largest packet its channel was opened with."""
    client = available(name)(target, "reuse-session", "cli")
    assert isinstance(client, AsyncsshNetconfClient)

    async def go() -> tuple[bool, int, int]:
        await client.setup()
        try:
            session = client._session
            assert session is not None
            channel = session._writer.channel
            return session._framer.chunked, channel._init_recv_window, channel._recv_pktsize
        finally:
            await client.teardown()

    return asyncio.run(go())


def test_asyncssh_netconf_knobs_change_the_framing_and_the_window(netconf_target: Target) -> None:
    shipped = _asyncssh_session("asyncssh-netconf", netconf_target)
    assert shipped == (True, 2 * 2**20, 2**15)  # both offer base:1.1; asyncssh's 2 MiB, 32 KiB
    assert _asyncssh_session("asyncssh-netconf+base-1-0", netconf_target) == (False, *shipped[1:])
    assert _asyncssh_session("asyncssh-netconf+window-size", netconf_target) == (
        True, 16 * 2**20, 2**18)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """A cisco_ios device served by ``mgmtbench serve`` on loopback, as an SSH target."""
    folder = tmp_path_factory.mktemp("hussh-knobs")
    with serve(folder, "--username", USERNAME, "--password", PASSWORD, "--enable-password",
               SECRET, "--no-http3", "--no-netconf", "--no-gnmi") as device:
        login = Login(username=USERNAME, password=PASSWORD, enable_secret=SECRET)
        yield make_target("127.0.0.1", device.ssh_port, device.https_port, platform="cisco_ios",
                          login=login)


def _descendants_named(name: str) -> list[int]:
    """Processes descended from this one whose command is ``name`` (hussh runs its proxy
    command through ``sh -c``)."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        head, _, rest = stat.rpartition(") ")
        names[int(pid)] = head.split("(", 1)[-1]
        parents[int(pid)] = int(rest.split()[1])

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return [pid for pid, comm in names.items() if comm == name and ours(pid)]


@pytest.mark.parametrize("mode", ["fresh-conn", "reuse-conn", "batch-exec"])
def test_hussh_tuned_goes_through_socat_and_gets_the_answers(mode: str, served: Target) -> None:
    pytest.importorskip("hussh")
    if shutil.which("socat") is None:
        pytest.skip("hussh+tuned needs socat on PATH")
    commands = [*COMMANDS, "show ip interface brief"]
    outputs, _ = drive_rounds(available("hussh+tuned")(served, mode), commands)
    want = stable_output("cisco_ios", expected_output("cisco_ios", "R1", "198.18.0.1", commands))
    assert [stable_output("cisco_ios", o) for o in outputs] == [want] * 2


def test_hussh_tuned_keeps_its_socat_for_the_kept_connection(served: Target) -> None:
    pytest.importorskip("hussh")
    if shutil.which("socat") is None:
        pytest.skip("hussh+tuned needs socat on PATH")
    client = available("hussh+tuned")(served, "reuse-conn")
    assert isinstance(client, HusshClient)
    assert not _descendants_named("socat")
    client.setup()
    try:
        assert len(_descendants_named("socat")) == 1
    finally:
        client.teardown()
    assert not _descendants_named("socat")  # hussh ends its proxy command with the connection
