"""Benchmark options, the parametrisation of the transport-mode matrix, and the summary tables."""

from __future__ import annotations

from typing import Any

import pytest

DEFAULT_PROFILES = "local,regional,intercontinental"
DEFAULT_COMMANDS = "5"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mgmtbench")
    group.addoption("--profiles", default=DEFAULT_PROFILES,
                    help=f"comma-separated link profiles (default: {DEFAULT_PROFILES}); "
                         "all: every built-in profile")
    group.addoption("--commands", default=DEFAULT_COMMANDS,
                    help="comma-separated command counts per iteration, e.g. 1,5,10,25,50 "
                         f"(default: {DEFAULT_COMMANDS})")
    group.addoption("--clients", default="all",
                    help="comma-separated client names (default: all)")


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "client" not in metafunc.fixturenames or "profile" not in metafunc.fixturenames:
        return
    from mgmtbench.clients import ADAPTERS, pairs
    from mgmtbench.lab.profiles import BUILTIN, resolve

    config = metafunc.config
    profiles = _split(config.getoption("--profiles"))
    if profiles == ["all"]:
        profiles = list(BUILTIN)
    for name in profiles:
        resolve(name)  # a clear error for a typo, before anything starts
    counts = [int(c) for c in _split(config.getoption("--commands"))]
    wanted = _split(config.getoption("--clients"))
    if wanted != ["all"]:
        unknown = set(wanted) - set(ADAPTERS)
        if unknown:
            raise pytest.UsageError(f"unknown clients {sorted(unknown)}: choose from "
                                    f"{', '.join(ADAPTERS)}")
    matrix = [(c, m) for c, m in pairs() if wanted == ["all"] or c in wanted]
    metafunc.parametrize("profile", profiles)
    metafunc.parametrize("commands", counts, ids=[f"{n}cmd" for n in counts])
    metafunc.parametrize(("client", "mode"), matrix, ids=[f"{c}-{m}" for c, m in matrix])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    _ratios(terminalreporter, session.benchmarks)
    _mode_table(terminalreporter, session.benchmarks)


def _ratios(reporter: Any, benchmarks: list[Any]) -> None:
    """Side-by-side ratios for the small groups (emulator baselines)."""
    groups: dict[str, list[Any]] = {}
    for bench in benchmarks:
        if not bench.has_error and bench.stats and "client" not in bench.extra_info:
            groups.setdefault(bench.group or "", []).append(bench)
    lines = []
    for group, benches in groups.items():
        if len(benches) < 2:
            continue
        fastest = min(benches, key=lambda b: b.stats.median)
        for bench in sorted(benches, key=lambda b: b.stats.median):
            lines.append(f"{group}: {bench.name}  median {bench.stats.median * 1000:.2f} ms  "
                         f"x{bench.stats.median / fastest.stats.median:.2f} of the fastest")
    if lines:
        reporter.section("ratios (median, same group)")
        for line in lines:
            reporter.write_line(line)


def _mode_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Per profile and command count: client x mode, mean, p95, RTTs, speed-up vs the slowest."""
    rows = [b for b in benchmarks if not b.has_error and b.stats and "client" in b.extra_info]
    if not rows:
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(file=reporter._tw._file, force_terminal=False, width=120)
    by_group: dict[tuple[str, int], list[Any]] = {}
    for bench in rows:
        key = (bench.extra_info["profile"], bench.extra_info["commands"])
        by_group.setdefault(key, []).append(bench)
    reporter.section("transport modes")
    for (profile, commands), benches in by_group.items():
        info = benches[0].extra_info
        slowest = max(b.stats.mean for b in benches)
        table = Table(title=f"{profile}: configured RTT {info['configured_rtt_ms']} ms, measured "
                            f"{info['measured_rtt_ms']} ms ({info['backend']}), {commands} commands",
                      title_justify="left")
        for column in ("client", "mode", "mean ms", "p95 ms", "RTTs", "packets", "speed-up"):
            table.add_column(column, justify="left" if column in ("client", "mode") else "right")
        for bench in sorted(benches, key=lambda b: b.stats.mean):
            extra = bench.extra_info
            rtts = extra.get("rtts")
            table.add_row(extra["client"], extra["mode"], f"{bench.stats.mean * 1000:.1f}",
                          f"{extra.get('p95_ms', float('nan')):.1f}",
                          "-" if rtts is None else f"{rtts:.1f}",
                          f"{extra.get('packets_per_iteration', 0):.0f}",
                          f"x{slowest / bench.stats.mean:.1f}")
        console.print(table)
