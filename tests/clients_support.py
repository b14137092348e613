"""What the client tests share: driving an adapter through one iteration, and getting an adapter
class whose library is installed."""

from __future__ import annotations

import asyncio

import pytest

from mgmtbench.clients import AsyncClient, Client, adapter


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


def available(name: str) -> type[Client] | type[AsyncClient]:
    """The adapter class for client ``name``; the test fails if its library is missing."""
    cls = adapter(name)
    if hint := cls.missing():
        pytest.fail(hint)
    return cls
