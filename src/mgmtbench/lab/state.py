"""What a running lab owns, written down so a later run can clean up after a SIGKILL.

Each lab has ``/run/mgmtbench/labs/<lab id>/state.json``: the owner's pid, its namespace, its host
interface, the pids of the processes it started and the names of the device containers it ran. A
lab whose owner is gone is stale: the next lab (or ``mgmtbench lab down``) kills its processes,
removes its containers, deletes its interface and namespace, and forgets it.
Only namespaces named ``mgmtbench-*``, interfaces recorded here and containers labelled
``mgmtbench.lab`` are ever touched.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
import signal
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyroute2 import IPRoute, netns

from mgmtbench.lab.netns import PREFIX, lab_namespaces

log = logging.getLogger("mgmtbench.lab")
STATE_ROOT = Path(os.environ.get("MGMTBENCH_LAB_STATE", "/run/mgmtbench/labs"))


@dataclass
class LabState:
    lab_id: str
    index: int
    owner_pid: int
    netns: str
    host_if: str
    pids: list[int] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)  # device containers (docker runtime)

    @property
    def folder(self) -> Path:
        return STATE_ROOT / self.lab_id

    def save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.folder / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self)))
        tmp.replace(self.folder / "state.json")

    @classmethod
    def load(cls, folder: Path) -> LabState | None:
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def known_labs() -> list[LabState]:
    if not STATE_ROOT.is_dir():
        return []
    states = [LabState.load(f) for f in STATE_ROOT.iterdir() if f.is_dir()]
    return [s for s in states if s is not None]


def used_indexes() -> set[int]:
    return {s.index for s in known_labs() if _alive(s.owner_pid)}


def destroy(state: LabState) -> None:
    """Remove everything ``state`` records (processes, containers, interface, namespace, state
    folder)."""
    for pid in state.pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL) if _is_group_leader(pid) else os.kill(
                    pid, signal.SIGKILL)
    if state.containers:
        from mgmtbench.lab.runtimes.docker import remove_containers  # docker only when used

        remove_containers(state.containers)
    with IPRoute() as ipr:
        found = ipr.link_lookup(ifname=state.host_if)
        if found:
            with contextlib.suppress(Exception):
                ipr.link("del", index=found[0])
    if state.netns in netns.listnetns():
        netns.remove(state.netns)
    shutil.rmtree(state.folder, ignore_errors=True)


def _is_group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def clean_stale(everything: bool = False) -> list[str]:
    """Destroy labs whose owner is gone (all labs with ``everything``); return their ids."""
    removed = []
    recorded = set()
    for state in known_labs():
        recorded.add(state.netns)
        if everything or not _alive(state.owner_pid):
            destroy(state)
            removed.append(state.lab_id)
    for name in lab_namespaces():  # ours by name, but no state: its owner died while starting
        if name not in recorded and name.startswith(PREFIX) and (everything or _orphan(name)):
            netns.remove(name)
            removed.append(name.removeprefix(PREFIX))
    from mgmtbench.lab.runtimes.docker import sweep  # containers whose lab died while starting

    live = {s.lab_id for s in known_labs()}
    removed += [f"container {name}" for name in sweep(live, everything)]
    if removed:
        log.warning("removed %d stale lab(s): %s", len(removed), ", ".join(removed))
    return removed


def _orphan(name: str) -> bool:
    """A namespace of ours with no state file, and no process of a live lab inside it."""
    lab_id = name.removeprefix(PREFIX)
    owner = lab_id.split("-")[0]
    return not (owner.isdigit() and _alive(int(owner)))
