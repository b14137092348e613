"""The lab's watchdog: when the delay line, a device process or a wire tap dies while the lab is
up, the lab says so (which process, how it ended) and a benchmark on it fails with that message
instead of measuring a dead link.
"""

from __future__ import annotations

import os
import re
import signal
import textwrap
import time

import pytest

from mgmtbench.errors import LabError
from mgmtbench.lab import Lab, resolve
from mgmtbench.lab.lab import has_net_admin
from tests.lab_support import alive

pytestmark = pytest.mark.skipif(not has_net_admin(), reason="labs need root or CAP_NET_ADMIN")

# A benchmark that would measure a dead link without the watchdog: its rounds never fail (a
# connection that cannot be made is just a slow round), and the delay line dies half-way.
BENCHMARK = textwrap.dedent("""
    import contextlib, os, signal, socket

    def test_echo_round(benchmark, lab_for):
        lab = lab_for("campus")
        delay_line = next(p for p in lab.state.processes if p.name == "delay line")
        rounds = []

        def one_round():
            rounds.append(1)
            if len(rounds) == 5:
                os.kill(delay_line.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                socket.create_connection((lab.echo_address, 7), timeout=0.2).close()

        benchmark.pedantic(one_round, rounds=20, iterations=1)
        assert len(rounds) == 20
        print("DELAY LINE", delay_line.pid)
""")


def test_a_benchmark_fails_when_the_delay_line_dies(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_dead_link=BENCHMARK)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s", "--link-backend",
                                           "tun", timeout=180)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    found = re.search(r"DELAY LINE (\d+)", out)
    assert found is not None, out
    # One line, no traceback: the lab's word on what died.
    failure = re.search(r"^(lab \S+ \(campus\): .*)$", out, re.MULTILINE)
    assert failure is not None, out
    assert f"its delay line (pid {found[1]}) was killed by SIGKILL" in failure[1], out
    assert failure[1].endswith("measures a dead link or device"), out
    assert "Traceback" not in out
    assert "direct cause" not in out


def waitable(pid: int) -> bool:
    """Whether a child's end can be waited for: a leader thread that exited shows as a zombie
    while its other threads (grpcio's, in the emulator) still run, and is not waitable yet."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # not a child of this process, or reaped already
        return True


def wait_dead(pid: int) -> None:
    deadline = time.monotonic() + 10
    while alive(pid) or not waitable(pid):
        assert time.monotonic() < deadline, f"{pid} did not die"
        time.sleep(0.02)


def test_lab_check_names_the_dead_process() -> None:
    with Lab(resolve("campus"), calibration_samples=3) as lab:
        assert lab.state is not None
        lab.check()  # all well
        with lab.wire_tap() as tap:
            assert tap.pid is not None
            os.kill(tap.pid, signal.SIGKILL)
            wait_dead(tap.pid)
            with pytest.raises(LabError, match=rf"wire tap on {lab.state.host_if} "
                                               rf"\(pid {tap.pid}\) was killed by SIGKILL"):
                lab.check()
            tap.abort()
        lab.check()  # a tap that was stopped is no longer watched
        emulator = next(p for p in lab.state.processes if p.name == "emulator")
        os.kill(emulator.pid, signal.SIGTERM)
        wait_dead(emulator.pid)
        with pytest.raises(LabError, match=rf"its emulator \(pid {emulator.pid}\) "
                                           r"(exited with status|was killed by SIGTERM)"):
            lab.counters()  # what a benchmark reads around its timed rounds
        echo = next(p for p in lab.state.processes if p.name == "echo")
        os.kill(echo.pid, signal.SIGKILL)
        wait_dead(echo.pid)
        with pytest.raises(LabError, match=r"\(and 1 more\)"):
            lab.check()
    assert lab.state is None
    lab.check()  # a lab that is down has nothing to watch
