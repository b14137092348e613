"""Libraries as shipped and as tuned (:mod:`mgmtbench.clients.tuning`): knob clients by name, the
``+tuned`` clients, what a knob really changes on the connection, and the report's "What to
change" tables."""

from __future__ import annotations

import asyncio
import os
import re
import socket

import pandas as pd
import pytest

from mgmtbench.clients import ADAPTERS, AsyncClient, Client, Target, adapter
from mgmtbench.clients.base import REUSING_MODES
from mgmtbench.clients.registry import knob_clients, knobs_of, tuning_clients
from mgmtbench.clients.tuning import TUNED, shipped_name
from mgmtbench.errors import UsageError
from mgmtbench.results import tuning

SHIPPED_WITH_KNOBS = [name for name in ADAPTERS if "+" not in name and knobs_of(name)]
TUNED_CLIENTS = [name for name in ADAPTERS if name.endswith(TUNED)]


def test_some_library_declares_knobs_and_each_tuned_client_tunes_one() -> None:
    assert SHIPPED_WITH_KNOBS, "no library declares a knob"
    for name in TUNED_CLIENTS:
        cls = adapter(name)
        assert cls.shipped == shipped_name(name) in ADAPTERS, name
        assert cls.knobs, f"{name} runs with no knob"
        assert all(knob.matters for knob in cls.knobs), name
        assert {k.name for k in cls.knobs} == {k.name for k in knobs_of(name) if k.matters}
        assert cls.modes == adapter(shipped_name(name)).modes  # the same work, tuned


def test_a_tuned_client_follows_its_library() -> None:
    order = list(ADAPTERS)
    for name in TUNED_CLIENTS:
        library = order.index(shipped_name(name))
        assert all(shipped_name(c) == shipped_name(name) for c in order[library:order.index(name)])


@pytest.mark.parametrize("name", SHIPPED_WITH_KNOBS)
def test_knob_declarations_are_what_a_user_can_read(name: str) -> None:
    knobs = knobs_of(name)
    assert len({knob.name for knob in knobs}) == len(knobs), "a knob declared twice"
    for knob in knobs:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", knob.name), knob.name
        assert knob.name != "tuned"
        assert knob.change.strip(), knob
        assert knob.why.strip(), knob
    assert adapter(name).knobs == ()  # as shipped: none
    assert adapter(name).all_knobs == knobs  # the adapter applies what the package declares


def test_a_library_with_one_knob_is_a_client_by_name() -> None:
    name = knob_clients()[0]
    cls = adapter(name)
    assert cls.name == name
    assert cls.shipped == shipped_name(name)
    assert [knob.name for knob in cls.knobs] == name.split("+")[1:]
    assert adapter(name) is cls  # one class per name
    knob = cls.knobs[0].name
    assert cls.tuned_with(knob)
    assert not adapter(cls.shipped).tuned_with(knob)
    with pytest.raises(ValueError, match="declares no knob"):
        cls.tuned_with("no-such-knob")


def test_an_unknown_knob_is_a_one_line_usage_error() -> None:
    library = SHIPPED_WITH_KNOBS[0]
    with pytest.raises(UsageError, match=f"client {library} has no knob warp-speed: choose from") \
            as caught:
        adapter(f"{library}+warp-speed")
    assert "\n" not in str(caught.value)
    with pytest.raises(UsageError, match="unknown client 'nosuchlib\\+tcp-nodelay'"):
        adapter("nosuchlib+tcp-nodelay")


def test_clients_tuned_runs_each_library_shipped_knob_by_knob_then_tuned() -> None:
    names = tuning_clients()
    for library in SHIPPED_WITH_KNOBS:
        mine = [n for n in names if shipped_name(n) == library]
        assert mine[0] == library
        correct = [knob for knob in knobs_of(library) if knob.correct]
        assert mine[1:1 + len(correct)] == [f"{library}+{knob.name}" for knob in correct]
        assert set(mine) >= {n for n in TUNED_CLIENTS if shipped_name(n) == library}


