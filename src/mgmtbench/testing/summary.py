"""The tables a benchmark run ends with: ratios within small groups, the transport-mode table per
profile and command count, the concurrency table per profile and session count, loss recovery
(TCP against QUIC) per client and mode across loss rates, and each lab's
TCP (both ends' congestion control, MTU, and the host's settings unlike the device side's)."""

from __future__ import annotations

from typing import Any

import pytest

from mgmtbench.testing.options import DEFAULT_PLATFORM


def write_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """Append the side-by-side tables of this run's benchmarks to pytest's terminal report."""
    session = getattr(config, "_benchmarksession", None)
    if session is None or not session.benchmarks:
        return
    _ratios(terminalreporter, session.benchmarks)
    _mode_table(terminalreporter, session.benchmarks)
    _fleet_table(terminalreporter, session.benchmarks)
    _dask_table(terminalreporter, session.benchmarks)
    _loss_table(terminalreporter, session.benchmarks)
    _lab_tcp(terminalreporter, session.benchmarks)


def _lab_tcp(reporter: Any, benchmarks: list[Any]) -> None:
    """One line per profile whose lab recorded its TCP (:mod:`mgmtbench.lab.tcp`)."""
    from mgmtbench.results.tcp import describe

    seen: dict[tuple[str, str], None] = {}  # (profile, line), in order, each once
    for bench in benchmarks:
        info = bench.extra_info
        if isinstance(info.get("tcp"), dict):
            seen[(str(info.get("profile", bench.name)), describe(info["tcp"]))] = None
    if seen:
        reporter.section("the labs' TCP")
        for profile, line in seen:
            reporter.write_line(f"{profile}: {line}")


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
    """Successful benchmarks whose extra_info has ``kind`` and ``by``, grouped by (profile,
    extra_info[by]) (the loss experiment records a mode but no command count: its own table)."""
    groups: dict[tuple[str, int], list[Any]] = {}
    for bench in benchmarks:
        if not bench.has_error and bench.stats and kind in bench.extra_info \
                and by in bench.extra_info:
            key = (bench.extra_info["profile"], bench.extra_info[by])
            groups.setdefault(key, []).append(bench)
    return groups


def _console(reporter: Any, width: int) -> Any:
    """A rich console writing into pytest's terminal report."""
    from rich.console import Console

    return Console(file=reporter._tw._file, force_terminal=False, width=width)


