"""The ``netconf`` SSH subsystem (RFC 6242): a session channel given to a
:class:`~.session.NetconfSession`, on the device's SSH port and on its NETCONF port (830), as
IOS-XE serves it.

The channel's bytes go to the session as they arrive and its replies straight onto the channel,
in the loop turn they are made (no task, no stream objects). An idle session ends after
``idle_timeout`` seconds without a request (IOS-XE's ``netconf-yang`` session idle time-out is
ten minutes by default).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import asyncssh

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.guard import source_of
from mgmtbench.emulator.netconf.session import NetconfSession, SessionOptions
from mgmtbench.emulator.yang.datastore import platform_families

log = logging.getLogger("mgmtbench.emulator")

SUBSYSTEM = "netconf"
#: IOS-XE's NETCONF port.
NETCONF_PORT = 830


@dataclass(frozen=True)
class NetconfService:
    """How a device serves NETCONF: its largest message, whether it has a candidate, and
    the idle time-out (seconds)."""

    device: Device
    max_message: int = 64 * 1024 * 1024
    candidate: bool = True
    idle_timeout: float = 600.0

    def channel_session(self) -> NetconfChannel:
        """A new session for a channel that asked for the subsystem."""
        return NetconfChannel(self)


def netconf_subsystems(device: Device, enabled: bool) -> dict[str, Callable[[], Any]]:
    """The SSH subsystems a device serves: ``netconf`` if ``enabled`` and its platform
    writes its data in YANG models (a ``[yang]`` section in its ``platform.toml``)."""
    if not enabled or platform_families(device.platform) is None:
        return {}
    return {SUBSYSTEM: NetconfService(device).channel_session}


def _schedule(seconds: float, work: Callable[[], None]) -> Callable[[], None]:
    handle = asyncio.get_running_loop().call_later(seconds, work)
    return handle.cancel


class NetconfChannel(asyncssh.SSHServerSession[bytes]):
    """One NETCONF session's channel (see the module docstring)."""

    def __init__(self, service: NetconfService) -> None:
        self._service = service
        self._chan: Any = None
        self._session: NetconfSession | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._sending: asyncio.Task[None] | None = None  # a long reply going out
        self._writable = asyncio.Event()  # cleared while the channel's buffer is over its mark
        self._writable.set()

    def connection_made(self, chan: Any) -> None:
        """The channel is ours."""
        self._chan = chan

    def session_started(self) -> None:
        """The subsystem request succeeded: the device's hello goes out."""
        chan = self._chan
        options = SessionOptions(max_message=self._service.max_message,
                                 candidate=self._service.candidate,
                                 user=str(chan.get_extra_info("username") or ""),
                                 peer=source_of(chan.get_extra_info("peername")),
                                 schedule=_schedule)
        self._session = NetconfSession(self._service.device, options, self._write, self._close,
                                       self._stream)
        self._session.start()
        self._arm()

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionError, asyncssh.Error):
            self._chan.write(data)

    def _stream(self, pieces: AsyncGenerator[bytes, None], done: Callable[[], None]) -> None:
        """Send a long reply a piece at a time, each once the channel has taken the last (its
        window and buffer), reading no requests meanwhile: what the client does not read is
        not made, and the server holds one piece of it."""
        self._chan.pause_reading()
        self._sending = asyncio.get_running_loop().create_task(self._send_pieces(pieces, done))

    async def _send_pieces(self, pieces: AsyncGenerator[bytes, None],
                           done: Callable[[], None]) -> None:
        try:
            async for piece in pieces:
                await self._writable.wait()
                if self._chan.is_closing():
                    return
                self._write(piece)
        except Exception as exc:  # a reply that cannot be finished: the session ends
            log.warning("%s netconf: a long reply failed: %s: %s",
                        self._service.device.hostname, type(exc).__name__, exc)
            self._close()
            return
        finally:
            await pieces.aclose()
        with contextlib.suppress(BrokenPipeError, ConnectionError, asyncssh.Error):
            self._chan.resume_reading()
        done()

    def pause_writing(self) -> None:
        """The channel's buffer is over its high-water mark (the client is not reading)."""
        self._writable.clear()

    def resume_writing(self) -> None:
        """The channel's buffer drained."""
        self._writable.set()

    def _close(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
        with contextlib.suppress(BrokenPipeError, ConnectionError, asyncssh.Error):
            self._chan.exit(0)

    def _arm(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
        self._idle = asyncio.get_running_loop().call_later(self._service.idle_timeout,
                                                           self._timed_out)

    def _timed_out(self) -> None:
        if self._session is not None:
            self._session.kill()

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        """Bytes from the client."""
        if self._session is not None:
            self._session.data_received(data)
            if not self._session.closed:
                self._arm()

    def eof_received(self) -> bool:
        """The client will send no more: the session ends."""
        if self._session is not None:
            self._session.kill()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        """The channel closed."""
        if self._idle is not None:
            self._idle.cancel()
        if self._sending is not None:
            self._sending.cancel()
        self._writable.set()
        if self._session is not None:
            self._session.connection_lost()
