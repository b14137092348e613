"""The emulator's gNMI server over real TLS sockets, through the generated stub: every RPC, the
errors as gRPC statuses, authentication, Set as one transaction seen by the CLI and NETCONF,
and subscriptions (ONCE, POLL, STREAM with SAMPLE and ON_CHANGE) seeing CLI and NETCONF
changes."""

from __future__ import annotations

import itertools
import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from lxml import etree

from mgmtbench.emulator import EmulatorOptions, EmulatorThread
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.gnmi.paths import command_path, parse
from mgmtbench.emulator.gnmi.protos import pb, rpc
from mgmtbench.emulator.server import DeviceEndpoint
from tests.netconf_support import RawNetconf

AUTH = (("username", "admin"), ("password", "admin"))
IFACE = "GigabitEthernet0/0/1"
DESCRIPTION = f"/interfaces/interface[name={IFACE}]/config/description"
ENC = pb.Encoding.Value


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    """A cisco_ios emulator serving gNMI (and NETCONF) on ports of its own."""
    emulator = EmulatorThread(EmulatorOptions(https=False)).start()
    yield emulator
    emulator.stop()


@pytest.fixture(scope="module")
def endpoint(emu: EmulatorThread) -> DeviceEndpoint:
    return emu.endpoints[0]


@pytest.fixture(scope="module")
def stub(emu: EmulatorThread, endpoint: DeviceEndpoint) -> Iterator[Any]:
    """A stub on a TLS channel that trusts the emulator's CA."""
    assert emu.emulator.tls is not None
    assert endpoint.gnmi_port
    creds = grpc.ssl_channel_credentials(emu.emulator.tls.ca.read_bytes())
    channel = grpc.secure_channel(f"127.0.0.1:{endpoint.gnmi_port}", creds)
    yield rpc.gNMIStub(channel)
    channel.close()


def cli(endpoint: DeviceEndpoint, *lines: str) -> str:
    """Lines typed into a CLI session of the device, in the emulator's loop thread's stead
    (a session of its own, as an SSH user's); their output."""
    session = CliSession(endpoint.device, mode=Mode.PRIV, user="test")
    return "".join(session.execute(line).output for line in lines)


def get(stub: Any, *specs: str, encoding: str = "JSON_IETF", **kw: Any) -> Any:
    return stub.Get(pb.GetRequest(path=[parse(s) for s in specs], encoding=ENC(encoding), **kw),
                    metadata=AUTH, timeout=10)


def json_value(update: Any) -> Any:
    return json.loads(update.val.json_ietf_val)


def status(call: Any) -> tuple[Any, str]:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    error: Any = caught.value
    return error.code(), error.details()


# --- Capabilities, authentication, TLS ---------------------------------------------------------


def test_capabilities_list_the_models_and_encodings(stub: Any) -> None:
    reply = stub.Capabilities(pb.CapabilityRequest(), metadata=AUTH, timeout=10)
    models = {m.name: m for m in reply.supported_models}
    assert models["openconfig-interfaces"].organization == "OpenConfig working group"
    assert models["ietf-interfaces"].version == "2018-02-20"
    assert {pb.Encoding.Name(e) for e in reply.supported_encodings} == {
        "JSON", "JSON_IETF", "PROTO", "ASCII"}
    assert reply.gNMI_version == "0.8.0"


@pytest.mark.parametrize("metadata", [(), (("username", "admin"), ("password", "wrong")),
                                      (("username", "nobody"), ("password", "admin"))])
def test_every_rpc_needs_the_devices_credentials(stub: Any, metadata: Any) -> None:
    code, _ = status(lambda: stub.Get(pb.GetRequest(path=[command_path("show version")]),
                                      metadata=metadata, timeout=10))
    assert code is grpc.StatusCode.UNAUTHENTICATED
    code, _ = status(lambda: stub.Capabilities(pb.CapabilityRequest(), metadata=metadata,
                                               timeout=10))
    assert code is grpc.StatusCode.UNAUTHENTICATED
    stream = stub.Subscribe(iter([pb.SubscribeRequest(subscribe=pb.SubscriptionList(
        subscription=[pb.Subscription(path=command_path("show version"))], mode=1))]),
        metadata=metadata, timeout=10)
    code, _ = status(lambda: list(stream))
    assert code is grpc.StatusCode.UNAUTHENTICATED


