"""``netem``: tc netem on the device side of a veth pair, one qdisc per direction, set through pyroute2
(the primary path).

Where the delays sit. The benchmark-side end (``host_if``) carries no qdisc; both directions are
impaired in the lab's namespace:

- towards the benchmark: netem as the root qdisc of ``dev_if`` (its egress);
- towards the devices: packets arriving on ``dev_if`` are redirected by its ingress qdisc (a u32
  match-all filter with a mirred action) to an IFB device, ``ifb_if``, whose root qdisc is the
  second netem; the IFB device hands them back to ``dev_if``'s receive path once released.

Each direction is delayed by half the RTT, with its own jitter, loss and rate, so every packet is
impaired once per direction, as on a real path. The benchmark's end sees what a host on a real
path sees: its packets leave ``host_if`` when sent, answers arrive delayed. That is also where the
``tun`` delay line puts its delay (beyond its TUN interface), so the lab's wire tap
(:mod:`mgmtbench.lab.wiretap`, on ``host_if``) sees the same thing through both backends. With
netem as ``host_if``'s own root qdisc instead, the tap (which the kernel feeds after the qdisc)
saw packets to the devices half an RTT late: the order of a request and an answer crossing it
changed, and so did the counted wire round trips wherever both ends send without waiting for
each other (SSH banners and key exchange, pipelined requests), and the tap's ICMP probes timed
only the return half.

Rate limits use netem's own rate (serialisation per packet). pyroute2 sends no delay distribution
table, so jitter is netem's uniform distribution. Needs sch_netem, ifb, sch_ingress, cls_u32 and
act_mirred (modules of every stock distribution kernel, loaded on first use); :meth:`unavailable`
tries them all on throwaway interfaces.
"""

from __future__ import annotations

import os
from typing import Any

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.veth import VethLink
from mgmtbench.lab.netns import link_index
from mgmtbench.lab.nsconfig import in_namespace

NETEM_LIMIT = 100_000  # packets held per direction (netem's default 1000 drops at high RTT x rate)
ETH_P_ALL = 0x0003
INGRESS = "ffff:"


class NetemBackend(VethLink):
    """tc netem on the device side of a veth pair, one qdisc per direction."""
    name = "netem"
    supports = frozenset({"jitter", "loss", "rate", "reorder", "duplicate"})

    @classmethod
    def unavailable(cls) -> str | None:
        """Why netem cannot run here (a probe on throwaway interfaces), None if it can."""
        return _probe()

    @property
    def ifb_if(self) -> str:
        """The IFB device that carries the direction towards the devices (in the lab's namespace)."""
        return self.ends.dev_if + "i"

    def impair(self) -> None:
        """Add the IFB device and both netem qdiscs, half the RTT each, from a thread inside the
        lab's namespace (no helper process to start)."""
        options = self.netem_options()
        dev_if, ifb_if = self.ends.dev_if, self.ifb_if

        def work() -> None:
            with IPRoute() as ipr:
                _impair_both_ways(ipr, link_index(ipr, dev_if), ifb_if, options)

        in_namespace(self.ends.netns, work)

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


def _impair_both_ways(ipr: IPRoute, dev: int, ifb_name: str, options: dict[str, Any]) -> int:
    """On interface ``dev`` (in ``ipr``'s namespace): netem on its egress, and its ingress
    redirected through a new IFB device ``ifb_name`` with netem on that; the IFB's index."""
    ipr.link("add", ifname=ifb_name, kind="ifb")
    ifb = link_index(ipr, ifb_name)
    ipr.link("set", index=ifb, state="up")
    ipr.tc("add", "netem", ifb, handle="1:", **options)
    ipr.tc("add", "ingress", dev, INGRESS)
    ipr.tc("add-filter", "u32", dev, parent=INGRESS, protocol=ETH_P_ALL, prio=1,
           target=0x10001, keys=["0x0/0x0+0"],
           action=[{"kind": "mirred", "direction": "egress", "action": "redirect",
                    "ifindex": ifb}])
    ipr.tc("add", "netem", dev, handle="1:", **options)
    return ifb


def _probe() -> str | None:
    """Build the netem link on throwaway interfaces (a veth pair and an IFB device in this
    namespace): does this kernel have what it needs?"""
    name = f"mgbprobe{os.getpid() % 100000}"
    step = "create a veth pair"
    try:
        with IPRoute() as ipr:
            ipr.link("add", ifname=name, kind="veth", peer=name + "p")
            try:
                step = "add a netem qdisc, an ingress redirect and an IFB device"
                _impair_both_ways(ipr, link_index(ipr, name + "p"), name + "i", {"delay": 1000})
            finally:
                for made in (name, name + "i"):
                    found = ipr.link_lookup(ifname=made)
                    if found:
                        ipr.link("del", index=found[0])
    except NetlinkError as exc:
        if exc.code == 2:  # ENOENT: "Specified qdisc kind is unknown" (or classifier, action)
            return ("this kernel has no sch_netem (or no ingress qdisc, u32 classifier or mirred "
                    "action for its other direction): tc netem: kind unknown")
        if exc.code == 95:  # EOPNOTSUPP: no such link kind
            return "this kernel has no ifb devices (the netem backend's second direction)"
        return f"cannot {step} here: {exc}"
    except PermissionError:
        return "tc netem needs root or CAP_NET_ADMIN"
    except LookupError as exc:
        return f"cannot {step} here: {exc}"
    return None
