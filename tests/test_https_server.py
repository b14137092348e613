"""The emulator's HTTPS API: ASA-style paths, auth, limits, HTTP/2, the platform's TLS version
and resumption."""

from __future__ import annotations

import logging
import socket
import ssl
from collections.abc import Callable, Iterator

import httpx
import pytest

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing.shell import https_client

FreshEmulator = Callable[..., EmulatorThread]


@pytest.fixture
def emu(emulator_for: Callable[[str], EmulatorThread]) -> EmulatorThread:
    return emulator_for("cisco_asa")


@pytest.fixture
def client(emu: EmulatorThread) -> Iterator[httpx.Client]:
    with https_client(emu) as c:
        yield c


def base(endpoint: DeviceEndpoint) -> str:
    return f"https://{endpoint.host}:{endpoint.https_port}"


def test_exec_one_and_many_commands(emu: EmulatorThread, client: httpx.Client) -> None:
    endpoint = emu.endpoints[0]
    version = endpoint.device.transcript(("show", "version"))
    clock = endpoint.device.transcript(("show", "clock"))
    one = client.get(f"{base(endpoint)}/admin/exec/show+version")
    assert one.status_code == 200
    assert one.headers["content-type"].startswith("text/plain")
    assert same_output("cisco_asa", one.text, version)
    many = client.get(f"{base(endpoint)}/admin/exec/show%20version/sh+clock/show+clock")
    assert same_output("cisco_asa", many.text, version + clock + clock)


def test_exec_error_is_the_device_error(emu: EmulatorThread, client: httpx.Client) -> None:
    response = client.get(f"{base(emu.endpoints[0])}/admin/exec/show+nonsense")
    assert response.status_code == 200
    assert "ERROR: % Invalid input detected at '^' marker." in response.text


def test_slash_inside_a_command_is_percent_encoded(emu: EmulatorThread,
                                                   client: httpx.Client) -> None:
    response = client.get(f"{base(emu.endpoints[0])}/admin/exec/show+..%2F..%2Fetc%2Fpasswd")
    assert "Invalid input" in response.text
    assert "root:" not in response.text


@pytest.mark.parametrize("auth", [None, ("admin", "wrong"), ("nobody", "s3cret-pw")])
def test_credentials_are_required(emu: EmulatorThread, auth: tuple[str, str] | None) -> None:
    with https_client(emu, auth=False) as anonymous:
        response = anonymous.get(f"{base(emu.endpoints[0])}/admin/exec/show+version", auth=auth)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == 'Basic realm="asa1"'


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/", 404),
    ("GET", "/admin/other", 404),
    ("POST", "/admin/exec/show+version", 405),
    ("GET", "/admin/config", 405),
    ("DELETE", "/admin/config", 405),
])
def test_wrong_paths_and_methods(emu: EmulatorThread, client: httpx.Client, method: str,
                                 path: str, status: int) -> None:
    response = client.request(method, base(emu.endpoints[0]) + path)
    assert response.status_code == status


