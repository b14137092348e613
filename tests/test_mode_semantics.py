"""What each mode opens per iteration, counted on real sockets: the mode names mean what the
published study (clibench v0.7.0) means, in every adapter that has them.

SSH: the emulator counts what its SSH server accepts (TCP connections, exec requests, shells with
a PTY). HTTPS: a counting TCP proxy in front of the emulator's HTTPS port counts connections.
Counts are per iteration, after ``setup`` (untimed), over a few iterations.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from types import SimpleNamespace

import pytest

from mgmtbench.clients import AsyncClient, Client, Transport, adapter, pairs
from mgmtbench.clients.base import (
    GNMI_MODES,
    GNMI_STUDY_MODES,
    HTTP3_MODES,
    HTTP3_STUDY_MODES,
    HTTPS_MODES,
    KEPT_SHELL,
    KEPT_VARIANTS,
    NETCONF_MODES,
    RESTCONF_MODES,
    SSH_MODES,
    STUDY_MODES,
)
from mgmtbench.clients.fleet import FLEET_RUNNERS, fleet_runner
from mgmtbench.clients.fleet.adapted import AdaptedFleet
from mgmtbench.clients.restconf import requests
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_output, show_commands, stable_output
from mgmtbench.emulator.ssh.server import SshCounts
from mgmtbench.errors import ClientError, UsageError
from mgmtbench.targets import Login, Target
from mgmtbench.testing.fixtures import emulator_target
from mgmtbench.testing.options import modes as selected_modes

COMMANDS = ["show version", "show clock", "show ip interface brief", "show inventory",
            "show ip route"]
N = len(COMMANDS)
ROUNDS = 3
PAIRS = pairs(same_process=True)  # the emulator runs in this process
SSH_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.SSH]
HTTPS_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.HTTPS]
NETCONF_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.NETCONF]
RESTCONF_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.RESTCONF]
GNMI_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.GNMI]
HTTP3_PAIRS = [(c, m) for c, m in PAIRS if adapter(c).transport is Transport.HTTP3]

#: Per iteration with N commands: (TCP connections, exec requests, PTY shells).
SSH_PER_ITERATION = {
    "fresh-conn": (1, N, 0),  # a connection per iteration, a channel per command
    "reuse-conn": (0, N, 0),
    "batch-exec": (1, 1, 0),
    "pty-fresh": (1, 0, 1),
    "pty-reuse": (0, 0, 1),  # a new channel + PTY + shell on the connection made in setup
    "pipelined": (0, N, 0),
    "pty-kept": (0, 0, 0),  # the shell made in setup is kept
}
#: Per iteration with N commands: new TCP connections to the HTTPS port.
HTTPS_CONNECTIONS_PER_ITERATION = {
    "fresh-conn": N,  # a new TCP + TLS connection for every request
    "tls-resume": N,  # the same, TLS resumed
    "keep-alive": 0,
    "batch-post": 0,  # one POST on the warm connection
    "multi-cmd": 0,  # one GET on the warm connection
    "h2-multiplex": 0,
    "conn-per-iteration": 1,
    "batch-post-fresh": 1,
    "multi-cmd-fresh": 1,
    "eapi-batch": 0,  # one eAPI runCmds POST on the warm connection (arista_eos only)
    "nxapi-batch": 0,  # one NX-API JSON-RPC POST on the warm connection (cisco_nxos only)
}


#: Per iteration with N commands (the study's, clibench v0.8): (NETCONF sessions, get RPCs,
#: edit-config RPCs, commit RPCs).
NETCONF_PER_ITERATION = {
    "fresh-session": (1, N, 0, 0),  # a new SSH connection and session, a get per command
    "reuse-session": (0, N, 0, 0),
    "batch-rpc": (0, N, 0, 0),  # the same gets, all written before any reply is read
    "edit-commit": (0, 0, 1, 1),  # one edit-config of the candidate, then commit
}


#: Per iteration with N commands (the study's, clibench v0.8, then ours): new TCP connections
#: to the HTTPS port.
RESTCONF_CONNECTIONS_PER_ITERATION = {
    "fresh-conn": N,  # a new TCP + TLS connection for every GET, as the study's client dials
    "keep-alive": 0,
    "batch-patch": 0,  # one PATCH on the warm connection
    "json-vs-xml": 0,
    "h2-multiplex": 0,
    "conn-per-iteration": 1,
}

#: Per iteration with N commands (the study's, clibench v0.7.0, and ours): (TCP connections,
#: Get RPCs, Set RPCs, ONCE subscriptions). pygnmi adds a Capabilities call per connection.
GNMI_PER_ITERATION = {
    "fresh-conn": (1, 1, 0, 0),  # a new channel, ONE Get of every path
    "reuse-stream": (0, N, 0, 0),  # a unary Get per command on the kept channel
    "batch-set": (0, 0, 1, 0),  # every update in one Set
    "subscribe-once": (0, 0, 0, 1),  # one ONCE subscription of every path
    "fresh-get-per-cmd": (1, N, 0, 0),  # ours: a new channel, a Get per command
    "batch-get": (0, 1, 0, 0),  # ours: one Get of every path on the kept channel
}

#: Per iteration with N commands (the study's, clibench v0.7.0, then ours), as the device's
#: HTTP/3 server counts them: (QUIC connections, of them resumed, requests taken in 0-RTT early
#: data, requests).
HTTP3_PER_ITERATION = {
    "fresh-conn": (1, 0, 0, N),  # ONE new connection per iteration (HTTPS conn-per-iteration)
    "keep-alive": (0, 0, 0, N),
    "batch-post": (0, 0, 0, 1),  # one POST on the kept connection
    "0rtt-resumption": (1, 1, 0, N),  # resumed, but nothing sent before the handshake
    "0rtt": (1, 1, 1, N),  # ours: the first GET in early data
}


def test_every_mode_has_an_expectation() -> None:
    assert set(SSH_PER_ITERATION) == set(SSH_MODES)
    assert set(HTTPS_CONNECTIONS_PER_ITERATION) == set(HTTPS_MODES)
    assert set(NETCONF_PER_ITERATION) == set(NETCONF_MODES)
    assert set(RESTCONF_CONNECTIONS_PER_ITERATION) == set(RESTCONF_MODES)
    assert set(GNMI_PER_ITERATION) == set(GNMI_MODES)
    assert set(HTTP3_PER_ITERATION) == set(HTTP3_MODES)
    assert (set(SSH_MODES) | set(HTTPS_MODES) | set(NETCONF_MODES) | set(RESTCONF_MODES)
            | set(GNMI_MODES) | set(HTTP3_MODES)) >= STUDY_MODES
    assert set(GNMI_MODES) & STUDY_MODES == set(GNMI_STUDY_MODES)
    assert set(HTTP3_MODES) & STUDY_MODES == set(HTTP3_STUDY_MODES)
    assert not STUDY_MODES & KEPT_VARIANTS


def iterations(client: Client | AsyncClient, before: Callable[[], None],
               after: Callable[[], None], commands: list[str] = COMMANDS) -> list[str]:
    """setup; ``before()``; ROUNDS runs (of ``commands``); ``after()``; teardown."""
    if isinstance(client, AsyncClient):
        async def go() -> list[str]:
            await client.setup()
            try:
                before()
                outputs = [await client.run(commands) for _ in range(ROUNDS)]
                after()
                return outputs
            finally:
                await client.teardown()

        return asyncio.run(go())
    client.setup()
    try:
        before()
        outputs = [client.run(commands) for _ in range(ROUNDS)]
        after()
        return outputs
    finally:
        client.teardown()


def expected() -> str:
    return expected_output("cisco_ios", "R1", "198.18.0.1", COMMANDS)


def stable(text: str) -> str:
    """``text`` with the device's running clock, uptime and counters masked."""
    return stable_output("cisco_ios", text)


