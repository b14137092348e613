"""HTTP/2 control-frame floods against the device's HTTPS server: counted before Hypercorn reads
them, a flooding connection gets GOAWAY (ENHANCE_YOUR_CALM) and is closed, a legitimate HTTP/2
client is never counted out, and the frame counter reads headers split across reads."""

from __future__ import annotations

import socket
import ssl
import struct
import time
from collections.abc import Callable

import pytest

from mgmtbench.emulator import EmulatorThread
from mgmtbench.emulator.https.h2flood import (
    BURST,
    ENHANCE_YOUR_CALM,
    GOAWAY,
    PREFACE,
    ControlFrames,
)
from mgmtbench.testing.shell import https_client

SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
SETTINGS_ACK = b"\x00\x00\x00\x04\x01\x00\x00\x00\x00"
PING = b"\x00\x00\x08\x06\x00\x00\x00\x00\x00" + b"12345678"
WINDOW_UPDATE = b"\x00\x00\x04\x08\x00\x00\x00\x00\x00" + b"\x00\x00\x00\x01"


def test_the_counter_reads_frames_across_reads_and_spares_acks() -> None:
    now = [0.0]
    counter = ControlFrames(burst=10, rate=1.0, clock=lambda: now[0])
    stream = PREFACE + SETTINGS + SETTINGS_ACK * 50 + WINDOW_UPDATE * 50 + PING * 9
    for at in range(0, len(stream), 7):  # 7 bytes a read: every header split somewhere
        assert counter.feed(stream[at:at + 7])
    assert counter.frames == 10  # SETTINGS and 9 PINGs; ACKs and window updates pass
    assert not counter.feed(PING)  # the 11th at once
    now[0] = 5.0
    refilled = ControlFrames(burst=10, rate=1.0, clock=lambda: now[0])
    assert refilled.feed(PREFACE + PING * 10)
    now[0] = 10.0
    assert refilled.feed(PING * 5)  # five seconds refilled five


def _flood(host: str, port: int, context: ssl.SSLContext, frame: bytes) -> tuple[bytes, float]:
    """Write ``frame`` over and over on one HTTP/2 connection, reading what comes back; what the
    server sent until it closed, and when it closed (seconds)."""
    raw = socket.create_connection((host, port), timeout=10)
    sock = context.wrap_socket(raw, server_hostname=host)
    assert sock.selected_alpn_protocol() == "h2"
    began = time.monotonic()
    got = bytearray()
    sock.settimeout(0.05)
    sock.sendall(PREFACE + SETTINGS)
    batch = frame * (16384 // len(frame))
    try:
        while time.monotonic() - began < 20:
            try:
                sock.sendall(batch)
            except (OSError, ssl.SSLError):
                break
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            except (OSError, ssl.SSLError):
                break
            if not data:
                break
            got += data
        sock.settimeout(2)
        try:
            while data := sock.recv(65536):
                got += data
        except (OSError, ssl.SSLError):
            pass
    finally:
        sock.close()
    return bytes(got), time.monotonic() - began


def _goaway_error(stream: bytes) -> int | None:
    """The error code of the first GOAWAY among the server's frames (after its SETTINGS)."""
    at = 0
    while at + 9 <= len(stream):
        length = int.from_bytes(stream[at:at + 3], "big")
        if stream[at + 3] == GOAWAY and at + 9 + 8 <= len(stream):
            return int(struct.unpack(">I", stream[at + 13:at + 17])[0])
        at += 9 + length
    return None


@pytest.mark.parametrize("frame", [SETTINGS, PING], ids=["settings", "ping"])
def test_a_control_frame_flood_gets_goaway_and_is_closed(
        fresh_emulator: Callable[..., EmulatorThread], frame: bytes) -> None:
    emu = fresh_emulator()
    endpoint = emu.endpoints[0]
    assert endpoint.https_port
    with https_client(emu) as legit:
        assert emu.emulator.tls is not None
        context = ssl.create_default_context(cafile=str(emu.emulator.tls.ca))
        context.set_alpn_protocols(["h2"])
        got, took = _flood(endpoint.host, endpoint.https_port, context, frame)
        assert _goaway_error(got) == ENHANCE_YOUR_CALM
        assert took < 10, f"the flooding connection stayed {took:.1f} s"
        answer = legit.get(endpoint.https_url("show version"), timeout=10)
        assert answer.status_code == 200


def test_a_legitimate_http2_client_is_never_counted_out(
        fresh_emulator: Callable[..., EmulatorThread]) -> None:
    """Twice the burst of requests, some with long outputs (window updates), on one HTTP/2
    connection: every one answered."""
    emu = fresh_emulator()
    endpoint = emu.endpoints[0]
    with https_client(emu, http2=True) as client:
        for index in range(2 * BURST):
            command = "show bulk-output 300000" if index % 100 == 0 else "show clock"
            answer = client.get(endpoint.https_url(command), timeout=30)
            assert answer.status_code == 200
            assert answer.http_version == "HTTP/2"
        assert len(client.get(endpoint.https_url("show bulk-output 8000000"),
                              timeout=60).content) >= 8_000_000

