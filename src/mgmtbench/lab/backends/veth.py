"""A veth pair between the host and the device namespace (shared by the ``none`` and ``netem`` backends)."""

from __future__ import annotations

import os

from pyroute2 import IPRoute
from pyroute2 import config as pyroute2_config
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.lab.backends.base import LinkBackend
from mgmtbench.lab.netns import START_TIMEOUT

# pyroute2 gives the process it forks to create a namespace (``netns.create``, every lab's first
# step) 2 s to answer. Where a lab's start timeout is raised (a VM under software emulation on a
# busy machine, where that fork of a large test process took longer), it gets as long.
if "MGMTBENCH_LAB_START_TIMEOUT" in os.environ:
    pyroute2_config.default_communicate_timeout = max(
        pyroute2_config.default_communicate_timeout, START_TIMEOUT)


class VethLink(LinkBackend):
    """Creates ``host_if`` <-> ``dev_if`` with ``dev_if`` moved into the device namespace."""

    _made = False  # set once the pair exists: down() never deletes an interface it did not make

    def up(self) -> None:
        """Create the pair, move ``dev_if`` into the namespace, apply the profile."""
        ends = self.ends
        with IPRoute() as ipr:
            ipr.link("add", ifname=ends.host_if, kind="veth", peer=ends.dev_if)
            self._made = True
            index = ipr.link_lookup(ifname=ends.dev_if)[0]
            ipr.link("set", index=index, net_ns_fd=ends.netns)
        self.impair()

    def impair(self) -> None:
        """Apply the profile (nothing for a plain veth)."""

    def down(self) -> None:
        """Delete the pair if this link made it."""
        # Deleting the host end deletes its peer; deleting the namespace would too.
        if not self._made:
            return
        self._made = False
        with IPRoute() as ipr:
            found = ipr.link_lookup(ifname=self.ends.host_if)
            if found:
                try:
                    ipr.link("del", index=found[0])
                except NetlinkError as exc:
                    if exc.code != 19:  # ENODEV: already gone
                        raise
