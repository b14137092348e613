"""RESTCONF beside the published study (clibench v0.8) in the transport report."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mgmtbench.errors import ResultsError
from mgmtbench.results.published import study_table
from mgmtbench.results.study_restconf import PUBLISHED_P50, RESTCONF


def _row(client: str, mode: str, median: float, transport: str = "restconf") -> dict[str, object]:
    return {"client": client, "mode": mode, "median_ms": median, "transport": transport,
            "profile": "regional", "commands": 5, "configured_rtt_ms": 30.0,
            "wire_rtts_per_iteration": 5.0, "app_rtts_per_iteration": 5.0}


def test_rows_beside_the_published_p50_in_the_studys_order() -> None:
    frame = pd.DataFrame([
        _row("httpx-restconf", "h2-multiplex", 40.0),
        _row("httpx-restconf (yang)", "keep-alive", 170.0),
        _row("httpx-restconf", "keep-alive", 155.138 * 1.1),
        _row("asyncssh", "pty-fresh", 500.0, transport="ssh"),
    ])
    table = study_table(RESTCONF, frame)["regional"]
    assert list(table["mode"]) == ["keep-alive", "keep-alive", "h2-multiplex"]
    plain = table[table["client"] == "httpx-restconf"].iloc[0]
    assert plain["clibench_p50_ms"] == PUBLISHED_P50[30]["keep-alive"]
    assert plain["ratio"] == pytest.approx(1.1)
    assert plain["clibench_rtts"] == 5
    assert plain["vs_pty_fresh"] == pytest.approx(500.0 / (155.138 * 1.1))
    assert math.isnan(table[table["client"] == "httpx-restconf (yang)"].iloc[0]["ratio"])
    assert math.isnan(table[table["mode"] == "h2-multiplex"].iloc[0]["clibench_p50_ms"])


def test_a_run_without_restconf_is_a_results_error() -> None:
    with pytest.raises(ResultsError, match="no RESTCONF benchmark"):
        study_table(RESTCONF, pd.DataFrame([_row("asyncssh", "pty-fresh", 500.0, transport="ssh")]))
