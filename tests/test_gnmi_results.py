"""The gNMI section of the transport report: rows beside clibench v0.8's published figures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from mgmtbench.errors import ResultsError
from mgmtbench.results.published import study_table
from mgmtbench.results.study_gnmi import GNMI


def _row(client: str, mode: str, median: float, rtt: float = 30.0) -> dict[str, object]:
    return {"transport": "gnmi", "client": client, "mode": mode, "commands": 5,
            "profile": "regional", "configured_rtt_ms": rtt, "median_ms": median,
            "wire_rtts_per_iteration": 1.1}


def test_study_modes_get_the_published_figures_ours_do_not() -> None:
    frame = pd.DataFrame([
        _row("grpc-gnmi", "batch-get", 38.0), _row("grpc-gnmi", "fresh-conn", 130.6),
        _row("pygnmi (yang)", "fresh-conn", 307.0), _row("pygnmi", "batch-set", 43.8),
        {"transport": "ssh", "client": "asyncssh", "mode": "pty-fresh", "commands": 5,
         "profile": "regional", "configured_rtt_ms": 30.0, "median_ms": 261.2}])
    [table] = study_table(GNMI, frame).values()
    assert list(table["mode"]) == ["fresh-conn", "fresh-conn", "batch-set", "batch-get"]
    fresh = table.iloc[0]
    assert fresh["clibench_p50_ms"] == pytest.approx(125.2635)
    assert fresh["ratio"] == pytest.approx(130.6 / 125.2635)
    assert fresh["clibench_rtts"] == 3
    assert fresh["vs_pty_fresh"] == pytest.approx(261.2 / 130.6)
    assert math.isnan(table.iloc[1]["clibench_p50_ms"])  # the yang payload: not the study's
    assert math.isnan(table.iloc[3]["clibench_p50_ms"])  # batch-get: our mode


def test_a_run_without_gnmi_says_so() -> None:
    with pytest.raises(ResultsError, match="no gNMI"):
        study_table(GNMI, pd.DataFrame([{"transport": "ssh", "mode": "fresh-conn", "commands": 5}]))
