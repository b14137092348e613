"""A veth pair between the host and the device namespace (shared by the ``none`` and ``netem`` backends)."""

from __future__ import annotations

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.lab.backends.base import LinkBackend


class VethLink(LinkBackend):
    """Creates ``host_if`` <-> ``dev_if`` with ``dev_if`` moved into the device namespace."""

    def up(self) -> None:
        ends = self.ends
        with IPRoute() as ipr:
            ipr.link("add", ifname=ends.host_if, kind="veth", peer=ends.dev_if)
            index = ipr.link_lookup(ifname=ends.dev_if)[0]
            ipr.link("set", index=index, net_ns_fd=ends.netns)
        self.impair()

    def impair(self) -> None:
        """Apply the profile (nothing for a plain veth)."""

    def down(self) -> None:
        # Deleting the host end deletes its peer; deleting the namespace would too.
        with IPRoute() as ipr:
            found = ipr.link_lookup(ifname=self.ends.host_if)
            if found:
                try:
                    ipr.link("del", index=found[0])
                except NetlinkError as exc:
                    if exc.code != 19:  # ENODEV: already gone
                        raise
