"""The edge proxy: real HTTPS (HTTP/1.1 and HTTP/2) and HTTP/3 (QUIC) in front of real emulators
over real SSH on loopback; pooling, limits, health on reuse, 425 for early data that is not safe
to replay, and every failure as a status with its reason."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

from mgmtbench.cli import main
from mgmtbench.clients import adapter
from mgmtbench.clients.aioquic_h3.connection import basic_auth, client_configuration, dial
from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.emulator import EmulatorThread, oracle
from mgmtbench.emulator.cli.dialects import dialect_commands
from mgmtbench.emulator.oracle import expected_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import ClientError, UsageError
from mgmtbench.proxy.app import ProxyPolicy
from mgmtbench.proxy.h3client import H3ProxyClient
from mgmtbench.proxy.headend import Headend, HeadendOptions
from mgmtbench.proxy.inventory import Inventory, ProxyDevice
from mgmtbench.proxy.pool import PoolSettings
from mgmtbench.proxy.server import EdgeProxy, ProxyOptions, ProxyThread
from mgmtbench.targets import Auth, Login, make_target
from mgmtbench.testing import Driver
from mgmtbench.testing.credentials import PASSWORD as SECRET_PASSWORD
from mgmtbench.testing.credentials import USERNAME
from mgmtbench.testing.keys import ClientKeys

USER, PASSWORD = "proxy-user", "proxy-pw"
Proxy = Callable[..., ProxyThread]


def device_of(endpoint: DeviceEndpoint, **fields: Any) -> ProxyDevice:
    assert endpoint.ssh_port
    return ProxyDevice(endpoint.hostname, endpoint.host, endpoint.ssh_port,
                       endpoint.device.platform.style.name, **fields)


@pytest.fixture
def proxy_for(login: Login) -> Iterator[Proxy]:
    """``proxy_for(emulator, pool=PoolSettings(...), ...)``: a proxy for one emulator's devices,
    checking their host keys, stopped after the test."""
    started: list[ProxyThread] = []

    def start(emu: EmulatorThread, *, devices: list[ProxyDevice] | None = None,
              known_hosts: bool = True, device_login: Login | None = None,
              **options: Any) -> ProxyThread:
        found = devices or [device_of(e) for e in emu.endpoints]
        options.setdefault("policy", ProxyPolicy(USER, PASSWORD))
        proxy = ProxyThread(ProxyOptions(
            inventory=Inventory(found), device_login=device_login or login,
            known_hosts=emu.emulator.known_hosts if known_hosts else None, **options)).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()


def client_for(proxy: ProxyThread, http2: bool = False, auth: tuple[str, str] = (USER, PASSWORD),
           headers: dict[str, str] | None = None) -> httpx.Client:
    return httpx.Client(base_url=proxy.url, auth=auth, http1=not http2, http2=http2,
                        verify=ssl.create_default_context(cafile=str(proxy.ca_file)),
                        trust_env=False, timeout=30, headers=headers)


def same_output(got: str, expected: str, platform: str = "cisco_ios") -> bool:
    """Equal once the device's running clock and uptime are masked (:mod:`.oracle`)."""
    return oracle.same_output(platform, got, expected)


def want(endpoint: DeviceEndpoint, commands: list[str]) -> str:
    return expected_output(endpoint.device.platform.style.name, endpoint.hostname,
                           endpoint.device.facts.mgmt_ip, commands)


COMMANDS = ["show version", "show clock", "show clock"]


