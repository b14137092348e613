"""niquests over the device's HTTP/3 API: sync (``niquests-h3``) and asyncio
(``niquests-h3-async``), and their knobs (:mod:`.knobs`; none matters, so no
``niquests-h3+tuned``). Importing this package does not import niquests."""

from mgmtbench.clients.registry import ClientSpec

_ADAPTER = "mgmtbench.clients.niquests_h3.adapter"
_KNOBS = "mgmtbench.clients.niquests_h3.knobs:KNOBS"
CLIENTS = [
    ClientSpec(name="niquests-h3", order=98, adapter=f"{_ADAPTER}:NiquestsH3Client",
               knobs=_KNOBS),
    ClientSpec(name="niquests-h3-async", order=99, adapter=f"{_ADAPTER}:NiquestsH3AsyncClient",
               knobs=_KNOBS),
]
