"""The HTTPS server's own accept path and HTTP/1.1 (issues 16 and 17): connection caps applied
at accept before any TLS work, HTTP/2 handed to Hypercorn, pipelining, malformed heads, request
bodies. Real emulators on loopback; every wait is bounded."""

from __future__ import annotations

import base64
import contextlib
import logging
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest

from mgmtbench.emulator import EmulatorThread, Limits
from mgmtbench.emulator.https.accept import ConnectionCaps
from mgmtbench.emulator.https.http1 import BadRequest, parse_head
from mgmtbench.emulator.oracle import same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing import PASSWORD, USERNAME
from mgmtbench.testing.shell import https_client

FreshEmulator = Callable[..., EmulatorThread]
AUTH = b"Authorization: Basic " + base64.b64encode(f"{USERNAME}:{PASSWORD}".encode())


def base(endpoint: DeviceEndpoint) -> str:
    return f"https://{endpoint.host}:{endpoint.https_port}"


def context_for(emu: EmulatorThread) -> ssl.SSLContext:
    assert emu.emulator.tls is not None
    return ssl.create_default_context(cafile=str(emu.emulator.tls.ca))


def tls_from(emu: EmulatorThread, source: str = "127.0.0.1") -> ssl.SSLSocket:
    """A TLS connection (handshake done) to the first device from ``source``."""
    endpoint = emu.endpoints[0]
    raw = socket.create_connection((endpoint.host, endpoint.https_port), timeout=5,
                                   source_address=(source, 0))
    try:
        return context_for(emu).wrap_socket(raw, server_hostname=endpoint.host)
    except BaseException:
        raw.close()
        raise


def handshake_refused(emu: EmulatorThread, source: str) -> bool:
    """Whether a connection from ``source`` is closed before its TLS handshake completes."""
    try:
        tls_from(emu, source).close()
    except (ssl.SSLError, ConnectionError, OSError):
        return True
    return False


@contextmanager
def idle_tls(emu: EmulatorThread, count: int, source: str) -> Iterator[list[ssl.SSLSocket]]:
    with ExitStack() as stack:
        yield [stack.enter_context(tls_from(emu, source)) for _ in range(count)]


def read_answers(sock: ssl.SSLSocket, count: int) -> list[bytes]:
    """``count`` whole answers (each with a Content-Length) read from ``sock``."""
    data = b""
    answers: list[bytes] = []
    while len(answers) < count:
        end = data.find(b"\r\n\r\n")
        if end >= 0:
            head = data[:end].lower()
            length = int(head.split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(data) >= end + 4 + length:
                answers.append(data[:end + 4 + length])
                data = data[end + 4 + length:]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return answers


# --- connection caps ----------------------------------------------------------------------


def test_caps_count_per_source_and_in_all() -> None:
    caps = ConnectionCaps(Limits(max_https_connections=3, max_https_connections_per_source=2))
    assert caps.refuse("a") is None
    assert caps.refuse("a") is None
    assert caps.refuse("a") == "2 open connections from this source"
    assert caps.refuse("b") is None
    assert caps.refuse("c") == "3 open connections"
    caps.closed("a")
    assert caps.refuse("c") is None
    assert (caps.open, caps.dropped, caps.by_source) == (3, 2, {"a": 1, "b": 1, "c": 1})


def test_one_source_at_its_cap_does_not_lock_others_out(
        fresh_emulator: FreshEmulator, caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(
        max_https_connections=10, max_https_connections_per_source=3))
    url = f"{base(emu.endpoints[0])}/admin/exec/show+clock"
    with caplog.at_level(logging.INFO), idle_tls(emu, 3, "127.0.0.2") as idle:
        assert handshake_refused(emu, "127.0.0.2")  # the 4th from that address
        with https_client(emu) as client:  # another address: served as ever
            assert client.get(url).status_code == 200
        idle.pop().close()
        deadline = time.monotonic() + 5
        while handshake_refused(emu, "127.0.0.2"):  # a closed one frees its slot
            assert time.monotonic() < deadline, "the slot was never freed"
            time.sleep(0.05)
    dropped = [r for r in caplog.records if "connection dropped" in r.getMessage()]
    assert dropped, "a drop is logged"
    assert dropped[0].getMessage().endswith("connection dropped: 3 open connections from "
                                            "this source")
    assert dropped[0].levelno == logging.WARNING
    assert dropped[0].exc_info is None
    assert dropped[0].getMessage().startswith("asa1 https 127.0.0.2:")


def test_total_cap_closes_new_connections_before_any_tls(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(
        max_https_connections=4, max_https_connections_per_source=2))
    endpoint = emu.endpoints[0]
    with idle_tls(emu, 1, "127.0.0.2"), idle_tls(emu, 1, "127.0.0.3"), \
            idle_tls(emu, 1, "127.0.0.5"), idle_tls(emu, 1, "127.0.0.6"):
        # No ClientHello sent: the server closes without waiting for one. (No source holds
        # two more than 127.0.0.4, so nobody makes room for it.)
        with socket.create_connection((endpoint.host, endpoint.https_port), timeout=5,
                                      source_address=("127.0.0.4", 0)) as raw, \
                contextlib.suppress(ConnectionResetError):  # closed, or reset
            assert raw.recv(100) == b""
        assert handshake_refused(emu, "127.0.0.4")
        counted = endpoint.https_connections
        assert counted is not None
        assert (counted.open, counted.dropped) == (4, 2)  # the device's counts, as for SSH
    # Every slot is free again once they are closed.
    deadline = time.monotonic() + 5
    while handshake_refused(emu, "127.0.0.4"):
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_a_new_source_gets_in_while_others_fill_the_device(
        fresh_emulator: FreshEmulator) -> None:
    """4 sources x 3 idle TLS connections fill a device capped at 12 (the issue's 4 x 250 of
    1,000: a fifth address got 0 of 10 in): a client from a fifth address gets every request
    in, each new connection closing the oldest of the source holding the most."""
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(
        max_https_connections=12, max_https_connections_per_source=3))
    url = f"{base(emu.endpoints[0])}/admin/exec/show+clock"
    with idle_tls(emu, 3, "127.0.0.2"), idle_tls(emu, 3, "127.0.0.3"), \
            idle_tls(emu, 3, "127.0.0.5"), idle_tls(emu, 3, "127.0.0.6"):
        for _ in range(10):
            with https_client(emu) as client:  # a new connection each time
                assert client.get(url).status_code == 200
        counted = emu.endpoints[0].https_connections
        assert counted is not None
        assert counted.dropped == 0
        assert counted.holders.evicted >= 1