@pytest.mark.parametrize(("name", "mode"), SSH_PAIRS, ids=[f"{c}-{m}" for c, m in SSH_PAIRS])
def test_ssh_mode_opens_what_its_name_says(name: str, mode: str, ios_target: Target,
                                           emulator_for: Callable[[str], EmulatorThread]) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    counts = emulator_for("cisco_ios").endpoints[0].ssh_counts
    seen: list[SshCounts] = []

    def snapshot() -> None:
        seen.append(replace(counts))

    outputs = iterations(cls(ios_target, mode), snapshot, snapshot)
    assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    per_iteration = tuple((getattr(end, f) - getattr(start, f)) / ROUNDS
                          for f in ("connections", "execs", "ptys"))
    assert per_iteration == SSH_PER_ITERATION[mode]
    assert end.shells - start.shells == end.ptys - start.ptys  # every shell has a PTY


@pytest.mark.parametrize(("name", "mode"), NETCONF_PAIRS,
                         ids=[f"{c}-{m}" for c, m in NETCONF_PAIRS])
def test_netconf_mode_sends_what_its_name_says(name: str, mode: str, ios_target: Target,
                                               emulator_for: Callable[[str], EmulatorThread]
                                               ) -> None:
    from mgmtbench.emulator.netconf.datastores import datastores

    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    device = emulator_for("cisco_ios").endpoints[0].device
    counts = datastores(device).counts
    seen: list[tuple[int, ...]] = []

    def snapshot() -> None:
        seen.append(tuple(counts[k] for k in ("sessions", "get", "edit-config", "commit")))

    outputs = iterations(cls(ios_target, mode), snapshot, snapshot)
    if mode == "edit-commit":
        assert outputs == ["ok\nok\n"] * ROUNDS
    else:
        assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    assert tuple((b - a) / ROUNDS for a, b in zip(start, end, strict=True)) == \
        NETCONF_PER_ITERATION[mode]


