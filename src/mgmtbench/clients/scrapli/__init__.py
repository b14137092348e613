"""scrapli (libscrapli): adapters and thread-pool fleet runners on its OpenSSH-binary
(``scrapli-bin``) and libssh2 (``scrapli-ssh2``) transports. Importing this package does not
import scrapli."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="scrapli-bin", order=80,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliBinClient",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliBinFleet"),
    ClientSpec(name="scrapli-ssh2", order=81,
               adapter="mgmtbench.clients.scrapli.adapter:ScrapliSsh2Client",
               fleet="mgmtbench.clients.scrapli.fleet:ScrapliSsh2Fleet"),
]
