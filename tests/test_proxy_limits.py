"""The edge proxy's and head-end's limits against hostile clients: a real proxy in front of a real
emulator on loopback, attackers from their own 127.0.0.x addresses. Connection caps before TLS,
failed logins that wait their turn, a body time-out, an output cap, a pool one client cannot
take whole, passwords out of argv, a known_hosts that is not the head-end's left alone."""

from __future__ import annotations

import argparse
import asyncio
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import asyncssh
import httpx
import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.options import Limits
from mgmtbench.errors import UsageError
from mgmtbench.proxy import command, upstream
from mgmtbench.proxy.app import ProxyPolicy
from mgmtbench.proxy.headend import Headend, HeadendOptions
from mgmtbench.proxy.inventory import Inventory, ProxyDevice
from mgmtbench.proxy.pool import PoolSettings
from mgmtbench.proxy.server import ProxyOptions, ProxyThread
from mgmtbench.targets import Login

USER, PASSWORD = "proxy-user", "proxy-pw"
ATTACKER = "127.0.0.20"
Proxy = Callable[..., ProxyThread]


@pytest.fixture
def proxy_for(login: Login) -> Iterator[Proxy]:
    """``proxy_for(emulator, limits=..., pool=..., **policy)``: a proxy for its first device."""
    started: list[ProxyThread] = []

    def start(emu: EmulatorThread, *, limits: Limits | None = None,
              pool: PoolSettings | None = None, http3: bool = False,
              **policy: Any) -> ProxyThread:
        endpoint = emu.endpoints[0]
        assert endpoint.ssh_port
        device = ProxyDevice("R1", endpoint.host, endpoint.ssh_port, "cisco_ios")
        proxy = ProxyThread(ProxyOptions(
            inventory=Inventory([device]), device_login=login, http3=http3,
            policy=ProxyPolicy(USER, PASSWORD, limits=limits or Limits(), **policy),
            pool=pool or PoolSettings())).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()


def client(proxy: ProxyThread, source: str = "127.0.0.1",
           auth: tuple[str, str] = (USER, PASSWORD)) -> httpx.Client:
    return httpx.Client(base_url=proxy.url, auth=auth, timeout=30, trust_env=False,
                        verify=ssl.create_default_context(cafile=str(proxy.ca_file)),
                        transport=httpx.HTTPTransport(
                            local_address=source,
                            verify=ssl.create_default_context(cafile=str(proxy.ca_file))))


