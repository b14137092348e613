"""The lab's processes: started marked and recorded, known by more than a pid, stopped for sure.

Every process a lab starts (the delay line, the echo server, the emulator or sshd processes)
goes through :func:`spawn`, which

- marks it as the lab's in its environment (``MGMTBENCH_LAB=<the lab's state folder>``; what it
  starts inherits the mark), so clean-up finds it wherever it runs, even in a namespace already
  deleted (a clean-up only judges marks under its own state root);
- records it in the lab's state (:class:`~mgmtbench.lab.state.ProcessRecord`: name, pid and
  start time, its log) before anything waits on it, with SIGINT and SIGTERM held meanwhile
  (:mod:`.interrupts`), so no start is interrupted between the process existing and the record
  of it.

A process the lab starts and stops while it is up (the wire tap, :mod:`.wiretap`: one per
benchmark window) is stopped on purpose (:func:`retire`) and, once reaped, leaves the state again
(:func:`release`).

A record is signalled only while a process with its pid *and* start time exists (checked through
a pidfd, so the pid cannot change hands between the check and the signal:
:meth:`~mgmtbench.lab.state.ProcessRecord.signal`): a pid whose process
has ended and been reused belongs to someone else now. :func:`stop_marked` stops what carries a
lab's mark; :func:`death` says how a recorded process ended, for the lab's watchdog.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mgmtbench.lab import interrupts, procfs
from mgmtbench.lab.state import STATE_ROOT, LabState, ProcessRecord

MARKER = "MGMTBENCH_LAB"
_LABS: dict[str, LabState] = {}  # labs of this process that are starting or up, by id
_POPENS: dict[tuple[str, int], subprocess.Popen[Any]] = {}  # their processes, for exit statuses
_RETIRED: set[tuple[str, int]] = set()  # their processes stopped on purpose


# --- starting ---------------------------------------------------------------------------------


def register(state: LabState) -> None:
    """A lab of this process is starting: :func:`spawn` records its processes in ``state``."""
    _LABS[state.lab_id] = state


def forget(lab_id: str) -> None:
    """The lab is down: drop its state and its processes' handles."""
    _LABS.pop(lab_id, None)
    for key in [k for k in _POPENS if k[0] == lab_id]:
        del _POPENS[key]
    _RETIRED.difference_update({k for k in _RETIRED if k[0] == lab_id})


def retire(pid: int) -> None:
    """Process ``pid`` of a lab of this process is being stopped on purpose: its end is no
    death for :func:`death` to report."""
    for lab_id, state in _LABS.items():
        if pid in state.pids:
            _RETIRED.add((lab_id, pid))


def release(lab_id: str, pid: int) -> None:
    """Process ``pid`` of lab ``lab_id`` (of this process) was stopped on purpose and reaped:
    its record leaves the lab's state, so a process started and stopped many times while the
    lab is up (a wire tap, once per benchmark) leaves no trail of records behind."""
    _POPENS.pop((lab_id, pid), None)
    _RETIRED.discard((lab_id, pid))
    state = _LABS.get(lab_id)
    if state is not None and pid in state.pids:
        with interrupts.held():
            state.processes[:] = [p for p in state.processes if p.pid != pid]
            state.save()


def mark(lab_id: str) -> str:
    """The mark of lab ``lab_id``'s processes: its state folder."""
    return str(STATE_ROOT / lab_id)


