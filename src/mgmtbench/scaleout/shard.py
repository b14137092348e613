"""What runs on a Dask worker: one shard of a distributed fleet.

A shard is prepared once (:func:`prepare`: its labs brought up from the worker's own namespace,
or its share of an inventory taken; today's fleet runner started in a worker process of its own;
one untimed warm-up wave, checked), then runs rounds (:func:`run_round`), each held at the run's
common barrier: the shard says it is armed (a Dask ``Queue``) and waits on the round's Dask
``Event``, which the driver sets once every shard is armed. A round runs the shard's devices in
waves of its concurrency, each session's two outputs checked against what its own device must
answer. :func:`finish` stops the worker process and takes the labs down.

The three are Dask tasks pinned to the shard's worker; what lives between them (labs, the
fleet worker) stays in the worker process, in :data:`_SHARDS`.
"""

from __future__ import annotations

import math
import os
import resource
import socket
import time
from dataclasses import dataclass, field
from typing import Any

from mgmtbench.clients.fleet.worker import FleetWorker
from mgmtbench.lab.usage import usage
from mgmtbench.targets import Login, Target
from mgmtbench.targets.safety import Pacer
from mgmtbench.testing.credentials import credentials

#: Devices per lab a shard brings up (a lab holds up to 1,022: a /22 of 198.18.0.0/16).
LAB_DEVICES = 1000
#: How long a shard waits for the round's barrier before giving up (the driver died).
BARRIER_TIMEOUT = float(os.environ.get("MGMTBENCH_DASK_BARRIER_TIMEOUT", "600"))
ABORT_CHECK = 1.0  # how often a shard at the barrier looks whether the run was abandoned


@dataclass(frozen=True)
class ShardSpec:
    """One shard's share of a run: what it drives and how (pickled to its worker).

    Lab mode: ``devices`` devices of ``profile`` on labs of its own. Inventory mode: ``targets``
    (its share of the inventory's hosts), paced at ``rate`` new sessions per second (its share of
    ``--inventory-rate``) before each wave."""

    run: str
    number: int
    client: str
    command: str
    concurrency: int  # sessions at once on this shard: it runs its devices in waves of these
    login: Login
    platform: str = "cisco_ios"
    devices: int = 0
    profile: str | None = None
    backend: str = "auto"
    runtime: str = "netns"
    image: str | None = None
    emulator_processes: int = 1
    targets: tuple[Target, ...] = ()
    rate: float | None = None  # inventory: new sessions per second on this shard

    @property
    def key(self) -> str:
        """The shard's name in its worker's :data:`_SHARDS`."""
        return f"{self.run}/{self.number}"


@dataclass
class Shard:
    """A prepared shard in its worker process."""

    spec: ShardSpec
    labs: list[Any] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    worker: FleetWorker | None = None
    pacer: Pacer | None = None

    def waves(self) -> list[tuple[list[Target], list[str]]]:
        """The shard's devices and their expected digests, in waves of its concurrency."""
        size = self.spec.concurrency
        return [(self.targets[i:i + size], self.expected[i:i + size])
                for i in range(0, len(self.targets), size)]

    def run(self, wave: list[Target], expected: list[str]) -> dict[str, Any]:
        """One wave on the fleet worker, paced first (inventory)."""
        assert self.worker is not None
        if self.pacer is not None:
            self.pacer.wait(len(wave))
        return self.worker.run(wave, self.spec.command, expected)


_SHARDS: dict[str, Shard] = {}