class CountingProxy:
    """A TCP proxy on 127.0.0.1 that counts the connections it accepts."""

    def __init__(self, host: str, port: int) -> None:
        self._upstream = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.accepted = 0
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []

    def start(self) -> CountingProxy:
        self._spawn(self._accept)
        return self

    def _spawn(self, target: Callable[..., None], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # the listener is closed
            self.accepted += 1
            upstream = socket.create_connection(self._upstream)
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                self._open += [client, upstream]
            ended: list[bool] = []
            self._spawn(self._pump, client, upstream, ended)
            self._spawn(self._pump, upstream, client, ended)

    def _pump(self, source: socket.socket, sink: socket.socket, ended: list[bool]) -> None:
        """Copy until ``source`` ends; the second direction to end closes both sockets."""
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass  # a reset: the other direction ends too
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)
        with self._lock:
            ended.append(True)
            last = len(ended) == 2
        if last:
            source.close()
            sink.close()

    def cut(self) -> None:
        """End every connection made so far (both ways), as a device or a middlebox may."""
        with self._lock:
            cut, self._open = self._open, []
        for sock in cut:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()


@pytest.fixture
def https_proxy(ios_target: Target) -> Iterator[CountingProxy]:
    proxy = CountingProxy(ios_target.host, ios_target.https_port).start()
    yield proxy
    proxy.close()


@pytest.mark.parametrize(("name", "mode"), HTTPS_PAIRS, ids=[f"{c}-{m}" for c, m in HTTPS_PAIRS])
def test_https_mode_opens_what_its_name_says(name: str, mode: str, ios_target: Target,
                                             https_proxy: CountingProxy) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    target = replace(ios_target, https_port=https_proxy.port)
    seen: list[int] = []
    outputs = iterations(cls(target, mode), lambda: seen.append(https_proxy.accepted),
                         lambda: seen.append(https_proxy.accepted))
    assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    assert (end - start) / ROUNDS == HTTPS_CONNECTIONS_PER_ITERATION[mode]


@pytest.mark.parametrize(("name", "mode"), RESTCONF_PAIRS,
                         ids=[f"{c}-{m}" for c, m in RESTCONF_PAIRS])
