"""The HTTP/3 rows of the transport report beside clibench v0.8's published figures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mgmtbench.results.published import study_table
from mgmtbench.results.sections.transport import MODEL_DRIVEN
from mgmtbench.results.study_http3 import HTTP3


def _row(mode: str, median: float, rtt: float, profile: str) -> dict[str, object]:
    return {"transport": "http3", "client": "aioquic-h3", "mode": mode, "commands": 5,
            "profile": profile, "configured_rtt_ms": rtt, "median_ms": median,
            "wire_rtts_per_iteration": 6.0}


def test_study_modes_get_the_published_figures_0rtt_does_not() -> None:
    frame = pd.DataFrame([_row("fresh-conn", 216.4, 30.0, "regional"),
                          _row("0rtt", 180.5, 30.0, "regional"),
                          _row("0rtt-resumption", 5.0, 0.0, "local")])
    tables = study_table(HTTP3, frame)
    regional, local = tables["regional"], tables["local"]
    assert list(regional["mode"]) == ["fresh-conn", "0rtt"]
    assert regional.iloc[0]["clibench_p50_ms"] == pytest.approx(188.662)
    assert regional.iloc[0]["ratio"] == pytest.approx(216.4 / 188.662)
    assert regional.iloc[0]["clibench_rtts"] == 6
    assert math.isnan(regional.iloc[1]["clibench_p50_ms"])  # ours
    assert local.iloc[0]["clibench_rtts"] == 8  # the study's count differs at 0 ms


def test_the_report_shows_http3_beside_the_study() -> None:
    assert HTTP3 in MODEL_DRIVEN
