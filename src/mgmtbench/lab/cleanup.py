"""Removing stale labs: what a lab whose owner died (SIGKILL, a crash) left behind.

A stale lab's state (:mod:`.state`) records its processes, host interface and namespace; each
device runtime removes what it left itself (:meth:`DeviceRuntime.sweep`: the docker runtime's
containers). This module sits above the runtimes, so :mod:`.state` needs none of them.
Only namespaces named ``mgmtbench-*``, interfaces recorded in a lab's state and what a runtime
labelled as mgmtbench's are ever touched.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal

from pyroute2 import IPRoute, netns
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.netns import PREFIX, lab_namespaces
from mgmtbench.lab.runtimes import RUNTIMES
from mgmtbench.lab.state import LabState, alive, known_labs

log = logging.getLogger("mgmtbench.lab")


def clean_stale(everything: bool = False) -> list[str]:
    """Remove labs whose owner is gone (all labs with ``everything``); return what was removed
    (lab ids, then leftovers the runtimes found, such as ``container NAME``)."""
    with lab_failures("could not remove stale labs"):
        states = known_labs()
        dead = [s for s in states if everything or not alive(s.owner_pid)]
        live = {s.lab_id for s in states} - {s.lab_id for s in dead}
        for state in dead:
            _kill_processes(state)
        leftovers = [found for runtime in RUNTIMES.values()
                     for found in runtime.sweep(dead, live, everything)]
        removed = []
        for state in dead:
            _remove_network(state)
            removed.append(state.lab_id)
        recorded = {s.netns for s in states}
        for name in lab_namespaces():  # ours by name, but no state: its owner died while starting
            if name not in recorded and name.startswith(PREFIX) and (everything or _orphan(name)):
                netns.remove(name)
                removed.append(name.removeprefix(PREFIX))
    removed += leftovers
    if removed:
        log.warning("removed %d stale lab(s): %s", len(removed), ", ".join(removed))
    return removed


def _kill_processes(state: LabState) -> None:
    for pid in state.pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
                if _is_group_leader(pid):
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)


def _remove_network(state: LabState) -> None:
    """The lab's host interface, its namespace and its state folder."""
    with IPRoute() as ipr:
        found = ipr.link_lookup(ifname=state.host_if)
        if found:
            try:
                ipr.link("del", index=found[0])
            except NetlinkError as exc:
                if exc.code != errno.ENODEV:  # gone meanwhile (with its namespace) is fine
                    raise
    if state.netns in netns.listnetns():
        netns.remove(state.netns)
    shutil.rmtree(state.folder, ignore_errors=True)


def _is_group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except ProcessLookupError:
        return False


def _orphan(name: str) -> bool:
    """A namespace of ours with no state file, and no process of a live lab inside it."""
    lab_id = name.removeprefix(PREFIX)
    owner = lab_id.split("-")[0]
    return not (owner.isdigit() and alive(int(owner)))