def test_restconf_mode_opens_what_its_name_says(name: str, mode: str, ios_target: Target,
                                                https_proxy: CountingProxy) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    target = replace(ios_target, https_port=https_proxy.port)
    seen: list[int] = []
    outputs = iterations(cls(target, mode, "cli"), lambda: seen.append(https_proxy.accepted),
                         lambda: seen.append(https_proxy.accepted))
    if mode == "batch-patch":  # the study's batch answers its status, not the outputs
        assert outputs == [requests.batch_ok("cli")] * ROUNDS
    else:
        assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    assert (end - start) / ROUNDS == RESTCONF_CONNECTIONS_PER_ITERATION[mode]


@pytest.mark.parametrize("name", list(FLEET_RUNNERS))
def test_fleets_of_adapters_keep_their_session(name: str) -> None:
    """The fleet runners that drive an adapter keep one session per device, as before issue 12:
    the kept shell (``pty-kept``), or ``reuse-conn`` for ``ssh`` processes."""
    runner = fleet_runner(name)
    if not issubclass(runner, AdaptedFleet):
        return
    assert runner.mode in runner.adapter.modes
    expected_mode = "reuse-conn" if name == "openssh" else KEPT_SHELL
    assert runner.mode == expected_mode


class _Config:
    """Just enough of a pytest config for the ``--modes`` option."""

    def __init__(self, value: str) -> None:
        self.value = value

    def getoption(self, name: str) -> str:
        assert name == "--modes"
        return self.value


@pytest.mark.parametrize(("value", "has", "lacks"), [
    ("study", {"pty-reuse", "fresh-conn", "batch-post", "pipelined", "tls-resume",
               "h2-multiplex"}, KEPT_VARIANTS),
    ("all", KEPT_VARIANTS | STUDY_MODES, set()),
    ("pty-kept,keep-alive", {"pty-kept", "keep-alive"}, {"fresh-conn"}),
])
def test_modes_option(value: str, has: set[str], lacks: set[str]) -> None:
    chosen = selected_modes(_Config(value))  # type: ignore[arg-type]
    assert has <= chosen
    assert not lacks & chosen


def test_an_unknown_mode_is_one_usage_error() -> None:
    with pytest.raises(pytest.UsageError, match="unknown modes \\['pty-rouse'\\]"):
        selected_modes(_Config("pty-rouse"))  # type: ignore[arg-type]


@pytest.fixture
def gnmi_proxy(ios_target: Target) -> Iterator[CountingProxy]:
    proxy = CountingProxy(ios_target.host, ios_target.gnmi_port).start()
    yield proxy
    proxy.close()


@pytest.mark.parametrize(("name", "mode"), GNMI_PAIRS, ids=[f"{c}-{m}" for c, m in GNMI_PAIRS])
def test_gnmi_mode_sends_what_its_name_says(name: str, mode: str, ios_target: Target,
                                            gnmi_proxy: CountingProxy,
                                            emulator_for: Callable[[str], EmulatorThread]
                                            ) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    counts = emulator_for("cisco_ios").emulator.gnmi_services["R1"].counts
    seen: list[tuple[float, ...]] = []

    def snapshot() -> None:
        seen.append((gnmi_proxy.accepted, *(counts.get(k, 0) for k in (
            "Get", "Set", "Subscribe ONCE"))))

    target = replace(ios_target, gnmi_port=gnmi_proxy.port)
    outputs = iterations(cls(target, mode), snapshot, snapshot)
    if mode == "batch-set":
        assert outputs == ["ok\n" * N] * ROUNDS
    else:
        assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    assert tuple((b - a) / ROUNDS for a, b in zip(start, end, strict=True)) == \
        GNMI_PER_ITERATION[mode]


#: The HTTP modes (HTTPS API and RESTCONF) whose requests go out on the connection of ``setup``.
KEPT_HTTP = [(c, m) for c, m in HTTPS_PAIRS + RESTCONF_PAIRS
             if {**HTTPS_CONNECTIONS_PER_ITERATION, **RESTCONF_CONNECTIONS_PER_ITERATION}[m] == 0]


