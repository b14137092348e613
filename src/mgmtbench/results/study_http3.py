"""HTTP/3's published figures (clibench v0.8, quic-go), for
:func:`~mgmtbench.results.published.study_table`.

The study's names mean what its client does (``internal/bench/http3.go``): ``fresh-conn`` is a
new QUIC connection per ITERATION (its five GETs on it: HTTPS ``conn-per-iteration``, not HTTPS
``fresh-conn``), and ``0rtt-resumption`` resumes a session but sends nothing before the
handshake (its requests are ordinary ``http.Client`` GETs), which is why it equals
``fresh-conn`` at every RTT. Our ``0rtt`` sends its first GET as early data, with the device's
address token, and the device confirms both (``early_data_per_iteration``,
``address_validated_per_iteration``).
"""

from __future__ import annotations

from mgmtbench.results.published import Published

__all__ = ["HTTP3", "PUBLISHED_P50", "PUBLISHED_ROUND_TRIPS"]

#: p50 ms at 5 commands by configured RTT (ms) and mode.
#: Source: github.com/lykinsbd/clibench, results/v0.8.0/netem-<profile>-n20-5cmd.json
#: (geo: n10), ``p50_ms`` of transport ``http3``.
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-conn": 5.52, "keep-alive": 1.965, "batch-post": 0.476, "0rtt-resumption": 4.506},
    2: {"fresh-conn": 21.421, "keep-alive": 16.012, "batch-post": 2.844,
        "0rtt-resumption": 26.792},
    30: {"fresh-conn": 188.662, "keep-alive": 154.979, "batch-post": 30.98,
         "0rtt-resumption": 188.288},
    44: {"fresh-conn": 285.857, "keep-alive": 227.829, "batch-post": 45.846,
         "0rtt-resumption": 282.015},
    70: {"fresh-conn": 429.613, "keep-alive": 355.786, "batch-post": 71.021,
         "0rtt-resumption": 428.504},
    100: {"fresh-conn": 608.568, "keep-alive": 504.909, "batch-post": 101.007,
          "0rtt-resumption": 608.221},
    150: {"fresh-conn": 908.388, "keep-alive": 754.903, "batch-post": 150.974,
          "0rtt-resumption": 908.167},
    174: {"fresh-conn": 1053.034, "keep-alive": 874.015, "batch-post": 174.909,
          "0rtt-resumption": 1052.247},
    600: {"fresh-conn": 3607.488, "keep-alive": 3005.632, "batch-post": 601.107,
          "0rtt-resumption": 3608.6},
}
#: ``round_trips`` as published at most RTTs (its UDP counter: a read after a write).
PUBLISHED_ROUND_TRIPS = {"fresh-conn": 6, "keep-alive": 5, "batch-post": 1, "0rtt-resumption": 6}

HTTP3 = Published(
    transport="http3", title="HTTP/3", p50=PUBLISHED_P50,
    round_trips=PUBLISHED_ROUND_TRIPS,
    round_trips_by_rtt={
        0: {"fresh-conn": 8, "keep-alive": 7, "batch-post": 2, "0rtt-resumption": 8},
        600: {"fresh-conn": 8, "keep-alive": 5, "batch-post": 1, "0rtt-resumption": 8}},
    clients="aioquic-h3,niquests-h3,niquests-h3-async",
    ours=("0rtt",),
    note="Its fresh-conn is a connection per iteration; its 0rtt-resumption sends no early "
         "data (a 1-RTT resumption); 0rtt is ours, early data confirmed by the device.")
