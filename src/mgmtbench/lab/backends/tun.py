"""``tun``: the packet-level delay line, for kernels without sch_netem.

A helper process (:mod:`mgmtbench.lab.delayline`) owns a TUN interface on each side and delays every
packet on its own, in both directions. See that module for why this carries no TCP-small-queue
bias, unlike delaying NFQUEUE verdicts.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.base import LinkBackend
from mgmtbench.lab.netns import START_TIMEOUT
from mgmtbench.lab.processes import spawn
from mgmtbench.lab.state import STATE_ROOT


class TunBackend(LinkBackend):
    """The TUN delay line: a helper process delays every packet in both directions."""
    name = "tun"
    supports = frozenset({"delay", "jitter", "loss", "rate", "reorder", "duplicate"})

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._process: subprocess.Popen[str] | None = None
        self._log: Path | None = None

    @classmethod
    def unavailable(cls) -> str | None:
        """Why /dev/net/tun cannot be used here, None if it can."""
        if not os.path.exists("/dev/net/tun"):
            return "/dev/net/tun is missing (load the tun module)"
        if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
            return "no access to /dev/net/tun: run as root or with CAP_NET_ADMIN"
        return None

    def up(self) -> None:
        """Start the delay line and wait until both TUN interfaces exist."""
        profile = self.profile
        spec = {
            "tun_a": self.ends.host_if,
            "tun_b": self.ends.dev_if,
            "netns_b": self.ends.netns,
            "impairment": {
                "delay": profile.one_way_ms / 1000,
                "jitter": profile.jitter_ms / 1000,
                "distribution": profile.jitter_distribution,
                "loss": profile.loss_pct / 100,
                "duplicate": profile.duplicate_pct / 100,
                "reorder": profile.reorder_pct / 100,
                "rate_bps": profile.rate_mbit * 1e6,
            },
        }
        log = self._log = STATE_ROOT / self.ends.lab_id / "delayline.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as err:  # marked and recorded as the lab's as it starts
            self._process = spawn(
                self.ends.lab_id, "delay line",
                [sys.executable, "-m", "mgmtbench.lab.delayline", json.dumps(spec)], log=log,
                stdout=subprocess.PIPE, stderr=err, text=True, start_new_session=True)
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], START_TIMEOUT)
        line = self._process.stdout.readline() if ready else ""
        if line.strip() != "ready":
            if self._process.poll() is None:  # hung: never wait for it unbounded
                self._process.kill()
            self._process.wait(timeout=5)
            lines = log.read_text(errors="replace").strip().splitlines()
            why = lines[-1] if lines else f"nothing said within {START_TIMEOUT:.0f} s"
            raise UsageError(f"the delay line did not start: {why}")

    def down(self) -> None:
        """Stop the delay line (its interfaces vanish with it)."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def pids(self) -> list[int]:
        """The delay line's pid, while it runs."""
        return [self._process.pid] if self._process else []

    def stats(self, timeout: float = 5) -> dict[str, Any]:
        """The delay line's tally: per direction (``a_to_b``: benchmark -> devices, ``b_to_a``)
        packets read, wire packets, bytes and drops since the start, and how late held packets
        went out since the previous call (``late_p50_us``, ``late_p99_us``, ``late_max_us``);
        also ``offload`` and ``priority``. Asked for with SIGUSR1; the answer is a JSON line in
        the delay line's log."""
        process, log = self._process, self._log
        if process is None or log is None or process.poll() is not None:
            raise UsageError("the delay line is not running")
        seen = len(log.read_text().splitlines())
        process.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            lines = log.read_text().splitlines()
            if len(lines) > seen:
                report: dict[str, Any] = json.loads(lines[-1])
                return report
            time.sleep(0.01)
        raise UsageError(f"the delay line did not report its counts within {timeout:.0f} s")
