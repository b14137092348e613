"""A device's SSH session channel: asyncssh's, less the work a device does not do per channel.

- The open is confirmed in the loop turn the request arrives in. asyncssh starts a task for every
  open (the session may be a coroutine), so its confirmation waited a turn or two; a device's
  session is never one.
- Packets are not formatted for asyncssh's debug log unless that log prints them, as on its
  connection (:func:`~mgmtbench.emulator.ssh.lean.skip_packet_logs`).
- The channel tells its connection it is gone as soon as the client's close is processed
  (``released``), as a device frees a session slot: asyncssh tells the session a turn later, so
  a client that opened its next channel right after closing one could be refused at the
  per-connection limit.
- While the connection's socket is full, data waits in the channel and the session is paused
  (:mod:`.backpressure`), whatever window the client grants.
- The channel can be handed to another session (:meth:`DeviceChannel.hand_over`): a device's
  session answers CLI exec requests itself and gives the channel to an asyncssh process for
  anything else (:mod:`.exec`).

Beyond asyncssh's public API this does what its own ``_finish_open_request`` does, with the same
attributes and its ``_wrap_session`` hook, and sets the channel's ``_session``; asyncssh's
version is pinned in the lock, and
``tests/test_ssh_exec.py`` checks each path against a real client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, cast

import asyncssh
from asyncssh.constants import MSG_CHANNEL_CLOSE
from asyncssh.packet import SSHPacket

from mgmtbench.emulator.ssh.backpressure import RECHECK, gate_of
from mgmtbench.emulator.ssh.lean import skip_packet_logs

log = logging.getLogger("mgmtbench.emulator")


class DeviceChannel(asyncssh.SSHServerChannel[bytes]):
    """A server session channel for :class:`asyncssh.SSHServerSession` objects (see the module
    docstring); made by :func:`device_channel`."""

    _released: Callable[[], None] | None = None

    def process_packet(self, pkttype: int, pktid: int, packet: SSHPacket) -> Any:
        """Process a packet for this channel; after the client's close, release the channel."""
        result = super().process_packet(pkttype, pktid, packet)
        if pkttype == MSG_CHANNEL_CLOSE:
            released, self._released = self._released, None
            if released is not None:
                released()
        return result

    def process_open(self, send_chan: int, send_window: int, send_pktsize: int,
                     session: Any) -> None:
        """Confirm the open and start ``session`` on the channel now (a coroutine: asyncssh's
        way, from a task)."""
        if not isinstance(session, asyncssh.SSHServerSession):
            super().process_open(send_chan, send_window, send_pktsize, session)
            return
        conn = self._conn
        assert conn is not None
        assert self._recv_chan is not None
        self._send_chan = send_chan
        self._send_window = send_window
        self._send_pktsize = send_pktsize
        chan, wrapped = self._wrap_session(session)  # a line editor, where enabled
        self._session = cast(asyncssh.SSHServerSession[bytes], wrapped)
        conn.send_channel_open_confirmation(send_chan, self._recv_chan, self._recv_window,
                                            self._recv_pktsize)
        self._send_state = "open"
        self._recv_state = "open"
        wrapped.connection_made(chan)

    _recheck: asyncio.TimerHandle | None = None

    def _flush_send_buf(self) -> None:
        """Send what the window allows, unless the connection's socket is full
        (:mod:`.backpressure`): then the data stays here, past the high-water mark the session
        is paused, and the channel looks again after ``RECHECK`` s if nothing resumed it."""
        gate = gate_of(self._conn)
        # Only data waits: with nothing buffered, asyncssh's flush sends a pending EOF or
        # close at once (held with the data, a close never left: a client waited for it).
        if self._send_buf and gate is not None and gate.holding():
            self._pause_resume_writing()
            if self._recheck is None:
                self._recheck = asyncio.get_running_loop().call_later(RECHECK, self._look_again)
            return
        super()._flush_send_buf()

    def _look_again(self) -> None:
        self._recheck = None
        if self._conn is not None and self._send_buf:
            try:
                self._flush_send_buf()
            except Exception:  # the channel closing meanwhile: nothing left to send
                log.debug("a held channel could not send on", exc_info=True)

    def send_on(self) -> None:
        """The connection's socket drained: send what waits (and resume the session)."""
        if self._conn is not None and self._send_buf:
            self._flush_send_buf()

    def hand_over(self, session: asyncssh.SSHServerSession[bytes]) -> None:
        """Give the channel to ``session``, already told of it (``connection_made``): requests,
        data, EOF and the close go to it from now on."""
        self._session = session


def device_channel(conn: asyncssh.SSHServerConnection,
                   released: Callable[[], None]) -> DeviceChannel:
    """A new session channel on ``conn``, with the options ``conn`` was accepted with;
    ``released()`` is called once, when the client's close has been processed."""
    chan = conn.create_server_channel(encoding=None)
    # asyncssh builds the channel from the listener's options, which are the connection's
    # private state: build it that way, then make it ours (DeviceChannel adds methods only).
    chan.__class__ = DeviceChannel
    assert isinstance(chan, DeviceChannel)
    chan._released = released
    skip_packet_logs(chan)  # as its connection does
    return chan