def test_tls_is_required_and_verified(emu: EmulatorThread, endpoint: DeviceEndpoint) -> None:
    plain = grpc.insecure_channel(f"127.0.0.1:{endpoint.gnmi_port}")
    code, _ = status(lambda: rpc.gNMIStub(plain).Get(pb.GetRequest(), metadata=AUTH, timeout=5))
    assert code is grpc.StatusCode.UNAVAILABLE
    plain.close()
    import trustme

    stranger = grpc.ssl_channel_credentials(trustme.CA().cert_pem.bytes())
    other = grpc.secure_channel(f"127.0.0.1:{endpoint.gnmi_port}", stranger)
    code, _ = status(lambda: rpc.gNMIStub(other).Get(pb.GetRequest(), metadata=AUTH, timeout=5))
    assert code is grpc.StatusCode.UNAVAILABLE  # the device's certificate is not trusted
    other.close()


# --- Get ---------------------------------------------------------------------------------------


def test_the_studys_cli_paths_answer_with_the_cli_output(stub: Any,
                                                         endpoint: DeviceEndpoint) -> None:
    """clibench's request as its client sends it: five /cli/show/version paths, ASCII."""
    reply = stub.Get(pb.GetRequest(path=[command_path("show version")] * 5,
                                   encoding=ENC("ASCII")), metadata=AUTH, timeout=10)
    expected = cli(endpoint, "show version")
    assert len(reply.notification) == 5
    for note in reply.notification:
        [update] = note.update
        assert [e.name for e in update.path.elem] == ["cli", "show", "version"]
        assert update.val.ascii_val.split("uptime")[0] == expected.split("uptime")[0]
        assert note.timestamp > 1_700_000_000 * 10**9


def test_cli_origin_and_other_encodings(stub: Any) -> None:
    arista = pb.Path(origin="cli", elem=[pb.PathElem(name="show clock")])
    reply = stub.Get(pb.GetRequest(path=[arista], encoding=ENC("JSON")), metadata=AUTH,
                     timeout=10)
    assert "UTC" in json.loads(reply.notification[0].update[0].val.json_val)
    reply = stub.Get(pb.GetRequest(path=[arista], encoding=ENC("PROTO")), metadata=AUTH,
                     timeout=10)
    assert "UTC" in reply.notification[0].update[0].val.string_val


def test_openconfig_reads(stub: Any) -> None:
    reply = get(stub, f"/interfaces/interface[name={IFACE}]/state", "/system/state/hostname")
    state, hostname = (n.update for n in reply.notification)
    value = json_value(state[0])
    assert value["name"] == IFACE
    assert value["admin-status"] in ("UP", "DOWN")
    assert isinstance(value["counters"]["in-octets"], str)  # uint64: a string in RFC 7951
    assert isinstance(value["mtu"], int)
    assert json_value(hostname[0]) == "R1"
    keys = {e.name: dict(e.key) for e in state[0].path.elem}
    assert keys["interface"] == {"name": IFACE}


def test_a_wildcard_reads_every_entry_with_its_key(stub: Any) -> None:
    updates = get(stub, "/interfaces/interface[name=*]/config/name").notification[0].update
    names = [json_value(u) for u in updates]
    assert IFACE in names
    assert len(names) > 3
    assert [dict(u.path.elem[1].key)["name"] for u in updates] == names


def test_the_root_is_every_model_qualified(stub: Any) -> None:
    [update] = get(stub, "/", type=pb.GetRequest.DataType.Value("CONFIG")).notification[0].update
    value = json_value(update)
    assert "openconfig-interfaces:interfaces" in value
    assert "openconfig-system:system" in value
    assert "state" not in value["openconfig-system:system"]  # CONFIG: no state


