"""The control network of a local Dask cluster whose workers live in namespaces of their own.

::

    host namespace              hub namespace (a bridge)        worker namespaces
    mgbdNNNNN-S 198.19.200.1 <-> up ─┐
                                     br ── w0 <-> eth0 198.19.200.10   (worker 0, its own labs)
                                        ── w1 <-> eth0 198.19.200.11   (worker 1, its own labs)

(198.19.200.0/24 for the first cluster on the host, the next free /24 up to 198.19.254.0 for
others.) The scheduler listens on the host end (198.19.200.1); each worker reaches it, and the others,
over the bridge. Every lab a worker brings up is made from its namespace, so its link and routes
are that worker's alone. All namespaces are named ``mgmtbench-<owner pid>-daskN-...``: the lab's
clean-up removes them once their owner is gone (``mgmtbench lab down``), and with the hub goes
the one interface the host namespace holds (a veth dies with its peer's namespace).
"""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os

from pyroute2 import IPRoute

from mgmtbench.errors import LabError
from mgmtbench.lab.netns import NETNS_DIR, PREFIX, create, in_namespace, link_index
from mgmtbench.lab.procfs import disable_ipv6
from mgmtbench.lab.state import registry_lock

#: A hub's network: the first 198.19.N.0/24 (N = 200..254: in 198.18.0.0/15, above every lab's
#: /30) that no address of this host's namespace is in, so clusters run side by side.
NETWORKS = [ipaddress.IPv4Network(f"198.19.{n}.0/24") for n in range(200, 255)]
FIRST_WORKER = 10
MAX_WORKERS = 200
_SERIAL = itertools.count(1)


class Hub:
    """The hub namespace, its bridge, the host's end and a namespace per worker."""

    def __init__(self) -> None:
        serial = next(_SERIAL)  # two clusters of one process at once get other names
        self.tag = f"{os.getpid()}-dask{serial}"
        self.name = f"{PREFIX}{self.tag}-hub"
        self.host_if = f"mgbd{os.getpid() % 100000}-{serial}"[:15]
        self.workers: list[str] = []
        self.network = NETWORKS[0]
        self._up = False

    @property
    def scheduler_ip(self) -> str:
        """The host's end: where the scheduler listens."""
        return str(self.network.network_address + 1)

    def up(self) -> Hub:
        """The hub namespace with its bridge, and the host's end on a free network (chosen
        under the labs' registry lock: two clusters starting at once take two)."""
        with registry_lock():
            self.network = _free_network()
            self._build()
        return self

    def _build(self) -> None:
        create(self.name)
        self._up = True

        def bridge() -> None:
            with IPRoute() as ipr:
                ipr.link("add", ifname="br", kind="bridge")
                ipr.link("add", ifname="up", kind="veth", peer=self.host_if)
                br, up = link_index(ipr, "br"), link_index(ipr, "up")
                ipr.link("set", index=up, master=br, state="up")
                ipr.link("set", index=br, state="up")
                ipr.link("set", index=link_index(ipr, self.host_if), net_ns_pid=os.getpid())

        # The host end is made in the hub, then moved here: nothing is made in the host
        # namespace that its namespace's removal would not take away.
        in_namespace(self.name, bridge)
        with IPRoute() as ipr:
            index = link_index(ipr, self.host_if)
            ipr.addr("add", index=index, address=self.scheduler_ip,
                     prefixlen=self.network.prefixlen)
            ipr.link("set", index=index, state="up")
        with contextlib.suppress(OSError):
            disable_ipv6(self.host_if)

    def add_worker(self) -> tuple[str, str]:
        """A namespace for the next worker, on the bridge: its name and its address."""
        number = len(self.workers)
        if number >= MAX_WORKERS:
            raise ValueError(f"a local cluster holds at most {MAX_WORKERS} workers")
        name = f"{PREFIX}{self.tag}-w{number}"
        address = str(self.network.network_address + FIRST_WORKER + number)
        create(name)
        self.workers.append(name)

        def plug() -> None:
            with IPRoute() as ipr:
                ipr.link("add", ifname=f"w{number}", kind="veth", peer="eth0")
                ipr.link("set", index=link_index(ipr, "eth0"), net_ns_fd=name)
                index = link_index(ipr, f"w{number}")
                ipr.link("set", index=index, master=link_index(ipr, "br"), state="up")

        def configure() -> None:
            with IPRoute() as ipr:
                lo, eth = link_index(ipr, "lo"), link_index(ipr, "eth0")
                ipr.link("set", index=lo, state="up")
                ipr.addr("add", index=eth, address=address, prefixlen=self.network.prefixlen)
                ipr.link("set", index=eth, state="up")

        in_namespace(self.name, plug)
        in_namespace(name, configure)
        return name, address

    def down(self) -> None:
        """Remove every namespace (the host's end goes with the hub's). Safe to call twice."""
        from pyroute2 import netns

        for name in [*self.workers, self.name] if self._up else self.workers:
            if (NETNS_DIR / name).exists():
                with contextlib.suppress(OSError):
                    netns.remove(name)
        self.workers.clear()
        self._up = False


def _free_network() -> ipaddress.IPv4Network:
    with IPRoute() as ipr:
        used = [ipaddress.IPv4Address(a.get_attr("IFA_ADDRESS")) for a in ipr.get_addr(family=2)]
    for network in NETWORKS:
        if not any(address in network for address in used):
            return network
    raise LabError(f"no free network for a local Dask cluster: {len(NETWORKS)} in use")
