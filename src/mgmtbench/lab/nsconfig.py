"""Configure the device side of a lab link, run inside the lab's namespace.

``python -m mgmtbench.lab.nsexec NAMESPACE python -m mgmtbench.lab.nsconfig SPEC_JSON``. Working
from inside the namespace with a plain ``IPRoute`` avoids pyroute2's ``NetNS`` helper, which was seen
here removing a freshly created namespace when an earlier one of the same process was gone.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyroute2 import IPRoute

from mgmtbench.lab.netns import link_index
from mgmtbench.lab.procfs import disable_ipv6


def configure(spec: dict[str, Any]) -> None:
    """Addresses, routes and netem of the device side, from inside its namespace."""
    with IPRoute() as ipr:
        lo, dev = link_index(ipr, "lo"), link_index(ipr, spec["dev_if"])
        ipr.link("set", index=lo, state="up")
        for address in spec.get("lo_addresses", []):
            ipr.addr("add", index=lo, address=address, prefixlen=32)
        if spec.get("dev_ip"):
            ipr.addr("add", index=dev, address=spec["dev_ip"], prefixlen=30)
            ipr.link("set", index=dev, state="up")
            ipr.route("add", dst="0.0.0.0/0", gateway=spec["gateway"])
        if spec.get("netem"):
            ipr.tc("add", "netem", dev, handle="1:", **spec["netem"])
    disable_ipv6("all")  # the lab speaks IPv4; no router solicitations in the packet counts


def main() -> None:
    """``python -m mgmtbench.lab.nsconfig SPEC_JSON``."""
    configure(json.loads(sys.argv[1]))


if __name__ == "__main__":
    main()
