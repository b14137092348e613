"""Configure the device side of a lab link: addresses, routes and netem inside the lab's namespace.

Two ways in, the same :func:`configure`:

- :func:`configure_in` runs it in this process, on a throwaway thread that enters the namespace
  first (``setns`` moves only the calling thread; the netlink socket ``IPRoute`` opens there
  belongs to the namespace, and so do the sysctls the thread writes). No process to start: on a
  slow machine (a VM under software emulation) starting a Python process that imports pyroute2
  takes longer than the whole configuration.
- ``python -m mgmtbench.lab.nsexec NAMESPACE python -m mgmtbench.lab.nsconfig SPEC_JSON`` (what
  :func:`~mgmtbench.lab.netns.run_in` runs) does it in a process of its own.

Either way a plain ``IPRoute`` works from inside the namespace, which avoids pyroute2's ``NetNS``
helper, seen here removing a freshly created namespace when an earlier one of the same process was
gone.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyroute2 import IPRoute

from mgmtbench.lab import tcp
from mgmtbench.lab.netns import in_namespace as in_namespace  # its home until now
from mgmtbench.lab.netns import link_index
from mgmtbench.lab.procfs import disable_ipv6


def configure(spec: dict[str, Any]) -> None:
    """Addresses, routes, TCP settings (``spec["tcp"]``: ``cc``, ``metrics`` and ``mtu``, see
    :mod:`mgmtbench.lab.tcp`) and netem of the device side, from inside its namespace."""
    tcp_spec = spec.get("tcp")
    with IPRoute() as ipr:
        lo, dev = link_index(ipr, "lo"), link_index(ipr, spec["dev_if"])
        ipr.link("set", index=lo, state="up")
        for address in spec.get("lo_addresses", []):
            ipr.addr("add", index=lo, address=address, prefixlen=32)
        if spec.get("dev_ip"):
            ipr.addr("add", index=dev, address=spec["dev_ip"], prefixlen=30)
            ipr.link("set", index=dev, state="up")
            metrics = tcp_spec["metrics"] if tcp_spec else None
            if tcp_spec:
                tcp.own_link(ipr, dev, spec["dev_ip"], 30, metrics or {}, tcp_spec["mtu"])
            ipr.route("add", dst="0.0.0.0/0", gateway=spec["gateway"],
                      **({"metrics": metrics} if metrics else {}))
        if spec.get("netem"):
            ipr.tc("add", "netem", dev, handle="1:", **spec["netem"])
    disable_ipv6("all")  # the lab speaks IPv4; no router solicitations in the packet counts
    if tcp_spec:
        tcp.configure_device_namespace(tcp_spec["cc"])


def configure_in(name: str, spec: dict[str, Any]) -> None:
    """:func:`configure` inside namespace ``name``, from this process (see the module docstring)."""
    in_namespace(name, lambda: configure(spec))


def main() -> None:
    """``python -m mgmtbench.lab.nsconfig SPEC_JSON``."""
    configure(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
