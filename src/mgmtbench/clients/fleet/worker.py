"""Fleet runs in a process of their own, so that CPU time and peak memory are the client's.

``python -m mgmtbench.clients.fleet.worker CLIENT`` imports the runner, says ``ready`` and then
answers one JSON line per JSON job line on stdin (the protocol has its own descriptor: whatever
a library prints goes to stderr). :class:`FleetWorker` is the parent's handle.

Per job the worker reports the fleet's wall time, each session's phases and errors (a session
whose output's digest differs from the expected one is an error), the CPU time (user + system)
of this process and of every process it started — it is a child subreaper, so backgrounded
``ssh`` ControlMasters are its children too and are reaped after each job — and the peak resident
memory of the process tree during the job (this process's high-water mark, reset per job, and
for runners that start processes, sampled sums over the tree every 100 ms; the sampler's own CPU
time is subtracted).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from mgmtbench.clients.fleet import fleet_runner
from mgmtbench.clients.fleet.base import FleetRunner, set_platform
from mgmtbench.errors import FleetWorkerError, MgmtbenchError
from mgmtbench.targets import Auth, SshAlgorithms, Target

PR_SET_CHILD_SUBREAPER = 36
PAGE = os.sysconf("SC_PAGE_SIZE")


# --- the parent's side ------------------------------------------------------------------------

class FleetWorker:
    """A worker process for one client, kept for many jobs (its start-up is not timed)."""

    def __init__(self, client: str, *, timeout: float = 600) -> None:
        self.client = client
        self.timeout = timeout
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mgmtbench.clients.fleet.worker", client],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.hello = self._read()
        if "error" in self.hello:
            self.close()
            raise FleetWorkerError(self.hello["error"])

    def run(self, targets: list[Target], command: str, expected: list[str]) -> dict[str, Any]:
        """One fleet run: ``targets`` all at once, outputs checked against ``expected``
        (sha256 per target). Returns the worker's report."""
        job = {"targets": [_target_dict(t) for t in targets], "command": command,
               "expected": expected}
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        report = self._read()
        if "error" in report:
            raise FleetWorkerError(report["error"])
        return report

    def close(self) -> None:
        """End the worker (EOF on its stdin) and release the pipes; safe to call twice."""
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):  # a dead worker's broken pipe
                    pipe.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait(timeout=30)
            raise FleetWorkerError(f"the {self.client} fleet worker exited ({code}): see its stderr")
        found: dict[str, Any] = json.loads(line)
        return found

    def __enter__(self) -> FleetWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_PATHS = ("ca_file", "known_hosts", "key_file", "agent_socket")


def _target_dict(target: Target) -> dict[str, Any]:
    """``target`` as JSON values: paths as strings, ``auth`` as its value, algorithm tuples as
    lists (:func:`_target` reverses it)."""
    out: dict[str, Any] = {}
    for key, value in asdict(target).items():
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, Auth):
            value = value.value
        elif key == "algorithms":
            value = {name: list(names) for name, names in value.items()}
        out[key] = value
    return out


def _target(spec: dict[str, Any]) -> Target:
    fields: dict[str, Any] = {k: (Path(v) if k in _PATHS and v is not None else v)
                              for k, v in spec.items()}
    if "auth" in fields:
        fields["auth"] = Auth(fields["auth"])
    if "algorithms" in fields:
        fields["algorithms"] = SshAlgorithms(
            **{name: tuple(names) for name, names in fields["algorithms"].items()})
    return Target(**fields)


# --- the worker's side ------------------------------------------------------------------------

class TreeSampler:
    """Peak resident memory of this process and its descendants, sampled every ``interval``."""

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self.peak = 0
        self.cpu = 0.0  # the sampler thread's own CPU time
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self.peak = max(self.peak, tree_rss(os.getpid()))
            if self._stop.wait(self.interval):
                break
        self.cpu = time.thread_time()


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (0 for a process that is gone)."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * PAGE
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
    return total


def _high_water_mark() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _reap() -> None:
    """Collect exited orphans (we are their subreaper) so their CPU time is counted."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + kids.ru_utime, me.ru_stime + kids.ru_stime


def run_job(runner: FleetRunner, job: dict[str, Any]) -> dict[str, Any]:
    """One fleet run in the worker: the runner's sessions, checked outputs, CPU and memory."""
    targets = [_target(t) for t in job["targets"]]
    expected: list[str] = job["expected"]
    set_platform(targets[0].platform if targets else None)  # digests of the stable form
    with contextlib.suppress(OSError):  # reset the high-water mark (Linux >= 4.0)
        Path("/proc/self/clear_refs").write_text("5")
    user0, sys0 = _cpu()
    sampler = TreeSampler() if runner.spawns else contextlib.nullcontext()
    with sampler:
        start = time.perf_counter()
        sessions = runner.run(targets, job["command"])
        wall = time.perf_counter() - start
    _reap()
    user1, sys1 = _cpu()
    sampled = sampler if isinstance(sampler, TreeSampler) else None
    for times, want in zip(sessions, expected, strict=True):
        if times.error is None and any(d != want for d in times.digests):
            times.error = "wrong output"
        if times.error is None and len(times.digests) != 2:
            times.error = f"{len(times.digests)} outputs instead of 2"
    return {
        "wall": wall, "sessions": [t.as_dict() for t in sessions],
        "cpu_user": user1 - user0, "cpu_system": sys1 - sys0,
        "cpu_sampler": sampled.cpu if sampled else 0.0,
        "peak_rss": max(_high_water_mark(), sampled.peak if sampled else 0),
    }


def main() -> None:
    """The worker process: load the runner, say ready, answer one JSON line per job."""
    proto: IO[str] = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)

    def say(message: dict[str, Any]) -> None:
        proto.write(json.dumps(message) + "\n")

    try:
        cls = fleet_runner(sys.argv[1])
        hint = cls.missing()
        if hint:
            say({"error": hint})
            return
        runner = cls()
    except (MgmtbenchError, IndexError) as exc:
        say({"error": str(exc) or "usage: python -m mgmtbench.clients.fleet.worker CLIENT"})
        return
    say({"ready": True, "versions": cls.versions(), "how": cls.how, "merged": cls.merged,
         "rss": _high_water_mark()})
    try:
        for line in sys.stdin:
            try:
                say(run_job(runner, json.loads(line)))
            except Exception as exc:  # reported to the parent, which raises
                say({"error": f"{cls.name} fleet run failed: {type(exc).__name__}: {exc}"})
    finally:
        runner.close()


if __name__ == "__main__":
    main()
