"""A device's SSH connection stops making channel data its client's socket does not take.

asyncssh ignores its transport's ``pause_writing``: a channel sends whatever its window allows
straight into the socket's buffer, and the window is the client's to grant. A client that grants
a GiB on four channels and stops reading its socket made the server hold a GiB (1.09 GB peak,
393 MB 35 s after the close). Here the connection follows its socket (:func:`follow_socket`):
while the transport is over its high-water mark, a device's channels
(:class:`~mgmtbench.emulator.ssh.channel.DeviceChannel`) keep what their sessions write in their
own buffers, so that past asyncssh's 64 KiB high-water mark the session is paused
(``pause_writing``) and stops making output; when the socket drains, every channel sends on.
What a connection holds is then the socket's buffer and, per channel, its buffer's high-water mark
and one write, whatever window the client grants.

``pause_writing``/``resume_writing`` are the hooks asyncio calls on the connection (asyncssh's
are empty); the channels are the connection's ``_channels``: where a later asyncssh does this
itself, these hooks are simply replaced.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import asyncssh

log = logging.getLogger("mgmtbench.emulator")


#: Seconds after which a channel holding data for a full socket looks again, whatever the
#: socket said: a resume that never came (a transport that closed, a hook an exception cut
#: short) must not leave a session paused for good.
RECHECK = 0.1


@dataclass
class SocketGate:
    """Whether a connection's socket takes writes now (``transport``: to ask it again)."""

    paused: bool = False
    transport: Any = None

    def holding(self) -> bool:
        """Whether channel data must wait: the socket said it is full, and its buffer still
        holds more than nothing."""
        if not self.paused:
            return False
        transport = self.transport
        if transport is None or transport.is_closing() or not transport.get_write_buffer_size():
            self.paused = False  # drained (or gone) without a resume: data goes on
        return self.paused


def follow_socket(conn: asyncssh.SSHServerConnection) -> SocketGate:
    """Make ``conn`` hold its channels' data while its socket is full (see the module)."""
    gate = SocketGate(transport=getattr(conn, "_transport", None))

    def pause_writing() -> None:
        gate.paused = True

    def resume_writing() -> None:
        gate.paused = False
        channels: dict[int, Any] = getattr(conn, "_channels", {})
        for chan in list(channels.values()):
            if gate.paused:  # full again: the rest wait for the next resume (or RECHECK)
                break
            send_on = getattr(chan, "send_on", None)
            if send_on is None:
                continue
            try:
                send_on()
            except Exception:  # a channel closing under it: the others go on
                log.debug("a channel could not send on after its socket drained",
                          exc_info=True)

    conn.pause_writing = pause_writing  # type: ignore[method-assign]
    conn.resume_writing = resume_writing  # type: ignore[method-assign]
    conn._mgmtbench_gate = gate  # type: ignore[attr-defined]
    return gate


def gate_of(conn: object) -> SocketGate | None:
    """``conn``'s gate, if it follows its socket."""
    gate = getattr(conn, "_mgmtbench_gate", None)
    return gate if isinstance(gate, SocketGate) else None
