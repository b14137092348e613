"""A lab leaves nothing behind: normal exit, Ctrl-C, SIGTERM, and after a SIGKILL the next run.

It never touches what it did not create, and without privileges says so in one sentence.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyroute2 import IPRoute
from pyroute2 import netns as pyroute2_netns

from mgmtbench.lab import Lab, procfs, resolve
from mgmtbench.lab.cleanup import clean, clean_stale
from mgmtbench.lab.lab import MAX_LABS, has_net_admin
from mgmtbench.lab.netns import create, lab_namespaces
from mgmtbench.lab.nsconfig import in_namespace
from mgmtbench.lab.processes import MARKER
from mgmtbench.lab.state import STATE_ROOT, LabState, ProcessRecord, known_labs, used_indexes

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")

CHILD = """
import faulthandler, signal, sys, time
faulthandler.register(signal.SIGUSR1, all_threads=True)  # where it hangs, should it
from mgmtbench.lab import Lab, resolve
with Lab(resolve("campus"), calibration_samples=3) as lab:
    print(lab.state.netns, lab.state.host_if, *lab.state.pids, flush=True)
    time.sleep(120)
"""


def start_lab_process(env: dict[str, str] | None = None,
                      ) -> tuple[subprocess.Popen[str], str, str, list[int]]:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line, child.stderr.read() if child.stderr else "no output"
    return child, line[0], line[1], [int(p) for p in line[2:]]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def link_exists(name: str) -> bool:
    with IPRoute() as ipr:
        return bool(ipr.link_lookup(ifname=name))


def assert_gone(netns: str, host_if: str, pids: list[int]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if netns not in lab_namespaces() and not link_exists(host_if) and not any(
                alive(p) for p in pids):
            return
        time.sleep(0.1)
    raise AssertionError(f"left behind: netns={netns in lab_namespaces()} "
                         f"link={link_exists(host_if)} pids={[p for p in pids if alive(p)]}")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_signals_tear_the_lab_down(sig: signal.Signals) -> None:
    child, netns, host_if, pids = start_lab_process()
    assert netns in lab_namespaces()
    assert len(pids) >= 3  # delay line, echo server, emulator
    child.send_signal(sig)
    try:
        child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGUSR1)  # its stacks to stderr
        time.sleep(1)
        child.kill()
        _, err = child.communicate(timeout=10)
        pytest.fail(f"the lab's process did not end within 60 s of {sig.name}:\n{err}")
    assert_gone(netns, host_if, pids)


def test_after_sigkill_the_next_run_cleans_up() -> None:
    child, netns, host_if, pids = start_lab_process()
    child.kill()
    child.communicate(timeout=10)
    # The owner is gone; its processes (own sessions) and namespace are still there.
    assert netns in lab_namespaces()
    assert any(alive(p) for p in pids)
    removed = clean_stale()
    assert netns.removeprefix("mgmtbench-") in removed
    assert_gone(netns, host_if, pids)


def test_clean_up_never_touches_what_it_did_not_create() -> None:
    with IPRoute() as ipr:
        ipr.link("add", ifname="mgb63h", kind="veth", peer="mgb63d")  # our naming, not a lab's
        try:
            clean_stale()
            assert link_exists("mgb63h")
        finally:
            ipr.link("del", ifname="mgb63h")


def test_lab_check_json_leaves_nothing_behind() -> None:
    check = subprocess.Popen([sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile",
                              "campus", "--json", "--samples", "5"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    out, err = check.communicate(timeout=120)
    assert check.returncode == 0, err
    info = json.loads(out)
    assert info["backend"] in ("tun", "netem")
    assert info["configured_rtt_ms"] == 2
    # The lab delays at least what it was told; how far above is test_lab's to bound (a busy
    # machine once added 2 ms to five samples here).
    assert 2 <= info["measured_rtt_ms"] < 2 + 10
    # Lab namespaces are named after their owner's pid.
    assert not [n for n in lab_namespaces() if n.startswith(f"mgmtbench-{check.pid}-")]


def test_a_zombie_owner_does_not_keep_its_lab_running() -> None:
    child, netns, host_if, pids = start_lab_process()
    lab_id = netns.removeprefix("mgmtbench-")
    child.kill()  # and not reaped: the owner is a zombie until the end of the test
    try:
        deadline = time.monotonic() + 10
        while alive(child.pid):
            assert time.monotonic() < deadline, "the owner did not die"
            time.sleep(0.05)
        assert Path(f"/proc/{child.pid}").exists()  # a zombie
        assert lab_id not in {s.lab_id for s in known_labs() if s.owner_running()}
        assert lab_id in clean_stale()
        assert_gone(netns, host_if, pids)
    finally:
        child.communicate(timeout=10)


def test_a_pid_that_changed_hands_is_never_signalled() -> None:
    """A stale lab whose records (owner and processes) name pids that now belong to another
    process: the lab is stale, its records are removed, the other process is left alone."""
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        started = procfs.start_time(bystander.pid)
        other = ProcessRecord("echo", bystander.pid, started - 1)  # same pid, another process
        reused = LabState(lab_id=f"{bystander.pid}-99-1", index=99, owner_pid=bystander.pid,
                          owner_start=started - 1, netns="mgmtbench-test-reused",
                          host_if="mgbtesth", processes=[other])
        reused.save()
        # A state from before start times were recorded: its bare pid is never signalled.
        legacy = STATE_ROOT / f"{os.getpid()}-98-1"
        legacy.mkdir(parents=True)
        (legacy / "state.json").write_text(json.dumps({
            "lab_id": legacy.name, "index": 98, "owner_pid": 2 ** 22 + 1,
            "netns": "mgmtbench-test-legacy", "host_if": "mgbtesth", "pids": [bystander.pid]}))
        assert not reused.owner_running()
        done = clean()
        assert {reused.lab_id, legacy.name} <= set(done.labs)
        assert bystander.pid not in [p.pid for p in done.processes]
        assert bystander.poll() is None  # still running: not the lab's
        assert not reused.folder.exists()
        assert not legacy.exists()
    finally:
        bystander.kill()
        bystander.wait()


def marked_as(folder: Path) -> list[int]:
    """Running processes marked as the lab's whose state folder is ``folder``."""
    needle = f"{MARKER}={folder}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return [p for p in found if alive(p)]