def environment(lab_id: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment, with ``extra`` and the mark of lab ``lab_id``."""
    return {**os.environ, **(extra or {}), MARKER: mark(lab_id)}


def spawn(lab_id: str, name: str, argv: list[str], *, log: Path | None = None,
          env: dict[str, str] | None = None, **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **popen)``, marked as lab ``lab_id``'s and recorded in its state
    (if it is a lab of this process) as ``name`` before this returns; SIGINT and SIGTERM wait
    meanwhile. ``env``: variables to add; ``log``: the file that says why it failed."""
    with interrupts.held():
        process = subprocess.Popen(argv, env=environment(lab_id, env), **popen)
        state = _LABS.get(lab_id)
        if state is not None:
            _POPENS[lab_id, process.pid] = process
            try:
                state.record(ProcessRecord.of(name, process.pid, log))
            except BaseException:
                process.kill()
                process.wait()
                raise
    return process


# --- stopping ---------------------------------------------------------------------------------


def stop(records: Iterable[ProcessRecord], lab_id: str | None = None, grace: float = 2.0,
         ) -> list[ProcessRecord]:
    """SIGTERM to each record that still runs (its process group with it), SIGKILL after
    ``grace`` seconds to what is left; reap those that are this process's children. Returns the
    records that were running."""
    running = [r for r in records if r.running()]
    for record in running:
        record.signal(signal.SIGTERM, group=True)
    deadline = time.monotonic() + grace
    while any(r.running() for r in running) and time.monotonic() < deadline:
        _reap(lab_id, running)
        time.sleep(0.02)
    for record in running:
        record.signal(signal.SIGKILL, group=True)
    _wait_gone(running)
    _reap(lab_id, running)
    return running


def _wait_gone(records: list[ProcessRecord], timeout: float = 2.0) -> None:
    """Wait (briefly: SIGKILL is not refused) until none of ``records`` runs."""
    deadline = time.monotonic() + timeout
    while any(r.running() for r in records) and time.monotonic() < deadline:
        time.sleep(0.01)


def _reap(lab_id: str | None, records: Iterable[ProcessRecord]) -> None:
    if lab_id is None:
        return
    for record in records:
        process = _POPENS.get((lab_id, record.pid))
        if process is not None:
            process.poll()


def _pid_namespace(pid: int | str) -> str | None:
    try:
        return os.readlink(f"{procfs.PROC}/{pid}/ns/pid")
    except OSError:
        return None


def marked(belongs: Callable[[str], bool]) -> list[ProcessRecord]:
    """Running processes whose mark names a lab (of this state root) for which
    ``belongs(lab_id)`` is true (never this process or one of its ancestors, never a process
    of another pid namespace: a container's own labs, such as the bench runner image's, carry
    the same marks under the same paths, and are its own to stop)."""
    spared = _ancestry()
    ours = _pid_namespace("self")
    prefix = f"{MARKER}=".encode()
    root = Path(mark("x")).parent
    found = []
    for entry in procfs.PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        pid = int(entry.name)
        if ours is not None and _pid_namespace(pid) not in (ours, None):
            continue
        try:
            found_mark = next((e[len(prefix):] for e in procfs.environment(pid)
                               if e.startswith(prefix)), None)
            if found_mark is None:
                continue
            folder = Path(found_mark.decode(errors="replace"))
            if folder.parent != root or not belongs(folder.name):
                continue
            record = ProcessRecord(_command(pid), pid, procfs.start_time(pid))
        except (OSError, ValueError):  # gone meanwhile
            continue
        if record.running():
            found.append(record)
    return found


def stop_marked(belongs: Callable[[str], bool]) -> list[ProcessRecord]:
    """SIGKILL every running process marked as a lab's for which ``belongs(lab_id)`` holds;
    return them. Used after the lab's own stop: what is left has no business running."""
    found = marked(belongs)
    for record in found:
        record.signal(signal.SIGKILL)
    _wait_gone(found)
    return found


def _ancestry() -> set[int]:
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            pid = int(procfs.stat_fields(pid)[1])
        except (OSError, ValueError):
            break
    return pids


def _command(pid: int) -> str:
    """A short name for a process: ``mgmtbench.lab.echo``, ``sshd``, ``cli serve``."""
    try:
        argv = [a.decode(errors="replace") for a in
                (procfs.PROC / str(pid) / "cmdline").read_bytes().split(b"\0") if a]
    except OSError:
        return "?"
    if "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1]
        rest = argv[argv.index("-m") + 2:]
        if module == "mgmtbench.lab.nsexec" and len(rest) > 1:  # nsexec NS PROGRAM ...
            return " ".join(Path(a).name for a in rest[1:4])
        return " ".join([module, *rest[:1]])
    return Path(argv[0]).name if argv else "?"


# --- dying ------------------------------------------------------------------------------------


def death(lab_id: str, record: ProcessRecord) -> str | None:
    """How a recorded process ended (``was killed by SIGKILL``, ``exited with status 1``, with
    the last line of its log), None while it runs or once it was stopped on purpose."""
    if (lab_id, record.pid) in _RETIRED:
        return None
    process = _POPENS.get((lab_id, record.pid))
    if process is not None:
        code = process.poll()
        if code is None:
            return None
    elif record.running():
        return None
    else:
        code = _zombie_status(record)
    if code is None:
        how = "is gone"
    elif code < 0:
        how = f"was killed by {_signal_name(-code)}"
    else:
        how = f"exited with status {code}"
    tail = last_line(Path(record.log)) if record.log else ""
    return f"{record.describe()} {how}" + (f" (its log ends: {tail})" if tail else "")


def _zombie_status(record: ProcessRecord) -> int | None:
    """The exit status of a child of this process that has ended but is not reaped (left
    waitable), None if it cannot be told."""
    if record.state() != "Z":
        return None
    try:
        info = os.waitid(os.P_PID, record.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return None
    if info is None:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


def _signal_name(signum: int) -> str:
    with contextlib.suppress(ValueError):
        return signal.Signals(signum).name
    return f"signal {signum}"


def last_line(path: Path) -> str:
    """The last non-empty line of a log file (empty if there is none)."""
    with contextlib.suppress(OSError):
        lines = path.read_text(errors="replace").strip().splitlines()
        return " ".join(lines[-1].split())[:200] if lines else ""
    return ""
