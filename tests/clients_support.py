"""What the client tests share: driving an adapter through one iteration, and getting an adapter
class whose library is installed."""

from __future__ import annotations

import asyncio

import pytest

from mgmtbench.clients import AsyncClient, Client, adapter
from mgmtbench.clients.roundtrips import RoundTripCounter


def drive(client: Client | AsyncClient, commands: list[str]) -> str:
    """setup, one run, teardown (on the client's own event loop if it is an asyncio client)."""
    if isinstance(client, AsyncClient):
        async def go() -> str:
            await client.setup()
            try:
                return await client.run(commands)
            finally:
                await client.teardown()

        return asyncio.run(go())
    client.setup()
    try:
        return client.run(commands)
    finally:
        client.teardown()


def drive_rounds(client: Client | AsyncClient, commands: list[str], rounds: int = 2,
                 counter: RoundTripCounter | None = None) -> tuple[list[str], list[int]]:
    """setup, ``rounds`` runs, teardown; the outputs and each run's round trips (if counted)."""
    trips: list[int] = []

    def counted() -> int:
        return counter.trips if counter is not None else 0

    if isinstance(client, AsyncClient):
        async def go() -> list[str]:
            await client.setup()
            try:
                outputs = []
                for _ in range(rounds):
                    before = counted()
                    outputs.append(await client.run(commands))
                    trips.append(counted() - before)
                return outputs
            finally:
                await client.teardown()

        return asyncio.run(go()), trips
    client.setup()
    try:
        outputs = []
        for _ in range(rounds):
            before = counted()
            outputs.append(client.run(commands))
            trips.append(counted() - before)
        return outputs, trips
    finally:
        client.teardown()


def available(name: str) -> type[Client] | type[AsyncClient]:
    """The adapter class for client ``name``; the test fails if its library is missing."""
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    return cls