def test_rfc7951_origin_reads_the_ietf_models(stub: Any) -> None:
    [update] = get(stub, "rfc7951:/ietf-interfaces:interfaces").notification[0].update
    entries = json_value(update)["interface"]
    first = next(e for e in entries if e["name"] == IFACE)
    assert first["type"] == "iana-if-type:ethernetCsmacd"
    assert "ietf-ip:ipv4" in first or "description" in first


def test_proto_encoding_sends_scalar_leaves(stub: Any) -> None:
    reply = get(stub, f"/interfaces/interface[name={IFACE}]/state", encoding="PROTO")
    leaves = {"/".join(e.name for e in u.path.elem[2:]): u.val
              for u in reply.notification[0].update}
    assert leaves["state/mtu"].WhichOneof("value") == "uint_val"
    assert leaves["state/enabled"].WhichOneof("value") == "bool_val"
    assert leaves["state/name"].string_val == IFACE


def test_prefix_makes_paths_relative(stub: Any) -> None:
    reply = get(stub, "state/hostname", prefix=parse("/system"))
    note = reply.notification[0]
    assert [e.name for e in note.prefix.elem] == ["system"]
    assert [e.name for e in note.update[0].path.elem] == ["state", "hostname"]


@pytest.mark.parametrize(("spec", "encoding", "code"), [
    ("/nothing/here", "JSON_IETF", grpc.StatusCode.NOT_FOUND),
    ("/interfaces/interface[name=Nope0]", "JSON_IETF", grpc.StatusCode.NOT_FOUND),
    ("/interfaces/interface[colour=red]", "JSON_IETF", grpc.StatusCode.INVALID_ARGUMENT),
    ("vendor:/x", "JSON_IETF", grpc.StatusCode.INVALID_ARGUMENT),
    ("rfc7951:/interfaces", "JSON_IETF", grpc.StatusCode.INVALID_ARGUMENT),
    ("/system", "ASCII", grpc.StatusCode.UNIMPLEMENTED),
    ("/system", "BYTES", grpc.StatusCode.UNIMPLEMENTED),
])
def test_get_errors_are_grpc_statuses(stub: Any, spec: str, encoding: str, code: Any) -> None:
    got, details = status(lambda: get(stub, spec, encoding=encoding))
    assert got is code, details
    assert details


# --- Set ---------------------------------------------------------------------------------------


def _set(stub: Any, **kw: Any) -> Any:
    return stub.Set(pb.SetRequest(**kw), metadata=AUTH, timeout=10)


def _jv(value: object) -> Any:
    return pb.TypedValue(json_ietf_val=json.dumps(value).encode())


def test_a_set_shows_on_the_cli_and_over_netconf(stub: Any, endpoint: DeviceEndpoint) -> None:
    reply = _set(stub, update=[pb.Update(path=parse(DESCRIPTION), val=_jv("set-by-gnmi"))])
    assert [pb.UpdateResult.Operation.Name(r.op) for r in reply.response] == ["UPDATE"]
    running = cli(endpoint, "show running-config")
    block = running[running.index(f"interface {IFACE}\n"):]
    assert block.split("!")[0].count(" description set-by-gnmi") == 1
    netconf = RawNetconf(endpoint.netconf_port or 0)
    try:
        data = netconf.rpc('<get-config><source><running/></source><filter type="subtree">'
                           '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
                           f"<interface><name>{IFACE}</name></interface></interfaces></filter>"
                           "</get-config>")
    finally:
        netconf.close()
    assert "set-by-gnmi" in etree.tostring(data, encoding="unicode")


