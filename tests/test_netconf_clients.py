"""The NETCONF client adapters (ncclient, scrapli-netconf, asyncssh-netconf) against the emulator's
NETCONF port: every mode they declare with both payloads, edits that reach the device, round
trips, and library errors translated at the boundary."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import asyncssh
import pytest
from lxml import etree

from mgmtbench.clients import ADAPTERS, ClientError, Target, Transport, adapter
from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.targets import Login, make_target
from tests.clients_support import available, drive_rounds

COMMANDS = ["show version", "show clock"]
OC_SYSTEM = "http://openconfig.net/yang/system"
NETCONF_CLIENTS = [name for name in ADAPTERS if adapter(name).transport is Transport.NETCONF]
READ_CASES = [(name, mode, payload) for name in NETCONF_CLIENTS
              for mode in adapter(name).modes if mode != "edit-commit"
              for payload in adapter(name).payloads]
EDIT_CASES = [(name, payload) for name in NETCONF_CLIENTS if "edit-commit" in adapter(name).modes
              for payload in adapter(name).payloads]
_edits = itertools.count(3)  # each edit test describes the interface with a number of its own


@pytest.fixture(scope="session")
def netconf_emulator() -> Iterator[EmulatorThread]:
    """A cisco_ios emulator (hostname R1, admin/admin) with a NETCONF-only port."""
    emu = EmulatorThread(EmulatorOptions(https=False)).start()
    yield emu
    emu.stop()


@pytest.fixture(scope="session")
def device(netconf_emulator: EmulatorThread) -> DeviceEndpoint:
    return netconf_emulator.endpoints[0]


@pytest.fixture(scope="session")
def netconf_target(netconf_emulator: EmulatorThread, device: DeviceEndpoint) -> Target:
    """The device as a client target on its NETCONF port, its host key known (the emulator's
    known_hosts names the NETCONF port too)."""
    assert device.netconf_port
    assert device.ssh_port
    known = netconf_emulator.emulator.known_hosts
    login = Login(username="admin", password="admin", enable_secret="admin")
    return make_target(device.host, device.ssh_port, 0, platform="cisco_ios", login=login,
                       known_hosts=known, netconf_port=device.netconf_port)


def hostnames(output: str) -> list[str | None]:
    """The openconfig-system state hostname of each ``<data>`` in a yang output."""
    root = etree.fromstring(f"<outputs>{output}</outputs>")
    datas = root.findall(f"{{{rpcs.BASE}}}data")
    return [d.findtext(f"{{{OC_SYSTEM}}}system/{{{OC_SYSTEM}}}state/{{{OC_SYSTEM}}}hostname")
            for d in datas]


@pytest.mark.parametrize(("name", "mode", "payload"), READ_CASES,
                         ids=[f"{n}-{m}-{p}" for n, m, p in READ_CASES])
def test_reads_return_the_device_answers(name: str, mode: str, payload: str,
                                         netconf_target: Target) -> None:
    client = available(name)(netconf_target, mode, payload)
    counter = RoundTripCounter() if client.counts_round_trips else None
    if counter is not None:
        client.count_round_trips(counter)
    outputs, trips = drive_rounds(client, COMMANDS, counter=counter)
    if payload == "cli":  # the SSH exec answers, as the emulator's oracle has them
        want = expected_output("cisco_ios", "R1", "198.18.0.1", COMMANDS)
        assert all(same_output("cisco_ios", got, want) for got in outputs)
    else:  # openconfig-system state: the hostname (show version), the clock (show clock)
        assert [hostnames(o) for o in outputs] == [["R1", None]] * 2
        assert all(o.count("<current-datetime") == 2 for o in outputs)
    if counter is not None:
        assert all(t > 0 for t in trips)
        assert counter.connections == (2 if mode == "fresh-session" else 1)  # 2 rounds
        if mode == "reuse-session":  # one round trip per RPC on a kept session
            assert trips == [len(COMMANDS)] * 2
        if mode == "batch-rpc":
            assert all(t <= len(COMMANDS) for t in trips)


def test_the_floor_pipelines_batch_rpc(netconf_target: Target) -> None:
    """asyncssh-netconf writes every RPC before reading: one round trip per batch."""
    client = available("asyncssh-netconf")(netconf_target, "batch-rpc", "cli")
    counter = RoundTripCounter()
    client.count_round_trips(counter)
    _, trips = drive_rounds(client, COMMANDS * 3, counter=counter)
    assert trips == [1, 1]


@pytest.mark.parametrize(("name", "payload"), EDIT_CASES,
                         ids=[f"{n}-edit-commit-{p}" for n, p in EDIT_CASES])
def test_edit_commit_changes_the_device(name: str, payload: str, netconf_target: Target,
                                        device: DeviceEndpoint) -> None:
    count = next(_edits)  # an interface description no other test writes
    interface = rpcs.edit_interface("cisco_ios")
    outputs, _ = drive_rounds(available(name)(netconf_target, "edit-commit", payload),
                       ["show version"] * count, rounds=1)
    assert outputs == ["ok\nok\n"]
    running = device.device.transcript(("show", "running-config"))
    section = running.split(f"interface {interface}\n", 1)[1].split("!", 1)[0]
    assert f" description mgmtbench-{count - 1}\n" in section


@pytest.mark.parametrize("mode", ["fresh-session", "reuse-session"])
@pytest.mark.parametrize("name", NETCONF_CLIENTS)
def test_wrong_password_is_a_client_error(name: str, mode: str, netconf_target: Target) -> None:
    wrong = replace(netconf_target, password="wrong-password")
    with pytest.raises(ClientError):
        drive_rounds(available(name)(wrong, mode, "cli"), ["show clock"], rounds=1)


@pytest.mark.parametrize("name", NETCONF_CLIENTS)
def test_an_unknown_host_key_is_refused(name: str, netconf_target: Target,
                                        tmp_path: Path) -> None:
    stranger = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()
    known = tmp_path / "known_hosts"
    known.write_text(f"[{netconf_target.host}]:{netconf_target.netconf_port} {stranger}")
    with pytest.raises(ClientError):
        drive_rounds(available(name)(replace(netconf_target, known_hosts=known), "fresh-session", "cli"),
              ["show clock"], rounds=1)


@pytest.mark.parametrize("name", NETCONF_CLIENTS)
def test_an_rpc_error_is_a_client_error(name: str) -> None:
    """An edit the device refuses (of juniper_junos's interface, which an IOS device has not
    got) is a ClientError; on an emulator of its own, whose candidate it
    leaves changed. For ncclient this is also its junos handler (namespace-free replies)."""
    with EmulatorThread(EmulatorOptions(https=False)) as emu:
        endpoint = emu.endpoints[0]
        assert endpoint.netconf_port
        assert endpoint.ssh_port
        login = Login(username="admin", password="admin", enable_secret="admin")
        target = make_target(endpoint.host, endpoint.ssh_port, 0, platform="juniper_junos",
                             login=login, known_hosts=emu.emulator.known_hosts,
                             netconf_port=endpoint.netconf_port)
        with pytest.raises(ClientError, match="^" + re.escape(name) + ": "):
            drive_rounds(available(name)(target, "edit-commit", "yang"), ["show version"], rounds=1)


def test_edit_interfaces_come_from_the_transcripts() -> None:
    root = Path(__file__).resolve().parents[1] / "transcripts"
    for platform, interface in rpcs.EDIT_INTERFACE.items():
        folder = root / platform
        config = folder / "show_running-config.txt"
        if not config.exists():
            config = folder / "show_configuration.txt"
        assert interface in config.read_text(), platform
    assert rpcs.edit_interface("no-such-platform") == rpcs.DEFAULT_EDIT_INTERFACE