def closed_by_peer(sock: socket.socket, within: float = 5.0) -> bool:
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_one_source_is_capped_before_tls_and_others_still_get_in(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    proxy = proxy_for(fresh_emulator(), limits=Limits(max_https_connections_per_source=5))
    held = [socket.create_connection(("127.0.0.1", proxy.proxy.port), 5,
                                     source_address=(ATTACKER, 0)) for _ in range(6)]
    try:
        assert closed_by_peer(held[-1])  # the sixth: closed at accept, no TLS started
        assert not closed_by_peer(held[0], within=0.5)  # the first five wait for their TLS
        with client(proxy) as c:
            assert c.get("/device/R1/admin/exec/show+clock").status_code == 200
    finally:
        for sock in held:
            sock.close()


def test_wrong_passwords_from_one_source_are_answered_one_at_a_time(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    proxy = proxy_for(fresh_emulator(), limits=Limits(auth_failure_delay=0.5))
    guesses = 6

    def guess(_: int) -> int:
        with client(proxy, ATTACKER, auth=(USER, "wrong")) as c:
            return c.get("/device/R1/admin/exec/show+clock").status_code

    start = time.monotonic()
    with ThreadPoolExecutor(guesses + 1) as pool:
        statuses = pool.map(guess, range(guesses))
        with client(proxy) as c:  # the right password from elsewhere does not queue
            legit_start = time.monotonic()
            assert c.get("/device/R1/admin/exec/show+clock").status_code == 200
            legit = time.monotonic() - legit_start
        assert list(statuses) == [401] * guesses
    took = time.monotonic() - start
    assert took >= guesses * 0.5 * 0.9  # in turn: no two guesses of one source at once
    assert legit < 5
    with client(proxy) as c:
        assert c.get("/proxy/stats").json()["auth_failures"] == guesses


def test_device_output_is_streamed_and_cut_at_the_cap(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    proxy = proxy_for(fresh_emulator(), max_output=1024 * 1024)
    with client(proxy) as c:
        big = c.get("/device/R1/admin/exec/show+bulk-output+8388608")
        assert big.status_code == 200  # streamed: the head went out with the first piece
        assert "content-length" not in big.headers
        assert big.text.endswith("% proxy: device output over 1048576 bytes (the proxy's "
                                 "--max-output)\n")
        assert len(big.content) < 1024 * 1024 + 200
        whole = c.get("/device/R1/admin/exec/show+bulk-output+524288")
        assert whole.status_code == 200
        assert "% proxy" not in whole.text
        assert c.get("/device/R1/admin/exec/show+clock").status_code == 200


def test_a_body_that_never_comes_is_a_408(fresh_emulator: Callable[..., EmulatorThread],
                                          proxy_for: Proxy) -> None:
    proxy = proxy_for(fresh_emulator(), limits=Limits(body_timeout=1.0))

    async def post() -> bytes:
        context = ssl.create_default_context(cafile=str(proxy.ca_file))
        reader, writer = await asyncio.open_connection("127.0.0.1", proxy.proxy.port, ssl=context,
                                                       server_hostname="127.0.0.1")
        auth = httpx.BasicAuth(USER, PASSWORD)._auth_header
        writer.write(f"POST /device/R1/admin/config HTTP/1.1\r\nHost: proxy\r\nAuthorization: "
                     f"{auth}\r\nContent-Length: 1000\r\n\r\nshow clock".encode())
        try:
            async with asyncio.timeout(10):
                return await reader.read(4096)
        finally:
            # Not close(): its TLS shutdown may outlive the loop, and the socket it leaves was
            # collected, unclosed, during a later test (a ResourceWarning that failed it).
            writer.transport.abort()
            await asyncio.sleep(0.05)  # the loop closes the socket on its next rounds

    start = time.monotonic()
    answer = asyncio.run(post())
    assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
    assert time.monotonic() - start < 8


def test_one_source_cannot_take_every_pooled_session(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy) -> None:
    emu = fresh_emulator(processing_delay=0.05)
    proxy = proxy_for(emu, pool=PoolSettings(per_device=2, queue_timeout=1.0))
    slow = "/device/R1/admin/exec/" + "/".join(["show+clock"] * 60)  # ~3 s on the device

    def attacker(_: int) -> int:
        with client(proxy, ATTACKER) as c:
            return c.get(slow).status_code

    with ThreadPoolExecutor(2) as pool:
        statuses = pool.map(attacker, range(2))
        time.sleep(0.3)
        with client(proxy) as c:
            start = time.monotonic()
            assert c.get("/device/R1/admin/exec/show+clock").status_code == 200
            assert time.monotonic() - start < 2.5  # not behind the attacker's 3 s requests
        # One of the attacker's two holds its one share; the other waited 1 s and got a 503.
        assert sorted(statuses) == [200, 503]


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.register(parser.add_subparsers())
    return parser.parse_args(["proxy", "--device", "R1=127.0.0.1:22", *argv])


def test_passwords_come_from_a_file_or_the_environment(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    options = command.options_from_args(parse("--password-file", str(secret)), environ={})
    assert options.policy.password == options.device_login.password == "from-file"
    options = command.options_from_args(parse(), environ={"MGMTBENCH_PROXY_PASSWORD": "env",
                                                          "MGMTBENCH_PASSWORD": "dev"})
    assert (options.policy.password, options.device_login.password) == ("env", "dev")
    assert "visible" not in capsys.readouterr().err
    command.options_from_args(parse("--password", "argv"), environ={})
    assert "--password is visible to every local user" in capsys.readouterr().err
    secret.write_text("")
    with pytest.raises(UsageError, match="empty"):
        command.options_from_args(parse("--password-file", str(secret)), environ={})
    with pytest.raises(UsageError, match="--max-connections must be a number >= 0"):
        command.options_from_args(parse("--max-connections", "-1"), environ={})
    with pytest.raises(SystemExit) as done:  # the limits' help texts format
        parse("--help")
    assert done.value.code == 0


def test_the_headend_keeps_others_known_hosts_caps_answers_and_disconnects_a_guesser(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = proxy_for(fresh_emulator())
    theirs = tmp_path / "ssh"
    theirs.mkdir()
    (theirs / "known_hosts").write_text("router1 ssh-ed25519 AAAA...\n")

    def headend(state_dir: Path) -> Headend:
        return Headend(HeadendOptions(
            proxy_url=proxy.url, proxy_ca=proxy.ca_file, device="R1", password="right",
            proxy_username=USER, proxy_password=PASSWORD, state_dir=state_dir,
            auth_failure_delay=0.1))

    with pytest.raises(UsageError, match="exists and is not the head-end's"):
        proxy.call(headend(theirs).start())
    assert (theirs / "known_hosts").read_text() == "router1 ssh-ed25519 AAAA...\n"

    ours = headend(tmp_path / "headend")
    proxy.call(ours.start())
    tried: list[str] = []

    class Guesser(asyncssh.SSHClient):
        def password_auth_requested(self) -> str:
            tried.append("guess")
            return f"guess{len(tried)}"

    async def guess() -> None:
        with pytest.raises((asyncssh.DisconnectError, asyncssh.PermissionDenied)):
            await asyncssh.connect("127.0.0.1", ours.port, username="admin", known_hosts=None,
                                   client_factory=Guesser, preferred_auth="password",
                                   connect_timeout=10)

    try:
        asyncio.run(guess())
        assert len(tried) == 3  # then disconnected, as IOS after authentication-retries 3
        monkeypatch.setattr(upstream, "MAX_ANSWER", 1024 * 1024)
        answer = proxy.call(ours.forward("show bulk-output 4194304"))
        assert isinstance(answer, tuple)
        assert answer[0] == 0
        assert "over 1048576 bytes" in answer[1]
        proxy.call(ours.stop())
        proxy.call(ours.start())  # its own known_hosts: written again
    finally:
        proxy.call(ours.stop())


def test_the_headend_over_http3_caps_an_answer_and_keeps_its_connection(
        fresh_emulator: Callable[..., EmulatorThread], proxy_for: Proxy, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``ssh-http3-ssh``: a huge output is given up past MAX_ANSWER (STOP_SENDING), as over
    HTTPS, and the next request goes on the same QUIC connection."""
    proxy = proxy_for(fresh_emulator(), http3=True)
    headend = Headend(HeadendOptions(
        proxy_url=proxy.url, proxy_ca=proxy.ca_file, device="R1", password="right",
        proxy_username=USER, proxy_password=PASSWORD, state_dir=tmp_path / "headend",
        proxy_http3=True))
    monkeypatch.setattr(upstream, "MAX_ANSWER", 1024 * 1024)
    proxy.call(headend.start())
    try:
        huge = proxy.call(headend.forward("show bulk-output 4194304"))
        assert isinstance(huge, tuple)
        assert huge[0] == 0
        assert "over 1048576 bytes" in huge[1]
        small = proxy.call(headend.forward("show bulk-output 1000"))
        assert isinstance(small, tuple)
        assert small[0] == 200
        assert len(small[1]) >= 1000
        assert proxy.proxy.http3_counts.connections == 1  # the same QUIC connection
    finally:
        proxy.call(headend.stop())