def test_caps_make_room_for_a_lighter_source_only() -> None:
    caps = ConnectionCaps(Limits(max_https_connections=2, max_https_connections_per_source=2))
    closed: list[str] = []
    assert caps.refuse("a", "a1", lambda: closed.append("a1")) is None
    assert caps.refuse("a", "a2", lambda: closed.append("a2")) is None
    assert caps.refuse("a", "a3", lambda: closed.append("a3")) is not None  # per source
    assert caps.refuse("b", "b1", lambda: closed.append("b1")) is None  # a1 makes room
    assert closed == ["a1"]
    assert caps.refuse("c", "c1", lambda: closed.append("c1")) is not None  # 1 and 1: no
    caps.closed("a", "a1")  # its close, heard later: counted once
    assert (caps.open, caps.by_source) == (2, {"a": 1, "b": 1})


def test_an_admitted_connection_waits_for_its_client_hello(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(tls_handshake_timeout=1.0))
    endpoint = emu.endpoints[0]
    with socket.create_connection((endpoint.host, endpoint.https_port), timeout=0.3) as raw:
        with pytest.raises(TimeoutError):
            raw.recv(100)  # not closed at once: it is admitted and may start TLS
        raw.settimeout(5)
        assert raw.recv(100) == b""  # closed by the handshake time-out


# --- HTTP/2 ------------------------------------------------------------------------------


def test_http2_streams_and_posts_on_one_connection(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False)
    endpoint = emu.endpoints[0]
    version = endpoint.device.transcript(("show", "version"))
    with https_client(emu, http2=True) as client:
        answers = [client.get(f"{base(endpoint)}/admin/exec/show+version") for _ in range(3)]
        posted = client.post(f"{base(endpoint)}/admin/config", content="hostname fw-h2\n")
        bulk = client.get(f"{base(endpoint)}/admin/exec/show+bulk-output+300000")
    assert {a.http_version for a in [*answers, posted, bulk]} == {"HTTP/2"}
    assert same_output("cisco_asa", answers[-1].text, version)
    assert posted.status_code == 200
    assert len(bulk.content) == 300000
    assert endpoint.device.hostname == "fw-h2"