def test_exec_and_config_on_every_platform(endpoint: DeviceEndpoint, proxy_for: Proxy,
                                           emulator_for: Callable[[str], EmulatorThread]) -> None:
    # cisco_ios runs exec channels (one per command), cisco_asa a shell: the same answers.
    emu = emulator_for(endpoint.device.platform.style.name)
    proxy = proxy_for(emu)
    execs, shells = endpoint.ssh_counts.execs, endpoint.ssh_counts.shells
    # The platform's own show commands (Junos has no `show clock`), one abbreviated.
    other = endpoint.device.platform.style.show_commands[1]
    sent, commands = ["show version", other, "sh ver"], ["show version", other, "show version"]
    with client_for(proxy) as c:
        path = "/".join(command.replace(" ", "+") for command in sent)
        got = c.get(f"/device/{endpoint.hostname}/admin/exec/{path}")
        # A configuration body goes through `configure terminal` ... `end` (IOS, ASA, EOS,
        # NX-OS); Junos is configured its own way (set ... commit), which the proxy does not do.
        lines = dialect_commands(endpoint.device.platform.style.dialect).free_config
        posted = c.post(f"/device/{endpoint.host}/admin/config",
                        content="\n".join(sent).encode()) if lines else None
    assert got.status_code == 200, got.text
    platform = endpoint.device.platform.style.name
    assert same_output(got.text, want(endpoint, commands), platform)
    if posted is not None:
        assert posted.status_code == 200, posted.text
        assert same_output(posted.text, want(endpoint, commands), platform)
    if device_of(endpoint).uses_exec:
        assert endpoint.ssh_counts.execs - execs == 6  # a channel per command, as the study's
    else:
        requests = 1 if posted is None else 2
        assert endpoint.ssh_counts.shells - shells == requests  # a shell per request


def test_http2_and_the_device_header(ios: DeviceEndpoint, proxy_for: Proxy,
                                     emulator_for: Callable[[str], EmulatorThread]) -> None:
    proxy = proxy_for(emulator_for("cisco_ios"))
    with client_for(proxy, http2=True, headers={"X-Device": ios.hostname}) as c:
        response = c.get("/admin/exec/show+clock")
    assert response.http_version == "HTTP/2"
    assert same_output(response.text, want(ios, ["show clock"]))


def test_a_configuration_body_goes_through_a_shell(fresh_emulator: Callable[..., EmulatorThread],
                                                   proxy_for: Proxy) -> None:
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    proxy = proxy_for(emu)
    name, clock = endpoint.hostname, want(endpoint, ["show clock"])  # the inventory's name
    with client_for(proxy) as c:
        changed = c.post(f"/device/{name}/admin/config",
                         content=b"hostname EDGE-R9\nshow clock\n")
        config = c.get(f"/device/{name}/admin/exec/show+running-config")
    assert changed.status_code == 200, changed.text
    assert same_output(changed.text, clock)
    assert endpoint.ssh_counts.shells == 1
    assert "hostname EDGE-R9" in config.text


def test_pooled_requests_share_a_connection_fresh_ones_do_not(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    proxy = proxy_for(emu)
    path = f"/device/{endpoint.hostname}/admin/exec/show+clock"
    with client_for(proxy) as c:
        for _ in range(3):
            assert c.get(path).status_code == 200
        pooled = endpoint.ssh_counts.connections
        for _ in range(3):
            assert c.get(path, headers={"X-SSH-Connection": "fresh"}).status_code == 200
        stats = c.get("/proxy/stats").json()
    assert pooled == 1
    assert endpoint.ssh_counts.connections == 4
    assert stats["pool"]["opened"] == 4
    assert stats["pool"]["reused"] == 2
    assert stats["pool"]["idle"] == 1
    assert stats["statuses"] == {"200": 6}


def test_idle_connections_are_closed_after_the_idle_timeout(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    proxy = proxy_for(emu, pool=PoolSettings(idle_timeout=0.3))
    path = f"/device/{endpoint.hostname}/admin/exec/show+clock"
    with client_for(proxy) as c:
        assert c.get(path).status_code == 200
        assert c.get("/proxy/stats").json()["pool"]["idle"] == 1
        time.sleep(1.0)
        stats = c.get("/proxy/stats").json()["pool"]
        assert c.get(path).status_code == 200
    assert stats["closed_idle"] == 1
    assert stats["open"] == 0
    assert endpoint.ssh_counts.connections == 2


def test_per_device_limit_and_pool_size(fresh_emulator: Callable[..., EmulatorThread],
                                        proxy_for: Proxy) -> None:
    emu = fresh_emulator("cisco_ios", devices=2)
    proxy = proxy_for(emu, pool=PoolSettings(per_device=2, size=1))
    paths = [f"/device/{e.hostname}/admin/exec/show+clock" for e in emu.endpoints]
    with client_for(proxy) as c, ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda p: c.get(p).status_code, paths * 6))
        stats = c.get("/proxy/stats").json()["pool"]
    assert statuses == [200] * 12
    assert stats["per_device_peak"] <= 2
    assert stats["peak_open"] <= 4
    assert stats["idle"] == 1  # the rest were closed on return: the pool keeps one
    assert stats["closed_full"] >= 1


