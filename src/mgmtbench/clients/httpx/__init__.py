"""httpx over the device's HTTPS API: the sync (``httpx``) and asyncio (``httpx-async``) adapters
and the asyncio fleet runner, and their knobs (:mod:`.knobs`; none matters, so no
``httpx+tuned``). Importing this package does not import httpx."""

from mgmtbench.clients.registry import ClientSpec

CLIENTS = [
    ClientSpec(name="httpx", order=60, adapter="mgmtbench.clients.httpx.adapter:HttpxClient",
               knobs="mgmtbench.clients.httpx.knobs:KNOBS"),
    ClientSpec(name="httpx-async", order=61,
               adapter="mgmtbench.clients.httpx.adapter:HttpxAsyncClient",
               fleet="mgmtbench.clients.httpx.fleet:HttpxFleet",
               knobs="mgmtbench.clients.httpx.knobs:KNOBS"),
]