def test_delete_replace_and_update_in_one_transaction(stub: Any,
                                                      endpoint: DeviceEndpoint) -> None:
    loop = "Loopback77"
    _set(stub, update=[pb.Update(path=parse(f"/interfaces/interface[name={loop}]/config"),
                                 val=_jv({"name": loop, "type": "iana-if-type:softwareLoopback",
                                          "description": "first"}))])
    assert f"interface {loop}" in cli(endpoint, "show running-config")
    reply = _set(stub,
                 delete=[parse(f"/interfaces/interface[name={loop}]/config/description")],
                 replace=[pb.Update(path=parse(DESCRIPTION), val=_jv("replaced"))],
                 update=[pb.Update(path=parse("/system/config/hostname"), val=_jv("R1"))])
    assert [pb.UpdateResult.Operation.Name(r.op) for r in reply.response] == [
        "DELETE", "REPLACE", "UPDATE"]
    running = cli(endpoint, "show running-config")
    looped = running[running.index(f"interface {loop}"):].split("!")[0]
    assert "description" not in looped
    assert " description replaced" in running
    _set(stub, delete=[parse(f"/interfaces/interface[name={loop}]")])
    assert f"interface {loop}" not in cli(endpoint, "show running-config")


def test_a_refused_set_changes_nothing(stub: Any, endpoint: DeviceEndpoint) -> None:
    before = cli(endpoint, "show running-config")
    bad = pb.Update(path=parse(f"/interfaces/interface[name={IFACE}]/subinterfaces/"
                               "subinterface[index=0]/ipv4/addresses/address[ip=10.9.9.9]/config"),
                    val=_jv({"ip": "10.9.9.9", "prefix-length": 40}))
    good = pb.Update(path=parse(DESCRIPTION), val=_jv("never-written"))
    code, details = status(lambda: _set(stub, update=[good, bad]))
    assert code is grpc.StatusCode.INVALID_ARGUMENT, details
    no_type = pb.Update(path=parse("/interfaces/interface[name=Loopback88]/config/description"),
                        val=_jv("no type"))
    code, details = status(lambda: _set(stub, update=[good, no_type]))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert "type" in details
    code, _ = status(lambda: _set(stub, update=[good, pb.Update(
        path=parse("/interfaces/interface[name=*]/config/description"), val=_jv("x"))]))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    assert cli(endpoint, "show running-config") == before


def test_the_studys_batch_set_runs_its_commands(stub: Any) -> None:
    updates = [pb.Update(path=command_path("show version"), val=pb.TypedValue(string_val=""))
               for _ in range(5)]
    reply = _set(stub, update=updates)
    assert len(reply.response) == 5


# --- Subscribe ---------------------------------------------------------------------------------


class Stream:
    """A Subscribe call whose requests are fed from a queue and whose responses are read in a
    thread of its own."""

    def __init__(self, stub: Any, first: Any) -> None:
        self.requests: queue.Queue[Any] = queue.Queue()
        self.requests.put(first)
        self.responses: queue.Queue[Any] = queue.Queue()
        self.call = stub.Subscribe(iter(self.requests.get, None), metadata=AUTH, timeout=30)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for response in self.call:
                self.responses.put(response)
        except grpc.RpcError as exc:
            self.responses.put(exc)

    def next(self, timeout: float = 5.0) -> Any:
        got = self.responses.get(timeout=timeout)
        if isinstance(got, Exception):
            raise got
        return got

    def until_sync(self) -> list[Any]:
        found = []
        while not (response := self.next()).sync_response:
            found.append(response)
        return found

    def close(self) -> None:
        self.requests.put(None)
        self.call.cancel()


def subscription(*subs: Any, mode: str = "STREAM", encoding: str = "JSON_IETF",
                 **kw: Any) -> Any:
    return pb.SubscribeRequest(subscribe=pb.SubscriptionList(
        subscription=list(subs), mode=pb.SubscriptionList.Mode.Value(mode),
        encoding=ENC(encoding), **kw))


def test_subscribe_once_is_the_studys(stub: Any) -> None:
    request = subscription(*[pb.Subscription(path=command_path("show version"))] * 5,
                           mode="ONCE", encoding="JSON")
    responses = list(stub.Subscribe(iter([request]), metadata=AUTH, timeout=10))
    assert [r.WhichOneof("response") for r in responses] == ["update"] * 5 + ["sync_response"]
    assert "Cisco IOS XE" in json.loads(responses[0].update.update[0].val.json_val)