def test_a_dropped_pooled_connection_is_replaced(fresh_emulator: Callable[..., EmulatorThread],
                                                 proxy_for: Proxy) -> None:
    # The device "reboots": every SSH connection closed, then it serves on the same port again.
    first = fresh_emulator("cisco_ios")
    port = first.endpoints[0].ssh_port
    proxy = proxy_for(first, known_hosts=False)  # a rebooted emulator has a new host key
    path = f"/device/{first.endpoints[0].hostname}/admin/exec/show+clock"
    with client_for(proxy) as c:
        assert c.get(path).status_code == 200
        first.stop()
        again = fresh_emulator("cisco_ios", ssh_port=port)
        response = c.get(path)
        stats = c.get("/proxy/stats").json()["pool"]
    assert response.status_code == 200, response.text
    assert same_output(response.text, want(again.endpoints[0], ["show clock"]))
    assert stats["stale"] == 1
    assert again.endpoints[0].ssh_counts.connections == 1


def test_caller_and_device_errors_are_statuses_with_a_reason(
        ios: DeviceEndpoint, proxy_for: Proxy, login: Login,
        emulator_for: Callable[[str], EmulatorThread]) -> None:
    emu = emulator_for("cisco_ios")
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]
    devices = [device_of(ios), ProxyDevice("gone", "127.0.0.1", closed_port)]
    proxy = proxy_for(emu, devices=devices)
    bad_login = Login(login.username, "wrong-password", login.enable_secret)
    wrong_password = proxy_for(emu, device_login=bad_login)
    with client_for(proxy) as c:
        unknown = c.get("/device/nowhere/admin/exec/show+clock")
        no_device = c.get("/admin/exec/show+clock")
        unreachable = c.get("/device/gone/admin/exec/show+clock")
        wrong_method = c.post(f"/device/{ios.hostname}/admin/exec/show+clock")
        bad_header = c.get(f"/device/{ios.hostname}/admin/exec/show+clock",
                           headers={"X-SSH-Connection": "sometimes"})
    with client_for(proxy, auth=(USER, "nope")) as c:
        caller = c.get(f"/device/{ios.hostname}/admin/exec/show+clock")
    with client_for(wrong_password) as c:
        refused = c.get(f"/device/{ios.hostname}/admin/exec/show+clock")
    assert (unknown.status_code, no_device.status_code) == (404, 404)
    assert "unknown device 'nowhere'" in unknown.text
    assert unreachable.status_code == 502
    assert unreachable.text.startswith("device gone unreachable: ")
    assert wrong_method.status_code == 405
    assert bad_header.status_code == 400
    assert caller.status_code == 401
    assert caller.headers["www-authenticate"].startswith("Basic")
    assert refused.status_code == 502
    assert refused.text.startswith(f"authentication failed at device {ios.hostname}: ")
    for response in (unknown, unreachable, caller, refused):
        assert response.text.count("\n") == 1  # one line


def test_a_slow_device_is_a_504_not_a_hung_request(fresh_emulator: Callable[..., EmulatorThread],
                                                   proxy_for: Proxy) -> None:
    emu = fresh_emulator("cisco_ios", processing_delay=5.0)
    proxy = proxy_for(emu, policy=ProxyPolicy(USER, PASSWORD, timeout=0.5))
    with client_for(proxy) as c:
        start = time.monotonic()
        response = c.get(f"/device/{emu.endpoints[0].hostname}/admin/exec/show+clock")
        took = time.monotonic() - start
    assert response.status_code == 504
    assert "did not answer within 0.5 s" in response.text
    assert took < 3


def h3_target(proxy: ProxyThread, login: Login) -> Any:
    """The proxy as the target of its HTTP/3 client (its UDP port is the HTTPS one's number)."""
    port = proxy.proxy.port
    return make_target("127.0.0.1", 22, port, platform="cisco_ios",
                       login=replace(login, username=USER, password=PASSWORD),
                       ca_file=proxy.ca_file, http3_port=port)


