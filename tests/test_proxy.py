"""The edge proxy: real HTTPS (HTTP/1.1 and HTTP/2) in front of real emulators over real SSH on
loopback; pooling, limits, health on reuse, and every failure as a status with its reason."""

from __future__ import annotations

import asyncio
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
from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.oracle import expected_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.proxy.app import ProxyPolicy
from mgmtbench.proxy.headend import Headend, HeadendOptions
from mgmtbench.proxy.inventory import Inventory, ProxyDevice
from mgmtbench.proxy.pool import PoolSettings
from mgmtbench.proxy.server import ProxyOptions, ProxyThread
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


def want(endpoint: DeviceEndpoint, commands: list[str]) -> str:
    return expected_output(endpoint.device.platform.style.name, endpoint.hostname,
                           endpoint.device.facts.mgmt_ip, commands)


SENT = ["show version", "show clock", "sh clock"]  # abbreviated as on the device
COMMANDS = ["show version", "show clock", "show clock"]


def test_exec_and_config_on_every_platform(endpoint: DeviceEndpoint, proxy_for: Proxy,
                                           emulator_for: Callable[[str], EmulatorThread]) -> None:
    # cisco_ios runs exec channels (one per command), cisco_asa a shell: the same answers.
    emu = emulator_for(endpoint.device.platform.style.name)
    proxy = proxy_for(emu)
    execs, shells = endpoint.ssh_counts.execs, endpoint.ssh_counts.shells
    with client_for(proxy) as c:
        got = c.get(f"/device/{endpoint.hostname}/admin/exec/show+version/show+clock/sh+clock")
        posted = c.post(f"/device/{endpoint.host}/admin/config",
                        content="\n".join(SENT).encode())
    assert got.status_code == 200, got.text
    assert got.text == want(endpoint, COMMANDS)
    assert posted.status_code == 200, posted.text
    assert posted.text == want(endpoint, COMMANDS)
    if device_of(endpoint).uses_exec:
        assert endpoint.ssh_counts.execs - execs == 6  # a channel per command, as the study's
    else:
        assert endpoint.ssh_counts.shells - shells == 2  # a shell per request


def test_http2_and_the_device_header(ios: DeviceEndpoint, proxy_for: Proxy,
                                     emulator_for: Callable[[str], EmulatorThread]) -> None:
    proxy = proxy_for(emulator_for("cisco_ios"))
    with client_for(proxy, http2=True, headers={"X-Device": ios.hostname}) as c:
        response = c.get("/admin/exec/show+clock")
    assert response.http_version == "HTTP/2"
    assert response.text == want(ios, ["show clock"])


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
    assert changed.text == clock
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
    assert response.text == want(again.endpoints[0], ["show clock"])
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
    def start(emu: EmulatorThread) -> tuple[ProxyThread, Headend]:
        proxy = proxy_for(emu)
        headend = Headend(HeadendOptions(
            proxy_url=proxy.url, proxy_ca=proxy.ca_file, device=emu.endpoints[0].hostname,
            username=USERNAME, password=SECRET_PASSWORD, proxy_username=USER,
            proxy_password=PASSWORD, authorized_keys=client_keys.authorized_keys,
            state_dir=tmp_path / "headend"))
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
    assert answer == want(endpoint, COMMANDS)
    with client_for(proxy) as c:
        assert c.get("/proxy/stats").json()["statuses"] == {"200": requests}
    assert endpoint.ssh_counts.execs == 3  # the proxy: an exec channel per command either way


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
    assert answers[0] == answers[1] == want(endpoint, COMMANDS)
    with client_for(proxy) as c:  # a GET per command; paging, width, enable answered locally
        assert c.get("/proxy/stats").json()["statuses"] == {"200": 3}
    assert endpoint.ssh_counts.shells == 1  # the direct run's; the proxy ran exec channels


def test_the_headend_shell_is_the_device_terminal(
        fresh_emulator: Callable[..., EmulatorThread], headend_for: Any, login: Login) -> None:
    emu = fresh_emulator("cisco_ios")
    _, headend = headend_for(emu)
    endpoint = emu.endpoints[0]

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
            for typed, end in [(b"show version\r", b" --More-- "), (b" ", b" --More-- "),
                               (b" ", b"R1#"),
                               (b"disable\r", b"R1>"), (b"enable\r", b"Password: "),
                               (b"wrong\r", b"R1>"), (b"en\r", b"Password: "),
                               (b"admin\r", b"R1#"), (b"conf t\r", b"R1#"),
                               (b"terminal length 0\r", b"R1#"), (b"sh ver\r", b"R1#")]:
                shell.stdin.write(typed)
                await until(end)
            shell.stdin.write(b"exit\r")
            async with asyncio.timeout(10):
                rest = await shell.stdout.read()
                await shell.wait_closed()
            seen.append(rest.decode())
            return seen

    seen = asyncio.run(session())
    version = want(endpoint, ["show version"]).replace("\n", "\r\n")
    wipe = "\r" + " " * len(" --More-- ") + "\r"
    assert seen[1].count("\r\n") == 24  # the echo and 23 lines, then --More--
    assert "".join(seen[1:4]).replace(" --More-- ", "").replace(wipe, "") == (
        "show version\r\n" + version + "R1#")  # a screenful per space, as on the device
    assert seen[4].endswith("R1>")
    assert seen[5].endswith("Password: ")
    assert seen[6] == "\r\n% Access denied\r\n\r\nR1>"  # the platform's refusal; no echo
    assert seen[8].endswith("\r\nR1#")
    assert "not carried by the head-end" in seen[9]
    assert seen[11] == "sh ver\r\n" + version + "R1#"  # paging off: all of it at once
    assert seen[12] == "exit\r\n"


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
