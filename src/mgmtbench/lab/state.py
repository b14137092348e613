"""What a running lab owns, written down so a later run can clean up after a SIGKILL.

Each lab has ``/run/mgmtbench/labs/<lab id>/state.json``: the owner's pid, its namespace, its host
interface, the pids of the processes it started and the names of the device containers it ran. A
lab whose owner is gone is stale: :mod:`mgmtbench.lab.cleanup` removes what it recorded.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

STATE_ROOT = Path(os.environ.get("MGMTBENCH_LAB_STATE", "/run/mgmtbench/labs"))


@dataclass
class LabState:
    """One lab's crash record (``state.json``)."""
    lab_id: str
    index: int
    owner_pid: int
    netns: str
    host_if: str
    pids: list[int] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)  # device containers (docker runtime)

    @property
    def folder(self) -> Path:
        """The lab's state folder (its outputs too, unless the lab was given one)."""
        return STATE_ROOT / self.lab_id

    def save(self) -> None:
        """Write ``state.json`` atomically."""
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self.folder / "state.json")

    @classmethod
    def load(cls, folder: Path) -> LabState | None:
        """The state in ``folder``, None if it is missing or unreadable."""
        try:
            return cls(**json.loads((folder / "state.json").read_text()))
        except (OSError, ValueError, TypeError):
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


def known_labs() -> list[LabState]:
    """Every lab with a state, its owner alive or not."""
    if not STATE_ROOT.is_dir():
        return []
    states = [LabState.load(f) for f in STATE_ROOT.iterdir() if f.is_dir()]
    return [s for s in states if s is not None]


def used_indexes() -> set[int]:
    """The indexes of labs whose owner is alive."""
    return {s.index for s in known_labs() if alive(s.owner_pid)}