@pytest.mark.parametrize(("mode", "quic_per_round", "ssh_per_round"), [
    ("h3-fresh-ssh", 1, 1),  # a new QUIC connection, and a new SSH one at the proxy
    ("h3-pooled-ssh", 1, 0),  # a new QUIC connection, pooled SSH
    ("h3-keep-alive", 0, 0),  # the QUIC connection of setup, pooled SSH
])
def test_the_h3_proxy_client_opens_what_its_mode_says(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy, login: Login, mode: str,
        quic_per_round: int, ssh_per_round: int) -> None:
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    proxy = proxy_for(emu)
    client = H3ProxyClient(h3_target(proxy, login), mode, endpoint.hostname)
    counter = RoundTripCounter()
    client.count_round_trips(counter)
    driver = Driver(client)
    driver.setup()
    try:
        assert proxy.proxy.api is not None
        before = proxy.proxy.api.stats()
        answers = [driver.run(COMMANDS) for _ in range(3)]
        after = proxy.proxy.api.stats()
    finally:
        driver.teardown()
    assert all(same_output(a, want(endpoint, COMMANDS)) for a in answers)
    assert after["http3"]["connections"] - before["http3"]["connections"] == 3 * quic_per_round
    assert after["pool"]["opened"] - before["pool"]["opened"] == 3 * ssh_per_round
    assert after["http_versions"]["3"] - before["http_versions"]["3"] == 3  # one POST a round
    assert counter.connections == 1 + 3 * quic_per_round  # setup's, then the rounds'
    assert counter.trips > 0