def test_poll_answers_each_poll(stub: Any) -> None:
    stream = Stream(stub, subscription(pb.Subscription(path=parse("/system/state/hostname")),
                                       mode="POLL"))
    try:
        assert len(stream.until_sync()) == 1
        for _ in range(2):
            stream.requests.put(pb.SubscribeRequest(poll=pb.Poll()))
            [update] = stream.until_sync()
            assert json.loads(update.update.update[0].val.json_ietf_val) == "R1"
    finally:
        stream.close()


def test_sample_sends_at_its_interval(stub: Any) -> None:
    stream = Stream(stub, subscription(pb.Subscription(
        path=parse("/system/state/current-datetime"), mode=pb.SubscriptionMode.Value("SAMPLE"),
        sample_interval=50_000_000)))
    try:
        stream.until_sync()
        start = time.monotonic()
        stamps = [stream.next().update.timestamp for _ in range(6)]
        elapsed = time.monotonic() - start
    finally:
        stream.close()
    gaps = [(b - a) / 1e6 for a, b in itertools.pairwise(stamps)]
    assert 0.2 < elapsed < 1.0
    assert all(30 < gap < 120 for gap in gaps), gaps


def test_on_change_hears_the_cli_and_netconf(stub: Any, endpoint: DeviceEndpoint) -> None:
    stream = Stream(stub, subscription(pb.Subscription(
        path=parse(f"/interfaces/interface[name={IFACE}]/state"),
        mode=pb.SubscriptionMode.Value("ON_CHANGE"))))
    try:
        stream.until_sync()
        emu_loop_cli(endpoint, "configure terminal", f"interface {IFACE}", "shutdown", "end")
        changed = _leaves(stream.next())
        assert changed["state/enabled"] is False
        assert changed["state/admin-status"] == "DOWN"
        assert "state/counters/in-octets" not in changed  # only what changed
        emu_loop_cli(endpoint, "configure terminal", f"interface {IFACE}", "no shutdown", "end")
        assert _leaves(stream.next())["state/enabled"] is True
        netconf = RawNetconf(endpoint.netconf_port or 0)
        try:
            netconf.rpc('<edit-config><target><running/></target><config>'
                        '<interfaces xmlns="urn:ietf:params:xml:ns:yang:ietf-interfaces">'
                        f"<interface><name>{IFACE}</name><description>by-netconf</description>"
                        "</interface></interfaces></config></edit-config>")
        finally:
            netconf.close()
        assert _leaves(stream.next())["state/description"] == "by-netconf"
    finally:
        stream.close()


def emu_loop_cli(endpoint: DeviceEndpoint, *lines: str) -> None:
    """CLI lines run as an SSH user's would be: on the emulator's loop (its watchers are
    loop-side)."""
    import asyncssh

    async def run() -> None:
        async with asyncssh.connect("127.0.0.1", endpoint.ssh_port, username="admin",
                                    password="admin", known_hosts=None) as conn:
            await conn.run("\n".join(lines), check=False)

    import asyncio

    asyncio.run(run())


def _leaves(response: Any) -> dict[str, Any]:
    return {"/".join(e.name for e in u.path.elem[2:]): json.loads(u.val.json_ietf_val)
            for u in response.update.update}


def test_subscribe_errors(stub: Any) -> None:
    poll_first = iter([pb.SubscribeRequest(poll=pb.Poll())])
    code, _ = status(lambda: list(stub.Subscribe(poll_first, metadata=AUTH, timeout=5)))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    too_fast = subscription(pb.Subscription(path=parse("/system"), mode=2, sample_interval=10))
    code, _ = status(lambda: list(stub.Subscribe(iter([too_fast]), metadata=AUTH, timeout=5)))
    assert code is grpc.StatusCode.INVALID_ARGUMENT
    missing = subscription(pb.Subscription(path=parse("/nothing")), mode="ONCE")
    code, _ = status(lambda: list(stub.Subscribe(iter([missing]), metadata=AUTH, timeout=5)))
    assert code is grpc.StatusCode.NOT_FOUND


