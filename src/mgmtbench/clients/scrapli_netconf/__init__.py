"""scrapli-netconf: scrapli's own NETCONF driver (``scrapli.netconf.Netconf``, libscrapli) on its
OpenSSH-binary transport. Importing this package does not import scrapli."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="scrapli-netconf", order=91,
               adapter="mgmtbench.clients.scrapli_netconf.adapter:ScrapliNetconfClient"),
]