def test_the_proxy_answers_early_data_as_the_device_does(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    """0-RTT: a GET of show commands is answered from early data; a POST that would run on the
    device gets 425 Too Early before it reaches it."""
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    proxy = proxy_for(emu)
    port = proxy.proxy.port
    headers = [basic_auth(USER, PASSWORD)]
    device = f"/device/{endpoint.hostname}/admin"

    async def early(method: str, path: str, body: bytes = b"") -> tuple[int, bool]:
        first = await dial("127.0.0.1", port, client_configuration("127.0.0.1", proxy.ca_file),
                           "test", f"127.0.0.1:{port}", headers, None)
        try:
            await first.handshaken(10)
            await first.within(first.ticket_came.wait(), 10, "a ticket")
        finally:
            await first.aclose()
        resumed = await dial("127.0.0.1", port, client_configuration(
            "127.0.0.1", proxy.ca_file, first.ticket), "test", f"127.0.0.1:{port}", headers,
            None, transmit=False)
        try:
            answer = resumed.send(method, path, body)  # leaves with the ClientHello
            handshake = await resumed.handshaken(10)
            return (await resumed.within(answer, 10, path)).status, handshake.early_data_accepted
        finally:
            await resumed.aclose()

    execs = endpoint.ssh_counts.execs
    assert asyncio.run(early("GET", f"{device}/exec/show+clock")) == (200, True)
    assert endpoint.ssh_counts.execs == execs + 1
    assert asyncio.run(early("POST", f"{device}/config", b"hostname X")) == (425, True)
    assert asyncio.run(early("GET", f"{device}/exec/reload")) == (425, True)
    assert endpoint.ssh_counts.execs == execs + 1  # neither reached the device
    assert proxy.proxy.api is not None
    stats = proxy.proxy.api.stats()
    assert stats["statuses"]["425"] == 2
    assert stats["http3"]["early_data_accepted"] == 1
    assert stats["http3"]["early_data_refused"] == 2


def test_https_and_http3_on_one_port_and_no_http3(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy, login: Login) -> None:
    emu = fresh_emulator("cisco_ios")
    endpoint = emu.endpoints[0]
    both = proxy_for(emu)
    path = f"/device/{endpoint.hostname}/admin/exec/show+clock"
    with client_for(both) as c:
        assert c.get(path).status_code == 200
    h3 = Driver(H3ProxyClient(h3_target(both, login), "h3-keep-alive", endpoint.hostname))
    h3.setup()
    h3.teardown()
    assert both.proxy.api is not None
    assert both.proxy.api.stats()["http_versions"] == {"1.1": 1, "3": 1}
    only = proxy_for(emu, http3=False)
    assert only.proxy.api is not None
    assert "http3" not in only.proxy.api.stats()
    driver = Driver(H3ProxyClient(h3_target(only, login), "h3-keep-alive", endpoint.hostname))
    try:
        with pytest.raises(ClientError, match=r"refused|unreachable|closed"):
            driver.setup()
    finally:
        driver.teardown()


async def serve_and_stop(proxy: EdgeProxy) -> None:
    await proxy.start()
    await proxy.stop()


def test_a_udp_port_in_use_is_one_sentence(login: Login, tmp_path: Path) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", 0))
    port = taken.getsockname()[1]
    options = ProxyOptions(inventory=Inventory([ProxyDevice("R1", "127.0.0.1", 22, "cisco_ios")]),
                           device_login=login, port=port, state_dir=tmp_path)
    try:
        with pytest.raises(UsageError, match=f"^UDP port {port} on 127.0.0.1 is already in use: "):
            asyncio.run(EdgeProxy(options).start())
        asyncio.run(serve_and_stop(EdgeProxy(replace(options, http3=False))))  # --no-http3
    finally:
        taken.close()


def test_the_command_refuses_mistakes_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy"]) == 2
    assert main(["proxy", "--device", "R1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["mgmtbench: error: the proxy needs devices: give --inventory FILE or --device "
                   "NAME=ADDRESS",
                   "mgmtbench: error: --device 'R1': use NAME=ADDRESS or NAME=ADDRESS:PORT"]


@pytest.fixture
def headend_for(proxy_for: Proxy, client_keys: ClientKeys,
                tmp_path: Path) -> Iterator[Callable[[EmulatorThread], tuple[ProxyThread, Headend]]]:
    """A proxy for the emulator's devices and a head-end in front of it for its first device,
    on the proxy's event loop."""
    def start(emu: EmulatorThread, proxy_http3: bool = False) -> tuple[ProxyThread, Headend]:
        proxy = proxy_for(emu)
        headend = Headend(HeadendOptions(
            proxy_url=proxy.url, proxy_ca=proxy.ca_file, device=emu.endpoints[0].hostname,
            username=USERNAME, password=SECRET_PASSWORD, proxy_username=USER,
            proxy_password=PASSWORD, authorized_keys=client_keys.authorized_keys,
            state_dir=tmp_path / "headend", proxy_http3=proxy_http3))
        proxy.call(headend.start())
        stops.append((proxy, headend))
        return proxy, headend

    stops: list[tuple[ProxyThread, Headend]] = []
    yield start
    for proxy, headend in stops:
        proxy.call(headend.stop())


@pytest.mark.parametrize(("client", "mode", "requests"), [
    ("asyncssh", "fresh-conn", 3),  # ssh-https-ssh: an exec, so a GET, per command
    ("asyncssh", "batch-exec", 1),  # ssh-https-ssh-batch: one exec of 3 lines, one POST
    ("paramiko", "fresh-conn", 3),
    pytest.param("openssh", "batch-exec", 1, marks=pytest.mark.openssh),
])
def test_the_tunnel_carries_an_unmodified_ssh_client(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login,
        client: str, mode: str, requests: int) -> None:
    cls = adapter(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu)
    endpoint = emu.endpoints[0]
    auth = Auth.KEY if client == "openssh" else Auth.PASSWORD
    target = replace(make_target("127.0.0.1", headend.port, 0, platform="cisco_ios", login=login,
                                 known_hosts=headend.known_hosts), auth=auth)
    driver = Driver(cls(target, mode))
    driver.setup()
    try:
        answer = driver.run(COMMANDS)
    finally:
        driver.teardown()
    assert same_output(answer, want(endpoint, COMMANDS))
    with client_for(proxy) as c:
        assert c.get("/proxy/stats").json()["statuses"] == {"200": requests}
    assert endpoint.ssh_counts.execs == 3  # the proxy: an exec channel per command either way


def test_the_headend_talks_http3_on_one_kept_connection(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    """``--proxy-http3``: an exec (one GET) and a batch (one POST) over ONE QUIC connection to
    the proxy; a connection that is gone is dialled again."""
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu, proxy_http3=True)
    endpoint = emu.endpoints[0]

    async def execs(*commands: str) -> list[asyncssh.SSHCompletedProcess]:
        async with asyncssh.connect("127.0.0.1", headend.port, username=login.username,
                                    password=login.password, client_keys=None,
                                    known_hosts=str(headend.known_hosts)) as conn:
            return [await conn.run(c) for c in commands]

    one, batch = asyncio.run(execs("show clock", "\n".join(COMMANDS)))
    assert one.exit_status == 0
    assert same_output(str(one.stdout), want(endpoint, ["show clock"]))
    assert batch.exit_status == 0
    assert same_output(str(batch.stdout), want(endpoint, COMMANDS))
    api = proxy.proxy.api
    assert api is not None
    assert api.stats()["http_versions"] == {"3": 2}
    assert api.stats()["http3"]["connections"] == 1
    upstream = headend._upstream
    assert upstream is not None
    proxy.call(upstream.aclose())  # the connection is gone: the next request dials again
    (again,) = asyncio.run(execs("show clock"))
    assert again.exit_status == 0
    assert api.stats()["http3"]["connections"] == 2
    assert api.stats()["http_versions"] == {"3": 3}


@pytest.mark.parametrize(("client", "mode"), [
    ("netmiko", "pty-fresh"),  # ConnectHandler(device_type="cisco_ios"), send_command
    ("scrapli-bin", "pty-fresh"),
    ("paramiko", "pty-fresh"),  # invoke_shell
    ("asyncssh", "pty-kept"),
])
def test_the_tunnel_carries_a_shell(fresh_emulator: Callable[..., EmulatorThread],
                                    headend_for: Any, login: Login, client: str,
                                    mode: str) -> None:
    cls = adapter(client)
    hint = cls.missing()
    if hint:
        pytest.skip(hint)
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu)
    endpoint = emu.endpoints[0]
    target = make_target("127.0.0.1", headend.port, 0, platform="cisco_ios", login=login,
                         known_hosts=headend.known_hosts)
    direct = make_target(endpoint.host, endpoint.ssh_port or 0, 0, platform="cisco_ios",
                         login=login, known_hosts=emu.emulator.known_hosts)
    answers = []
    for where in (target, direct):
        driver = Driver(cls(where, mode))
        driver.setup()
        try:
            answers.append(driver.run(COMMANDS))
        finally:
            driver.teardown()
    assert all(same_output(a, want(endpoint, COMMANDS)) for a in answers[:2])
    with client_for(proxy) as c:  # a GET per command; paging, width, enable answered locally
        assert c.get("/proxy/stats").json()["statuses"] == {"200": 3}
    assert endpoint.ssh_counts.shells == 1  # the direct run's; the proxy ran exec channels


def test_the_headend_shell_is_the_device_terminal(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    emu = fresh_emulator("cisco_ios")
    _, headend = headend_for(emu)
    endpoint = emu.endpoints[0]

    seen = type_into_headend(headend, login, [
        (b"show version\r", b" --More-- "), (b" ", b" --More-- "), (b" ", b"R1#"),
        (b"disable\r", b"R1>"), (b"enable\r", b"Password: "), (b"wrong\r", b"R1>"),
        (b"en\r", b"Password: "), (b"admin\r", b"R1#"), (b"conf t\r", b"R1(config)#"),
        (b"end\r", b"R1#"), (b"terminal length 0\r", b"R1#"), (b"sh ver\r", b"R1#"),
    ], then_exit=True)
    version = want(endpoint, ["show version"]).replace("\n", "\r\n")
    wipe = endpoint.device.platform.style.more_erase  # IOS: backspaces, spaces, backspaces
    assert seen[1].count("\r\n") == 24  # the echo and 23 lines, then --More--
    assert same_output("".join(seen[1:4]).replace(" --More-- ", "").replace(wipe, ""),
                       "show version\r\n" + version + "R1#")  # a screenful per space
    assert seen[4].endswith("R1>")
    assert seen[5].endswith("Password: ")
    assert seen[6] == "\r\n% Access denied\r\n\r\nR1>"  # the platform's refusal; no echo
    assert seen[8].endswith("\r\nR1#")
    assert seen[9] == ("conf t\r\nEnter configuration commands, one per line.  End with "
                       "CNTL/Z.\r\nR1(config)#")
    assert seen[12] == "sh ver\r\n" + version + "R1#"  # paging off: all of it at once
    assert seen[13] == "exit\r\n"


def test_the_headend_passes_errors_on(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    emu = fresh_emulator("cisco_ios")
    _, headend = headend_for(emu)
    emu.stop()  # the device goes away: the exec fails with the proxy's reason, on one line

    async def exec_show_clock() -> asyncssh.SSHCompletedProcess:
        async with asyncssh.connect("127.0.0.1", headend.port, username=login.username,
                                    password=login.password, client_keys=None,
                                    known_hosts=str(headend.known_hosts)) as conn:
            return await conn.run("show clock")

    result = asyncio.run(exec_show_clock())
    assert result.exit_status == 1
    assert result.stdout == ""
    assert str(result.stderr).startswith("%Error: 502 device R1 unreachable: ")
    assert str(result.stderr).count("\n") == 1


def test_the_headend_shell_carries_configuration_mode(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu)
    endpoint = emu.endpoints[0]

    seen = type_into_headend(headend, login, [
        (b"conf t\r", b"R1(config)#"), (b"interface Loopback9\r", b"R1(config-if)#"),
        (b"ip adress 1.2.3.4\r", b"R1(config-if)#"),
        (b"do show ip interface brief\r", b"R1(config-if)#"),
        (b"description after the do\r", b"R1(config-if)#"), (b"exit\r", b"R1(config)#"),
        (b"hostname R9\r", b"R9(config)#"), (b"end\r", b"R9#"),
    ])
    assert seen[3] == ("ip adress 1.2.3.4\r\n" + " " * 19 + "^\r\n% Invalid input detected at "
                       "'^' marker.\r\n\r\nR1(config-if)#")  # refused at once, as the device does
    assert seen[4].startswith("do show ip interface brief\r\nInterface ")
    assert seen[4].endswith("up\r\nR1(config-if)#")
    assert "\r\nLoopback9 " in seen[4]  # the lines before the `do` reached the device first
    assert seen[8] == "end\r\nR9#"  # the device answered the batch with nothing: all taken
    running = endpoint.device.transcript(("show", "running-config"))
    assert "interface Loopback9\n description after the do\n" in running  # in its sub-mode
    assert "adress" not in running
    assert endpoint.hostname == "R9"
    # Three requests: the lines before the `do` (one POST), the `do` (a GET), the rest (a POST).
    with client_for(proxy) as c:
        assert c.get("/proxy/stats").json()["statuses"] == {"200": 3}
    assert endpoint.ssh_counts.shells == 2  # a configuration body runs in a shell at the device


def test_a_do_inside_a_nested_sub_mode_keeps_the_whole_chain(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    """After a `do` from `address-family` under `router bgp`, the next POST re-enters both
    levels, so the line lands in the address family (not refused at global level)."""
    emu = fresh_emulator("cisco_ios")
    _, headend = headend_for(emu)
    seen = type_into_headend(headend, login, [
        (b"conf t\r", b"R1(config)#"), (b"router bgp 64500\r", b"R1(config-router)#"),
        (b"address-family ipv4\r", b"R1(config-router-af)#"),
        (b"network 198.18.7.0 mask 255.255.255.0\r", b"R1(config-router-af)#"),
        (b"do show clock\r", b"R1(config-router-af)#"),
        (b"network 198.18.8.0 mask 255.255.255.0\r", b"R1(config-router-af)#"),
        (b"end\r", b"R1#"),
    ])
    assert seen[-1] == "end\r\nR1#", seen[-1]  # the device took every line: nothing printed
    running = emu.endpoints[0].device.transcript(("show", "running-config"))
    family = running.split("router bgp 64500\n", 1)[1].split(" address-family ipv4\n", 1)[1]
    family = family.split(" exit-address-family", 1)[0]
    assert "  network 198.18.7.0 mask 255.255.255.0\n" in family
    assert "  network 198.18.8.0 mask 255.255.255.0\n" in family
    assert running.count("network 198.18.8.0") == 1


def test_netmiko_configures_through_the_tunnel(fresh_emulator: Callable[..., EmulatorThread],
                                               headend_for: Any, login: Login,
                                               tmp_path: Path) -> None:
    netmiko = pytest.importorskip("netmiko")
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu)
    endpoint = emu.endpoints[0]
    lines = ["interface Loopback42", "description set-by-netmiko", "exit",
             "ntp server 198.18.0.9"]
    outputs = []
    for port in (headend.port, endpoint.ssh_port):  # through the tunnel, then the device itself
        conn = netmiko.ConnectHandler(
            device_type="cisco_ios", host="127.0.0.1", port=port, username=login.username,
            password=login.password, secret=login.enable_secret,
            session_log=str(tmp_path / f"netmiko-{port}.log"))
        try:
            outputs.append(conn.send_config_set(lines))
            outputs.append(conn.send_command("show running-config | include 198.18.0.9"))
        finally:
            conn.disconnect()
    # Netmiko saw the same session both ways (echoes, prompts, the config banner) ...
    assert outputs[0] == outputs[2]
    assert "R1(config-if)#" in outputs[0]
    assert outputs[1] == outputs[3] == "ntp server 198.18.0.9"  # ... and the device took it
    running = endpoint.device.transcript(("show", "running-config"))
    assert "interface Loopback42\n description set-by-netmiko\n" in running
    with client_for(proxy) as c:  # one POST for the config set, one GET for the show
        assert c.get("/proxy/stats").json()["statuses"] == {"200": 2}


def test_scrapli_configures_through_the_tunnel(fresh_emulator: Callable[..., EmulatorThread],
                                               headend_for: Any, login: Login) -> None:
    scrapli = pytest.importorskip("scrapli")
    if shutil.which("ssh") is None:
        pytest.skip("scrapli's bin transport needs the OpenSSH client (ssh)")
    emu = fresh_emulator("cisco_ios")
    proxy, headend = headend_for(emu)
    endpoint = emu.endpoints[0]
    lines = ["interface Loopback43", "description set-by-scrapli"]
    cli = scrapli.Cli(
        "127.0.0.1", port=headend.port, definition_file_or_name="cisco_iosxe",
        auth_options=scrapli.AuthOptions(
            username=login.username, password=login.password,
            lookups=[scrapli.LookupKeyValue(key="enable", value=login.enable_secret)]),
        session_options=scrapli.SessionOptions(operation_timeout_s=10),
        transport_options=scrapli.TransportBinOptions(
            bin=shutil.which("ssh"), known_hosts_path=str(headend.known_hosts),
            enable_strict_key=True, ssh_config_path=os.devnull))
    cli.open()
    try:
        configured = cli.send_inputs(lines, requested_mode="configuration")
        shown = cli.send_input("show running-config | include set-by-scrapli",
                               requested_mode="privileged_exec")  # `end` first: the POST
    finally:
        cli.close()
    assert not configured.failed
    assert shown.result.strip() == "description set-by-scrapli"
    running = endpoint.device.transcript(("show", "running-config"))
    assert "interface Loopback43\n description set-by-scrapli\n" in running
    with client_for(proxy) as c:  # one POST for the configuration session, one GET
        assert c.get("/proxy/stats").json()["statuses"] == {"200": 2}


def type_into_headend(headend: Any, login: Login, steps: list[tuple[bytes, bytes]], *,
                      then_exit: bool = False) -> list[str]:
    """What the head-end's PTY shell printed: up to its first prompt, then for each ``(typed,
    end)`` what followed the typed bytes up to ``end``; with ``then_exit``, after ``exit``
    everything until the shell closed."""

    async def session() -> list[str]:
        async with asyncssh.connect("127.0.0.1", headend.port, username=login.username,
                                    password=login.password, client_keys=None,
                                    known_hosts=str(headend.known_hosts)) as conn:
            shell = await conn.create_process(term_type="vt100", encoding=None)
            seen: list[str] = []

            async def until(end: bytes) -> None:
                got = b""
                async with asyncio.timeout(10):
                    while not got.endswith(end):
                        got += await shell.stdout.read(65536)
                seen.append(got.decode())

            await until(b"R1#")
            for typed, end in steps:
                shell.stdin.write(typed)
                await until(end)
            if then_exit:
                shell.stdin.write(b"exit\r")
                async with asyncio.timeout(10):
                    rest = await shell.stdout.read()
                    await shell.wait_closed()
                seen.append(rest.decode())
            return seen

    return asyncio.run(session())
