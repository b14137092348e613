"""Network namespaces: names the lab owns, entering one, running a process inside one."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from mgmtbench.lab.processes import environment

NETNS_DIR = Path("/var/run/netns")
CLONE_NEWNET = 0x40000000
MS_BIND, MS_REC, MS_SHARED = 0x1000, 0x4000, 0x100000
PREFIX = "mgmtbench-"
# How long a lab waits for a helper process it starts (a namespace's configuration, the echo
# server, the emulator) before giving up. Starting a Python process that imports the emulator
# takes about a second on a host, but up to a minute or more in a VM under software emulation on
# a busy machine (``nox -s netem`` raises it there).
START_TIMEOUT = float(os.environ.get("MGMTBENCH_LAB_START_TIMEOUT", "60"))

_libc = ctypes.CDLL(None, use_errno=True)
T = TypeVar("T")


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


def in_namespace(where: str | Path, work: Callable[[], T]) -> T:
    """``work()`` on a throwaway thread inside network namespace ``where`` (a name, or a path
    such as a process's ``/proc/PID/ns/net``): its result, or its exception raised here
    (``setns`` moves only the calling thread)."""
    results: list[T] = []
    failures: list[BaseException] = []

    def run() -> None:
        try:
            setns_path(where if isinstance(where, Path) else NETNS_DIR / where)
            results.append(work())
        except BaseException as exc:  # raised again by the caller's thread
            failures.append(exc)

    thread = threading.Thread(target=run, name=f"netns-{where}", daemon=True)
    thread.start()
    thread.join()
    if failures:
        raise failures[0]
    return results[0]


def create(name: str) -> None:
    """Create network namespace ``name``, mounted at /var/run/netns/NAME as ``ip netns add``
    does, from a short-lived thread: ``unshare(CLONE_NEWNET)`` moves only the calling thread, so
    nothing is forked. (pyroute2's ``netns.create`` forks this process; a fork of a process with
    other threads running, such as a test session with emulators on their loops, can deadlock in
    the child on a lock some thread held at the fork.)"""
    failed: list[BaseException] = []

    def build() -> None:
        try:
            _create_here(name)
        except BaseException as exc:  # handed to the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=build, name=f"netns {name}", daemon=True)
    thread.start()
    thread.join()
    if failed:
        raise failed[0]


def _mount(source: str, target: Path, flags: int) -> bool:
    result: int = _libc.mount(source.encode(), str(target).encode(), b"none", flags, None)
    return result == 0


def _create_here(name: str) -> None:
    """In a thread of its own (it ends in the new namespace): iproute2's netns_add."""
    NETNS_DIR.mkdir(parents=True, exist_ok=True)
    # The folder is a shared mount, so a namespace mounted in it shows in every mount namespace
    # (made a mount point by binding it onto itself first, the first time).
    if not _mount("", NETNS_DIR, MS_SHARED | MS_REC) and (
            not _mount(str(NETNS_DIR), NETNS_DIR, MS_BIND | MS_REC)
            or not _mount("", NETNS_DIR, MS_SHARED | MS_REC)):
        err = ctypes.get_errno()
        raise OSError(err, f"cannot make {NETNS_DIR} a shared mount: {os.strerror(err)}")
    path = NETNS_DIR / name
    os.close(os.open(path, os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0))
    try:
        if _libc.unshare(CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}")
        if not _mount("/proc/thread-self/ns/net", path, MS_BIND):
            err = ctypes.get_errno()
            raise OSError(err, f"mount {path}: {os.strerror(err)}")
    except BaseException:
        path.unlink(missing_ok=True)
        raise


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