def test_http2_connections_closed_by_the_client_free_their_slots(
        fresh_emulator: FreshEmulator) -> None:
    """A client that opens a connection per request and closes it (httpx with http2=True in
    fresh-conn) is never refused: each closed connection leaves the caps at once, not when
    Hypercorn's keep-alive timer ends (75 s)."""
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(
        max_https_connections=10, max_https_connections_per_source=3))
    url = f"{base(emu.endpoints[0])}/admin/exec/show+clock"
    for _ in range(12):
        with https_client(emu, http2=True) as client:
            answer = client.get(url)
        assert answer.http_version == "HTTP/2"
        assert answer.status_code == 200


# --- HTTP/1.1 ----------------------------------------------------------------------------


def test_pipelined_requests_are_answered_in_order(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False)
    device = emu.endpoints[0].device
    commands = ["show+clock", "show+version", "show+bulk-output+70000", "show+clock"]
    requests = b"".join(b"GET /admin/exec/%b HTTP/1.1\r\nHost: r\r\n%b\r\n\r\n"
                        % (c.encode(), AUTH) for c in commands)
    with tls_from(emu) as sock:
        sock.sendall(requests + b"GET /admin/exec/show+clock HTTP/1.1\r\nHost: r\r\n" + AUTH
                     + b"\r\nConnection: close\r\n\r\n")
        answers = read_answers(sock, len(commands) + 1)
        assert sock.recv(100) == b""  # closed after the last, as it asked
    assert len(answers) == len(commands) + 1
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    assert same_output("cisco_asa", answers[1].split(b"\r\n\r\n", 1)[1].decode(),
                       device.transcript(("show", "version")))
    assert len(answers[2].split(b"\r\n\r\n", 1)[1]) == 70000
    assert b"connection: close" in answers[-1].lower()
    assert b"connection: close" not in answers[0].lower()


@pytest.mark.parametrize(("head", "status"), [
    (b"GET /admin/exec/show+clock\r\nHost: r", 400),  # no version
    (b"GET  /x HTTP/1.1\r\nHost: r", 400),
    (b"GET /x HTTP/1.1\r\nBad Header\r\nHost: r", 400),
    (b"GET /x HTTP/1.1\r\n folded: line", 400),
    (b"GET /x HTTP/1.1\r\nHost: r\r\nX: \x00", 400),
    (b"GET /" + b"a" * 40000 + b" HTTP/1.1\r\nHost: r", 414),
    (b"GET /x HTTP/1.1\r\nX-Big: " + b"a" * 40000, 431),
    (b"GET /x HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"Host: r", 431),
    (b"POST /admin/config HTTP/1.1\r\nHost: r\r\nContent-Length: 5\r\nContent-Length: 6", 400),
    (b"POST /admin/config HTTP/1.1\r\nHost: r\r\nContent-Length: -1", 400),
    (b"POST /admin/config HTTP/1.1\r\nHost: r\r\nTransfer-Encoding: gzip", 501),
])
def test_malformed_heads_get_a_status_and_no_traceback(
        emulator_for: Callable[[str], EmulatorThread], caplog: pytest.LogCaptureFixture,
        head: bytes, status: int) -> None:
    emu = emulator_for("cisco_asa")
    with caplog.at_level(logging.DEBUG), tls_from(emu) as sock:
        sock.sendall(head + b"\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 %d " % status), answer[:100]
    assert b"connection: close" in answer.lower()
    ours = [r for r in caplog.records if r.name.startswith("mgmtbench")]
    assert len(ours) <= 1
    assert all(r.exc_info is None and r.levelno < logging.WARNING for r in ours)
    with https_client(emu) as client:  # and the server goes on
        assert client.get(f"{base(emu.endpoints[0])}/admin/exec/show+clock").status_code == 200


def test_parse_head_lower_cases_names_and_trims_values() -> None:
    method, target, http11, headers = parse_head(
        b"POST /a%20b?x=1 HTTP/1.0\r\nHost: r\r\nX-Thing: \t two words \t\r\nEmpty:")
    assert (method, target, http11) == ("POST", b"/a%20b?x=1", False)
    assert headers == [(b"host", b"r"), (b"x-thing", b"two words"), (b"empty", b"")]
    with pytest.raises(BadRequest):
        parse_head(b"GET / HTTP/2.0")


def test_chunked_and_expect_continue_bodies(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False)
    endpoint = emu.endpoints[0]
    with tls_from(emu) as sock:
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\n" + AUTH + b"\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n"
                     b"9;ext=1\r\nhostname \r\n6\r\nfw-ch\n\r\n0\r\nTrailer: x\r\n\r\n")
        assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 200 ")
        assert endpoint.device.hostname == "fw-ch"
        body = b"hostname fw-100\n"
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\n" + AUTH + b"\r\n"
                     b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(body))
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(body)
        assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 200 ")
    assert endpoint.device.hostname == "fw-100"


