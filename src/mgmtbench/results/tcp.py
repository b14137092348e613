"""The lab's TCP as a report says it: one sentence from a result's ``tcp`` record
(:class:`mgmtbench.lab.tcp.TcpFacts`), for every section that shows a lab's results."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def describe(tcp: Any) -> str:
    """``TCP: device cubic, benchmark side cubic, MTU 1500, initial window 10.`` and the host
    settings unlike the device side's; for a run recorded before the lab set its TCP, that the
    host's settings applied, unrecorded. ``tcp`` as recorded, or as a run's loader keeps nested
    values (JSON text)."""
    if isinstance(tcp, str):
        try:
            tcp = json.loads(tcp)
        except ValueError:
            tcp = None
    if not isinstance(tcp, Mapping):
        return ("TCP: not recorded (a run from before the lab set it: both ends had the host's "
                "congestion control, whatever it was).")
    device, client = tcp.get("device") or {}, tcp.get("client") or {}
    text = (f"TCP: device {device.get('cc')}, benchmark side {client.get('cc')}, MTU "
            f"{device.get('mtu')}, initial window {device.get('initcwnd')}.")
    if tcp.get("mismatches"):
        text += " NOT AS ASKED: " + "; ".join(map(str, tcp["mismatches"])) + "."
    if tcp.get("differs"):
        text += " Host settings unlike the device's: " + "; ".join(map(str, tcp["differs"])) + "."
    return text
