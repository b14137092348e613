"""``tbf``: a rate-only link shaped by the kernel's token bucket filter, one per direction on the
device side of a veth pair (as ``netem`` places its qdiscs: see
:class:`~mgmtbench.lab.backends.veth.DeviceSideQdiscs`), set through pyroute2.

For profiles whose only impairment is a rate (the throughput experiment's ``1000mbit``: 1 Gbit/s
at 0 ms) on kernels without ``sch_netem``. The ``tun`` delay line can shape those too, but it
handles every wire packet in Python: plain TCP got 36-54 MB/s through its 1 Gbit/s with the
delay line at a core, so a benchmark on that link measured the lab. Here the kernel does the
work. tbf cannot delay, drop at random, reorder or duplicate: a profile that asks for any of
that is refused in one sentence (:meth:`~mgmtbench.lab.backends.base.LinkBackend.refusal`).

Why tbf and not htb: a link is one token bucket in front of one queue, which is exactly tbf (its
queue a byte FIFO). htb shapes with the same token bucket per class; for a single class it
would add a class tree, a filter and a child qdisc and be no more faithful.

Sizes (:func:`tbf_options`):

- **rate**: the profile's, counted like netem's over each frame from its Ethernet header (no
  preamble or gap), so a link's TCP goodput is about rate x MSS / frame (1448 / 1514).
- **burst** (the bucket): 1 ms at the rate (125 kB at 1 Gbit/s, 12.5 kB at 100 Mbit/s), at least
  two full frames. A real wire serialises every frame at the rate, and netem's rate does the same
  with no burst at all: a token bucket lets a full bucket through back to back after a pause, so
  the bucket should be small. But tokens beyond it are lost, so a bucket shorter than the gaps
  between the qdisc's wake-ups (a busy softirq, a loaded CPU) loses link time and the rate is not
  reached. 1 ms reaches it here: plain TCP through 1 Gbit/s got 109-119 MB/s of the 119.5 goodput
  a wire allows with buckets of 1, 2 or 4 ms, on the shared 2-core machine, and 102-116 with
  0.1 ms. So a burst arrives at most 1 ms early. A GSO packet larger than the bucket (a veth
  passes them up to 64 KiB) is cut into its segments by tbf, in the kernel.
- **limit** (the queue): 100 ms at the rate, at least 100 full frames. Towards the benchmark the
  devices' sockets are local to the qdisc and TCP small queues keep their share of it small;
  towards the devices nothing holds the benchmark's TCP back but the queue, which fills until TCP
  backs off on a drop, once per fill as at a router's buffer. (netem's limit here is 100,000
  packets and the delay line's queue is unbounded: neither drops for the rate, both can queue for
  seconds.)
"""

from __future__ import annotations

from typing import Any

from mgmtbench.lab.backends.veth import DeviceSideQdiscs, probe
from mgmtbench.lab.profiles import LinkProfile

#: The bucket holds this long at the rate ...
BURST_SECONDS = 0.001
#: ... and at least two full Ethernet frames (a bucket below one frame would drop every one).
MIN_BURST = 2 * 1514
#: The queue holds this long at the rate ...
LIMIT_SECONDS = 0.1
#: ... and at least 100 full frames.
MIN_LIMIT = 100 * 1514
#: tbf's rate and sizes travel in 32-bit fields (pyroute2 sends no 64-bit rate): bytes/s.
MAX_RATE = 2**32 - 1


def tbf_options(rate_mbit: float) -> dict[str, Any]:
    """One direction's tbf options (pyroute2's ``tc`` keywords) for ``rate_mbit``: rate in
    bytes/s, burst and limit in bytes (see the module docstring)."""
    rate = int(rate_mbit * 1e6 / 8)
    burst = max(int(rate * BURST_SECONDS), MIN_BURST)
    limit = max(int(rate * LIMIT_SECONDS), MIN_LIMIT, burst)
    return {"rate": rate, "burst": burst, "limit": limit}


class TbfBackend(DeviceSideQdiscs):
    """A token bucket (tc tbf) on the device side of a veth pair, one per direction: rate only."""
    name = "tbf"
    supports = frozenset({"rate"})
    qdisc = "tbf"

    @classmethod
    def unavailable(cls) -> str | None:
        """Why tbf cannot run here (a probe on throwaway interfaces), None if it can."""
        return probe("tbf", tbf_options(10))

    @classmethod
    def refusal(cls, profile: LinkProfile) -> str | None:
        """Anything but a rate, or a rate above tbf's 32-bit field, is refused."""
        if tbf_options(profile.rate_mbit)["rate"] > MAX_RATE:
            return (f"link backend 'tbf' shapes up to {MAX_RATE * 8 / 1e6:.0f} Mbit/s (a 32-bit "
                    f"rate), but profile {profile.name!r} asks for {profile.rate_mbit:g} Mbit/s")
        return super().refusal(profile)

    def impair(self) -> None:
        """Both token buckets; none for a profile without a rate (a plain veth pair, as ``none``,
        so ``--link-backend tbf`` also serves an unimpaired ``local`` beside the rate-only
        links)."""
        if self.profile.rate_mbit:
            super().impair()

    def qdisc_options(self) -> dict[str, Any]:
        """One direction's tbf options, from the profile's rate."""
        return tbf_options(self.profile.rate_mbit)
