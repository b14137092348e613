"""NETCONF's published figures (clibench v0.8), for :func:`~mgmtbench.results.published.study_table`."""

from __future__ import annotations

from mgmtbench.results.published import Published

__all__ = ["NETCONF", "PUBLISHED_P50", "PUBLISHED_ROUND_TRIPS"]

#: p50 ms at 5 commands by configured RTT (ms) and mode; round trips the same at every RTT.
#: Source: github.com/lykinsbd/clibench, results/v0.8.0/netem-<profile>-n20-5cmd.json
#: (geo: n10), ``p50_ms`` and ``round_trips`` of transport ``netconf``.
PUBLISHED_P50: dict[int, dict[str, float]] = {
    0: {"fresh-session": 5.159, "reuse-session": 0.837, "batch-rpc": 0.462, "edit-commit": 0.315},
    2: {"fresh-session": 38.108, "reuse-session": 15.713, "batch-rpc": 2.577,
        "edit-commit": 5.046},
    30: {"fresh-session": 400.289, "reuse-session": 154.328, "batch-rpc": 30.619,
         "edit-commit": 61.367},
    44: {"fresh-session": 581.755, "reuse-session": 223.741, "batch-rpc": 44.678,
         "edit-commit": 89.526},
    70: {"fresh-session": 921.335, "reuse-session": 355.521, "batch-rpc": 70.654,
         "edit-commit": 141.315},
    100: {"fresh-session": 1312.851, "reuse-session": 504.663, "batch-rpc": 100.708,
          "edit-commit": 201.479},
    150: {"fresh-session": 1981.838, "reuse-session": 756.912, "batch-rpc": 150.948,
          "edit-commit": 301.433},
    174: {"fresh-session": 2272.672, "reuse-session": 873.767, "batch-rpc": 174.632,
          "edit-commit": 350.214},
    600: {"fresh-session": 7811.219, "reuse-session": 3003.251, "batch-rpc": 600.638,
          "edit-commit": 1201.220},
}
PUBLISHED_ROUND_TRIPS = {"fresh-session": 14, "reuse-session": 5, "batch-rpc": 1,
                         "edit-commit": 2}

NETCONF = Published(
    transport="netconf", title="NETCONF", p50=PUBLISHED_P50,
    round_trips=PUBLISHED_ROUND_TRIPS, clients="ncclient,scrapli-netconf,asyncssh-netconf")
