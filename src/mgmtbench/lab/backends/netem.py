"""``netem``: tc netem on both ends of a veth pair, set through pyroute2 (the primary path).

Each end delays its egress by half the RTT, so every packet is delayed once per direction, as on a
real path. Rate limits use netem's own rate (serialisation per packet). pyroute2 sends no delay
distribution table, so jitter is netem's uniform distribution.
"""

from __future__ import annotations

import os
from typing import Any

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.veth import VethLink
from mgmtbench.lab.netns import run_in

NETEM_LIMIT = 100_000  # packets held per direction (netem's default 1000 drops at high RTT x rate)


class NetemBackend(VethLink):
    """tc netem on both ends of a veth pair."""
    name = "netem"
    supports = frozenset({"jitter", "loss", "rate", "reorder", "duplicate"})

    @classmethod
    def unavailable(cls) -> str | None:
        """Why netem cannot run here (a probe on a throwaway veth pair), None if it can."""
        return _probe()

    def impair(self) -> None:
        """Add netem to both ends, half the RTT each."""
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
        with IPRoute() as ipr:
            index = ipr.link_lookup(ifname=self.ends.host_if)[0]
            ipr.tc("add", "netem", index, handle="1:", **options)
        run_in(self.ends.netns, "mgmtbench.lab.nsconfig",
               {"dev_if": self.ends.dev_if, "netem": options})


def _probe() -> str | None:
    """Add a netem qdisc to a throwaway veth pair: does this kernel have sch_netem?"""
    name = f"mgbprobe{os.getpid() % 100000}"
    try:
        with IPRoute() as ipr:
            ipr.link("add", ifname=name, kind="veth", peer=name + "p")
            try:
                index = ipr.link_lookup(ifname=name)[0]
                ipr.tc("add", "netem", index, handle="1:", delay=1000)
            finally:
                ipr.link("del", ifname=name)
    except NetlinkError as exc:
        if exc.code == 2:  # ENOENT: "Specified qdisc kind is unknown"
            return "this kernel has no sch_netem (tc netem: qdisc kind unknown)"
        return f"cannot use tc netem here: {exc}"
    except PermissionError:
        return "tc netem needs root or CAP_NET_ADMIN"
    return None
