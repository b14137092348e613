"""The RESTCONF client adapters (httpx-restconf, -h2, -async) against the emulator's HTTPS port:
every mode they declare with both payloads, outputs checked, round trips counted, batch edits
that reach the device (seen in ``show running-config`` and over NETCONF), errors translated."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import replace

import pytest

from mgmtbench.clients import ADAPTERS, ClientError, Target, Transport, adapter
from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.restconf import requests
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.targets import Login, make_target
from mgmtbench.testing.restconf import json_documents, restconf_output_check, xml_documents
from tests.clients_support import available, drive_rounds
from tests.netconf_support import RawNetconf, data_of

COMMANDS = ["show version", "show clock"]
OC_SYSTEM = "http://openconfig.net/yang/system"
IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
RESTCONF_CLIENTS = [n for n in ADAPTERS if adapter(n).transport is Transport.RESTCONF]
READ_CASES = [(name, mode, payload) for name in RESTCONF_CLIENTS
              for mode in adapter(name).modes if mode != "batch-patch"
              for payload in adapter(name).payloads]
PATCH_CASES = [(name, payload) for name in RESTCONF_CLIENTS
               if "batch-patch" in adapter(name).modes for payload in adapter(name).payloads]
_edits = itertools.count(3)


@pytest.fixture(scope="session")
def restconf_emulator() -> Iterator[EmulatorThread]:
    """A cisco_ios emulator (hostname R1, admin/admin) with HTTPS and NETCONF."""
    emu = EmulatorThread(EmulatorOptions()).start()
    yield emu
    emu.stop()


@pytest.fixture(scope="session")
def device(restconf_emulator: EmulatorThread) -> DeviceEndpoint:
    return restconf_emulator.endpoints[0]


@pytest.fixture(scope="session")
def target(restconf_emulator: EmulatorThread, device: DeviceEndpoint) -> Target:
    assert device.https_port
    assert device.ssh_port
    assert device.netconf_port
    tls = restconf_emulator.emulator.tls
    assert tls is not None
    login = Login(username="admin", password="admin", enable_secret="admin")
    return make_target(device.host, device.ssh_port, device.https_port, platform="cisco_ios",
                       login=login, ca_file=tls.ca, netconf_port=device.netconf_port)


def hostnames(output: str, xml: bool) -> list[str | None]:
    """openconfig-system's state hostname in each reply of a yang output."""
    if xml:
        return [doc.findtext(f"{{{OC_SYSTEM}}}state/{{{OC_SYSTEM}}}hostname")
                for doc in xml_documents(output)]
    return [doc["openconfig-system:system"].get("state", {}).get("hostname")
            for doc in json_documents(output)]


class _Site:
    """What restconf_output_check asks of a site for the ``cli`` payload."""

    def output_check(self, target: Target, commands: list[str]):  # type: ignore[no-untyped-def]
        want = expected_output("cisco_ios", "R1", "198.18.0.1", commands)
        return lambda outs: None if all(same_output("cisco_ios", o, want) for o in outs) \
            else "not the device's output"


@pytest.mark.parametrize(("name", "mode", "payload"), READ_CASES,
                         ids=[f"{n}-{m}-{p}" for n, m, p in READ_CASES])
def test_reads_return_the_device_answers(name: str, mode: str, payload: str,
                                         target: Target) -> None:
    client = available(name)(target, mode, payload)
    counter = RoundTripCounter()
    client.count_round_trips(counter)
    outputs, trips = drive_rounds(client, COMMANDS, counter=counter)
    if payload == "cli":
        want = expected_output("cisco_ios", "R1", "198.18.0.1", COMMANDS)
        assert all(same_output("cisco_ios", got, want) for got in outputs)
    else:  # openconfig-system: the state's hostname (show version), the clock (show clock)
        xml = mode == "json-vs-xml"
        assert [hostnames(o, xml) for o in outputs] == [["R1", None]] * 2
        assert all(o.count("<current-datetime" if xml else "current-datetime") == 2
                   for o in outputs)
    check = restconf_output_check(_Site(), target, COMMANDS, mode, payload)  # type: ignore[arg-type]
    assert check(outputs) is None
    assert all(t > 0 for t in trips)
    if mode == "fresh-conn":
        assert counter.connections == 2 * len(COMMANDS) + 0  # one per request, 2 rounds
    elif mode == "conn-per-iteration":
        assert counter.connections == 2
    else:  # kept from setup
        assert counter.connections == 1
    if mode in ("keep-alive", "json-vs-xml"):  # one round trip per request
        assert trips == [len(COMMANDS)] * 2
    if mode == "h2-multiplex":
        assert all(t <= len(COMMANDS) for t in trips)


@pytest.mark.parametrize(("name", "payload"), PATCH_CASES,
                         ids=[f"{n}-batch-patch-{p}" for n, p in PATCH_CASES])
def test_batch_patch_is_one_request(name: str, payload: str, target: Target,
                                    device: DeviceEndpoint) -> None:
    count = next(_edits)
    client = available(name)(target, "batch-patch", payload)
    counter = RoundTripCounter()
    client.count_round_trips(counter)
    outputs, trips = drive_rounds(client, ["show version"] * count, rounds=2, counter=counter)
    assert outputs == [requests.batch_ok(payload)] * 2
    assert trips == [1, 1]
    if payload == "yang":  # the last edit's description, on the CLI and over NETCONF
        interface = rpcs.edit_interface("cisco_ios")
        running = device.device.transcript(("show", "running-config"))
        section = running.split(f"interface {interface}\n", 1)[1].split("!", 1)[0]
        assert f" description mgmtbench-{count - 1}\n" in section
        assert device.netconf_port
        session = RawNetconf(device.netconf_port)
        try:
            data = data_of(session.rpc(
                f'<get-config><source><running/></source><filter type="subtree">'
                f'<interfaces xmlns="{IF}"><interface><name>{interface}</name></interface>'
                "</interfaces></filter></get-config>"))
        finally:
            session.close()
        assert data.findtext(f".//{{{IF}}}description") == f"mgmtbench-{count - 1}"


def test_the_study_envelope_patch_body_is_the_studys() -> None:
    path, body = requests.batch(["show version"] * 3, "cli", "cisco_ios")
    assert (path, body) == ("/restconf/data/", b"show version\n" * 3)
    path, body = requests.batch(["show version"] * 2, "yang", "cisco_ios")
    edits = json.loads(body)["ietf-yang-patch:yang-patch"]["edit"]
    assert [e["value"]["ietf-interfaces:interface"][0]["description"] for e in edits] == [
        "mgmtbench-0", "mgmtbench-1"]


@pytest.mark.parametrize("mode", ["fresh-conn", "keep-alive"])
@pytest.mark.parametrize("name", RESTCONF_CLIENTS)
def test_wrong_password_is_a_client_error(name: str, mode: str, target: Target) -> None:
    with pytest.raises(ClientError, match="^" + re.escape(name) + ": "):
        drive_rounds(available(name)(replace(target, password="wrong-password"), mode, "cli"),
              ["show clock"], rounds=1)


def test_a_refused_patch_is_a_client_error(target: Target) -> None:
    """An IOS device refuses juniper_junos's interface (it has none): the YANG Patch fails."""
    junos = replace(target, platform="juniper_junos")
    with pytest.raises(ClientError, match=r"^httpx-restconf: "):
        drive_rounds(available("httpx-restconf")(junos, "batch-patch", "yang"), ["show version"], rounds=1)