def _mode_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Per profile and command count: client x mode, mean, p95, RTTs (time / measured RTT), wire
    and app RTTs (counted on the link: ``-`` on loopback; the study's read-after-write count on the
    client's connections: ``-`` for adapters that cannot count), packets, speed-up vs the
    slowest."""
    by_group = _grouped(benchmarks, "mode", "commands")
    if not by_group:
        return
    from rich.table import Table

    console = _console(reporter, 120)
    reporter.section("transport modes")
    for (profile, commands), benches in by_group.items():
        info = benches[0].extra_info
        slowest = max(b.stats.mean for b in benches)
        loaded = sorted(b.extra_info["link_rtt_under_load_ms"] for b in benches
                        if b.extra_info.get("link_rtt_under_load_ms") is not None)
        under_load = (f", link under load {loaded[len(loaded) // 2]} ms (median of the "
                      f"benchmarks' probes)" if loaded else "")
        table = Table(title=f"{profile}: {_where(info)}{under_load}, {commands} commands",
                      title_justify="left")
        for column in ("client", "mode", "mean ms", "p95 ms", "RTTs", "wire/app RTTs", "packets",
                       "speed-up"):
            table.add_column(column, justify="left" if column in ("client", "mode") else "right")
        for bench in sorted(benches, key=lambda b: b.stats.mean):
            extra = bench.extra_info
            rtts = extra.get("rtts")
            counted = "/".join("-" if extra.get(key) is None else f"{extra[key]:.1f}"
                               for key in ("wire_rtts_per_iteration", "app_rtts_per_iteration"))
            payload = extra.get("payload", "cli")
            # A lab of another platform than the default (--platforms): named beside the mode.
            platform = extra.get("platform", DEFAULT_PLATFORM)
            on = "" if platform == DEFAULT_PLATFORM or extra.get("target") == "inventory" else (
                f" ({platform})")
            table.add_row(extra["client"] + ("" if payload == "cli" else f" ({payload})"),
                          extra["mode"] + on, f"{bench.stats.mean * 1000:.1f}",
                          f"{extra.get('p95_ms', float('nan')):.1f}",
                          "-" if rtts is None else f"{rtts:.1f}", counted,
                          "-" if extra.get("packets_per_iteration") is None
                          else f"{extra['packets_per_iteration']:.0f}",
                          f"x{slowest / bench.stats.mean:.1f}")
        console.print(table)


def _where(info: dict[str, Any]) -> str:
    """Where a benchmark ran, for a table's title: the lab's RTTs and backend, or the inventory
    host's measured RTT and version string."""
    if info.get("target") == "inventory":
        device = info.get("device_version") or ", ".join(info.get("device_versions") or [])
        return (f"inventory ({info.get('inventory_format')}), measured RTT "
                f"{info['measured_rtt_ms']} ms (SSH echo; TCP connect {info.get('tcp_rtt_ms')} "
                f"ms), {device or 'version unknown'}")
    return (f"configured RTT {info['configured_rtt_ms']} ms, measured {info['measured_rtt_ms']} "
            f"ms ({info['backend']}, {info.get('runtime', 'in-process')})")


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
        table = Table(title=f"{profile}: {_where(info)}, "
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


def _dask_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Fleets on Dask (``benchmarks/test_fleet_dask.py``): one row per client, profile and fleet
    size: makespan on the shards' clocks, start skew, phases, where the CPU went."""
    rows = [b for b in benchmarks if not b.has_error and b.stats
            and b.extra_info.get("experiment") == "fleet-dask"]
    if not rows:
        return
    from rich.table import Table

    from mgmtbench.clients.fleet import PHASES

    console = _console(reporter, 200)
    reporter.section("fleets on Dask (makespan on the shards' clocks; phases: medians in ms; CPU "
                     "in s per round, summed over the shards)")
    table = Table(title=f"{rows[0].extra_info['command']!r} twice per session; cluster "
                        f"{rows[0].extra_info['cluster']}", title_justify="left")
    for column in ("client", "profile", "devices", "shards", "at once", "makespan s",
                   "start skew ms", *PHASES, "client CPU", "emulator CPU", "link CPU",
                   "sessions/s"):
        table.add_column(column, justify="left" if column in ("client", "profile") else "right")
    for bench in sorted(rows, key=lambda b: (b.extra_info["profile"], b.extra_info["devices"],
                                             b.extra_info["client"])):
        extra = bench.extra_info
        table.add_row(extra["client"], extra["profile"], f"{extra['devices']:,}",
                      str(extra["shards"]), str(extra["fleet_concurrency"]),
                      f"{extra['makespan_ms'] / 1000:.1f}", f"{extra['start_skew_ms']:.1f}",
                      *("-" if extra[f"{p}_ms"] is None else f"{extra[f'{p}_ms']:.0f}"
                        for p in PHASES),
                      f"{extra['client_cpu_s']:.1f}", f"{extra['emulator_cpu_s']:.1f}",
                      f"{extra['link_cpu_s']:.1f}", f"{extra['sessions_per_s']:.0f}")
    console.print(table)


def _loss_table(reporter: Any, benchmarks: list[Any]) -> None:
    """Loss recovery (``benchmarks/test_loss_recovery.py``): one row per client, mode and loss
    rate; p50, p95, p99 (ms), wire RTTs per round, TCP packets sent again and the link's drops
    over the timed rounds (``-`` where not counted)."""
    rows = [b for b in benchmarks if not b.has_error and b.stats
            and b.extra_info.get("experiment") == "loss-recovery"]
    if not rows:
        return
    from rich.table import Table

    console = _console(reporter, 140)
    reporter.section("loss recovery (one command a round)")
    info = rows[0].extra_info
    table = Table(title=f"{_where(info)} (the lossless profile's lab; each loss rate has its own)",
                  title_justify="left")
    for column in ("transport", "client", "mode", "loss %", "rounds", "p50 ms", "p95 ms",
                   "p99 ms", "wire RTTs", "TCP resent", "link drops"):
        table.add_column(column, justify="left" if column in ("transport", "client", "mode")
                         else "right")
    rows.sort(key=lambda b: (b.extra_info["transport"], b.extra_info["client"],
                             b.extra_info["mode"], b.extra_info["loss_pct"]))
    for bench in rows:
        extra = bench.extra_info

        def shown(key: str, extra: dict[str, Any] = extra) -> str:
            value = extra.get(key)
            return "-" if value is None else f"{value:g}"

        table.add_row(extra["transport"], extra["client"], extra["mode"], f"{extra['loss_pct']:g}",
                      str(extra["loss_rounds"]), f"{extra['p50_ms']:.1f}",
                      f"{extra['p95_ms']:.1f}", f"{extra['p99_ms']:.1f}",
                      shown("wire_rtts_per_iteration"), shown("tcp_retransmits"),
                      shown("link_dropped"))
    console.print(table)
