"""``netem``: tc netem on the device side of a veth pair, one qdisc per direction, set through pyroute2
(the primary path).

Where the delays sit. The benchmark-side end (``host_if``) carries no qdisc; both directions are
impaired in the lab's namespace:

- towards the benchmark: netem as the root qdisc of ``dev_if`` (its egress);
- towards the devices: packets arriving on ``dev_if`` are redirected by its ingress qdisc (a u32
  match-all filter with a mirred action) to an IFB device, ``ifb_if``, whose root qdisc is the
  second netem; the IFB device hands them back to ``dev_if``'s receive path once released.

Each direction is delayed by half the RTT, with its own jitter, loss and rate, so every packet is
impaired once per direction, as on a real path (the plumbing, shared with ``tbf``, is
:class:`~mgmtbench.lab.backends.veth.DeviceSideQdiscs`). The benchmark's end sees what a host on a real
path sees: its packets leave ``host_if`` when sent, answers arrive delayed. That is also where the
``tun`` delay line puts its delay (beyond its TUN interface), so the lab's wire tap
(:mod:`mgmtbench.lab.wiretap`, on ``host_if``) sees the same thing through both backends. With
netem as ``host_if``'s own root qdisc instead, the tap (which the kernel feeds after the qdisc)
saw packets to the devices half an RTT late: the order of a request and an answer crossing it
changed, and so did the counted wire round trips wherever both ends send without waiting for
each other (SSH banners and key exchange, pipelined requests), and the tap's ICMP probes timed
only the return half.

Rate limits use netem's own rate: each packet is held for its serialisation time at the rate
after the previous one, with no burst (a GSO packet counts as one). pyroute2 sends no delay distribution
table, so jitter is netem's uniform distribution. Needs sch_netem, ifb, sch_ingress, cls_u32 and
act_mirred (modules of every stock distribution kernel, loaded on first use); :meth:`unavailable`
tries them all on throwaway interfaces.
"""

from __future__ import annotations

from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.veth import DeviceSideQdiscs, probe

NETEM_LIMIT = 100_000  # packets held per direction (netem's default 1000 drops at high RTT x rate)


class NetemBackend(DeviceSideQdiscs):
    """tc netem on the device side of a veth pair, one qdisc per direction."""
    name = "netem"
    supports = frozenset({"delay", "jitter", "loss", "rate", "reorder", "duplicate"})
    qdisc = "netem"

    @classmethod
    def unavailable(cls) -> str | None:
        """Why netem cannot run here (a probe on throwaway interfaces), None if it can."""
        return probe("netem", {"delay": 1000})

    def qdisc_options(self) -> dict[str, Any]:
        """One direction's netem options, from the profile: half the RTT each."""
        return self.netem_options()

    def netem_options(self) -> dict[str, Any]:
        """One direction's netem options, from the profile."""
        profile = self.profile
        if profile.jitter_ms and profile.jitter_distribution != "uniform":
            raise UsageError(f"the netem backend (through pyroute2) only has uniform jitter; set "
                             f"jitter_distribution = \"uniform\" in profile {profile.name!r}")
        options: dict[str, Any] = {
            "delay": int(profile.one_way_ms * 1000),
            "jitter": int(profile.jitter_ms * 1000),
            "loss": profile.loss_pct,
            "duplicate": profile.duplicate_pct,
            "limit": NETEM_LIMIT,
        }
        if profile.reorder_pct:
            options["prob_reorder"] = profile.reorder_pct
        if profile.rate_mbit:
            options["rate"] = f"{profile.rate_mbit}mbit"
        return options
