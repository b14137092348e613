"""What an interrupted ``mgmtbench lab up`` leaves behind: the figures for the lab's clean-up.

::

    python tools/lab_interrupts.py                       # 20 tries, SIGINT at 0.2 .. 3 s
    python tools/lab_interrupts.py --signal TERM --tries 10 --src /tmp/before-lab/src

Each try starts ``python -m mgmtbench.cli lab up --profile campus --samples 3`` (with ``--src``:
that source tree on PYTHONPATH, e.g. an older version's), sends the signal after a delay spread
evenly over ``--first`` .. ``--last`` seconds, waits for the command to exit, and then counts
what that command left behind: its processes (every process whose environment carries this
try's marker, which the command and everything it starts inherit), namespaces and state folders
named after its pid, and new ``mgb*`` interfaces that no running lab records. Then it runs
``lab down`` and counts again. Needs root; touches nothing but what the tries made (``lab down``
also removes other labs whose owner is gone, as it always does).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

NETNS_DIR = Path("/var/run/netns")
STATE_ROOT = Path(os.environ.get("MGMTBENCH_LAB_STATE", "/run/mgmtbench/labs"))
MARKER = "MGMTBENCH_INTERRUPT_TRY"


@dataclass
class Leftovers:
    """What one interrupted command left behind."""

    processes: list[str]
    namespaces: list[str]
    interfaces: list[str]
    states: list[str]

    def total(self) -> int:
        return sum(map(len, (self.processes, self.namespaces, self.interfaces, self.states)))

    def describe(self) -> str:
        parts = [f"{len(v)} {k}: {' '.join(v)}" for k, v in vars(self).items() if v]
        return "; ".join(parts) or "nothing"


def marked_processes(token: str) -> list[str]:
    """Live (not zombie) processes whose environment carries ``MARKER=token``."""
    needle = f"{MARKER}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            stat = (entry / "stat").read_text()
            if stat.rpartition(")")[2].split()[0] == "Z":
                continue
            argv = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        found.append(f"{entry.name}({' '.join(argv.split()[:4])[:60]})")
    return found


def interfaces() -> set[str]:
    """Interface names of this namespace."""
    return {p.name for p in Path("/sys/class/net").iterdir()}


def recorded_interfaces() -> set[str]:
    """Host interfaces that some lab's state records (other users' running labs)."""
    names = set()
    if STATE_ROOT.is_dir():
        for state in STATE_ROOT.glob("*/state.json"):
            try:
                names.add(json.loads(state.read_text())["host_if"])
            except (OSError, ValueError, KeyError):
                continue
    return names


def leftovers(token: str, pid: int, before: set[str]) -> Leftovers:
    prefix = f"{pid}-"
    namespaces = sorted(p.name for p in NETNS_DIR.glob(f"mgmtbench-{prefix}*")) \
        if NETNS_DIR.is_dir() else []
    states = sorted(p.name for p in STATE_ROOT.glob(f"{prefix}*")) if STATE_ROOT.is_dir() else []
    new = {n for n in interfaces() - before if n.startswith("mgb")} - recorded_interfaces()
    return Leftovers(marked_processes(token), namespaces, sorted(new), states)


def one_try(delay: float, sig: signal.Signals, env: dict[str, str]) -> tuple[Leftovers, Leftovers,
                                                                              int | None]:
    token = uuid.uuid4().hex[:12]
    before = interfaces()
    command = [sys.executable, "-m", "mgmtbench.cli", "lab", "up", "--profile", "campus",
               "--samples", "3"]
    child = subprocess.Popen(command, env={**env, MARKER: token}, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(delay)
    child.send_signal(sig)
    try:
        _, err = child.communicate(timeout=60)
        code: int | None = child.returncode
    except subprocess.TimeoutExpired:
        child.kill()
        _, err = child.communicate()
        code = None
    time.sleep(1)  # what the kernel finishes on its own (a namespace's interfaces)
    after = leftovers(token, child.pid, before)
    subprocess.run([sys.executable, "-m", "mgmtbench.cli", "lab", "down"], env=env,
                   capture_output=True, timeout=120)
    time.sleep(1)
    after_down = leftovers(token, child.pid, before)
    if b"Traceback" in err:
        print("    traceback:", err.decode(errors="replace").strip().splitlines()[-1])
    return after, after_down, code


def main() -> None:
    """Run the tries and print one line each, then the totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=20)
    parser.add_argument("--first", type=float, default=0.2, help="first delay, s (default 0.2)")
    parser.add_argument("--last", type=float, default=3.0, help="last delay, s (default 3.0)")
    parser.add_argument("--signal", default="INT", choices=["INT", "TERM"])
    parser.add_argument("--src", type=Path, default=None,
                        help="a source tree to run instead of the installed mgmtbench")
    args = parser.parse_args()
    sig = signal.Signals[f"SIG{args.signal}"]
    env = dict(os.environ)
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    dirty = dirty_after_down = 0
    totals = {"processes": 0, "namespaces": 0, "interfaces": 0, "states": 0}
    for i in range(args.tries):
        delay = args.first + (args.last - args.first) * i / max(1, args.tries - 1)
        after, after_down, code = one_try(delay, sig, env)
        dirty += bool(after.total())
        dirty_after_down += bool(after_down.total())
        for key in totals:
            totals[key] += len(getattr(after, key))
        print(f"SIG{args.signal} at {delay:.2f} s: exit {code}; left {after.describe()}; after "
              f"lab down: {after_down.describe()}", flush=True)
    print(f"tries with leftovers: {dirty}/{args.tries} after the command exited "
          f"({', '.join(f'{v} {k}' for k, v in totals.items())}); "
          f"{dirty_after_down}/{args.tries} after `lab down`")


if __name__ == "__main__":
    main()
