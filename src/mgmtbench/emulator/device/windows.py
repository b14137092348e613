"""The client windows a device's SSH bulk source saw, as its server sees them on the wire.

At 150 ms a receive moves at most one window per round trip, so the window a client grants
decides its throughput there, whatever the cipher. The server sees all of it: the client's
CHANNEL_OPEN carries its initial window and maximum packet size, and each WINDOW_ADJUST it sends
while it reads grants more. A watch records them on one channel of the bulk source
(:class:`~mgmtbench.emulator.ssh.windows.WindowWatch`, :mod:`mgmtbench.emulator.ssh.bulk`); each
device keeps the latest records in its :class:`WindowLog`, which the device's HTTPS API serves as
JSON at :data:`WINDOWS_PATH` (the emulator's own diagnostics, not a feature of the emulated
platform), so a benchmark can read them through the lab link wherever the emulator runs
(:func:`read_windows`).
"""

from __future__ import annotations

import itertools
import ssl
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

#: The device API's path for a device's window records (GET, JSON).
WINDOWS_PATH = "/mgmtbench/ssh-windows"
#: Records each device keeps (the latest).
KEPT = 256


@dataclass(frozen=True)
class ChannelWindow:
    """One source channel's window, from the server's side: the client's CHANNEL_OPEN (initial
    window, maximum packet size, bytes) and its WINDOW_ADJUSTs while it read (how many, the
    largest, and ``largest_window``: the most it allowed the server to have in flight at any
    moment, the initial window or what was left of it plus an adjust). ``seq`` numbers a
    device's records from 1; ``sent``: the payload bytes the source wrote."""

    seq: int
    initial_window: int
    max_packet: int
    largest_window: int
    largest_adjust: int
    adjusts: int
    sent: int

    def as_dict(self) -> dict[str, int]:
        """The record's fields."""
        return asdict(self)


class Watched(Protocol):
    """What a watch saw of one channel's window (the SSH side's
    :class:`~mgmtbench.emulator.ssh.windows.WindowWatch`); ``active``: whether it saw any."""

    active: bool
    initial_window: int
    max_packet: int
    largest_window: int
    largest_adjust: int
    adjusts: int


class WindowLog:
    """A device's latest :class:`ChannelWindow` records (at most :data:`KEPT`)."""

    def __init__(self) -> None:
        self._records: deque[ChannelWindow] = deque(maxlen=KEPT)
        self._seq: Callable[[], int] = itertools.count(1).__next__

    def add(self, watch: Watched, sent: int) -> ChannelWindow | None:
        """Record what ``watch`` saw of a transfer of ``sent`` bytes (nothing if it saw
        nothing)."""
        if not watch.active:
            return None
        record = ChannelWindow(self._seq(), watch.initial_window, watch.max_packet,
                               watch.largest_window, watch.largest_adjust, watch.adjusts, sent)
        self._records.append(record)
        return record

    def records(self) -> list[ChannelWindow]:
        """The records kept, oldest first."""
        return list(self._records)


def read_windows(base_url: str, ca_file: Path, username: str, password: str,
                 timeout: float = 20) -> list[ChannelWindow]:
    """The records a device's API serves (``base_url``: ``https://HOST:PORT``), oldest first."""
    import httpx  # the benchmark's side only: the emulator never imports it

    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca_file)),
                      auth=(username, password), timeout=timeout) as client:
        response = client.get(base_url + WINDOWS_PATH)
    response.raise_for_status()
    return [ChannelWindow(**record) for record in response.json()]


def summarize(records: Sequence[ChannelWindow]) -> dict[str, float] | None:
    """What a benchmark records of its transfers' windows (None for none): the initial window
    and maximum packet size (the smallest and largest, where they differ), the largest window
    and adjust seen, adjusts per transfer, and the number of transfers."""
    if not records:
        return None
    found: dict[str, float] = {}
    for name in ("initial_window", "max_packet"):
        values = sorted({getattr(r, name) for r in records})
        found[name] = values[0]
        if len(values) > 1:
            found[name + "_max"] = values[-1]
    found["largest_window"] = max(r.largest_window for r in records)
    found["largest_adjust"] = max(r.largest_adjust for r in records)
    found["adjusts_per_transfer"] = round(sum(r.adjusts for r in records) / len(records), 1)
    found["transfers"] = len(records)
    return found
