"""httpx over the device's RESTCONF (RFC 8040): sync over HTTP/1.1 (``httpx-restconf``), sync
over HTTP/2 (``httpx-restconf-h2``) and asyncio (``httpx-restconf-async``), and the sync
client's knobs (:mod:`.knobs`) and ``httpx-restconf+tuned``. Importing this package does not
import httpx."""

from mgmtbench.clients.registry import ClientSpec

_ADAPTER = "mgmtbench.clients.httpx_restconf.adapter"
CLIENTS = [
    ClientSpec(name="httpx-restconf", order=93, adapter=f"{_ADAPTER}:HttpxRestconfClient",
               knobs="mgmtbench.clients.httpx_restconf.knobs:KNOBS"),
    ClientSpec(name="httpx-restconf+tuned", order=94,
               adapter=f"{_ADAPTER}:HttpxRestconfClientTuned"),
    ClientSpec(name="httpx-restconf-h2", order=94, adapter=f"{_ADAPTER}:HttpxRestconfH2Client"),
    ClientSpec(name="httpx-restconf-async", order=95,
               adapter=f"{_ADAPTER}:HttpxRestconfAsyncClient"),
]
