"""The device's API over HTTP/3 (aioquic) with a real QUIC client on loopback: outputs equal to
the oracle's, configuration, auth, 0-RTT answered from early data (GET of show commands) and
refused (425) otherwise, single-use tickets against a replayed ClientHello, the connection cap,
long output, the ``serve`` flags, and the device's own counts over HTTPS and HTTP/3."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from aioquic.tls import SessionTicket

from mgmtbench.emulator import EmulatorOptions, EmulatorThread, Limits
from mgmtbench.emulator.command import options_from_args, register
from mgmtbench.emulator.device.http3 import FIELDS, HTTP3_PATH, read_http3_counts
from mgmtbench.emulator.http3.early import replay_safe
from mgmtbench.emulator.oracle import expected_output, same_output
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.errors import UsageError
from tests.http3_support import Relay, client

PLATFORM = "cisco_ios"
SHOW = "/admin/exec/show+version"
SMALL = "/admin/exec/show+ip+interface+brief"


def options(**overrides: object) -> EmulatorOptions:
    """One cisco_ios device: HTTPS and HTTP/3 (no gNMI, NETCONF: not what is tested)."""
    fields: dict[str, object] = {"platform": PLATFORM, "gnmi": False, "netconf": False}
    fields.update(overrides)
    return EmulatorOptions(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorThread]:
    with EmulatorThread(options()) as emulator:
        yield emulator


@pytest.fixture(scope="module")
def endpoint(emu: EmulatorThread) -> DeviceEndpoint:
    return emu.endpoints[0]


@pytest.fixture(scope="module")
def ca(emu: EmulatorThread) -> Path:
    assert emu.emulator.tls is not None
    return emu.emulator.tls.ca


def counts(endpoint: DeviceEndpoint) -> dict[str, int]:
    return endpoint.device.http3_counts.as_dict()


def oracle(endpoint: DeviceEndpoint, *commands: str) -> str:
    return expected_output(PLATFORM, endpoint.hostname, endpoint.device.facts.mgmt_ip,
                           list(commands))


async def ticket_of(port: int, ca: Path) -> SessionTicket:
    """A session ticket from one ordinary connection (issued after its handshake)."""
    tickets: list[SessionTicket] = []
    async with client(port, ca, tickets=tickets) as conn:
        assert (await conn.request("GET", SHOW)).status == 200
        for _ in range(100):
            if tickets:
                break
            await asyncio.sleep(0.01)
    assert tickets, "no session ticket"
    assert tickets[0].max_early_data_size, "a ticket that allows no early data"
    return tickets[0]


def test_served_on_the_https_ports_number(endpoint: DeviceEndpoint) -> None:
    assert endpoint.http3_port == endpoint.https_port


def test_exec_output_is_the_oracles(endpoint: DeviceEndpoint, ca: Path) -> None:
    async def run() -> tuple[int, str, str]:
        assert endpoint.http3_port
        async with client(endpoint.http3_port, ca) as conn:
            one = await conn.request("GET", SHOW)
            two = await conn.request("GET", "/admin/exec/show+version/show+ip+interface+brief")
            head = await conn.request("HEAD", SHOW)
            assert head.status == 200
            assert not head.body
            return one.status, one.text, two.text

    status, one, two = asyncio.run(run())
    assert status == 200
    assert same_output(PLATFORM, one, oracle(endpoint, "show version"))
    assert same_output(PLATFORM, two, oracle(endpoint, "show version", "show ip interface brief"))


def test_post_config_is_applied() -> None:
    with EmulatorThread(options()) as emulator:
        endpoint = emulator.endpoints[0]
        assert emulator.emulator.tls is not None
        assert endpoint.http3_port
        body = b"interface GigabitEthernet0/0/1\n description over-quic\nexit\n"

        async def run() -> tuple[int, str]:
            assert emulator.emulator.tls is not None
            assert endpoint.http3_port
            async with client(endpoint.http3_port, emulator.emulator.tls.ca) as conn:
                posted = await conn.request("POST", "/admin/config", body)
                shown = await conn.request("GET", "/admin/exec/show+running-config")
                return posted.status, shown.text

        status, config = asyncio.run(run())
    assert status == 200
    assert " description over-quic\n" in config


@pytest.mark.parametrize("auth", [None, b"Basic " + b"YWRtaW46d3Jvbmc="])  # admin:wrong
def test_credentials_are_required(endpoint: DeviceEndpoint, ca: Path, auth: bytes | None) -> None:
    async def run() -> tuple[int, dict[bytes, bytes]]:
        assert endpoint.http3_port
        async with client(endpoint.http3_port, ca) as conn:
            response = await conn.request(
                "GET", SHOW, headers=[] if auth is None else [(b"authorization", auth)])
            return response.status, dict(response.headers)

    status, headers = asyncio.run(run())
    assert status == 401
    assert headers[b"www-authenticate"] == f'Basic realm="{endpoint.hostname}"'.encode()


def test_0rtt_get_is_answered_from_early_data_in_one_round_trip(endpoint: DeviceEndpoint,
                                                                ca: Path) -> None:
    """Through a relay that adds 100 ms each way: a new connection takes two round trips to its
    answer (handshake, request), a 0-RTT request one; the device counts it as early. (Half a
    round trip of slack: aioquic's handshakes cost ~10 ms of CPU on each side.)

    One round trip for an answer that fits in what the server may send to an address it has not
    validated (RFC 9000 section 8.1: three times what it received, here a 1200-byte datagram,
    of which its own handshake takes 1200): ``show ip interface brief``. A longer one
    (``show version``, 2.5 kB) waits a round trip more for the client's next packet."""
    delay = 0.1
    rtt = 2 * delay

    async def run() -> tuple[float, float, str, bool]:
        assert endpoint.http3_port
        ticket = await ticket_of(endpoint.http3_port, ca)
        relay, port = await Relay.start(endpoint.http3_port, delay)
        try:
            start = time.perf_counter()
            async with client(port, ca) as conn:
                assert (await conn.request("GET", SMALL)).status == 200
            fresh = time.perf_counter() - start
            start = time.perf_counter()
            async with client(port, ca, ticket=ticket, wait_connected=False) as conn:
                response = await conn.request("GET", SMALL)
                early = time.perf_counter() - start
                assert response.status == 200
                handshake = await conn.handshaken()
                accepted = handshake.early_data_accepted and handshake.session_resumed
            return fresh, early, response.text, accepted
        finally:
            relay.close()

    before = counts(endpoint)
    fresh, early, text, accepted = asyncio.run(run())
    after = counts(endpoint)
    assert accepted
    assert same_output(PLATFORM, text, oracle(endpoint, "show ip interface brief"))
    assert after["early_data_accepted"] == before["early_data_accepted"] + 1
    assert after["early_data_refused"] == before["early_data_refused"]
    assert after["resumed"] >= before["resumed"] + 1
    assert fresh >= 2 * rtt, f"a new connection answered in {fresh * 1000:.0f} ms"
    assert early < 1.5 * rtt, f"0-RTT answered in {early * 1000:.0f} ms, RTT {rtt * 1000:.0f}"


def test_an_address_token_lets_a_long_0rtt_answer_leave_at_once(endpoint: DeviceEndpoint,
                                                                ca: Path) -> None:
    """``show version`` (over 2 kB) in 0-RTT: without an address token the device may send only
    three times what the client sent before the client's next packet validates it, so the
    answer takes two round trips; with the NEW_TOKEN token of the previous connection, one. The
    device counts the token issued and redeemed; a token used twice validates nothing."""
    delay = 0.1
    rtt = 2 * delay

    async def early_get(port: int, ticket: SessionTicket, token: bytes) -> tuple[float, str]:
        start = time.perf_counter()
        async with client(port, ca, ticket=ticket, wait_connected=False, token=token) as conn:
            response = await conn.request("GET", SHOW)
            elapsed = time.perf_counter() - start
            handshake = await conn.handshaken()
            assert response.status == 200
            assert handshake.early_data_accepted
            assert handshake.session_resumed
        return elapsed, response.text

    async def run() -> tuple[float, float, float, str]:
        assert endpoint.http3_port
        relay, port = await Relay.start(endpoint.http3_port, delay)
        try:
            tickets: list[SessionTicket] = []
            tokens: list[bytes] = []
            async with client(port, ca, tickets=tickets, tokens=tokens) as conn:
                assert (await conn.request("GET", SMALL)).status == 200
                for _ in range(100):
                    if tickets and tokens:
                        break
                    await asyncio.sleep(0.01)
            assert tokens, "no NEW_TOKEN frame"
            without, _ = await early_get(port, tickets[0], b"")
            tickets2 = [await ticket_of(endpoint.http3_port, ca), await ticket_of(
                endpoint.http3_port, ca)]
            with_token, text = await early_get(port, tickets2[0], tokens[0])
            replayed, _ = await early_get(port, tickets2[1], tokens[0])
            return without, with_token, replayed, text
        finally:
            relay.close()

    before = counts(endpoint)
    without, with_token, replayed, text = asyncio.run(run())
    after = counts(endpoint)
    assert same_output(PLATFORM, text, oracle(endpoint, "show version"))
    assert len(text) > 2048
    assert after["address_validated"] == before["address_validated"] + 1
    assert after["tokens_issued"] > before["tokens_issued"]
    assert without >= 1.5 * rtt, f"no token, answered in {without * 1000:.0f} ms"
    assert with_token < 1.5 * rtt, f"with a token, answered in {with_token * 1000:.0f} ms"
    assert replayed >= 1.5 * rtt, f"a token used twice, answered in {replayed * 1000:.0f} ms"


def test_0rtt_post_is_too_early_and_counted(endpoint: DeviceEndpoint, ca: Path) -> None:
    """A configuration in early data gets 425; sent again after the handshake, 200 (RFC 8470).
    So does an exec command that is not ``show``."""
    async def run() -> tuple[int, int, int]:
        assert endpoint.http3_port
        ticket = await ticket_of(endpoint.http3_port, ca)
        async with client(endpoint.http3_port, ca, ticket=ticket, wait_connected=False) as conn:
            posted = conn.send("POST", "/admin/config", b"show clock\n")
            other = conn.send("GET", "/admin/exec/show+clock/clear+counters")
            first, second = await asyncio.wait_for(asyncio.gather(posted, other), 20)
            await conn.handshaken()
            again = await conn.request("POST", "/admin/config", b"show clock\n")
            return first.status, second.status, again.status

    before = counts(endpoint)
    first, second, again = asyncio.run(run())
    after = counts(endpoint)
    assert (first, second, again) == (425, 425, 200)
    assert after["early_data_refused"] == before["early_data_refused"] + 2
    assert after["early_data_accepted"] == before["early_data_accepted"]


def test_a_replayed_clienthello_gets_no_early_data(endpoint: DeviceEndpoint, ca: Path) -> None:
    """The datagrams of a 0-RTT connection, sent again once it has ended: its ticket was taken,
    so the copy resumes nothing and its early request is never run."""
    async def run() -> list[bytes]:
        assert endpoint.http3_port
        ticket = await ticket_of(endpoint.http3_port, ca)
        relay, port = await Relay.start(endpoint.http3_port, 0.0)
        try:
            async with client(port, ca, ticket=ticket, wait_connected=False) as conn:
                assert (await conn.request("GET", SHOW)).status == 200
        finally:
            relay.close()
        return relay.from_client

    before = counts(endpoint)
    recorded = asyncio.run(run())
    accepted = counts(endpoint)
    assert accepted["early_data_accepted"] == before["early_data_accepted"] + 1
    deadline = time.monotonic() + 10
    while endpoint.device.http3_counts.open and time.monotonic() < deadline:
        time.sleep(0.05)  # the server forgets the connection after its closing period
    assert endpoint.device.http3_counts.open == 0
    assert endpoint.http3_port
    # The first flight: the ClientHello's datagram, and any more 0-RTT packets (QUIC v1 long
    # header, type 0-RTT: first byte 0b1101....).
    flight = [d for i, d in enumerate(recorded) if i == 0 or d[0] & 0xF0 == 0xD0]
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as replay:
        for datagram in flight:
            replay.sendto(datagram, ("127.0.0.1", endpoint.http3_port))
        time.sleep(0.5)
    after = counts(endpoint)
    assert after["connections"] == accepted["connections"] + 1  # the copy was taken up
    for name in ("resumed", "early_data_accepted", "requests", "handshakes"):
        assert after[name] == accepted[name], name


def test_the_connection_cap_refuses_the_next_one() -> None:
    with EmulatorThread(options(limits=Limits(max_http3_connections=2))) as emulator:
        endpoint = emulator.endpoints[0]
        assert emulator.emulator.tls is not None
        ca = emulator.emulator.tls.ca

        async def run() -> None:
            assert endpoint.http3_port
            async with client(endpoint.http3_port, ca) as one, \
                    client(endpoint.http3_port, ca) as two:
                assert (await one.request("GET", SHOW)).status == 200
                assert (await two.request("GET", SHOW)).status == 200
                start = time.perf_counter()
                with pytest.raises(ConnectionError):
                    async with client(endpoint.http3_port, ca):
                        pass
                assert time.perf_counter() - start < 2  # refused, not left to time out

        asyncio.run(run())
        assert endpoint.device.http3_counts.dropped == 1
        assert endpoint.device.http3_counts.connections == 2


def test_a_handshake_that_never_ends_is_closed_in_time() -> None:
    """A client that sends its first flight and nothing more holds its slot under the cap for
    ``tls_handshake_timeout`` only."""
    limits = Limits(tls_handshake_timeout=0.3, max_http3_connections=1)
    with EmulatorThread(options(limits=limits)) as emulator:
        endpoint = emulator.endpoints[0]
        assert emulator.emulator.tls is not None
        assert endpoint.http3_port
        ca, port = emulator.emulator.tls.ca, endpoint.http3_port

        async def first_flight() -> bytes:
            relay, relayed = await Relay.start(port, 0.0)
            try:
                async with client(relayed, ca):
                    pass
            finally:
                relay.close()
            return relay.from_client[0]

        hello = asyncio.run(first_flight())
        counted = endpoint.device.http3_counts
        deadline = time.monotonic() + 10
        while counted.open and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as stalled:
            stalled.sendto(hello, ("127.0.0.1", port))  # and never answers the server
            time.sleep(0.1)
            assert counted.open == 1
            time.sleep(0.5)
            assert counted.open == 0

        async def after() -> int:
            async with client(port, ca) as conn:
                return (await conn.request("GET", SHOW)).status

        assert asyncio.run(after()) == 200  # the slot is free again


def test_the_apis_limits_apply() -> None:
    """The body limit is the application's: 413 for a body over it, the rest of it unread, and
    the connection keeps serving."""
    with EmulatorThread(options(limits=Limits(max_body=1000))) as emulator:
        endpoint = emulator.endpoints[0]
        assert emulator.emulator.tls is not None
        ca = emulator.emulator.tls.ca

        async def run() -> tuple[int, int]:
            assert endpoint.http3_port
            async with client(endpoint.http3_port, ca) as conn:
                over = await conn.request("POST", "/admin/config", b"! x\n" * 100_000)
                after = await conn.request("GET", SHOW)
                return over.status, after.status

        assert asyncio.run(run()) == (413, 200)


def test_long_output_arrives_whole(endpoint: DeviceEndpoint, ca: Path) -> None:
    async def run() -> tuple[int, int, dict[bytes, bytes]]:
        assert endpoint.http3_port
        async with client(endpoint.http3_port, ca) as conn:
            response = await conn.request("GET", "/admin/exec/show+bulk-output+5000000")
            return response.status, len(response.body), dict(response.headers)

    status, size, headers = asyncio.run(run())
    assert status == 200
    assert size == int(headers[b"content-length"]) >= 5_000_000


def test_malformed_datagrams_are_dropped(endpoint: DeviceEndpoint, ca: Path) -> None:
    assert endpoint.http3_port
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as junk:
        for data in (b"", b"\x00", b"\xc0" + b"\xff" * 1300, b"GET / HTTP/1.1\r\n\r\n"):
            junk.sendto(data, ("127.0.0.1", endpoint.http3_port))

    async def run() -> int:
        assert endpoint.http3_port
        async with client(endpoint.http3_port, ca) as conn:
            return (await conn.request("GET", SHOW)).status

    assert asyncio.run(run()) == 200


def test_counts_are_served_over_https_and_http3(emu: EmulatorThread, endpoint: DeviceEndpoint,
                                                ca: Path) -> None:
    over_https = read_http3_counts(f"https://127.0.0.1:{endpoint.https_port}", ca, "admin",
                                   "admin")
    assert tuple(over_https) == FIELDS

    async def run() -> dict[str, int]:
        assert endpoint.http3_port
        async with client(endpoint.http3_port, ca) as conn:
            response = await conn.request("GET", HTTP3_PATH)
            assert response.status == 200
            found: dict[str, int] = json.loads(response.body)
            return found

    over_http3 = asyncio.run(run())
    assert tuple(over_http3) == FIELDS
    assert over_http3["connections"] > over_https["connections"]
    assert over_http3["requests"] == over_https["requests"]  # this request is counted as sent


def test_https_honours_an_early_data_mark(endpoint: DeviceEndpoint, ca: Path) -> None:
    """A request marked Early-Data: 1 by a front end is refused unless safe, over HTTPS too."""
    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca)),
                      auth=("admin", "admin")) as http:
        base = f"https://127.0.0.1:{endpoint.https_port}"
        marked = {"early-data": "1"}
        assert http.post(f"{base}/admin/config", content="show clock\n",
                         headers=marked).status_code == 425
        assert http.get(f"{base}{SHOW}", headers=marked).status_code == 200


