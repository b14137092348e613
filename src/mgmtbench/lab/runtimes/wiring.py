"""Wire device containers into a lab's namespace; run inside that namespace.

``python -m mgmtbench.lab.nsexec LAB_NS python -m mgmtbench.lab.runtimes.wiring SPEC_JSON`` with
``{"lab_ip": ..., "devices": [{"pid": ..., "lab_if": ..., "address": ...}, ...]}``.

Per device, a veth pair: ``lab_if`` stays in the lab's namespace with the lab's own link address
(/32) and a host route to the device; the other end becomes ``eth0`` in the namespace of process
``pid`` (the container's), holding the device's address (/32), with a route to the lab's address
on the link and a default route through it. The lab's namespace forwards between the link and the
devices. IPv4 only, like the rest of the lab. With ``"tcp"`` in the spec (``cc``, ``metrics``,
``mtu``: :mod:`mgmtbench.lab.tcp`), each container's routes carry the profile's congestion control
and initial window, both ends of its pair take the link's MTU, and its namespace gets the device
side's TCP sysctls, as a device in the lab's own namespace does.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyroute2 import IPRoute

from mgmtbench.lab.netns import link_index, setns_path
from mgmtbench.lab.procfs import disable_ipv6, netns_of, write_sysctl
from mgmtbench.lab.tcp import configure_device_namespace

LINK_SCOPE = 253  # RT_SCOPE_LINK: a direct route, so the gateway behind it is reachable


def wire(spec: dict[str, Any]) -> None:
    """Wire every device container of ``spec`` into this namespace."""
    lab_ip = spec["lab_ip"]
    devices = spec["devices"]
    tcp_spec = spec.get("tcp")
    mtu = {"mtu": tcp_spec["mtu"]} if tcp_spec else {}
    metrics = {"metrics": tcp_spec["metrics"]} if tcp_spec else {}
    disable_ipv6("default")
    write_sysctl("net.ipv4.ip_forward", "1")
    with IPRoute() as ipr:
        for i, device in enumerate(devices):
            peer = f"mgbpeer{i}"
            ipr.link("add", ifname=device["lab_if"], kind="veth", peer=peer)
            ipr.link("set", index=link_index(ipr, peer), net_ns_pid=device["pid"])
            index = link_index(ipr, device["lab_if"])
            ipr.addr("add", index=index, address=lab_ip, prefixlen=32)
            ipr.link("set", index=index, state="up", **mtu)
            ipr.route("add", dst=f"{device['address']}/32", oif=index, scope=LINK_SCOPE)
    for i, device in enumerate(devices):
        setns_path(netns_of(device["pid"]))  # this process moves on, for good
        disable_ipv6("all")
        disable_ipv6("default")
        with IPRoute() as ipr:
            lo, index = link_index(ipr, "lo"), link_index(ipr, f"mgbpeer{i}")
            ipr.link("set", index=lo, state="up")
            ipr.link("set", index=index, ifname="eth0")
            ipr.addr("add", index=index, address=device["address"], prefixlen=32)
            ipr.link("set", index=index, state="up", **mtu)
            ipr.route("add", dst=f"{lab_ip}/32", oif=index, scope=LINK_SCOPE, **metrics)
            ipr.route("add", dst="0.0.0.0/0", gateway=lab_ip, oif=index, **metrics)
        if tcp_spec:  # this container's namespace, as the process is in it now
            configure_device_namespace(tcp_spec["cc"])


def main() -> None:
    """``python -m mgmtbench.lab.runtimes.wiring SPEC_JSON``."""
    wire(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
