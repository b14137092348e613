"""Watching a client's window on one of the device's SSH channels (the bulk source's,
:mod:`.bulk`): what :class:`~mgmtbench.emulator.device.windows.WindowLog` records.

asyncssh has no public view of a channel's send window, so the watch reads the channel's
``_send_window`` and ``_send_pktsize`` when the source starts (no data has been sent yet, and a
client can only adjust after the exec request's reply, which reaches it after the source task is
scheduled: they are the CHANNEL_OPEN's values), and puts a handler of its own in front of the
channel's WINDOW_ADJUST handler (the instance's ``_packet_handlers``): it reads the adjust from the
packet without consuming it and passes the packet on. Where those names are missing (another
asyncssh), nothing is recorded and the source runs as before.
"""

from __future__ import annotations

import logging
from typing import Any

from asyncssh.constants import MSG_CHANNEL_WINDOW_ADJUST

log = logging.getLogger("mgmtbench.emulator")


class WindowWatch:
    """Watches one server channel's send window from now until :meth:`stop` (see the module
    docstring); ``active`` is False where this asyncssh has no such fields."""

    def __init__(self, channel: Any) -> None:
        self._channel = channel
        window = getattr(channel, "_send_window", None)
        packet = getattr(channel, "_send_pktsize", None)
        handlers = getattr(type(channel), "_packet_handlers", None)
        original = handlers.get(MSG_CHANNEL_WINDOW_ADJUST) if isinstance(handlers, dict) else None
        self.initial_window = window if isinstance(window, int) else 0
        self.max_packet = packet if isinstance(packet, int) else 0
        self.largest_window = self.initial_window
        self.largest_adjust = 0
        self.adjusts = 0
        self.active = False
        if not (isinstance(window, int) and isinstance(packet, int) and isinstance(handlers, dict)
                and original is not None):
            log.warning("this asyncssh (no _send_window/_packet_handlers on %s) does not show "
                        "the client's window: not recorded", type(channel).__name__)
            return

        def adjust(chan: Any, pkttype: int, pktid: int, packet: Any) -> Any:
            self._seen(int.from_bytes(packet.get_remaining_payload()[:4], "big"))
            return original(chan, pkttype, pktid, packet)

        channel._packet_handlers = {**handlers, MSG_CHANNEL_WINDOW_ADJUST: adjust}
        self.active = True

    def _seen(self, adjust: int) -> None:
        self.adjusts += 1
        self.largest_adjust = max(self.largest_adjust, adjust)
        self.largest_window = max(self.largest_window, self._channel._send_window + adjust)

    def stop(self) -> None:
        """Hand WINDOW_ADJUSTs back to the channel's own handler."""
        if self.active and "_packet_handlers" in vars(self._channel):
            del self._channel._packet_handlers
