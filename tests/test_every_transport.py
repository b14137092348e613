"""The all-transports comparison: each transport's and payload's fastest client and mode."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.results.every_transport import best_per_transport, charts, tables


def _row(transport: str, client: str, mode: str, ms: float, profile: str = "regional",
         commands: int = 5, payload: str = "cli") -> dict[str, object]:
    rtt = {"regional": 30.0, "local": 0.1}[profile]
    return {"transport": transport, "client": client if payload == "cli" else
            f"{client} ({payload})", "mode": mode, "median_ms": ms, "mean_ms": ms,
            "profile": profile, "commands": commands, "payload": payload,
            "measured_rtt_ms": rtt, "bytes_per_iteration": 1000,
            "client_cpu_ms_per_command": 1.5}


RUN = pd.DataFrame([
    _row("ssh", "netmiko", "pty-fresh", 1400), _row("ssh", "asyncssh", "pty-fresh", 700),
    _row("ssh", "asyncssh", "batch-exec", 90), _row("https", "httpx", "batch-post", 31),
    # A status, not the outputs: never the fastest way to read.
    _row("restconf", "httpx-restconf", "batch-patch", 30),
    _row("restconf", "httpx-restconf", "keep-alive", 170),
    _row("netconf", "asyncssh-netconf", "batch-rpc", 35),
    _row("netconf", "ncclient", "batch-rpc", 280, payload="yang"),
    _row("netconf", "asyncssh-netconf", "reuse-session", 165, payload="yang"),
    _row("ssh", "asyncssh", "batch-exec", 3, profile="local"),
    _row("https", "httpx", "batch-post", 1, profile="local"),
    _row("ssh", "asyncssh", "batch-exec", 180, commands=10),
    _row("https", "httpx", "batch-post", 32, commands=10),
])


def test_each_transport_and_payload_gets_its_fastest_way() -> None:
    table = best_per_transport(RUN, "regional", 5)
    assert list(table["transport"]) == ["https", "netconf", "ssh", "netconf (yang)", "restconf"]
    assert list(table["mode"]) == ["batch-post", "batch-rpc", "batch-exec", "reuse-session",
                                   "keep-alive"]
    assert table.loc[3, "client"] == "asyncssh-netconf"  # the payload is in the transport
    # Against the best ssh pty-fresh (700 ms), not Netmiko's.
    assert table.loc[0, "vs_pty_fresh"] == 700 / 31
    assert round(table.loc[2, "rtts"], 3) == 3.0


def test_tables_take_the_runs_usual_command_count_and_skip_one_transport_profiles() -> None:
    found = tables(RUN)
    assert list(found) == ["regional, 5 commands", "local, 5 commands"]
    assert tables(RUN[RUN["transport"] == "ssh"]) == {}


def test_charts_draw_the_bests(tmp_path: Path) -> None:
    paths = charts(RUN, tmp_path)
    assert sorted(p.name for p in paths) == ["transports_commands_regional.png",
                                             "transports_rtt_5cmd.png"]
    assert all(p.stat().st_size > 1000 for p in paths)
