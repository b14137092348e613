"""The driver of a distributed fleet: shards prepared on their workers, each round released at
one barrier, and the shards' reports merged into one result.

::

    with open_cluster(ClusterOptions(workers=2)) as cluster:
        with DistributedFleet(cluster, plan(...)) as fleet:   # shards prepared (untimed)
            fleet.arm(1)                                       # every shard waits at the barrier
            reports = fleet.release(1)                         # the timed part
        figures = merge(fleet.prepared, [reports])

A round's **makespan** is read on the shards' own clocks, each corrected by its offset to the
scheduler's clock (Dask measures it with every heartbeat): from the first shard's release to the
last shard's end. The **start skew** is the spread of the shards' releases on that corrected
clock: how far from "all at once" the barrier held them.
"""

from __future__ import annotations

import logging
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import replace
from types import TracebackType
from typing import Any

from mgmtbench.clients.fleet import PHASES
from mgmtbench.errors import ClusterError
from mgmtbench.scaleout import shard
from mgmtbench.scaleout.cluster import Cluster
from mgmtbench.scaleout.shard import ShardSpec
from mgmtbench.targets import Login, Target

log = logging.getLogger("mgmtbench.scaleout")
ARM_TIMEOUT = 600.0  # a shard's round task may wait for a worker busy with another


