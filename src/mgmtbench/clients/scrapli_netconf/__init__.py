"""scrapli-netconf: scrapli's own NETCONF driver (``scrapli.netconf.Netconf``, libscrapli) on its
OpenSSH-binary transport, as shipped and tuned (:mod:`.knobs`). Importing this package does not
import scrapli."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="scrapli-netconf", order=91,
               adapter="mgmtbench.clients.scrapli_netconf.adapter:ScrapliNetconfClient",
               knobs="mgmtbench.clients.scrapli_netconf.knobs:KNOBS"),
    ClientSpec(name="scrapli-netconf+tuned", order=91,
               adapter="mgmtbench.clients.scrapli_netconf.adapter:ScrapliNetconfClientTuned"),
]
