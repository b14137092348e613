"""niquests over the device's HTTP/3 API: sync (``niquests-h3``) and asyncio
(``niquests-h3-async``). Importing this package does not import niquests."""

from mgmtbench.clients.registry import ClientSpec

_ADAPTER = "mgmtbench.clients.niquests_h3.adapter"
CLIENTS = [
    ClientSpec(name="niquests-h3", order=98, adapter=f"{_ADAPTER}:NiquestsH3Client"),
    ClientSpec(name="niquests-h3-async", order=99, adapter=f"{_ADAPTER}:NiquestsH3AsyncClient"),
]
