"""scrapli (libscrapli): adapters and thread-pool fleet runners on its OpenSSH-binary
(``scrapli-bin``) and libssh2 (``scrapli-ssh2``) transports, as shipped and tuned
(:mod:`.knobs`). Importing this package does not import scrapli."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="scrapli-bin", order=80,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliBinClient",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliBinFleet",
               knobs="mgmtbench.clients.scrapli.knobs:KNOBS"),
    ClientSpec(name="scrapli-bin+tuned", order=81,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliBinClientTuned",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliBinFleetTuned"),
    ClientSpec(name="scrapli-ssh2", order=81,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliSsh2Client",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliSsh2Fleet",
               knobs="mgmtbench.clients.scrapli.knobs:KNOBS"),
    ClientSpec(name="scrapli-ssh2+tuned", order=82,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliSsh2ClientTuned",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliSsh2FleetTuned"),
]