@pytest.mark.parametrize(("method", "path", "safe"), [
    ("GET", b"/admin/exec/show+version", True),
    ("HEAD", b"/admin/exec/sh+ver/show+clock", True),
    ("GET", b"/admin/exec/show%20running-config+%7C+include+ntp", True),
    ("GET", b"/admin/exec/show+clock/reload", False),
    ("GET", b"/admin/exec/s+version", False),  # too short to be only show
    ("GET", b"/admin/exec/", False),
    ("POST", b"/admin/config", False),
    ("GET", b"/mgmtbench/http3", False),
    ("GET", b"/restconf/data", False),
])
def test_which_requests_are_safe_to_replay(method: str, path: bytes, safe: bool) -> None:
    assert replay_safe(method, path) is safe


def serve_args(*flags: str) -> EmulatorOptions:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return options_from_args(parser.parse_args(["serve", *flags]))


def test_serve_flags_choose_the_http3_port() -> None:
    default = serve_args()
    assert (default.http3, default.http3_port) == (True, None)  # the HTTPS port's number
    assert serve_args("--http3-port", "9443").http3_port == 9443
    assert not serve_args("--no-http3").http3
    with EmulatorThread(options(http3=False)) as emulator:
        assert emulator.endpoints[0].http3_port is None
    with EmulatorThread(options(http3_port=0)) as emulator:
        endpoint = emulator.endpoints[0]
        assert endpoint.http3_port
        assert endpoint.http3_port != endpoint.https_port
        assert emulator.emulator.tls is not None

        async def run() -> int:
            assert emulator.emulator.tls is not None
            assert endpoint.http3_port
            async with client(endpoint.http3_port, emulator.emulator.tls.ca) as conn:
                return (await conn.request("GET", SHOW)).status

        assert asyncio.run(run()) == 200


def test_overlapping_http3_ports_are_one_clear_line() -> None:
    with pytest.raises(UsageError, match="overlap"):
        EmulatorThread(options(devices=2, https_port=18443, http3_port=18444))


def test_address_tokens_are_bound_fresh_and_single_use() -> None:
    """A token validates the IP it was issued to, within its lifetime, once; two issued in the
    same second differ (each connection's token is its own); a changed byte fails."""
    from mgmtbench.emulator.http3.tokens import AddressTokens

    tokens = AddressTokens(lifetime=60)
    first, second = tokens.issue("198.18.0.9", now=1000), tokens.issue("198.18.0.9", now=1000)
    assert first != second
    assert not tokens.redeem(first, "198.18.0.10", now=1001)  # another address
    assert not tokens.redeem(first, "198.18.0.9", now=1061)  # expired
    assert not tokens.redeem(first[:-1] + bytes([first[-1] ^ 1]), "198.18.0.9", now=1001)
    assert tokens.redeem(first, "198.18.0.9", now=1001)
    assert not tokens.redeem(first, "198.18.0.9", now=1002)  # used
    assert tokens.redeem(second, "198.18.0.9", now=1002)
    assert not AddressTokens().redeem(second, "198.18.0.9", now=1002)  # another device's key
