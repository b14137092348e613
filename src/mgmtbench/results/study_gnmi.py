"""gNMI's published figures (clibench v0.8), for :func:`~mgmtbench.results.published.study_table`.

The gRPC clients cannot count application round trips (grpcio's sockets are its C core's), so
gNMI's rows have wire round trips only. The study's own counts differ between its local and
regional runs (HTTP/2's control frames add direction changes), so they are kept per RTT.
"""

from __future__ import annotations

from mgmtbench.results.published import Published

__all__ = ["GNMI", "PUBLISHED_P50", "PUBLISHED_ROUND_TRIPS"]

#: p50 ms at 5 commands by configured RTT (ms) and mode. Source: github.com/lykinsbd/clibench,
#: results/v0.8.0/netem-<profile>-n20-5cmd.json, ``p50_ms`` of transport ``gnmi`` (local and
#: regional; v0.7.0's gNMI-only files, results/v0.7.0/netem-gnmi-*.json, differ by a few %).
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 3.8585, "reuse-stream": 1.301, "batch-set": 0.34,
        "subscribe-once": 0.3885},
    30: {"fresh-conn": 125.2635, "reuse-stream": 153.5005, "batch-set": 30.735,
         "subscribe-once": 30.831},
}
#: The study's ``round_trips`` (its rtcount: a read after a write), by configured RTT.
PUBLISHED_ROUND_TRIPS: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 5, "reuse-stream": 8, "batch-set": 2, "subscribe-once": 2},
    30: {"fresh-conn": 3, "reuse-stream": 6, "batch-set": 2, "subscribe-once": 1},
}

GNMI = Published(
    transport="gnmi", title="gNMI", p50=PUBLISHED_P50, round_trips=PUBLISHED_ROUND_TRIPS[30],
    round_trips_by_rtt=PUBLISHED_ROUND_TRIPS, clients="pygnmi,grpc-gnmi",
    ours=("fresh-get-per-cmd", "batch-get"),
    note="The study's /cli paths; grpcio's sockets cannot be wrapped, so no application "
         "count; fresh-get-per-cmd and batch-get are ours.")
