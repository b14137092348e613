"""asyncssh-netconf: a minimal NETCONF client on asyncssh, the protocol's cost without a NETCONF
library's, and its knobs (:mod:`.knobs`; none matters, so no ``asyncssh-netconf+tuned``).
Importing this package does not import asyncssh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="asyncssh-netconf", order=92,
               adapter="mgmtbench.clients.asyncssh_netconf.adapter:AsyncsshNetconfClient",
               knobs="mgmtbench.clients.asyncssh_netconf.knobs:KNOBS"),
]
