"""The edge proxy's report section: direct against proxy, the share of the HTTPS win captured."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mgmtbench.results.sections import ReportContext, discover
from mgmtbench.results.sections.edge_proxy import EXPERIMENT, render


def rows(wan: str, scale: float) -> list[dict[str, object]]:
    common = {"experiment": EXPERIMENT, "wan_profile": wan, "commands": 5,
              "wan_configured_rtt_ms": 30.0, "wan_link_rtt_ms": 30.1 * scale,
              "campus_configured_rtt_ms": 2.0, "campus_link_rtt_ms": 2.05}
    cases = [("direct", "asyncssh", "pty-fresh", 600.0), ("direct", "paramiko", "pty-fresh", 650.0),
             ("direct", "httpx", "batch-post", 40.0), ("proxy", "httpx", "keep-alive", 80.0),
             ("proxy", "httpx-h2", "keep-alive", 90.0), ("tunnel", "asyncssh", "ssh-https-ssh", 320.0)]
    return [{**common, "path": p, "client": c, "mode": m, "mean_ms": ms * scale}
            for p, c, m, ms in cases]


def test_direct_against_proxy(tmp_path: Path) -> None:
    frame = pd.DataFrame(rows("regional", 1.0) + rows("continental", 2.0))
    section = render(frame, ReportContext(out=tmp_path))
    text = "\n".join(section.lines)
    lines = text.splitlines()
    assert discover()[EXPERIMENT].render is render
    assert "## Edge proxy: WAN regional, 5 commands" in text
    keep_alive = next(line for line in lines if line.startswith("| proxy | keep-alive | httpx |"))
    cells = [c.strip() for c in keep_alive.strip("|").split("|")]
    # (600 - 80) / (600 - 40) of the gap; 7.5x faster than pty-fresh; beside the study's 71.9 ms
    assert cells[3:7] == ["80.00", "7.50", "0.93", "71.90"]
    tunnel = next(line for line in lines if line.startswith("| tunnel | ssh-https-ssh |"))
    assert "0.50" in tunnel  # (600 - 320) / 560
    # the study's columns only where its profile and command count are
    continental = text.split("WAN continental")[1]
    assert "study ms" not in continental.split("## Edge proxy: time")[0]
    assert "## Edge proxy: time against the WAN's RTT, 5 commands" in text
    # a row per mode, a column per profile with its measured WAN RTT: the best client's mean
    header = next(line for line in lines if line.startswith("| mode |"))
    assert [c.strip() for c in header.strip("|").split("|")] == [
        "mode", "regional (30 ms)", "continental (60 ms)"]
    against = next(line for line in lines if line.startswith("| proxy keep-alive |"))
    assert [c.strip() for c in against.strip("|").split("|")] == [
        "proxy keep-alive", "80.0", "160.0"]
    assert [c.name for c in section.charts] == ["edge_proxy_rtt_5cmd.png"]
    assert (tmp_path / "edge_proxy_rtt_5cmd.png").stat().st_size > 0
    assert "![edge_proxy_rtt_5cmd](edge_proxy_rtt_5cmd.png)" in text


def test_one_profile_has_no_rtt_chart(tmp_path: Path) -> None:
    section = render(pd.DataFrame(rows("regional", 1.0)), ReportContext(out=tmp_path))
    assert section.charts == []
    assert not any("time against" in line for line in section.lines)


def test_concurrency_direct_and_proxy_in_one_table(tmp_path: Path) -> None:
    from mgmtbench.results.sections import edge_concurrency

    cases = [("proxy", "httpx-async", "keep-alive", 2000.0, 11.8),
             ("direct", "httpx-async", "batch-post", 1000.0, None),
             ("direct", "asyncssh", "pty-fresh", 8000.0, None)]
    frame = pd.DataFrame([{"experiment": edge_concurrency.EXPERIMENT, "wan_profile": "regional",
                           "sessions": 100.0, "path": p, "client": c, "mode": m, "mean_ms": ms,
                           "proxy_cpu_ms_per_request": cpu} for p, c, m, ms, cpu in cases])
    section = edge_concurrency.render(frame, ReportContext(out=tmp_path))
    assert discover()[edge_concurrency.EXPERIMENT].render is edge_concurrency.render
    lines = "\n".join(section.lines).splitlines()
    assert "## Edge proxy at concurrency: 100 sessions, WAN regional" in lines
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines
            if line.startswith("| direct") or line.startswith("| proxy")]
    # fastest first; the proxy is 4x faster than direct SSH, half as fast as direct batch-post
    assert rows == [["direct", "httpx-async", "batch-post", "1000.00", "8.00", "1.00", "-"],
                    ["proxy", "httpx-async", "keep-alive", "2000.00", "4.00", "0.50", "11.80"],
                    ["direct", "asyncssh", "pty-fresh", "8000.00", "1.00", "0.12", "-"]]