def _nodelay_of_sockets_to(ports: set[int]) -> list[int]:
    """TCP_NODELAY of every TCP socket of this process connected to one of ``ports``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:  # (the listing's own descriptor is gone by now)
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            copy = os.dup(int(fd))
        except OSError:
            continue
        try:
            sock = socket.socket(fileno=copy)
        except OSError:
            os.close(copy)
            continue
        with sock:
            try:
                if sock.type != socket.SOCK_STREAM or sock.getpeername()[1] not in ports:
                    continue
            except (OSError, IndexError, TypeError):
                continue
            found.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    return found


NODELAY = [name for name in SHIPPED_WITH_KNOBS
           if "tcp-nodelay" in {knob.name for knob in knobs_of(name)}]


@pytest.mark.parametrize("name", NODELAY)
def test_tcp_nodelay_is_set_on_the_connection_and_only_with_the_knob(
        name: str, ios_target: Target) -> None:
    """A kept connection, looked at from the socket itself: Nagle off with the knob, on without
    (the library as shipped)."""
    for client, want in ((name, 0), (f"{name}+tcp-nodelay", 1)):
        cls = adapter(client)
        if hint := cls.missing():
            pytest.fail(hint)
        mode = next(m for m in cls.modes if m in REUSING_MODES)
        ports = {ios_target.ssh_port, ios_target.https_port,
                 ios_target.netconf_port or ios_target.ssh_port, ios_target.gnmi_port}
        seen = _during_setup(cls(ios_target, mode), ports)
        assert seen, f"{client}: no connection to the device after setup"
        assert set(seen) == {want}, f"{client} {mode}: TCP_NODELAY {seen}"


def _during_setup(client: Client | AsyncClient, ports: set[int]) -> list[int]:
    if isinstance(client, AsyncClient):
        async def go() -> list[int]:
            await client.setup()
            try:
                return _nodelay_of_sockets_to(ports)
            finally:
                await client.teardown()

        return asyncio.run(go())
    client.setup()
    try:
        return _nodelay_of_sockets_to(ports)
    finally:
        client.teardown()


def _row(client: str, mode: str, median: float, profile: str = "local") -> dict[str, object]:
    return {"client": client, "mode": mode, "median_ms": median, "profile": profile,
            "commands": 5, "wire_rtts_per_iteration": 10.0, "client_cpu_ms_per_command": 1.0}


def test_what_to_change_holds_each_knob_and_tuned_against_shipped() -> None:
    library = SHIPPED_WITH_KNOBS[0]
    knob = knobs_of(library)[0].name
    frame = pd.DataFrame([
        _row(f"{library}+tuned", "reuse-conn", 10.0), _row(library, "reuse-conn", 200.0),
        _row(f"{library}+{knob}", "reuse-conn", 20.0), _row("other", "reuse-conn", 5.0),
        _row(library, "fresh-conn", 300.0),  # no tuned row in that mode: left out
    ])
    found = tuning.tables(frame)
    assert list(found) == [(library, "local", 5)]
    table = found[(library, "local", 5)]
    assert list(table["client"]) == [library, f"{library}+{knob}", f"{library}+tuned"]
    assert list(table["gain"]) == [1.0, 10.0, 20.0]
    text = "\n".join(tuning.render(frame))
    assert "## What to change in your code" in text
    assert f"**{knob}**" in text
    assert knobs_of(library)[0].change.splitlines()[0] in text


def test_a_run_without_tuned_clients_has_no_what_to_change() -> None:
    frame = pd.DataFrame([_row("asyncssh", "reuse-conn", 9.0), _row("httpx", "keep-alive", 3.0)])
    assert tuning.tables(frame) == {}
    assert tuning.render(frame) == []


def test_fleets_shipped_against_tuned_per_number_of_sessions() -> None:
    library = SHIPPED_WITH_KNOBS[0]
    frame = pd.DataFrame([
        {"client": library, "concurrency": 100, "median_ms": 9000.0, "profile": "regional"},
        {"client": f"{library}+tuned", "concurrency": 100, "median_ms": 3000.0,
         "profile": "regional"},
        {"client": library, "concurrency": 10, "median_ms": 900.0, "profile": "regional"}])
    found = tuning.tables(frame, axis="concurrency", within=None, columns=tuning.FLEET_COLUMNS)
    table = found[(library, "regional", 0)]
    assert list(table["client"]) == [library, f"{library}+tuned"]
    assert list(table["gain"]) == [1.0, 3.0]
    assert f"### {library}: regional" in tuning.fleet_lines(frame)
