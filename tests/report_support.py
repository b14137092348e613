"""A synthetic transport run with every transport, for the report's findings, charts and HTML:
pytest-benchmark JSON whose means follow a known model (round trips x RTT + a client's own
time), with the extra_info a lab run records (instrument error, wire round trips, TCP facts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: profile: (configured RTT, measured RTT) in ms
PROFILES = {"local": (0.0, 0.02), "regional": (30.0, 30.3), "intercontinental": (150.0, 150.4)}
#: (transport, mode): (round trips per iteration, round trips per command)
MODES = {
    ("ssh", "fresh-conn"): (6, 2), ("ssh", "reuse-conn"): (0, 2), ("ssh", "batch-exec"): (8, 0),
    ("ssh", "pty-fresh"): (12, 1), ("ssh", "pty-reuse"): (5, 1), ("ssh", "pipelined"): (2, 0),
    ("https", "fresh-conn"): (0, 4), ("https", "keep-alive"): (0, 1),
    ("https", "batch-post"): (1, 0), ("https", "multi-cmd"): (1, 0),
    ("netconf", "fresh-session"): (10, 1), ("netconf", "reuse-session"): (0, 1),
    ("netconf", "batch-rpc"): (1, 0), ("netconf", "edit-commit"): (2, 0),
    ("restconf", "fresh-conn"): (0, 4), ("restconf", "keep-alive"): (0, 1),
    ("restconf", "batch-patch"): (1, 0),
    ("gnmi", "fresh-conn"): (5, 0), ("gnmi", "reuse-stream"): (0, 1),
    ("gnmi", "subscribe-once"): (1, 0),
    ("http3", "fresh-conn"): (1, 1), ("http3", "keep-alive"): (0, 1),
    ("http3", "batch-post"): (1, 0),
}
#: transport: {client: ms of its own per iteration}
CLIENTS = {"ssh": {"asyncssh": 4.0, "paramiko": 9.0, "netmiko": 40.0},
           "https": {"httpx": 2.0, "httpx-async": 3.0}, "netconf": {"ncclient": 12.0},
           "restconf": {"httpx-restconf": 3.0}, "gnmi": {"pygnmi": 5.0},
           "http3": {"aioquic-h3": 4.0}}
PTY_ONLY = {"netmiko"}  # clients that only run PTY modes
#: The benchmark whose wire round trips are 3 above the protocol minimum, to be warned about.
SLOW = ("paramiko", "fresh-conn")
TCP = {"asked": {"device_cc": "cubic", "client_cc": "cubic", "mtu": 1500, "initcwnd": 10},
       "device": {"cc": "cubic", "mtu": 1500}, "client": {"cc": "cubic", "mtu": 1500},
       "mismatches": [], "differs": ["net.ipv4.tcp_slow_start_after_idle is 1 on the benchmark "
                                     "side (host), 0 on the device side"]}


def mean_ms(transport: str, mode: str, client: str, profile: str, commands: int) -> float:
    """The model's mean: the mode's round trips at the profile's measured RTT, plus the client's
    own time per iteration and per command."""
    fixed, per_command = MODES[(transport, mode)]
    own = CLIENTS[transport][client]
    return (fixed + per_command * commands) * PROFILES[profile][1] + own * (1 + commands / 5)


def benchmarks(profiles: tuple[str, ...] = tuple(PROFILES),
               counts: tuple[int, ...] = (1, 5, 10)) -> list[dict[str, Any]]:
    """A benchmark per profile, count, transport, mode and client (see the module docstring)."""
    out = []
    for profile in profiles:
        configured, measured = PROFILES[profile]
        for commands in counts:
            for (transport, mode), (fixed, per_command) in MODES.items():
                for client in CLIENTS[transport]:
                    if client in PTY_ONLY and not mode.startswith("pty"):
                        continue
                    ms = mean_ms(transport, mode, client, profile, commands)
                    extra: dict[str, Any] = {
                        "experiment": "transport", "client": client, "mode": mode,
                        "profile": profile, "commands": commands, "transport": transport,
                        "backend": "tun" if measured >= 1 else "loopback",
                        "configured_rtt_ms": configured, "measured_rtt_ms": measured,
                        "rtt_error_ms": round(measured - configured, 3),
                        "rtts": round(ms / measured, 2) if measured >= 1 else None,
                        "p95_ms": ms * 1.1}
                    if measured >= 1:
                        wire = fixed + per_command * commands + (3 if (client, mode) == SLOW
                                                                 else 0.4)
                        extra["wire_rtts_per_iteration"] = (
                            round(wire, 1) if transport != "http3" else None)
                        if transport == "http3":
                            extra["quic_rtts_per_iteration"] = round(wire, 1)
                        extra["tcp"] = TCP
                    out.append({
                        "name": f"test_transport_mode[{profile}-{commands}cmd-{client}-{mode}]",
                        "group": f"{profile}, {commands} commands",
                        "params": {"profile": profile, "commands": commands, "client": client,
                                   "mode": mode},
                        "stats": {"mean": ms / 1000, "median": ms / 1000, "min": ms / 1000,
                                  "max": ms * 1.2 / 1000, "stddev": ms / 20000, "rounds": 5},
                        "extra_info": extra})
    return out


def every_transport_run(path: Path, **options: Any) -> Path:
    """Write the synthetic run (``benchmarks(**options)``) to ``path``."""
    path.write_text(json.dumps({"datetime": "2026-11-29T00:00:00", "commit_info": {},
                                "benchmarks": benchmarks(**options)}))
    return path
