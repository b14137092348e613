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
