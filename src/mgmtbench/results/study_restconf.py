"""RESTCONF's published figures (clibench v0.8), for
:func:`~mgmtbench.results.published.study_table`.

The study's round-trip count for ``fresh-conn`` (2) is its last connection's only: its counter
wraps each new connection and keeps the last one (``internal/bench/restconf.go``), so five
connections' handshakes and requests are not in it. Ours counts every connection.
"""

from __future__ import annotations

from mgmtbench.results.published import Published

__all__ = ["PUBLISHED_P50", "PUBLISHED_ROUND_TRIPS", "RESTCONF"]

#: p50 ms at 5 commands by configured RTT (ms) and mode.
#: Source: github.com/lykinsbd/clibench, results/v0.8.0/netem-<profile>-n20-5cmd.json
#: (geo: n10), ``p50_ms`` of transport ``restconf``.
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 15.283, "keep-alive": 0.942, "batch-patch": 0.267, "json-vs-xml": 0.974},
    2: {"fresh-conn": 51.277, "keep-alive": 16.687, "batch-patch": 2.740, "json-vs-xml": 14.685},
    30: {"fresh-conn": 471.945, "keep-alive": 155.138, "batch-patch": 30.885,
         "json-vs-xml": 155.039},
    44: {"fresh-conn": 678.644, "keep-alive": 224.002, "batch-patch": 44.866,
         "json-vs-xml": 224.536},
    70: {"fresh-conn": 1070.880, "keep-alive": 354.787, "batch-patch": 70.834,
         "json-vs-xml": 354.481},
    100: {"fresh-conn": 1532.698, "keep-alive": 505.765, "batch-patch": 101.299,
          "json-vs-xml": 505.984},
    150: {"fresh-conn": 2271.960, "keep-alive": 754.757, "batch-patch": 150.860,
          "json-vs-xml": 754.376},
    174: {"fresh-conn": 2635.609, "keep-alive": 875.247, "batch-patch": 174.863,
          "json-vs-xml": 874.584},
    600: {"fresh-conn": 9019.498, "keep-alive": 3005.565, "batch-patch": 600.819,
          "json-vs-xml": 3004.292},
}
#: ``round_trips`` as published (the same at every RTT); fresh-conn's is one connection's.
PUBLISHED_ROUND_TRIPS = {"fresh-conn": 2, "keep-alive": 5, "batch-patch": 1, "json-vs-xml": 5}

RESTCONF = Published(
    transport="restconf", title="RESTCONF", p50=PUBLISHED_P50,
    round_trips=PUBLISHED_ROUND_TRIPS,
    clients="httpx-restconf,httpx-restconf-h2,httpx-restconf-async",
    ours=("h2-multiplex", "conn-per-iteration"),
    note="Its fresh-conn count is its last connection's only; h2-multiplex and "
         "conn-per-iteration are ours.")