def test_an_unread_body_is_skipped_and_the_connection_goes_on(
        fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(max_body=1000))
    with tls_from(emu) as sock:  # 413 from the declared length; the body follows anyway
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\n" + AUTH
                     + b"\r\nContent-Length: 5000\r\n\r\n")
        assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 413 ")
        sock.sendall(b"x" * 5000 + b"GET /admin/exec/show+clock HTTP/1.1\r\nHost: r\r\n" + AUTH
                     + b"\r\n\r\n")
        assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 200 ")


def test_head_has_the_length_and_no_body(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False)
    url = f"{base(emu.endpoints[0])}/admin/exec/show+version"
    with https_client(emu) as client:
        full = client.get(url)
        head = client.head(url)
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == str(len(full.content))


def test_a_body_that_never_comes_is_timed_out(fresh_emulator: FreshEmulator,
                                             caplog: pytest.LogCaptureFixture) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(body_timeout=0.5))
    started = time.monotonic()
    with caplog.at_level(logging.INFO), tls_from(emu) as sock:
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\n" + AUTH
                     + b"\r\nContent-Length: 100\r\n\r\nshow clock\n")
        sock.settimeout(10)
        answer = b""
        while chunk := sock.recv(4096):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 408 "), answer
    assert time.monotonic() - started >= 0.5
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_headers_dripped_slowly_are_timed_out(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(https_idle_timeout=1.0))
    started = time.monotonic()
    with tls_from(emu) as sock:
        sock.settimeout(0.2)
        closed = False
        for _ in range(50):  # a header line every 0.2 s: never a whole head
            try:
                sock.sendall(b"X-Drip: 1\r\n" if _ else b"GET / HTTP/1.1\r\n")
                if sock.recv(100) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except OSError:
                closed = True
                break
    assert closed
    assert 1.0 <= time.monotonic() - started < 5.0


def test_keep_alive_connection_is_closed_when_idle(fresh_emulator: FreshEmulator) -> None:
    emu = fresh_emulator("cisco_asa", ssh=False, limits=Limits(https_idle_timeout=0.5))
    with tls_from(emu) as sock:
        sock.sendall(b"GET /admin/exec/show+clock HTTP/1.1\r\nHost: r\r\n" + AUTH + b"\r\n\r\n")
        assert read_answers(sock, 1)[0].startswith(b"HTTP/1.1 200 ")
        answered = time.monotonic()
        sock.settimeout(5)
        assert sock.recv(100) == b""
    assert time.monotonic() - answered >= 0.4


def test_httpx_async_pool_from_one_source(fresh_emulator: FreshEmulator) -> None:
    """A client's pool opening many connections at once stays under the default caps."""
    import asyncio

    emu = fresh_emulator("cisco_asa", ssh=False)
    url = f"{base(emu.endpoints[0])}/admin/exec/show+clock"

    async def many() -> list[int]:
        async with httpx.AsyncClient(verify=context_for(emu), auth=(USERNAME, PASSWORD)) as c:
            answers = await asyncio.gather(*(c.get(url) for _ in range(60)))
        return [a.status_code for a in answers]

    assert asyncio.run(many()) == [200] * 60


def test_an_answered_request_whose_body_never_comes_is_closed(
        fresh_emulator: FreshEmulator) -> None:
    """A POST that declares a body, gets its 401 at once and never sends the body: the
    connection is closed once the rest could have come (within the idle time-out: nginx's
    lingering close), not held for minutes as it was (242 s and more)."""
    emu = fresh_emulator("cisco_asa", ssh=False,
                         limits=Limits(https_idle_timeout=2.0, auth_failure_delay=0.0))
    wrong = b"Authorization: Basic " + base64.b64encode(b"admin:wrong")
    with tls_from(emu) as sock:
        sock.sendall(b"POST /admin/config HTTP/1.1\r\nHost: r\r\n" + wrong
                     + b"\r\nContent-Length: 100000\r\n\r\n")
        sock.settimeout(10)
        began = time.monotonic()
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 401 ")
        with contextlib.suppress(ConnectionResetError):
            while sock.recv(4096):
                pass  # until the server closes (a time-out here fails the test)
        assert time.monotonic() - began < 8