def _http_client(name: str, mode: str, target: Target) -> Client | AsyncClient:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    if cls.transport is Transport.RESTCONF:
        return cls(target, mode, "cli")
    return cls(target, mode)


@pytest.mark.parametrize(("name", "mode"), KEPT_HTTP, ids=[f"{c}-{m}" for c, m in KEPT_HTTP])
def test_a_kept_connection_outlives_an_idle_pause(name: str, mode: str, ios_target: Target,
                                                  https_proxy: CountingProxy,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """httpx drops a pooled connection idle 5 s (``keepalive_expiry``), and a benchmark's untimed
    work between ``setup`` and the timed rounds (the wire tap's start) can take that long on a
    slow machine: a ``keep-alive`` round then timed a handshake (CI, the netem VM). The kept modes
    hold their connection: after a minute on httpcore's clock, still no new connection."""
    import httpcore

    client = _http_client(name, mode, replace(ios_target, https_port=https_proxy.port))
    seen: list[int] = []

    def a_minute_later() -> None:
        seen.append(https_proxy.accepted)
        later = SimpleNamespace(monotonic=lambda: time.monotonic() + 60.0)
        for module in (httpcore._sync.http11, httpcore._sync.http2, httpcore._async.http11,
                       httpcore._async.http2):
            monkeypatch.setattr(module, "time", later)

    iterations(client, a_minute_later, lambda: seen.append(https_proxy.accepted))
    assert seen[1] == seen[0]


@pytest.mark.parametrize(("name", "mode"), KEPT_HTTP, ids=[f"{c}-{m}" for c, m in KEPT_HTTP])
def test_a_lost_kept_connection_fails_the_round(name: str, mode: str, ios_target: Target,
                                                https_proxy: CountingProxy) -> None:
    """A kept connection that ends is not quietly replaced: the round would time TCP and TLS
    under the name ``keep-alive``; it fails instead (HTTP/1.1: httpx sees the end and would
    reconnect, refused; HTTP/2: the stream's read fails)."""
    client = _http_client(name, mode, replace(ios_target, https_port=https_proxy.port))
    with pytest.raises(ClientError) as failed:
        iterations(client, https_proxy.cut, lambda: None)
    if mode != "h2-multiplex" and not name.endswith("-h2"):
        assert "new connection, not the one kept from setup" in str(failed.value)


@pytest.mark.parametrize(("name", "mode"), HTTP3_PAIRS, ids=[f"{c}-{m}" for c, m in HTTP3_PAIRS])
def test_http3_mode_opens_what_its_name_says(name: str, mode: str, ios_target: Target,
                                             emulator_for: Callable[[str], EmulatorThread]
                                             ) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    counts = emulator_for("cisco_ios").endpoints[0].device.http3_counts
    seen: list[dict[str, int]] = []

    def snapshot() -> None:
        seen.append(counts.as_dict())

    outputs = iterations(cls(ios_target, mode), snapshot, snapshot)
    assert [stable(o) for o in outputs] == [stable(expected())] * ROUNDS
    start, end = seen
    per_iteration = tuple((end[f] - start[f]) / ROUNDS
                          for f in ("connections", "resumed", "early_data_accepted", "requests"))
    assert per_iteration == HTTP3_PER_ITERATION[mode]
    assert end["early_data_refused"] == start["early_data_refused"]


# --- the platform APIs' batches: eapi-batch (Arista eAPI), nxapi-batch (Cisco NX-API) -----------

#: Each platform-API mode and the platform that serves its API.
API_PLATFORMS = {"eapi-batch": "arista_eos", "nxapi-batch": "cisco_nxos"}


def _api_device(platform: str, emulator_for: Callable[[str], EmulatorThread],
                login: Login) -> tuple[Target, str]:
    """The session's device of ``platform`` as a target, and what its CLI prints for its
    everyday show commands (the transcripts, concatenated)."""
    emu = emulator_for(platform)
    device = emu.endpoints[0].device
    want = expected_output(platform, device.hostname, device.facts.mgmt_ip,
                           show_commands(platform, N))
    return emulator_target(emu, login), want


@pytest.mark.parametrize("mode", list(API_PLATFORMS))
def test_platform_api_batch_returns_the_clis_text_in_one_request(
        mode: str, emulator_for: Callable[[str], EmulatorThread], login: Login) -> None:
    """ONE request per iteration on the connection of ``setup``, answering what the CLI prints
    (the same text as the HTTPS API's ``batch-post`` on the same device)."""
    platform = API_PLATFORMS[mode]
    target, want = _api_device(platform, emulator_for, login)
    proxy = CountingProxy(target.host, target.https_port).start()
    try:
        seen: list[int] = []
        outputs = iterations(adapter("httpx")(replace(target, https_port=proxy.port), mode),
                             lambda: seen.append(proxy.accepted),
                             lambda: seen.append(proxy.accepted),
                             commands=show_commands(platform, N))
    finally:
        proxy.close()
    assert [stable_output(platform, o) for o in outputs] == [stable_output(platform, want)] * ROUNDS
    start, end = seen
    assert (end - start) / ROUNDS == HTTPS_CONNECTIONS_PER_ITERATION[mode]
    cli = iterations(adapter("httpx")(target, "batch-post"), lambda: None, lambda: None,
                     commands=show_commands(platform, N))
    assert stable_output(platform, cli[0]) == stable_output(platform, outputs[0])


@pytest.mark.parametrize("mode", list(API_PLATFORMS))
def test_platform_api_batch_error_is_a_client_error(
        mode: str, emulator_for: Callable[[str], EmulatorThread], login: Login) -> None:
    """A command the device refuses comes back as a JSON-RPC error: a ClientError with its
    message, on one line."""
    target, _ = _api_device(API_PLATFORMS[mode], emulator_for, login)
    client = adapter("httpx")(target, mode)
    assert isinstance(client, Client)
    client.setup()
    try:
        with pytest.raises(ClientError) as raised:
            client.run(["show clock", "show no-such-thing"])
    finally:
        client.teardown()
    message = str(raised.value)
    assert "\n" not in message
    if mode == "eapi-batch":  # eAPI's own words: which command of how many failed
        assert "eAPI error 1002" in message
        assert "CLI command 2 of 2 'show no-such-thing' failed: invalid command" in message
    else:  # NX-API's Invalid params, with the CLI's error line
        assert "NX-API error -32602: Invalid params: " in message
        assert "% Invalid command at '^' marker." in message


@pytest.mark.parametrize("mode", list(API_PLATFORMS))
@pytest.mark.parametrize("platform", ["cisco_ios", "cisco_asa", "juniper_junos", "arista_eos",
                                      "cisco_nxos"])
def test_platform_api_batch_is_refused_without_the_api(mode: str, platform: str,
                                                       ios_target: Target) -> None:
    """Refused when the client is made (before anything is timed), in one sentence naming the
    API and the platform that serves it; the pairs of a platform leave it out."""
    target = replace(ios_target, platform=platform)
    if platform == API_PLATFORMS[mode]:
        adapter("httpx").check_mode(target, mode)  # served: nothing to refuse
        assert ("httpx", mode) in pairs(platform=platform)
        return
    with pytest.raises(UsageError, match=f"client httpx: mode {mode} speaks .*, which platform "
                                         f"{platform} does not serve \\(it runs on "
                                         f"{API_PLATFORMS[mode]}\\)"):
        adapter("httpx")(target, mode)
    assert ("httpx", mode) not in pairs(platform=platform)
    assert ("httpx", mode) in pairs(platform=None)


def test_platform_api_modes_are_not_in_the_default_matrix() -> None:
    """``--modes study`` (the default run) leaves them out; ``all`` and their names pick them."""
    assert not set(API_PLATFORMS) & selected_modes(_Config("study"))  # type: ignore[arg-type]
    assert set(API_PLATFORMS) <= selected_modes(_Config("all"))  # type: ignore[arg-type]
    assert selected_modes(_Config("batch-post,eapi-batch")) == {  # type: ignore[arg-type]
        "batch-post", "eapi-batch"}
