"""A device's own counts of its HTTP/3 server: connections, handshakes, resumptions, early data.

A benchmark that claims 0-RTT must show that the device took the request in early data: a client
library can resume a session and still wait for the handshake (clibench's ``0rtt-resumption``
does). The device's HTTP/3 server (:mod:`mgmtbench.emulator.http3`) counts what it saw on each
device's :class:`Http3Counts`, and the device API serves them as JSON at :data:`HTTP3_PATH` over
HTTPS and HTTP/3 (the emulator's own diagnostics, not a feature of the emulated platform), so a
benchmark reads them before and after its rounds (:func:`read_http3_counts`).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

#: The device API's path for a device's HTTP/3 counts (GET, JSON).
HTTP3_PATH = "/mgmtbench/http3"
#: The counts :data:`HTTP3_PATH` answers, in this order.
FIELDS = ("connections", "handshakes", "resumed", "early_data_accepted", "early_data_refused",
          "requests", "tokens_issued", "address_validated")


@dataclass
class Http3Counts:
    """What one device's HTTP/3 server has seen since it started.

    ``connections``: QUIC connections admitted (under the cap); ``handshakes``: of them, those
    whose TLS handshake completed; ``resumed``: of those, resumed from a session ticket;
    ``early_data_accepted``: requests that arrived in 0-RTT and were answered;
    ``early_data_refused``: requests that arrived in 0-RTT and were answered ``425 Too Early``;
    ``requests``: requests answered over HTTP/3 (early ones included); ``tokens_issued``:
    NEW_TOKEN address tokens sent; ``address_validated``: connections opened with a valid one
    (their address validated from the first packet, RFC 9000 section 8.1.3). ``open`` (connections
    open now, which the cap counts) and ``dropped`` (connections refused over the cap) are not
    served.
    """

    connections: int = 0
    handshakes: int = 0
    resumed: int = 0
    early_data_accepted: int = 0
    early_data_refused: int = 0
    requests: int = 0
    tokens_issued: int = 0
    address_validated: int = 0
    open: int = 0
    dropped: int = 0

    def as_dict(self) -> dict[str, int]:
        """The served counts (:data:`FIELDS`)."""
        return {name: getattr(self, name) for name in FIELDS}


def read_http3_counts(base_url: str, ca_file: Path, username: str, password: str,
                      timeout: float = 20) -> dict[str, int]:
    """The counts a device's API serves (``base_url``: ``https://HOST:PORT``, over HTTPS)."""
    import httpx  # the benchmark's side only: the emulator never imports it

    with httpx.Client(verify=ssl.create_default_context(cafile=str(ca_file)),
                      auth=(username, password), timeout=timeout) as client:
        response = client.get(base_url + HTTP3_PATH)
    response.raise_for_status()
    found = response.json()
    return {name: int(found[name]) for name in FIELDS}
