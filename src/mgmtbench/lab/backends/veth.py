"""A veth pair between the host and the device namespace (shared by the ``none``, ``netem`` and
``tbf`` backends), and qdiscs for both directions on its device side (``netem``, ``tbf``).

Both directions on the device side: towards the benchmark, the qdisc is the root of ``dev_if``
(its egress); towards the devices, ``dev_if``'s ingress qdisc redirects every packet (a u32
match-all filter with a mirred action) to an IFB device, ``ifb_if``, whose root is the second
qdisc; the IFB device hands them back to ``dev_if``'s receive path once released. The
benchmark's end (``host_if``) carries none, so the lab's wire tap there sees what a host on a
real path sees (``netem``'s module says why that matters).
"""

from __future__ import annotations

import contextlib
import errno
import os
from abc import abstractmethod
from typing import Any, ClassVar

from pyroute2 import IPRoute
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.lab.backends.base import LinkBackend
from mgmtbench.lab.netns import link_index
from mgmtbench.lab.nsconfig import in_namespace

ETH_P_ALL = 0x0003
INGRESS = "ffff:"

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


def _delete_link(name: str) -> None:
    """Delete interface ``name`` of this thread's namespace, if it is there."""
    with IPRoute() as ipr:
        found = ipr.link_lookup(ifname=name)
        if found:
            try:
                ipr.link("del", index=found[0])
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:  # gone meanwhile is fine
                    raise


class DeviceSideQdiscs(VethLink):
    """A veth pair with one qdisc of kind :attr:`qdisc` per direction, both on the device side
    (see the module docstring); the IFB device is deleted by :meth:`down` itself, not left to
    the namespace's removal (a namespace some process still holds outlives its mount)."""

    qdisc: ClassVar[str]
    _ifb_made = False

    @abstractmethod
    def qdisc_options(self) -> dict[str, Any]:
        """One direction's qdisc options (pyroute2's ``tc`` keywords), from the profile."""

    @property
    def ifb_if(self) -> str:
        """The IFB device that carries the direction towards the devices (in the lab's namespace)."""
        return self.ends.dev_if + "i"

    def impair(self) -> None:
        """Add the IFB device and both qdiscs from a thread inside the lab's namespace (no helper
        process to start)."""
        options = self.qdisc_options()
        dev_if, ifb_if = self.ends.dev_if, self.ifb_if

        def work() -> None:
            with IPRoute() as ipr:
                self._ifb_made = True  # from here on, down() looks for it
                both_ways(ipr, link_index(ipr, dev_if), ifb_if, self.qdisc, options)

        in_namespace(self.ends.netns, work)

    def down(self) -> None:
        """Delete the IFB device (if this link made it), then the pair."""
        try:
            if self._ifb_made:
                self._ifb_made = False
                with contextlib.suppress(FileNotFoundError):  # no namespace: its IFB went too
                    in_namespace(self.ends.netns, lambda: _delete_link(self.ifb_if))
        finally:
            super().down()


def both_ways(ipr: IPRoute, dev: int, ifb_name: str, kind: str, options: dict[str, Any]) -> int:
    """On interface ``dev`` (in ``ipr``'s namespace): qdisc ``kind`` on its egress, and its ingress
    redirected through a new IFB device ``ifb_name`` with the same qdisc on that; the IFB's index."""
    ipr.link("add", ifname=ifb_name, kind="ifb")
    ifb = link_index(ipr, ifb_name)
    ipr.link("set", index=ifb, state="up")
    ipr.tc("add", kind, ifb, handle="1:", **options)
    ipr.tc("add", "ingress", dev, INGRESS)
    ipr.tc("add-filter", "u32", dev, parent=INGRESS, protocol=ETH_P_ALL, prio=1,
           target=0x10001, keys=["0x0/0x0+0"],
           action=[{"kind": "mirred", "direction": "egress", "action": "redirect",
                    "ifindex": ifb}])
    ipr.tc("add", kind, dev, handle="1:", **options)
    return ifb


def probe(kind: str, options: dict[str, Any]) -> str | None:
    """Build both directions with qdisc ``kind`` on throwaway interfaces (a veth pair and an IFB
    device in this namespace): does this kernel have what it needs? None if it does, else why not."""
    name = f"mgbprobe{os.getpid() % 100000}"
    step = "create a veth pair"
    try:
        with IPRoute() as ipr:
            ipr.link("add", ifname=name, kind="veth", peer=name + "p")
            try:
                step = f"add a {kind} qdisc, an ingress redirect and an IFB device"
                both_ways(ipr, link_index(ipr, name + "p"), name + "i", kind, options)
            finally:
                for made in (name, name + "i"):
                    found = ipr.link_lookup(ifname=made)
                    if found:
                        ipr.link("del", index=found[0])
    except NetlinkError as exc:
        if exc.code == errno.ENOENT:  # "Specified qdisc kind is unknown" (or classifier, action)
            return (f"this kernel has no sch_{kind} (or no ingress qdisc, u32 classifier or mirred "
                    f"action for its other direction): tc {kind}: kind unknown")
        if exc.code == errno.EOPNOTSUPP:  # no such link kind
            return f"this kernel has no ifb devices (the {kind} backend's second direction)"
        return f"cannot {step} here: {exc}"
    except PermissionError:
        return f"tc {kind} needs root or CAP_NET_ADMIN"
    except LookupError as exc:
        return f"cannot {step} here: {exc}"
    return None
