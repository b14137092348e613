"""The SSH echo of ``mgmtbench inventory check`` (:func:`mgmtbench.targets.probe._global_request`)
uses asyncssh's private ``_make_global_request``, there being no public call that sends a global
request and waits without side effects. These tests fail loudly when an asyncssh upgrade renames
it or changes what it takes or returns, and check the echo against a real server."""

from __future__ import annotations

import asyncio
import inspect
import statistics
import time
from typing import Any

import asyncssh
import pytest

from mgmtbench.clients.asyncssh.connect import connect_options
from mgmtbench.errors import UsageError
from mgmtbench.targets import Target
from mgmtbench.targets.probe import GLOBAL_ANSWERS, _global_request


def test_asyncssh_still_has_the_private_global_request() -> None:
    method = getattr(asyncssh.SSHClientConnection, "_make_global_request", None)
    assert method is not None, (
        f"asyncssh {asyncssh.__version__} removed SSHConnection._make_global_request: "
        "mgmtbench.targets.probe._global_request (the SSH echo RTT) needs another way")
    assert inspect.iscoroutinefunction(method)
    parameters = list(inspect.signature(method).parameters.values())
    assert [p.name for p in parameters[:2]] == ["self", "request"], parameters
    assert parameters[2].kind is inspect.Parameter.VAR_POSITIONAL, parameters


def test_the_echo_is_answered_and_cheaper_than_a_command(ios_target: Target) -> None:
    async def measure() -> tuple[list[float], list[float]]:
        async with asyncssh.connect(**connect_options(ios_target, str(ios_target.known_hosts))
                                    ) as conn:
            answer, _ = await conn._make_global_request(b"keepalive@openssh.com")
            assert answer in GLOBAL_ANSWERS  # what asyncssh returns: the answer's message type
            echoes, commands = [], []
            for _ in range(15):
                start = time.perf_counter()
                await _global_request(conn)
                echoes.append(time.perf_counter() - start)
                start = time.perf_counter()
                await conn.run("show clock", timeout=10)
                commands.append(time.perf_counter() - start)
            return echoes, commands

    echoes, commands = asyncio.run(measure())
    # One round trip against a channel open, a request, output and a close: several times less.
    assert statistics.median(echoes) * 3 < statistics.median(commands), (echoes, commands)


def test_without_the_method_the_host_gets_one_line() -> None:
    class Connection:  # an asyncssh that no longer has the method
        pass

    conn: Any = Connection()
    with pytest.raises(UsageError, match="has no _make_global_request"):
        asyncio.run(_global_request(conn))
