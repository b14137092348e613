"""scrapli-netconf: scrapli's own NETCONF driver (``scrapli.netconf.Netconf``, libscrapli) on its
OpenSSH-binary transport, and its knobs (:mod:`.knobs`; none matters, so no
``scrapli-netconf+tuned``). Importing this package does not import scrapli."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="scrapli-netconf", order=91,
               adapter="mgmtbench.clients.scrapli_netconf.adapter:ScrapliNetconfClient",
               knobs="mgmtbench.clients.scrapli_netconf.knobs:KNOBS"),
]
