"""The gNMI client adapters (pygnmi, grpc-gnmi) against the emulator's gNMI port: every mode
they declare with both payloads, outputs checked; a Set that reaches the CLI and NETCONF;
pygnmi's STREAM subscription seeing a CLI change; library errors translated at the boundary."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import replace

import pytest

from mgmtbench.clients import ADAPTERS, AsyncClient, Client, Target, Transport, adapter
from mgmtbench.clients.gnmi import requests
from mgmtbench.clients.netconf.rpcs import edit_interface
from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import AuthenticationFailed, ConnectionFailed, UsageError
from mgmtbench.targets import Login, make_target
from tests.netconf_support import RawNetconf

COMMANDS = ["show version", "show clock", "show ip interface brief", "show inventory"]
GNMI_CLIENTS = [name for name in ADAPTERS if adapter(name).transport is Transport.GNMI]
CASES = [(name, mode, payload) for name in GNMI_CLIENTS for mode in adapter(name).modes
         for payload in adapter(name).payloads]
_sets = itertools.count(3)


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    """A cisco_ios emulator (hostname R1, admin/admin) serving gNMI and NETCONF."""
    emulator = EmulatorThread(EmulatorOptions(https=False)).start()
    yield emulator
    emulator.stop()


@pytest.fixture(scope="module")
def device(emu: EmulatorThread) -> DeviceEndpoint:
    return emu.endpoints[0]


@pytest.fixture(scope="module")
def target(emu: EmulatorThread, device: DeviceEndpoint) -> Target:
    assert emu.emulator.tls is not None
    assert device.gnmi_port
    assert device.ssh_port
    login = Login(username="admin", password="admin", enable_secret="admin")
    return make_target(device.host, device.ssh_port, 0, platform="cisco_ios", login=login,
                       ca_file=emu.emulator.tls.ca, gnmi_port=device.gnmi_port)


def run_once(client: Client | AsyncClient, commands: list[str]) -> str:
    assert isinstance(client, Client)  # the gNMI adapters are blocking
    client.setup()
    try:
        return client.run(commands)
    finally:
        client.teardown()


def test_gnmi_clients_are_declared() -> None:
    assert set(GNMI_CLIENTS) == {"pygnmi", "pygnmi+tuned", "grpc-gnmi"}


@pytest.mark.parametrize(("name", "mode", "payload"), CASES,
                         ids=[f"{n}-{m}-{p}" for n, m, p in CASES])
def test_every_mode_and_payload(target: Target, device: DeviceEndpoint, name: str, mode: str,
                                payload: str) -> None:
    cls = adapter(name)
    client = cls(target, mode, payload)
    assert isinstance(client, Client)
    out = run_once(client, COMMANDS)
    if mode == "batch-set":
        assert requests.check_set([out], len(COMMANDS)) is None
    elif payload == "cli":
        want = expected_output("cisco_ios", "R1", device.device.facts.mgmt_ip, COMMANDS)
        assert same_output("cisco_ios", out, want)
    else:
        assert requests.check_yang([out], COMMANDS) is None
        version = json.loads(out.splitlines()[0])[0]
        assert version["hostname"] == "R1"  # /system/state
        inventory = json.loads(out.splitlines()[3])[0]
        assert "component" in inventory  # ietf-hardware


@pytest.mark.parametrize("name", GNMI_CLIENTS)
def test_a_yang_batch_set_reaches_the_cli_and_netconf(target: Target, device: DeviceEndpoint,
                                                      name: str) -> None:
    count = next(_sets)
    run_once(adapter(name)(target, "batch-set", "yang"), ["show version"] * count)
    interface = edit_interface("cisco_ios")
    netconf = RawNetconf(device.netconf_port or 0)
    try:
        reply = netconf.rpc('<get><filter type="cli">show running-config</filter></get>')
    finally:
        netconf.close()
    running = "".join(str(text) for text in reply.itertext())
    block = running[running.index(f"interface {interface}\n"):].split("!")[0]
    assert f" description mgmtbench-{count - 1}\n" in block  # the last update wins


def test_pygnmi_stream_subscription_sees_a_cli_change(target: Target,
                                                      device: DeviceEndpoint) -> None:
    from pygnmi.client import gNMIclient

    from tests.test_gnmi_server import emu_loop_cli

    interface = edit_interface("cisco_ios")
    spec = {"subscription": [{"path": f"/interfaces/interface[name={interface}]/config",
                              "mode": "on_change"}], "mode": "stream", "encoding": "json_ietf"}
    with gNMIclient(target=(target.host, target.gnmi_port), username="admin",
                    password="admin", path_cert=str(target.ca_file)) as client:
        stream = client.subscribe_stream(subscribe=spec)
        try:
            first = next(stream)
            assert first["update"]["update"]
            emu_loop_cli(device, "configure terminal", f"interface {interface}",
                         "description seen-by-pygnmi", "end")
            changed = next(stream)
        finally:
            stream.close()
    [update] = changed["update"]["update"]
    assert update["path"].endswith("description")
    assert update["val"] == "seen-by-pygnmi"


@pytest.mark.parametrize("name", GNMI_CLIENTS)
def test_wrong_password_is_authentication_failed(target: Target, name: str) -> None:
    client = adapter(name)(replace(target, password="wrong"), "reuse-stream")
    with pytest.raises(AuthenticationFailed, match=re.escape(name)):
        run_once(client, ["show version"])


def test_a_closed_port_is_connection_failed(target: Target) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = adapter("grpc-gnmi")(replace(target, gnmi_port=port), "fresh-conn")
    with pytest.raises(ConnectionFailed, match="grpc-gnmi"):
        run_once(client, ["show version"])


@pytest.mark.parametrize("name", GNMI_CLIENTS)
def test_a_target_without_a_ca_file_is_refused(target: Target, name: str) -> None:
    with pytest.raises(UsageError, match="ca_file"):
        adapter(name)(replace(target, ca_file=None), "fresh-conn")


def test_a_command_without_a_yang_path_is_a_usage_error(target: Target) -> None:
    with pytest.raises(UsageError, match="no path for 'show users'"):
        run_once(adapter("grpc-gnmi")(target, "batch-get", "yang"), ["show users"])
