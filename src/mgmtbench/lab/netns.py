"""Network namespaces: names the lab owns, entering one, running a process inside one."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mgmtbench.lab.processes import environment

NETNS_DIR = Path("/var/run/netns")
CLONE_NEWNET = 0x40000000
PREFIX = "mgmtbench-"
# How long a lab waits for a helper process it starts (a namespace's configuration, the echo
# server, the emulator) before giving up. Starting a Python process that imports the emulator
# takes about a second on a host, but up to a minute or more in a VM under software emulation on
# a busy machine (``nox -s netem`` raises it there).
START_TIMEOUT = float(os.environ.get("MGMTBENCH_LAB_START_TIMEOUT", "60"))

_libc = ctypes.CDLL(None, use_errno=True)


def setns(name: str) -> None:
    """Move the calling thread into network namespace ``name`` (Python 3.11 has no os.setns)."""
    setns_path(NETNS_DIR / name)


def setns_path(path: Path) -> None:
    """Move the calling thread into the network namespace at ``path`` (a name's mount under
    /var/run/netns, or a process's ``/proc/PID/ns/net``)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns({path}): {os.strerror(err)}")
    finally:
        os.close(fd)


def lab_namespaces() -> list[str]:
    """Namespaces created by mgmtbench (by name prefix), live or stale."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(PREFIX))


def namespace_id(path: Path = Path("/proc/thread-self/ns/net")) -> str:
    """Which network namespace ``path`` is (by default the calling thread's): ``dev:inode``."""
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def run_in(name: str, module: str, spec: dict[str, object]) -> None:
    """Run ``python -m module SPEC_JSON`` inside namespace ``name``; raise with its last error
    line. The process carries the mark of the lab the namespace is named after (see
    :mod:`.processes`), so a clean-up finds it should it outlive an interrupted start."""
    env = environment(name.removeprefix(PREFIX))
    result = subprocess.run(
        [sys.executable, "-m", "mgmtbench.lab.nsexec", name, sys.executable, "-m", module,
         json.dumps(spec)], capture_output=True, text=True, timeout=START_TIMEOUT, env=env)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise RuntimeError(f"{module} in {name} failed: {lines[-1] if lines else result.returncode}")


def link_index(ipr: Any, name: str, attempts: int = 100) -> int:
    """An interface's index by name, from a full dump (pyroute2's filtered lookup was seen to
    miss a TUN interface another process had just created), waiting up to ~2 s for it."""
    for _ in range(attempts):
        for link in ipr.get_links():
            if link.get("ifname") == name:
                return int(link["index"])
        time.sleep(0.02)
    raise LookupError(f"interface {name} did not appear")
