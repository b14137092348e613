"""A device's BGP as its configuration makes it: each configured neighbour's state, the
same on every platform that reads ``router bgp`` (IOS, EOS): Established when the neighbour is
inside a connected subnet of an up interface, Idle when shut down, else Active; the prefixes it
sent a small number of its own that never moves."""

from __future__ import annotations

import hashlib
import ipaddress
from dataclasses import dataclass, field

__all__ = ["Bgp", "Peer", "peer_order"]


@dataclass(frozen=True)
class Peer:
    """One configured BGP neighbour and what the device makes of it."""

    address: str
    asn: str
    description: str
    shutdown: bool
    #: Our address on the neighbour's subnet, and that interface (None: not connected).
    local: str | None
    interface: str | None
    route_in: str = ""
    route_out: str = ""

    @property
    def state(self) -> str:
        """``Established``, ``Idle`` (shut down) or ``Active``."""
        if self.shutdown:
            return "Idle"
        return "Established" if self.local is not None else "Active"

    @property
    def seed(self) -> int:
        """A number from the address: what differs per neighbour but never moves."""
        return int.from_bytes(hashlib.sha256(b"bgp:" + self.address.encode()).digest()[:8],
                              "big")

    @property
    def received(self) -> int:
        """Prefixes the neighbour sent (none unless Established)."""
        return 2 + self.seed % 7 if self.state == "Established" else 0


@dataclass(frozen=True)
class Bgp:
    """The ``router bgp`` block, with each neighbour's state."""

    asn: str
    router_id: str
    peers: list[Peer]
    networks: list[str] = field(default_factory=list)


def peer_order(address: str) -> tuple[int, str]:
    """How neighbours are listed: by address, numerically (a name that is no address last)."""
    try:
        return int(ipaddress.IPv4Address(address)), address
    except ValueError:
        return 1 << 32, address
