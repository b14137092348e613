"""What a running lab owns, written down so a later run can clean up after a SIGKILL.

Each lab has ``/run/mgmtbench/labs/<lab id>/state.json``: the owner's pid and start time, its
namespace, its host interface (name, index and the namespace it is in), the processes it started
(:class:`ProcessRecord`: name, pid, start time, log; each recorded as it starts, by
:mod:`mgmtbench.lab.processes`, which builds on this module) and the names of the device
containers it ran. A lab whose owner no longer runs (gone, a zombie, or its pid now another
process's) is stale: :mod:`mgmtbench.lab.cleanup` removes what it recorded.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mgmtbench.lab import procfs

STATE_ROOT = Path(os.environ.get("MGMTBENCH_LAB_STATE", "/run/mgmtbench/labs"))


@dataclass(frozen=True)
class ProcessRecord:
    """A process a lab started: its name (``delay line``, ``echo``, ``emulator``), pid, start
    time (clock ticks since boot; None in states written before start times were recorded: such
    a record is never signalled) and log file."""

    name: str
    pid: int
    start: int | None
    log: str | None = None

    @classmethod
    def of(cls, name: str, pid: int, log: Path | None = None) -> ProcessRecord:
        """The record of ``pid`` as it is now (raises ``OSError`` if it is gone and reaped)."""
        return cls(name, pid, procfs.start_time(pid), str(log) if log is not None else None)

    def state(self) -> str | None:
        """Its ``/proc`` state letter (``S``, ``R``, ``Z`` ...) if this very process still
        exists, None if it is gone (or its pid now belongs to another process)."""
        if self.start is None:
            return None
        try:
            fields = procfs.stat_fields(self.pid)
        except (OSError, ValueError):
            return None
        return fields[0] if int(fields[19]) == self.start else None

    def running(self) -> bool:
        """Whether this process still runs (a zombie does not)."""
        return self.state() not in (None, "Z", "X")

    def signal(self, signum: int, group: bool = False) -> bool:
        """Send ``signum`` to this process (its process group too with ``group``, when it leads
        one) if it still runs; whether it was sent."""
        try:
            fd = os.pidfd_open(self.pid)
        except OSError:  # gone (ESRCH), or no pidfds here (ENOSYS): nothing we may signal
            return False
        try:
            # The pidfd holds whichever process had the pid when it was opened: if that is this
            # one (same start time, read after the open), signals through it cannot reach another.
            if not self.running():
                return False
            if group and _leads_group(self.pid):
                # While its leader lives, no other process can have this pid as a group id.
                os.killpg(self.pid, signum)
            else:
                signal.pidfd_send_signal(fd, signum)
            return True
        except ProcessLookupError:
            return False
        finally:
            os.close(fd)

    def describe(self) -> str:
        """``echo (pid 1234)``."""
        return f"{self.name} (pid {self.pid})"


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


@dataclass
class LabState:
    """One lab's crash record (``state.json``)."""
    lab_id: str
    index: int
    owner_pid: int
    netns: str
    host_if: str
    processes: list[ProcessRecord] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)  # device containers (docker runtime)
    owner_start: int | None = None  # the owner's start time (/proc/PID/stat field 22)
    # Once the lab made it: the host interface's index, and the namespace it is in ("dev:inode"
    # of /proc/thread-self/ns/net): clean-up deletes that interface, never another of its name.
    host_ifindex: int | None = None
    host_netns: str | None = None

    @property
    def pids(self) -> list[int]:
        """The pids of the processes the lab started."""
        return [p.pid for p in self.processes]

    def record(self, process: ProcessRecord) -> None:
        """Add a process the lab started, and save."""
        self.processes.append(process)
        self.save()

    def owner_running(self) -> bool:
        """Whether the lab's owner still runs: the same process (pid and start time), not a
        zombie."""
        owner = ProcessRecord("owner", self.owner_pid, self.owner_start)
        if self.owner_start is None:  # a state from before start times: the pid, not a zombie
            return runs(self.owner_pid)
        return owner.running()

    @property
    def folder(self) -> Path:
        """The lab's state folder (its outputs too, unless the lab was given one)."""
        return STATE_ROOT / self.lab_id

    def save(self) -> None:
        """Write ``state.json`` atomically."""
        # 0711: other users may pass through (the sshd runtime's unprivileged lab user reaches its
        # scripts below it) but not list it; the files that show credentials are 0600 themselves.
        self.folder.mkdir(mode=0o711, parents=True, exist_ok=True)
        tmp = self.folder / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self.folder / "state.json")

    @classmethod
    def load(cls, folder: Path) -> LabState | None:
        """The state in ``folder``, None if it is missing or unreadable."""
        try:
            data: dict[str, Any] = json.loads((folder / "state.json").read_text())
            legacy = data.pop("pids", None)  # bare pids: never signalled (no start time)
            data["processes"] = [ProcessRecord(**p) for p in data.get("processes", [])] + [
                ProcessRecord("process", int(pid), None) for pid in legacy or []]
            return cls(**data)
        except (OSError, ValueError, TypeError, AttributeError):
            return None


@contextlib.contextmanager
def registry_lock() -> Iterator[None]:
    """Serialise lab registration across processes (an flock on the state folder)."""
    STATE_ROOT.mkdir(parents=True, exist_ok=True)
    with (STATE_ROOT / ".lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a zombie counts until it is reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def runs(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (whoever it is now)."""
    if not alive(pid):
        return False
    try:
        return procfs.stat_fields(pid)[0] != "Z"
    except (OSError, ValueError):
        return False


def known_labs() -> list[LabState]:
    """Every lab with a state, its owner alive or not."""
    if not STATE_ROOT.is_dir():
        return []
    states = [LabState.load(f) for f in STATE_ROOT.iterdir() if f.is_dir()]
    return [s for s in states if s is not None]


def used_indexes() -> set[int]:
    """The indexes of labs whose owner runs."""
    return {s.index for s in known_labs() if s.owner_running()}