def test_lab_down_stops_orphans_in_deleted_namespaces(tmp_path: Path) -> None:
    """What an interrupted start used to leave: the lab's processes running in a namespace
    already deleted, its state gone. `lab down` finds them by their mark and says so. (A state
    root of the test's own: other labs' clean-ups, which stop orphans under theirs, leave
    these to the `lab down` under test.)"""
    env = {**os.environ, "MGMTBENCH_LAB_STATE": str(tmp_path)}
    child, netns, host_if, pids = start_lab_process(env)
    lab_id = netns.removeprefix("mgmtbench-")
    child.kill()
    child.communicate(timeout=10)
    pyroute2_netns.remove(netns)
    shutil.rmtree(tmp_path / lab_id)
    orphans = marked_as(tmp_path / lab_id)
    assert len(orphans) >= 3  # delay line, echo server, emulator
    result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "lab", "down"],
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert f"stopped {len(orphans)} process(es)" in result.stdout, result.stdout
    assert "mgmtbench.lab.echo" in result.stdout, result.stdout
    assert "mgmtbench.lab.delayline" in result.stdout, result.stdout
    assert_gone(netns, host_if, pids)


TAP_CHILD = """
import subprocess, sys, time
from mgmtbench.lab import Lab, resolve
with Lab(resolve("campus"), calibration_samples=3) as lab:
    tap = lab.wire_tap().start()
    # A worker forked while the tap captures holds its stdin: the tap outlives the lab's owner.
    holder = subprocess.Popen(["sleep", "120"], pass_fds=[tap._process.stdin.fileno()],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(lab.state.netns, lab.state.host_if, tap.pid, holder.pid, flush=True)
    time.sleep(120)
"""


