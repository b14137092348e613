"""The loss-recovery table at the end of a benchmark run (:mod:`mgmtbench.testing.summary`): one
row per client, mode and loss rate, and none of those rows in the transport-mode table."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

from mgmtbench.testing.summary import _loss_table, _mode_table


def bench(client: str, mode: str, loss: float, **counted: float) -> Any:
    info = {"experiment": "loss-recovery", "client": client, "mode": mode,
            "profile": f"regional-loss{loss:g}" if loss else "regional", "transport": "https",
            "loss_pct": loss, "loss_rounds": 200, "p50_ms": 35.2, "p95_ms": 41.1, "p99_ms": 271.4,
            "configured_rtt_ms": 30.0, "measured_rtt_ms": 30.4, "backend": "tun", **counted}
    return SimpleNamespace(has_error=False, stats=SimpleNamespace(mean=0.041, median=0.035),
                           extra_info=info)


def test_the_loss_table_has_a_row_per_loss_rate() -> None:
    out = io.StringIO()
    reporter = SimpleNamespace(section=lambda title: out.write(f"== {title}\n"),
                               _tw=SimpleNamespace(_file=out))
    benches = [bench("httpx", "keep-alive", 2, wire_rtts_per_iteration=1.0, tcp_retransmits=11,
                     link_dropped=23),
               bench("httpx", "keep-alive", 0.5, wire_rtts_per_iteration=1.0)]
    _loss_table(reporter, benches)
    _mode_table(reporter, benches)  # no command count: not a transport-mode row
    text = out.getvalue()
    assert "== loss recovery" in text
    assert "transport modes" not in text
    lines = [line for line in text.splitlines() if "keep-alive" in line]
    assert len(lines) == 2
    assert "0.5" in lines[0]  # sorted by loss rate
    assert "2" in lines[1]
    assert lines[1].rstrip(" │").endswith("23")
    assert lines[0].split("│")[-2].strip() == "-"  # no drop count recorded: "-"
