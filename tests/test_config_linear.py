"""Configuration changes cost linear time whatever their shape: thousands of lines under one
parent (``ip address ... secondary``), their removal one by one, thousands of top-level lines
and their removal, through the device's HTTPS API in one POST each. Bounds are generous (the
machine is shared); the shapes took minutes before."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import httpx
import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.server import DeviceEndpoint
from mgmtbench.testing.shell import https_client

LINES = 8001
BOUND = 30.0  # seconds, for work measured at 0.4-2.6 s here


@pytest.fixture
def device(fresh_emulator: Callable[..., EmulatorThread],
           ) -> Iterator[tuple[DeviceEndpoint, httpx.Client]]:
    emu = fresh_emulator()
    with https_client(emu) as client:
        yield emu.endpoints[0], client


def _post(endpoint: DeviceEndpoint, client: httpx.Client, lines: list[str]) -> float:
    began = time.monotonic()
    answer = client.post(f"https://{endpoint.host}:{endpoint.https_port}/admin/config",
                         content="\n".join(lines), timeout=300)
    assert answer.status_code == 200, answer.text[:300]
    return time.monotonic() - began


def _running(endpoint: DeviceEndpoint, client: httpx.Client) -> str:
    return client.get(endpoint.https_url("show running-config"), timeout=60).text


def test_thousands_of_secondaries_under_one_interface(
        device: tuple[DeviceEndpoint, httpx.Client]) -> None:
    endpoint, client = device
    addresses = [f"ip address 10.{i // 65536}.{i // 256 % 256}.{i % 256} 255.255.255.255 secondary"
                 for i in range(1, LINES + 1)]
    took = _post(endpoint, client, ["interface GigabitEthernet2", *(f" {a}" for a in addresses)])
    running = _running(endpoint, client)
    block = running.split("interface GigabitEthernet2\n", 1)[1].split("\n!", 1)[0]
    shown = [line.strip() for line in block.splitlines() if line.strip().endswith("secondary")]
    assert shown == addresses  # every one, in the order typed, inside its interface
    assert took < BOUND, f"{LINES} secondaries took {took:.1f} s"
    took = _post(endpoint, client, ["interface GigabitEthernet2",
                                    *(f" no {a}" for a in addresses)])
    assert "secondary" not in _running(endpoint, client)
    assert took < BOUND, f"removing {LINES} secondaries one by one took {took:.1f} s"


def test_thousands_of_top_level_lines_and_their_removal(
        device: tuple[DeviceEndpoint, httpx.Client]) -> None:
    endpoint, client = device
    before = _running(endpoint, client)
    routes = [f"ip route 10.9.{i // 256}.{i % 256} 255.255.255.255 Null0" for i in range(8000)]
    took = _post(endpoint, client, routes)
    running = _running(endpoint, client)
    assert running.count("ip route 10.9.") == 8000
    assert took < BOUND, f"8,000 top-level lines took {took:.1f} s"
    took = _post(endpoint, client, [f"no {route}" for route in routes])
    assert _running(endpoint, client).replace("\n", "").count("ip route 10.9.") == 0
    assert took < BOUND, f"removing 8,000 top-level lines took {took:.1f} s"
    assert _running(endpoint, client).count("\n!\n!\n") == before.count("\n!\n!\n")


def test_thousands_of_unnumbered_access_list_entries(
        device: tuple[DeviceEndpoint, httpx.Client]) -> None:
    """Each entry typed without a number takes the next after the highest (10, 20 ...): found
    once per entry, not by reading the whole list again."""
    endpoint, client = device
    entries = [f"permit ip any host 10.{i // 65536}.{i // 256 % 256}.{i % 256}"
               for i in range(1, LINES + 1)]
    took = _post(endpoint, client, ["ip access-list extended BIG", *(f" {e}" for e in entries)])
    running = _running(endpoint, client)
    after = running.split("ip access-list extended BIG\n", 1)[1].splitlines()
    block = after[:next(i for i, line in enumerate(after) if not line.startswith(" "))]
    numbered = [line.split(None, 1) for line in block]
    assert [int(number) for number, _ in numbered] == list(range(10, 10 * LINES + 1, 10))
    assert [entry for _, entry in numbered] == entries
    assert took < BOUND, f"{LINES} unnumbered entries took {took:.1f} s"
    _post(endpoint, client, ["ip access-list extended BIG", f" no {10 * LINES}",
                             " deny ip any any"])  # the highest gone: its number is free again
    assert f" {10 * LINES} deny   ip any any\n" in _running(endpoint, client)  # IOS aligns
