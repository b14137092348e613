"""Work asyncssh does on every server connection by default that a device's SSH server does not,
left out of the emulator's connections (:func:`lean_connection`).

- asyncssh sends an empty ``SSH_MSG_IGNORE`` before every packet once the connection is
  encrypted (a defence for CBC ciphers). OpenSSH's sshd and network devices do not: a device
  answers an exec request with its channel packets alone. Leaving them out halves the packets,
  encryptions and socket writes per exec (~10 % of the emulator's CPU time per exec on a kept
  connection) and gives clients the packet count a device gives them.
- asyncssh writes each packet to the socket as it is made: an exec answer (request success,
  output, exit status, EOF, close) is five ``send()`` calls, each waking the client. The
  emulator's connections gather the small packets made in one turn of the event loop and write
  them at its end in one call (large ones, bulk data, go out at once as before): a real device's
  TCP stack also sends what is ready together.
- asyncssh builds the connection's options anew in a worker thread at the start of a login and
  again at each later authentication request (``reload_config``: to apply ``Match`` blocks of an
  sshd_config file). The emulator gives it no such file, so every reload gives the options it
  already has, and costs ~0.25 ms of CPU and two thread hand-offs per login.
- asyncssh formats the arguments of each of its log messages before the level is checked (7
  per exec), and each packet's name and size for a packet log that prints only at its debug
  level 3: the emulator's connections check the level first (:func:`quiet_logging`).

These are hook names asyncssh calls on the connection object itself, which are not public API,
and the class of the connection's logger: where a later asyncssh works otherwise, the
connection simply does that work again (nothing breaks).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import asyncssh
from asyncssh.constants import MSG_IGNORE
from asyncssh.logging import SSHLogger
from asyncssh.packet import String

_EMPTY = (String(b""),)
#: Packets from this size on are written at once (after what is gathered), not copied.
_GATHER_BELOW = 8192
_ASYNCSSH_LOG = logging.getLogger("asyncssh")


def lean_connection(conn: asyncssh.SSHServerConnection) -> Callable[[], None]:
    """Make ``conn``, just accepted by a listener started without an sshd_config (``config``),
    skip asyncssh's empty ``SSH_MSG_IGNORE`` packets and its per-login reload of that config, and
    write the small packets of one event-loop turn together. Any other packet, an
    ``SSH_MSG_IGNORE`` with data included, goes out as before.

    Returns ``send_now()``, which writes what has been gathered at once instead of at the end of
    the turn: for a packet the client should have before the server goes on working."""
    send = conn.send_packet
    transport: asyncio.Transport | None = getattr(conn, "_transport", None)
    send_now = _nothing
    if transport is not None:
        write, send_now = _gathering_writer(transport)
        conn._send = write  # type: ignore[method-assign,assignment]

    def send_packet(pkttype: int, *args: bytes, **kwargs: Any) -> None:
        if pkttype == MSG_IGNORE and args == _EMPTY:
            return
        send(pkttype, *args, **kwargs)

    async def reload_config() -> None:
        """No sshd_config: the options stay what the listener gave."""

    conn.send_packet = send_packet  # type: ignore[method-assign]
    conn.reload_config = reload_config  # type: ignore[method-assign]
    quiet_logging(conn)
    return send_now


def quiet_logging(conn: asyncssh.SSHServerConnection) -> None:
    """Format asyncssh's log lines for ``conn`` and its channels only when they are printed:
    asyncssh formats a message's arguments before the level is checked, and every packet's
    name and size for a packet log that prints at its debug level 3 only."""
    conn.logger.__class__ = _QuietLogger  # its channels' loggers are its children: quiet too
    skip_packet_logs(conn)


def skip_packet_logs(handler: Any) -> None:
    """Make ``handler`` (a connection or a channel: what asyncssh logs each packet through)
    skip the per-packet log call unless asyncssh's logger prints debug lines now."""
    if not _ASYNCSSH_LOG.isEnabledFor(logging.DEBUG):
        handler.log_sent_packet = _no_packet_log
        handler.log_received_packet = _no_packet_log


def _nothing() -> None:
    """Nothing gathered, nothing to write."""


def _gathering_writer(transport: asyncio.Transport) -> tuple[Callable[[bytes], None],
                                                              Callable[[], None]]:
    """A replacement for the connection's ``_send(data)`` (asyncssh's only socket write), and
    its ``flush()``: small writes are held until the end of the loop's turn (or a call of
    ``flush``), then written in one call. The transport is held here: asyncssh drops its own
    reference as it closes, after scheduling the abort, which runs after the write scheduled
    before it."""
    loop = asyncio.get_running_loop()
    pending: list[bytes] = []

    def flush() -> None:
        if not pending:
            return
        data = b"".join(pending)
        pending.clear()
        if not transport.is_closing():
            transport.write(data)

    def write(data: bytes) -> None:
        if not pending:
            if len(data) >= _GATHER_BELOW:
                if not transport.is_closing():
                    transport.write(data)
                return
            loop.call_soon(flush)
        pending.append(data)
        if len(data) >= _GATHER_BELOW:
            flush()  # what was gathered, then this, in order

    return write, flush


class _QuietLogger(SSHLogger):
    """asyncssh's logger, checking the level before it formats a message's arguments."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log ``msg`` if ``level`` is printed."""
        if self.isEnabledFor(level):
            super().log(level, msg, *args, **kwargs)


def _no_packet_log(*args: Any, **kwargs: Any) -> None:
    """asyncssh's per-packet log line when its debug level is off: nothing."""