def _lab_sizes(devices: int) -> list[int]:
    """``devices`` split into near-equal labs of at most :data:`LAB_DEVICES`."""
    count = max(1, math.ceil(devices / LAB_DEVICES))
    return [devices // count + (1 if i < devices % count else 0) for i in range(count)]


def prepare(spec: ShardSpec) -> dict[str, Any]:
    """Bring the shard up (labs, worker process, checked warm-up wave); what it drives."""
    from distributed import get_worker

    shard = Shard(spec)
    _SHARDS[spec.key] = shard
    start = time.perf_counter()
    try:
        if spec.targets:
            shard.targets = list(spec.targets)
            shard.pacer = Pacer(spec.rate) if spec.rate else None
        else:
            _bring_up_labs(shard)
        lab_up = time.perf_counter() - start
        shard.worker = FleetWorker(spec.client)
        start = time.perf_counter()
        _warm_up(shard)
        warm_up = time.perf_counter() - start
    except BaseException:
        finish(spec)
        raise
    return {"shard": spec.number, "host": socket.gethostname(), "pid": os.getpid(),
            "worker": get_worker().address,
            "netns": os.readlink("/proc/thread-self/ns/net"), "devices": len(shard.targets),
            "concurrency": spec.concurrency, "labs": [_lab_info(lab) for lab in shard.labs],
            "lab_up_s": round(lab_up, 2), "warm_up_s": round(warm_up, 2), "hello": shard.worker.hello,
            "drove": _drove(shard)}


def _bring_up_labs(shard: Shard) -> None:
    from mgmtbench.lab import open_lab
    from mgmtbench.targets import lab_targets
    from mgmtbench.testing.expectations import expected_digests

    spec = shard.spec
    assert spec.profile is not None
    for k, size in enumerate(_lab_sizes(spec.devices)):
        lab = open_lab(spec.profile, devices=size, platform=spec.platform,
                       hostname=f"S{spec.number + 1}L{k + 1}", credentials=credentials(),
                       backend=spec.backend, runtime=spec.runtime, image=spec.image,
                       emulator_processes=spec.emulator_processes)
        shard.labs.append(lab)
        shard.targets += lab_targets(lab, spec.login, platform=spec.platform)
        shard.expected += expected_digests(lab, spec.command, platform=spec.platform)


def _warm_up(shard: Shard) -> None:
    """One wave (imports, first connections), checked. An inventory's hosts all run once: their
    first answers are the reference of every round after (no oracle knows a real device)."""
    from mgmtbench.testing.sites import first_round_digests

    if shard.expected:
        wave, expected = shard.waves()[0]
        _raise_errors(shard.spec, [shard.run(wave, expected)])
        return
    shard.expected = ["?"] * len(shard.targets)
    reports = [shard.run(wave, expected) for wave, expected in shard.waves()]
    shard.expected = [d for report in reports for d in first_round_digests(report)]


def run_round(spec: ShardSpec, number: int) -> dict[str, Any]:
    """Round ``number``: armed, released at the barrier, every device in waves; the report."""
    from distributed import Event, Queue, get_worker

    shard = _SHARDS[spec.key]
    assert shard.worker is not None
    emulator_pids = [p for lab in shard.labs for p in lab.device_pids()]
    link_pids = [p for lab in shard.labs for p in (lab.process_pids() or [])
                 if p not in emulator_pids]
    Queue(f"{spec.run}-armed-{number}").put(spec.number)
    go, abort = Event(f"{spec.run}-go-{number}"), Event(f"{spec.run}-abort")
    waited = 0.0
    while not go.wait(ABORT_CHECK):
        waited += ABORT_CHECK
        if abort.is_set():
            raise RuntimeError(f"shard {spec.number}: the run was abandoned at the barrier")
        if waited >= BARRIER_TIMEOUT:
            raise TimeoutError(f"shard {spec.number}: no start in {BARRIER_TIMEOUT:.0f} s")
    released = time.time()  # as early after the barrier as can be: the start skew is measured
    self0 = resource.getrusage(resource.RUSAGE_SELF)
    emulator0, link0 = usage(emulator_pids), usage(link_pids)
    paced = shard.pacer.waited if shard.pacer else 0.0
    start = time.perf_counter()
    reports = [shard.run(wave, expected) for wave, expected in shard.waves()]
    wall = time.perf_counter() - start
    emulator, link = usage(emulator_pids) - emulator0, usage(link_pids) - link0
    self1 = resource.getrusage(resource.RUSAGE_SELF)
    sessions = [s for r in reports for s in r["sessions"]]
    return {
        "shard": spec.number, "round": number,
        # The worker's clock and its offset to the scheduler's (scheduler = worker + delay).
        "released": released, "clock_offset_s": get_worker().scheduler_delay,
        "wall": wall, "waves": len(reports), "sessions": sessions,
        "paced_s": (shard.pacer.waited if shard.pacer else 0.0) - paced,
        "errors": [s["error"] for s in sessions if s["error"]],
        "checked": sum(1 for s in sessions if s["error"] is None),
        "cpu_s": sum(r["cpu_user"] + r["cpu_system"] - r["cpu_sampler"] for r in reports),
        "peak_rss": max(r["peak_rss"] for r in reports),
        "emulator_cpu_s": emulator.cpu_s, "emulator_rss": usage(emulator_pids).rss_bytes,
        "link_cpu_s": link.cpu_s,
        "coordinator_cpu_s": (self1.ru_utime + self1.ru_stime) - (self0.ru_utime + self0.ru_stime),
    }


def finish(spec: ShardSpec) -> None:
    """Stop the shard's fleet worker and take its labs down (safe for a half-prepared one)."""
    shard = _SHARDS.pop(spec.key, None)
    if shard is None:
        return
    try:
        if shard.worker is not None:
            shard.worker.close()
    finally:
        for lab in reversed(shard.labs):
            lab.down()


def _raise_errors(spec: ShardSpec, reports: list[dict[str, Any]]) -> None:
    errors = [s["error"] for r in reports for s in r["sessions"] if s["error"]]
    if errors:
        raise AssertionError(f"shard {spec.number}: {len(errors)} sessions failed in the warm-up;"
                             f" first: {errors[0]}")


def _lab_info(lab: Any) -> dict[str, Any]:
    facts = lab.facts()
    devices = list(lab.devices)
    return {"lab": lab.state.lab_id if getattr(lab, "state", None) else None,
            "subnet": getattr(lab, "subnet", None), "backend": facts.backend,
            "profile": facts.profile, "measured_rtt_ms": facts.measured_rtt_ms,
            "devices": len(devices), "first": f"{devices[0].hostname} {devices[0].address}",
            "last": f"{devices[-1].hostname} {devices[-1].address}"}


def _drove(shard: Shard) -> list[str]:
    """The inventory hosts the shard drives (a lab's devices are its range in ``labs``)."""
    return [] if shard.labs else [f"{t.host}:{t.ssh_port}" for t in shard.targets]
