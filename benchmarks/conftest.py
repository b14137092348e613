"""Benchmark-only hooks: print side-by-side ratios of benchmarks that share a group."""

from __future__ import annotations

from typing import Any

import pytest


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    groups: dict[str, list[Any]] = {}
    for bench in session.benchmarks:
        if bench.has_error or not bench.stats:
            continue
        groups.setdefault(bench.group or "", []).append(bench)
    lines = []
    for group, benches in groups.items():
        if len(benches) < 2:
            continue
        fastest = min(benches, key=lambda b: b.stats.median)
        for bench in sorted(benches, key=lambda b: b.stats.median):
            ratio = bench.stats.median / fastest.stats.median
            lines.append(f"{group}: {bench.name}  median {bench.stats.median * 1000:.2f} ms  "
                         f"x{ratio:.2f} of the fastest")
    if lines:
        terminalreporter.section("ratios (median, same group)")
        for line in lines:
            terminalreporter.write_line(line)
