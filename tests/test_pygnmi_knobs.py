"""pygnmi's knobs (:mod:`mgmtbench.clients.pygnmi.knobs`) do what they say on the device's side:
``skip-capabilities`` asks no Capabilities (pygnmi as shipped asks one per connection), and a
client without the connect wait (``no-ready-wait``) still reports a closed port as a failed
connection, at once. Outputs are :mod:`tests.test_clients`' (every client, ``+tuned`` too)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from mgmtbench.clients import Client, Target, adapter
from mgmtbench.emulator import EmulatorThread
from mgmtbench.errors import ConnectionFailed

COMMANDS = ["show version", "show clock"]


def _rounds(client: Client, rounds: int) -> None:
    client.setup()
    try:
        for _ in range(rounds):
            client.run(COMMANDS)
    finally:
        client.teardown()


@pytest.mark.parametrize(("name", "per_connection"), [
    ("pygnmi", 1), ("pygnmi+skip-capabilities", 0), ("pygnmi+tuned", 0)])
def test_capabilities_asked_per_connection(name: str, per_connection: int, ios_target: Target,
                                           emulator_for: Callable[[str], EmulatorThread]
                                           ) -> None:
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    counts = emulator_for("cisco_ios").emulator.gnmi_services["R1"].counts
    before = counts.get("Capabilities", 0), counts.get("Get", 0)
    client = cls(ios_target, "fresh-conn")
    assert isinstance(client, Client)
    _rounds(client, 3)
    assert (counts.get("Capabilities", 0) - before[0], counts.get("Get", 0) - before[1]) == \
        (3 * per_connection, 3)


@pytest.mark.parametrize("name", ["pygnmi+no-ready-wait", "pygnmi+tuned"])
def test_a_closed_port_fails_at_once_without_the_connect_wait(name: str,
                                                              ios_target: Target) -> None:
    """As shipped, pygnmi waits ``gnmi_timeout`` (5 s, twice) for a channel that never becomes
    ready; without the wait the first call fails, UNAVAILABLE."""
    with socket.socket() as sock:
        sock.bind((ios_target.host, 0))
        port = sock.getsockname()[1]
    client = adapter(name)(replace(ios_target, gnmi_port=port), "fresh-conn")
    assert isinstance(client, Client)
    started = time.monotonic()
    with pytest.raises(ConnectionFailed, match="pygnmi"):
        _rounds(client, 1)
    assert time.monotonic() - started < 4.0