def plan(*, workers: int, client: str, command: str, concurrency: int, login: Login,
         devices: int = 0, profile: str | None = None, targets: Sequence[Target] = (),
         rate: float | None = None, **lab: Any) -> list[ShardSpec]:
    """One shard per worker: ``devices`` lab devices (or ``targets``, an inventory's hosts,
    with ``rate`` new sessions per second in all) and ``concurrency`` sessions at once, split as
    evenly as they go."""
    total = len(targets) or devices
    if total < workers:
        raise ClusterError(f"{total} devices cannot be shared among {workers} Dask workers")
    if concurrency < workers:
        raise ClusterError(f"concurrency {concurrency} is less than one session per worker "
                           f"({workers} workers)")
    run = uuid.uuid4().hex[:12]
    specs = []
    for number in range(workers):
        share = total // workers + (1 if number < total % workers else 0)
        first = number * (total // workers) + min(number, total % workers)
        width = concurrency // workers + (1 if number < concurrency % workers else 0)
        spec = ShardSpec(run=run, number=number, client=client, command=command,
                         concurrency=min(width, share), login=login, **lab)
        specs.append(replace(spec, targets=tuple(targets[first:first + share]),
                             rate=rate / workers if rate else None) if targets
                     else replace(spec, devices=share, profile=profile))
    return specs


class DistributedFleet:
    """Shards of one run on a cluster's workers (shard ``i`` on the ``i``-th worker)."""

    def __init__(self, cluster: Cluster, specs: list[ShardSpec]) -> None:
        if len(specs) > len(cluster.workers):
            raise ClusterError(f"{len(specs)} shards need as many Dask workers; the cluster has "
                               f"{len(cluster.workers)}")
        self.cluster, self.specs = cluster, specs
        self.client = cluster.client
        self.where = {s.number: cluster.workers[s.number] for s in specs}
        self.prepared: list[dict[str, Any]] = []
        self._round: list[tuple[ShardSpec, Any]] = []

    def __enter__(self) -> DistributedFleet:
        futures = [self._submit(shard.prepare, s) for s in self.specs]
        try:
            self.prepared = self._gather(list(zip(self.specs, futures, strict=True)),
                                         "could not be prepared")
        except BaseException:
            try:
                self.close()
            except ClusterError as failed:  # the preparation's failure is the one to report
                log.warning("%s", failed)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.close()
        except ClusterError as failed:
            if exc is None:
                raise
            # The run's own failure is the one to report; the tear-down's is logged.
            log.warning("%s", failed)

    def arm(self, number: int) -> None:
        """Round ``number``'s tasks started; returns once every shard waits at the barrier
        (untimed: pytest-benchmark's ``setup``)."""
        from distributed import Queue

        self._round = [(s, self._submit(shard.run_round, s, number)) for s in self.specs]
        armed, queue = 0, Queue(f"{self.specs[0].run}-armed-{number}")
        deadline = time.monotonic() + ARM_TIMEOUT
        while armed < len(self.specs):
            failed = [(s, f) for s, f in self._round if f.status == "error"]
            if failed:
                self._gather(failed, "failed before its start")
            if time.monotonic() > deadline:
                raise ClusterError(f"round {number}: only {armed} of {len(self.specs)} shards "
                                   f"reached the barrier in {ARM_TIMEOUT:.0f} s")
            try:
                queue.get(timeout=0.5)
            except TimeoutError:
                continue
            armed += 1

    def release(self, number: int) -> list[dict[str, Any]]:
        """Release round ``number`` (every shard at once) and wait for every shard's report (the
        timed part)."""
        from distributed import Event

        Event(f"{self.specs[0].run}-go-{number}").set()
        reports = self._gather(self._round, f"failed in round {number}")
        self._round = []
        return reports

    def close(self) -> None:
        """Every shard's tear-down (labs down, workers stopped), whatever happened before: a
        shard still waiting at a barrier is told to give up first."""
        from distributed import Event

        Event(f"{self.specs[0].run}-abort").set()
        for _, future in self._round:
            future.cancel()
        self._round = []
        futures = [(s, self._submit(shard.finish, s)) for s in self.specs]
        self._gather(futures, "could not be taken down")

    def _submit(self, function: Any, spec: ShardSpec, *args: Any) -> Any:
        return self.client.submit(function, spec, *args, workers=[self.where[spec.number]],
                                  allow_other_workers=False, pure=False)

    def _gather(self, futures: list[tuple[ShardSpec, Any]], what: str) -> list[Any]:
        """Every future's result; the first failed shard's error as one ClusterError."""
        results = []
        for spec, future in futures:
            try:
                results.append(future.result())
            except Exception as exc:
                raise ClusterError(f"shard {spec.number} on {self.where[spec.number]} {what}: "
                                   f"{type(exc).__name__}: {exc}") from exc
        return results


def merge(prepared: list[dict[str, Any]], rounds: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """One result from every shard's reports of every round: phase medians over every session,
    the round's makespan and start skew on the corrected clock, CPU and memory per shard and in
    all. Raises ``AssertionError`` with the first failed session's error."""
    errors = [e for reports in rounds for r in reports for e in r["errors"]]
    sessions = sum(len(r["sessions"]) for reports in rounds for r in reports)
    if errors:
        raise AssertionError(f"{len(errors)} of {sessions} sessions failed; first: {errors[0]}")
    makespans, skews = [], []
    for reports in rounds:
        starts = [r["released"] + r["clock_offset_s"] for r in reports]
        ends = [s + r["wall"] for s, r in zip(starts, reports, strict=True)]
        makespans.append(max(ends) - min(starts))
        skews.append(max(starts) - min(starts))
    phases: dict[str, float | None] = {}
    for phase in PHASES:
        values = [s[phase] for reports in rounds for r in reports for s in r["sessions"]
                  if s[phase] is not None]
        phases[f"{phase}_ms"] = round(statistics.median(values) * 1000, 3) if values else None
    totals = [sum(s[p] or 0.0 for p in PHASES) for reports in rounds for r in reports
              for s in r["sessions"]]

    def per_round(key: str) -> float:  # summed over the shards, median over the rounds
        return float(statistics.median(sum(r[key] for r in reports) for reports in rounds))

    makespan = statistics.median(makespans)
    client_cpu = per_round("cpu_s")
    devices = sum(p["devices"] for p in prepared)
    return {
        **phases,
        "devices": devices, "shards": len(prepared),
        # Not "concurrency": that key marks the concurrency benchmark's one-wave rows, which the
        # report's projection is made from.
        "fleet_concurrency": sum(p["concurrency"] for p in prepared),
        "session_ms": round(statistics.median(totals) * 1000, 3),
        "makespan_ms": round(makespan * 1000, 3),
        "start_skew_ms": round(max(skews) * 1000, 3),
        "sessions_per_s": round(devices / makespan, 1),
        "client_cpu_s": round(client_cpu, 3),
        "client_cpu_pct": round(100 * client_cpu / makespan, 1),
        "emulator_cpu_s": round(per_round("emulator_cpu_s"), 3),
        "link_cpu_s": round(per_round("link_cpu_s"), 3),
        "paced_s": round(per_round("paced_s"), 3),
        "coordinator_cpu_s": round(per_round("coordinator_cpu_s"), 3),
        "checked": sum(r["checked"] for reports in rounds for r in reports),
        "shard_results": [_shard(p, [r for reports in rounds for r in reports
                                     if r["shard"] == p["shard"]], rounds) for p in prepared],
    }


def _shard(prepared: dict[str, Any], mine: list[dict[str, Any]],
           rounds: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """One shard's part: where it ran, what it drove, and per round its start offset from the
    first shard's, its wall time, CPU and memory."""
    offsets = []
    for reports in rounds:
        first = min(r["released"] + r["clock_offset_s"] for r in reports)
        offsets += [round((r["released"] + r["clock_offset_s"] - first) * 1000, 3)
                    for r in reports if r["shard"] == prepared["shard"]]
    return {
        "shard": prepared["shard"], "host": prepared["host"], "worker": prepared["worker"],
        "netns": prepared["netns"],
        "devices": prepared["devices"], "concurrency": prepared["concurrency"],
        "labs": prepared["labs"], "drove": prepared["drove"],
        "lab_up_s": prepared["lab_up_s"], "warm_up_s": prepared["warm_up_s"],
        "start_offset_ms": offsets,
        "wall_ms": [round(r["wall"] * 1000, 3) for r in mine],
        "waves": mine[0]["waves"] if mine else 0,
        "checked": [r["checked"] for r in mine],
        "client_cpu_s": [round(r["cpu_s"], 3) for r in mine],
        "client_peak_rss_mib": round(max(r["peak_rss"] for r in mine) / 2**20, 1) if mine else None,
        "emulator_cpu_s": [round(r["emulator_cpu_s"], 3) for r in mine],
        "emulator_rss_mib": round(mine[-1]["emulator_rss"] / 2**20, 1) if mine else None,
        "link_cpu_s": [round(r["link_cpu_s"], 3) for r in mine],
    }
