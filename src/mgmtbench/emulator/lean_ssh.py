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

Both hook names asyncssh calls on the connection object itself, which is not public API: where a
later asyncssh works otherwise, the connection simply does that work again (nothing breaks).
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncssh
from asyncssh.constants import MSG_IGNORE
from asyncssh.packet import String

_EMPTY = (String(b""),)
#: Packets from this size on are written at once (after what is gathered), not copied.
_GATHER_BELOW = 8192


def lean_connection(conn: asyncssh.SSHServerConnection) -> None:
    """Make ``conn``, just accepted by a listener started without an sshd_config (``config``),
    skip asyncssh's empty ``SSH_MSG_IGNORE`` packets and its per-login reload of that config, and
    write the small packets of one event-loop turn together. Any other packet, an
    ``SSH_MSG_IGNORE`` with data included, goes out as before."""
    send = conn.send_packet
    transport: asyncio.Transport | None = getattr(conn, "_transport", None)
    if transport is not None:
        conn._send = _gathering_writer(transport)  # type: ignore[method-assign]

    def send_packet(pkttype: int, *args: bytes, **kwargs: Any) -> None:
        if pkttype == MSG_IGNORE and args == _EMPTY:
            return
        send(pkttype, *args, **kwargs)

    async def reload_config() -> None:
        """No sshd_config: the options stay what the listener gave."""

    conn.send_packet = send_packet  # type: ignore[method-assign]
    conn.reload_config = reload_config  # type: ignore[method-assign]


def _gathering_writer(transport: asyncio.Transport) -> Any:
    """A replacement for the connection's ``_send(data)`` (asyncssh's only socket write): small
    writes are held until the end of the loop's turn, then written in one call. The transport
    is held here: asyncssh drops its own reference as it closes, after scheduling the abort,
    which runs after the write scheduled before it."""
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

    return write
