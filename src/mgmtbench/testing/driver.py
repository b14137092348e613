"""Running an adapter the same way whether it is blocking or asyncio, and the timing figures
pytest-benchmark does not give."""

from __future__ import annotations

import asyncio
import statistics
from typing import Any

from mgmtbench.clients import AsyncClient, Client
from mgmtbench.lab.calibrate import percentile


class Driver:
    """Runs a sync or async adapter; async ones on one persistent event loop (not asyncio.run
    per round, whose loop set-up would be timed)."""

    def __init__(self, client: Client | AsyncClient) -> None:
        self.client = client
        self.loop = asyncio.new_event_loop() if isinstance(client, AsyncClient) else None

    def setup(self) -> None:
        """The adapter's untimed preparation."""
        self._call("setup")

    def run(self, commands: list[str]) -> str:
        """One iteration: the outputs of ``commands``, concatenated."""
        return str(self._call("run", commands))

    def teardown(self) -> None:
        """Close the adapter and the event loop."""
        try:
            self._call("teardown")
        finally:
            if self.loop is not None:
                self.loop.close()

    def _call(self, method: str, *args: Any) -> Any:
        result = getattr(self.client, method)(*args)
        if self.loop is not None:
            return self.loop.run_until_complete(result)
        return result


def timing_info(data: list[float], rtt_ms: float | None) -> dict[str, float | None]:
    """p95/p99 (pytest-benchmark has neither) and the time in round trips."""
    mean = statistics.fmean(data)
    return {
        "p95_ms": round(percentile(data, 95) * 1000, 3),
        "p99_ms": round(percentile(data, 99) * 1000, 3),
        "rtts": round(mean * 1000 / rtt_ms, 2) if rtt_ms and rtt_ms >= 1 else None,
    }
