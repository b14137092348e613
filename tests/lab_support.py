"""Helpers for the lab's clean-up tests: what a lab (or a command that made one) left behind."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from pyroute2 import IPRoute

from mgmtbench.lab.netns import lab_namespaces
from mgmtbench.lab.state import STATE_ROOT

#: An environment variable a test gives a command it starts: the command and every process
#: it starts inherit it, so the test finds them whatever the lab records.
TRY_MARKER = "MGMTBENCH_TEST_TRY"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead for our purposes)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def link_exists(name: str) -> bool:
    with IPRoute() as ipr:
        return bool(ipr.link_lookup(ifname=name))


def with_marker(token: str) -> dict[str, str]:
    """This environment plus the try marker ``token``."""
    return {**os.environ, TRY_MARKER: token}


def marked(token: str) -> list[int]:
    """Running processes whose environment carries the try marker ``token``."""
    needle = f"{TRY_MARKER}={token}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return [p for p in found if alive(p)]


def states_of(owner: int) -> list[dict[str, object]]:
    """The state records of the labs that process ``owner`` made."""
    found = []
    for path in STATE_ROOT.glob(f"{owner}-*/state.json"):
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):  # being replaced: the next look sees it
            continue
    return found


def leftovers(owner: int, token: str, host_ifs: set[str]) -> dict[str, list[object]]:
    """What the command ``owner`` (started with the try marker ``token``) left behind: its
    processes, namespaces, state folders and the host interfaces its labs had recorded."""
    return {
        "processes": list(marked(token)),
        "namespaces": [n for n in lab_namespaces() if n.startswith(f"mgmtbench-{owner}-")],
        "states": [p.name for p in STATE_ROOT.glob(f"{owner}-*")] if STATE_ROOT.is_dir() else [],
        "interfaces": [name for name in host_ifs if link_exists(name)],
    }


def wait_clean(owner: int, token: str, host_ifs: set[str], timeout: float = 5) -> None:
    """Wait until nothing is left (what the kernel finishes after a process is gone), else
    raise saying what is."""
    deadline = time.monotonic() + timeout
    while True:
        left = {k: v for k, v in leftovers(owner, token, host_ifs).items() if v}
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"left behind: {left}")
        time.sleep(0.1)
