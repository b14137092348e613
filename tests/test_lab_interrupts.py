"""SIGINT and SIGTERM at any point of ``mgmtbench lab up`` leave nothing behind.

The real command runs as a subprocess; the test watches the lab's state and sends the signal
right as the lab reaches a step of its start (state written, delay line recorded, echo server
recorded, emulator recorded, all up): the moments where a process exists but the command does
not hold it yet, which used to leave it running in a namespace already deleted. Once the
command has exited, nothing of it may remain: no process it started, namespace, state folder or
interface.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable

import pytest

from mgmtbench.lab.lab import has_net_admin
from tests.lab_support import states_of, wait_clean, with_marker

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")

UP = [sys.executable, "-m", "mgmtbench.cli", "lab", "up", "--profile", "campus",
      "--samples", "3"]
TIMEOUT = 90  # seconds for a step to be reached, and for the command to exit


def recorded(count: int) -> Callable[[int], bool]:
    """The step where the lab has recorded ``count`` processes (1: the delay line, 2: the echo
    server, 3: the emulator): each is still starting."""
    return lambda owner: any(len(s.get("processes") or s.get("pids") or []) >= count  # type: ignore[arg-type]
                             for s in states_of(owner))


STEPS: dict[str, Callable[[int], bool]] = {
    "registered": lambda owner: bool(states_of(owner)),
    "delay-line-starting": recorded(1),
    "echo-starting": recorded(2),
    "emulator-starting": recorded(3),
}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
@pytest.mark.parametrize("step", [*STEPS, "up"])
def test_a_signal_during_lab_up_leaves_nothing(sig: signal.Signals, step: str) -> None:
    token = uuid.uuid4().hex
    command = subprocess.Popen(UP, env=with_marker(token), stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    host_ifs: set[str] = set()
    try:
        deadline = time.monotonic() + TIMEOUT
        if step == "up":
            assert command.stdout is not None
            while "Press Ctrl-C" not in (line := command.stdout.readline()):
                assert line, "lab up ended before it was up"
        else:
            while not STEPS[step](command.pid):
                assert command.poll() is None, "lab up ended before the step"
                assert time.monotonic() < deadline, f"lab up never reached {step}"
                time.sleep(0.005)
        host_ifs = {str(s["host_if"]) for s in states_of(command.pid)}
        command.send_signal(sig)
        _, err = command.communicate(timeout=TIMEOUT)
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()
    assert "Traceback" not in err, err
    assert command.returncode in (0, 130), err  # 0: the lab was up and went down on request
    wait_clean(command.pid, token, host_ifs)
