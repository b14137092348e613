"""Benchmark options, the parametrisation of the transport-mode matrix, and the summary tables."""

from __future__ import annotations

from typing import Any

import pytest

DEFAULT_PROFILES = "local,regional,intercontinental"
DEFAULT_COMMANDS = "5"
DEFAULT_CONCURRENCY = "1,10,50,100,200"
DEFAULT_FLEET_PROFILES = "local,regional"


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
    group.addoption("--concurrency", default=DEFAULT_CONCURRENCY,
                    help="fleet benchmark: comma-separated session counts, each session to its "
                         f"own device (default: {DEFAULT_CONCURRENCY})")
    group.addoption("--fleet-size", default="1000",
                    help="fleet lab benchmark: devices in the lab (default: 1000, at most 1022)")
    group.addoption("--fleet-profiles", default=DEFAULT_FLEET_PROFILES,
                    help=f"fleet benchmark: link profiles (default: {DEFAULT_FLEET_PROFILES})")


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _profiles(config: pytest.Config, option: str) -> list[str]:
    from mgmtbench.lab.profiles import BUILTIN, resolve

    profiles = _split(config.getoption(option))
    if profiles == ["all"]:
        profiles = list(BUILTIN)
    for name in profiles:
        resolve(name)  # a clear error for a typo, before anything starts
    return profiles


def _counts(config: pytest.Config, option: str) -> list[int]:
    try:
        counts = [int(c) for c in _split(config.getoption(option))]
    except ValueError:
        raise pytest.UsageError(f"{option} takes comma-separated whole numbers, not "
                                f"{config.getoption(option)!r}") from None
    if not counts or min(counts) < 1:
        raise pytest.UsageError(f"{option} takes numbers of at least 1")
    return counts


def _clients(config: pytest.Config, known: list[str]) -> list[str]:
    wanted = _split(config.getoption("--clients"))
    if wanted == ["all"]:
        return known
    unknown = set(wanted) - set(known)
    if unknown:
        raise pytest.UsageError(f"unknown clients {sorted(unknown)}: choose from {', '.join(known)}")
    return [c for c in known if c in wanted]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "concurrency" in metafunc.fixturenames:
        _fleet_matrix(metafunc)
        return
    if "client" not in metafunc.fixturenames or "profile" not in metafunc.fixturenames:
        return
    from mgmtbench.clients import ADAPTERS, pairs

    config = metafunc.config
    profiles = _profiles(config, "--profiles")
    counts = _counts(config, "--commands")
    wanted = _clients(config, list(ADAPTERS))
    matrix = [(c, m) for c, m in pairs() if c in wanted]
    metafunc.parametrize("profile", profiles)
    metafunc.parametrize("commands", counts, ids=[f"{n}cmd" for n in counts])
    metafunc.parametrize(("client", "mode"), matrix, ids=[f"{c}-{m}" for c, m in matrix])


def _fleet_matrix(metafunc: pytest.Metafunc) -> None:
    from mgmtbench.clients.fleet import FLEET_RUNNERS

    config = metafunc.config
    metafunc.parametrize("profile", _profiles(config, "--fleet-profiles"))
    counts = _counts(config, "--concurrency")
    metafunc.parametrize("concurrency", counts, ids=[f"c{n}" for n in counts])
    metafunc.parametrize("client", _clients(config, list(FLEET_RUNNERS)))


@pytest.fixture(scope="session")
def fleet_lab_for(request: pytest.FixtureRequest, lab_for: Any) -> Any:
    """``fleet_lab_for("regional")``: the session's fleet lab for that profile, with as many
    devices as the largest ``--concurrency`` (with the netns runtime one emulator process serves
    them all, with ``--device-runtime docker`` a container each)."""
    size = max(_counts(request.config, "--concurrency"))
    return lambda profile: lab_for(profile, devices=size)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    _ratios(terminalreporter, session.benchmarks)
    _mode_table(terminalreporter, session.benchmarks)
    _fleet_table(terminalreporter, session.benchmarks)


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


def _grouped(benchmarks: list[Any], kind: str, by: str) -> dict[tuple[str, int], list[Any]]:
    """Successful benchmarks whose extra_info has ``kind``, grouped by (profile, extra_info[by])."""
    groups: dict[tuple[str, int], list[Any]] = {}
    for bench in benchmarks:
        if not bench.has_error and bench.stats and kind in bench.extra_info:
            key = (bench.extra_info["profile"], bench.extra_info[by])
            groups.setdefault(key, []).append(bench)
    return groups


def _console(reporter: Any, width: int) -> Any:
    """A rich console writing into pytest's terminal report."""
    from rich.console import Console

    return Console(file=reporter._tw._file, force_terminal=False, width=width)


def _mode_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Per profile and command count: client x mode, mean, p95, RTTs, speed-up vs the slowest."""
    by_group = _grouped(benchmarks, "mode", "commands")
    if not by_group:
        return
    from rich.table import Table

    console = _console(reporter, 120)
    reporter.section("transport modes")
    for (profile, commands), benches in by_group.items():
        info = benches[0].extra_info
        slowest = max(b.stats.mean for b in benches)
        table = Table(title=f"{profile}: configured RTT {info['configured_rtt_ms']} ms, measured "
                            f"{info['measured_rtt_ms']} ms ({info['backend']}, "
                            f"{info.get('runtime', 'in-process')}), {commands} commands",
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


def _fleet_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Per profile and concurrency: client, makespan, per-phase medians, CPU, memory."""
    by_group = _grouped(benchmarks, "concurrency", "concurrency")
    if not by_group:
        return
    from rich.table import Table

    from mgmtbench.clients.fleet import PHASES

    console = _console(reporter, 160)
    reporter.section("concurrency (medians; ms unless named; CPU % of one core over the makespan; "
                     "- : the library does not separate that phase, its time is in the one before)")
    for (profile, concurrency), benches in sorted(by_group.items()):
        info = benches[0].extra_info
        table = Table(title=f"{profile}: measured RTT {info['measured_rtt_ms']} ms "
                            f"({info['backend']}, {info.get('runtime', 'in-process')}), "
                            f"{concurrency} sessions to {concurrency} devices, "
                            f"{info['command']!r} twice per session", title_justify="left")
        for column in ("client", "makespan", "session", *PHASES, "client CPU s", "client CPU",
                       "CPU/session", "peak RSS MiB", "emulator CPU"):
            table.add_column(column, justify="left" if column == "client" else "right")
        for bench in sorted(benches, key=lambda b: b.stats.median):
            extra = bench.extra_info
            phases = {p: extra[f"{p}_ms"] for p in PHASES}
            emulator = extra.get("emulator_cpu_pct")
            table.add_row(
                extra["client"], f"{bench.stats.median * 1000:.0f}", f"{extra['session_ms']:.1f}",
                *("-" if phases[p] is None else f"{phases[p]:.1f}" for p in PHASES),
                f"{extra['client_cpu_s']:.3f}", f"{extra['client_cpu_pct']:.0f}%",
                f"{extra['client_cpu_ms_per_session']:.2f}",
                f"{extra['client_peak_rss_mib']:.0f}",
                "-" if emulator is None else f"{emulator:.0f}%")
        console.print(table)