def test_post_config_applies_changes_and_answers_shows(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa")
    endpoint = emu.endpoints[0]
    body = "hostname fw-edge\ninterface GigabitEthernet1/8\n description from-api\nexit\n" \
           "show clock\n"
    with https_client(emu) as client:
        response = client.post(f"{base(endpoint)}/admin/config", content=body)
        assert response.status_code == 200
        assert same_output("cisco_asa", response.text, endpoint.device.transcript(("show", "clock")))
        config = client.get(f"{base(endpoint)}/admin/exec/show+running-config").text
    assert "hostname fw-edge\n" in config
    assert "interface GigabitEthernet1/8\n" in config
    assert " description from-api\n" in config


def test_oversized_body_is_refused(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", limits=Limits(max_body=1000))
    url = f"{base(emu.endpoints[0])}/admin/config"

    def chunked() -> Iterator[bytes]:
        for _ in range(10):
            yield b"show clock\n" * 20

    with https_client(emu) as client:
        assert client.post(url, content="show clock\n" * 200).status_code == 413
        assert client.post(url, content=chunked()).status_code == 413
        assert client.post(url, content="show clock\n").status_code == 200


def test_body_that_is_not_text_is_refused(emu: EmulatorThread, client: httpx.Client) -> None:
    response = client.post(f"{base(emu.endpoints[0])}/admin/config", content=b"\xff\xfe\x00")
    assert response.status_code == 400


def raw_tls(emu: EmulatorThread, data: bytes) -> bytes:
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    endpoint = emu.endpoints[0]
    with socket.create_connection((endpoint.host, endpoint.https_port), timeout=5) as sock, \
            context.wrap_socket(sock, server_hostname=endpoint.host) as tls:
        tls.sendall(data)
        chunks = []
        while chunk := tls.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def test_malformed_http_gets_400_and_the_server_keeps_serving(emu: EmulatorThread,
                                                             client: httpx.Client) -> None:
    reply = raw_tls(emu, b"THIS IS NOT HTTP\r\n\x00\x01\x02\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400")
    assert client.get(f"{base(emu.endpoints[0])}/admin/exec/show+clock").status_code == 200


def test_abrupt_close_mid_request(emu: EmulatorThread, client: httpx.Client) -> None:
    assert emu.emulator.tls is not None
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    endpoint = emu.endpoints[0]
    for _ in range(3):
        with socket.create_connection((endpoint.host, endpoint.https_port)) as sock, \
                context.wrap_socket(sock, server_hostname=endpoint.host) as tls:
            tls.sendall(b"POST /admin/config HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nab")
    assert client.get(f"{base(endpoint)}/admin/exec/show+clock").status_code == 200


def test_keep_alive_reuses_one_connection(emu: EmulatorThread) -> None:
    connects = []

    def count(request: httpx.Request) -> None:
        connects.append(request.extensions.get("trace"))

    with https_client(emu) as client:
        streams = set()
        for _ in range(5):
            response = client.get(f"{base(emu.endpoints[0])}/admin/exec/show+clock")
            assert response.http_version == "HTTP/1.1"
            streams.add(id(response.extensions["network_stream"]))
    assert len(streams) == 1


def test_http2_over_alpn(emu: EmulatorThread) -> None:
    with https_client(emu, http2=True) as client:
        response = client.get(f"{base(emu.endpoints[0])}/admin/exec/show+version")
    assert response.http_version == "HTTP/2"
    assert same_output("cisco_asa", response.text,
                       emu.endpoints[0].device.transcript(("show", "version")))


def test_the_platforms_tls_version_only_and_sessions_resume(emu: EmulatorThread) -> None:
    """The ASA 9.16 offers TLS 1.2 only (platform.toml [https]); sessions resume (tickets)."""
    assert emu.emulator.tls is not None
    endpoint = emu.endpoints[0]
    context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    request = b"GET /admin/exec/show+clock HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

    def connect(session: ssl.SSLSession | None) -> tuple[ssl.SSLSession | None, bool, str]:
        with socket.create_connection((endpoint.host, endpoint.https_port)) as sock, \
                context.wrap_socket(sock, server_hostname=endpoint.host,
                                    session=session) as tls:
            tls.sendall(request)
            while tls.recv(65536):  # tickets arrive after the handshake: read to the end
                pass
            return tls.session, bool(tls.session_reused), str(tls.version())

    first, reused, version = connect(None)
    assert version == "TLSv1.2"
    assert not reused
    _, reused, _ = connect(first)
    assert reused

    newer = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
    newer.minimum_version = ssl.TLSVersion.TLSv1_3
    with socket.create_connection((endpoint.host, endpoint.https_port)) as sock, \
            pytest.raises(ssl.SSLError):
        newer.wrap_socket(sock, server_hostname=endpoint.host)


def test_bad_requests_log_at_most_one_line_each(fresh_emulator: FreshEmulator,
                                                caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator("cisco_asa", limits=Limits(max_body=1000))
    url = f"{base(emu.endpoints[0])}/admin"

    def chunked() -> Iterator[bytes]:
        yield b"show clock\n" * 500

    with caplog.at_level(logging.DEBUG), https_client(emu) as client:
        raw_tls(emu, b"NOT HTTP\r\n\r\n")  # malformed: answered 400 by the HTTP layer
        client.post(f"{url}/config", content=chunked())  # oversized, streamed
        client.get(f"{url}/exec/show+clock", auth=("admin", "wrong"))  # bad credentials
        client.get(f"{url}/exec/show+clock")  # and the server still answers
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("mgmtbench")]
    assert len(ours) == 1, ours
    assert "bad credentials" in ours[0]
    # A wrong password is a security event: one line at the default level (WARNING); the rest
    # is the client's mistake and stays below it.
    problems = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert problems == ours, problems
