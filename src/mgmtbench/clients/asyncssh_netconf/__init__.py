"""asyncssh-netconf: a minimal NETCONF client on asyncssh, the protocol's cost without a NETCONF
library's. Importing this package does not import asyncssh."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="asyncssh-netconf", order=92,
               adapter="mgmtbench.clients.asyncssh_netconf.adapter:AsyncsshNetconfClient"),
]
