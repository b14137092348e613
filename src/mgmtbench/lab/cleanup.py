"""Removing stale labs: what a lab whose owner died (SIGKILL, a crash) left behind.

A stale lab's state (:mod:`.state`) records its processes, host interface and namespace; each
device runtime removes what it left itself (:meth:`DeviceRuntime.sweep`: the docker runtime's
containers). Processes are stopped by record (pid and start time: a pid now used by another
process is left alone) and by mark: every process a lab starts carries its lab's mark (its
state folder) in its environment (:mod:`.processes`), so one that outlived its lab's state or
namespace (an orphan in a deleted namespace) is found all the same. This module sits above the runtimes, so
:mod:`.state` needs none of them. Only namespaces named ``mgmtbench-*``, processes marked as a
lab's, the interface a lab's state records (by index, in the namespace recorded) and what a
runtime labelled as mgmtbench's are ever touched.
"""

from __future__ import annotations

import errno
import logging
import re
import shutil
from dataclasses import dataclass, field

from pyroute2 import IPRoute, netns
from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.lab import processes
from mgmtbench.lab.failures import lab_failures
from mgmtbench.lab.netns import PREFIX, lab_namespaces, namespace_id
from mgmtbench.lab.runtimes import RUNTIMES
from mgmtbench.lab.state import STATE_ROOT, LabState, ProcessRecord, known_labs, runs

log = logging.getLogger("mgmtbench.lab")
LAB_ID = re.compile(r"\d+-\d+-\d+")  # OWNER_PID-INDEX-SERIAL


@dataclass
class Cleanup:
    """What a clean-up removed."""

    labs: list[str] = field(default_factory=list)  # lab ids (a namespace's, without a state)
    leftovers: list[str] = field(default_factory=list)  # the runtimes' finds: "container NAME"
    processes: list[ProcessRecord] = field(default_factory=list)  # stopped: recorded or marked

    def names(self) -> list[str]:
        """Lab ids, then the runtimes' leftovers."""
        return self.labs + self.leftovers


def clean_stale(everything: bool = False) -> list[str]:
    """Remove labs whose owner no longer runs (all labs with ``everything``); return what was
    removed (lab ids, then leftovers the runtimes found, such as ``container NAME``). See
    :func:`clean` for the processes too."""
    return clean(everything).names()


def clean(everything: bool = False) -> Cleanup:
    """Remove labs whose owner no longer runs (all labs with ``everything``) and every process
    marked as a lab's that no running lab owns (orphans)."""
    done = Cleanup()
    with lab_failures("could not remove stale labs"):
        states = known_labs()
        dead = [s for s in states if everything or not s.owner_running()]
        live = {s.lab_id for s in states} - {s.lab_id for s in dead}
        for state in dead:
            done.processes += processes.stop(state.processes, grace=0)
        # Orphans: marked processes of a lab that is gone, whatever namespace they are in. A
        # lab that registered since `states` was read is looked up again before it is judged.
        done.processes += processes.stop_marked(
            lambda lab_id: everything or (lab_id not in live and not _lab_runs(lab_id)))
        done.leftovers = [found for runtime in RUNTIMES.values()
                          for found in runtime.sweep(dead, live, everything)]
        for state in dead:
            remove_network(state)
            done.labs.append(state.lab_id)
        recorded = {s.netns for s in states}
        for name in lab_namespaces():  # ours by name, but no state: its owner died while starting
            if name not in recorded and name.startswith(PREFIX) and (everything or _orphan(name)):
                netns.remove(name)
                done.labs.append(name.removeprefix(PREFIX))
        done.labs += _remove_stray_folders({s.lab_id for s in states}, everything)
    removed = done.names()
    if removed or done.processes:
        log.warning("removed %d stale lab(s)%s%s", len(removed),
                    ": " + ", ".join(removed) if removed else "",
                    f"; stopped {len(done.processes)} process(es) they left" if done.processes
                    else "")
    return done


def _lab_runs(lab_id: str) -> bool:
    state = LabState.load(STATE_ROOT / lab_id)
    return state is not None and state.owner_running()


def remove_network(state: LabState) -> None:
    """The lab's host interface (the one it made: same index, same namespace), its namespace
    and its state folder."""
    if state.host_ifindex is not None and state.host_netns == namespace_id():
        with IPRoute() as ipr:
            if state.host_ifindex in ipr.link_lookup(ifname=state.host_if):
                try:
                    ipr.link("del", index=state.host_ifindex)
                except NetlinkError as exc:
                    if exc.code != errno.ENODEV:  # gone meanwhile (with its namespace) is fine
                        raise
    if state.netns in netns.listnetns():
        netns.remove(state.netns)
    shutil.rmtree(state.folder, ignore_errors=True)


def _remove_stray_folders(recorded: set[str], everything: bool) -> list[str]:
    """Lab folders without a state whose owner is gone (a process of the lab wrote into its
    folder after the folder was removed, as older versions let happen); their names."""
    if not STATE_ROOT.is_dir():
        return []
    stray = [f for f in STATE_ROOT.iterdir() if f.is_dir() and f.name not in recorded
             and LAB_ID.fullmatch(f.name) and not (f / "state.json").exists()
             and (everything or _orphan(PREFIX + f.name))]
    for folder in stray:
        shutil.rmtree(folder, ignore_errors=True)
    return [f.name for f in stray]


def _orphan(name: str) -> bool:
    """A namespace of ours with no state file, and no process of a live lab inside it."""
    lab_id = name.removeprefix(PREFIX)
    owner = lab_id.split("-")[0]
    return not (owner.isdigit() and runs(int(owner)))