# --- serving -----------------------------------------------------------------------------------


def test_serve_flags_choose_the_gnmi_port() -> None:
    import argparse

    from mgmtbench.emulator.command import options_from_args, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    default = options_from_args(parser.parse_args(["serve"]))
    assert (default.gnmi, default.gnmi_port) == (True, 9339)  # a device's port
    assert options_from_args(parser.parse_args(["serve", "--ssh-port", "0"])).gnmi_port == 0
    assert options_from_args(parser.parse_args(["serve", "--gnmi-port", "57400"])).gnmi_port \
        == 57400
    assert not options_from_args(parser.parse_args(["serve", "--no-gnmi"])).gnmi


def test_no_gnmi_without_models_or_when_turned_off() -> None:
    for options in (EmulatorOptions(https=False, gnmi=False),
                    EmulatorOptions(https=False, platform="cisco_asa")):
        with EmulatorThread(options) as emulator:
            assert emulator.endpoints[0].gnmi_port is None


def test_a_taken_gnmi_port_is_one_clear_line(endpoint: DeviceEndpoint) -> None:
    from mgmtbench.errors import UsageError

    with pytest.raises(UsageError, match=rf"gNMI port {endpoint.gnmi_port} on 127\.0\.0\.1 "
                                         r"cannot be used"):
        EmulatorThread(EmulatorOptions(https=False, ssh=True,
                                       gnmi_port=endpoint.gnmi_port or 0)).start()


def test_anonymous_calls_are_let_in_only_when_asked(stub: Any) -> None:
    """``--gnmi-anonymous``: a call without credentials (the study's Go client) is answered;
    wrong credentials are still refused."""
    request = pb.GetRequest(path=[command_path("show clock")], encoding=ENC("ASCII"))
    with EmulatorThread(EmulatorOptions(https=False, gnmi_anonymous=True)) as emulator:
        assert emulator.emulator.tls is not None
        creds = grpc.ssl_channel_credentials(emulator.emulator.tls.ca.read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{emulator.endpoints[0].gnmi_port}",
                                 creds) as channel:
            open_stub = rpc.gNMIStub(channel)
            assert "UTC" in open_stub.Get(request, timeout=10).notification[0].update[0].val \
                .ascii_val
            code, _ = status(lambda: open_stub.Get(
                request, metadata=(("username", "admin"), ("password", "no")), timeout=10))
            assert code is grpc.StatusCode.UNAUTHENTICATED
    code, _ = status(lambda: stub.Get(request, timeout=10))  # the default: a device's refusal
    assert code is grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("platform", ["arista_eos", "cisco_nxos", "juniper_junos"])
def test_every_modelled_platform_reads_and_sets(platform: str) -> None:
    """The other platforms with models: OpenConfig reads and a Set written in their own CLI
    (Junos: set and commit), read back."""
    from mgmtbench.clients.netconf.rpcs import edit_interface

    interface = edit_interface(platform)
    path = f"/interfaces/interface[name={interface}]/config/description"
    with EmulatorThread(EmulatorOptions(https=False, platform=platform)) as emulator:
        assert emulator.emulator.tls is not None
        creds = grpc.ssl_channel_credentials(emulator.emulator.tls.ca.read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{emulator.endpoints[0].gnmi_port}",
                                 creds) as channel:
            other = rpc.gNMIStub(channel)
            [hostname] = get(other, "/system/state/hostname").notification[0].update
            assert json_value(hostname) == "R1"
            _set(other, update=[pb.Update(path=parse(path), val=_jv(f"{platform}-by-gnmi"))])
            [update] = get(other, path).notification[0].update
            assert json_value(update) == f"{platform}-by-gnmi"
