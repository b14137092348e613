"""A lab leaves nothing behind: normal exit, Ctrl-C, SIGTERM, and after a SIGKILL the next run.

It never touches what it did not create, and without privileges says so in one sentence.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pyroute2 import IPRoute

from mgmtbench.lab.cleanup import clean_stale
from mgmtbench.lab.lab import has_net_admin
from mgmtbench.lab.netns import lab_namespaces

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")

CHILD = """
import sys, time
from mgmtbench.lab import Lab, resolve
with Lab(resolve("campus"), calibration_samples=3) as lab:
    print(lab.state.netns, lab.state.host_if, *lab.state.pids, flush=True)
    time.sleep(120)
"""


def start_lab_process() -> tuple[subprocess.Popen[str], str, str, list[int]]:
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
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
    child.communicate(timeout=30)
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
    assert abs(info["measured_rtt_ms"] - 2) < 1
    # Lab namespaces are named after their owner's pid.
    assert not [n for n in lab_namespaces() if n.startswith(f"mgmtbench-{check.pid}-")]


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