def test_lab_down_stops_a_wire_tap_its_killed_lab_left(tmp_path: Path) -> None:
    """The wire tap is in the lab's state like the lab's other processes (name, pid, start
    time) while it captures; when the lab's owner is killed and the tap lives on, `lab down`
    stops it by that record and nothing of the lab is left."""
    env = {**os.environ, "MGMTBENCH_LAB_STATE": str(tmp_path)}
    child = subprocess.Popen([sys.executable, "-c", TAP_CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line, child.stderr.read() if child.stderr else "no output"
    netns, host_if, tap, holder = line[0], line[1], int(line[2]), int(line[3])
    try:
        state = json.loads((tmp_path / netns.removeprefix("mgmtbench-") / "state.json")
                           .read_text())
        record = next(p for p in state["processes"] if p["pid"] == tap)
        assert record["name"] == f"wire tap on {host_if}"
        assert record["start"] == procfs.start_time(tap)
        pids = [p["pid"] for p in state["processes"]]
        child.kill()
        child.communicate(timeout=10)
        time.sleep(0.5)
        assert alive(tap)  # its stdin is still open: it would capture on
        result = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "lab", "down"],
                                capture_output=True, text=True, timeout=120, env=env)
        assert result.returncode == 0, result.stderr
        assert f"wire tap on {host_if} (pid {tap})" in result.stdout, result.stdout
        assert_gone(netns, host_if, [*pids, tap])
    finally:
        os.kill(holder, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(holder, 0)


@pytest.fixture
def foreign_interfaces() -> Iterator[tuple[str, str, str]]:
    """A dummy interface here named like the lab that would come next, and one in another
    namespace named like the lab after it: (name here, name there, that namespace)."""
    free = [i for i in range(MAX_LABS) if i not in used_indexes() and not link_exists(f"mgb{i}h")]
    here, there = f"mgb{free[0]}h", f"mgb{free[1]}h"
    elsewhere = f"mgbtest-foreign-{os.getpid()}"  # not a lab's name: clean-up never looks
    create(elsewhere)  # no fork of this process (with emulator threads): see netns.create
    try:
        with IPRoute() as ipr:  # a veth pair (this kernel may have no dummy interfaces)
            ipr.link("add", ifname=here, kind="veth", peer=f"mgbtestp{os.getpid() % 10000}")
        in_namespace(elsewhere, lambda: _add_veth(there))
        yield here, there, elsewhere
    finally:
        with IPRoute() as ipr:
            if ipr.link_lookup(ifname=here):
                ipr.link("del", ifname=here)
        pyroute2_netns.remove(elsewhere)


def _add_veth(name: str) -> None:
    with IPRoute() as ipr:
        ipr.link("add", ifname=name, kind="veth", peer="mgbtestp")


def _fingerprint(ipr: Any, name: str) -> tuple[int, object, object]:
    link = next(link for link in ipr.get_links() if link.get("ifname") == name)
    return link["index"], link["flags"], link.get("address")


def _fingerprint_in(netns: str, name: str) -> tuple[int, object, object]:
    found: list[tuple[int, object, object]] = []

    def look() -> None:
        with IPRoute() as ipr:
            found.append(_fingerprint(ipr, name))

    in_namespace(netns, look)
    return found[0]


def test_foreign_interfaces_named_like_the_labs_are_left_alone(
        foreign_interfaces: tuple[str, str, str]) -> None:
    here, there, elsewhere = foreign_interfaces
    with IPRoute() as ipr:
        before = _fingerprint(ipr, here), _fingerprint_in(elsewhere, there)
    check = subprocess.run([sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile",
                            "campus", "--samples", "3"], capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stderr  # it was: OSError [Errno 22], every time
    with Lab(resolve("campus"), calibration_samples=3) as lab:
        assert lab.state is not None
        assert lab.state.host_if != here
    clean_stale()
    with IPRoute() as ipr:
        assert (_fingerprint(ipr, here), _fingerprint_in(elsewhere, there)) == before


@pytest.mark.parametrize(("profile", "code", "expected"), [
    ("regional", 2, "mgmtbench: error: the lab needs root or CAP_NET_ADMIN"),
    ("local", 0, '"backend": "loopback"'),
])
def test_without_privileges(profile: str, code: int, expected: str) -> None:
    # Root without CAP_NET_ADMIN and CAP_SYS_ADMIN, as in an unprivileged container.
    drop = ["setpriv", "--bounding-set", "-net_admin,-sys_admin", "--inh-caps",
            "-net_admin,-sys_admin"]
    result = subprocess.run(
        [*drop, sys.executable, "-m", "mgmtbench.cli", "lab", "check", "--profile", profile,
         "--json", "--samples", "3"], capture_output=True, text=True, timeout=120)
    assert result.returncode == code, result.stderr
    assert expected in result.stdout + result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="a new pid namespace needs root")
def test_the_orphan_sweep_leaves_other_pid_namespaces_alone() -> None:
    """A container's own lab (the bench runner image's) marks its processes as ours do, under
    the same paths: the host's sweep must not stop them, only those of its own pid namespace."""
    from mgmtbench.lab import processes

    env = {**os.environ, processes.MARKER: processes.mark("9999-0-0")}
    here = subprocess.Popen(["sleep", "30"], env=env)
    there = subprocess.Popen(["unshare", "--pid", "--fork", "sleep", "30"], env=env)
    try:
        deadline = time.monotonic() + 5
        found: set[int] = set()
        while time.monotonic() < deadline and len(found) < 2:
            found = {r.pid for r in processes.marked(lambda lab_id: lab_id == "9999-0-0")}
            time.sleep(0.05)
        assert here.pid in found
        inner = [int(p) for p in (
            Path(f"/proc/{there.pid}/task/{there.pid}/children").read_text().split())]
        assert inner, "unshare's child did not start"
        assert not set(inner) & found  # the sleep in the other pid namespace
    finally:
        for process in (here, there):
            process.kill()
            process.wait()
