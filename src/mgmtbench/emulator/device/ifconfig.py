"""What an interface's configuration says, as far as the show commands tell it: read from the
running configuration by :func:`mgmtbench.emulator.device.derived.interfaces`, used by the views
that follow the configuration and by the routing table (:mod:`.iproute`)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["IfConfig"]


@dataclass(frozen=True)
class IfConfig:
    """What an interface's configuration says, as far as the show commands tell it."""

    name: str
    description: str | None = None
    address: tuple[str, str] | None = None  # (address, mask)
    secondaries: tuple[tuple[str, str], ...] = ()
    shutdown: bool = False
    nameif: str | None = None
    mtu: int | None = None
    standby: str | None = None
    speed: str | None = None  # "10", "100", "1000" (Mb/s); None: auto
    duplex: str | None = None  # "full", "half"; None: auto
    bandwidth: int | None = None  # Kbit/s (`bandwidth`), None: the speed's
