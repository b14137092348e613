"""Reading a process's CPU time from /proc (:mod:`mgmtbench.lab.procfs`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mgmtbench.lab import procfs

# Burns about 50 ms of CPU in a second thread, which then waits; prints the process's CPU time
# (the kernel's own clock, all threads), then waits for its stdin to close.
_BURN = """
import sys, threading, time
done, leave = threading.Event(), threading.Event()
def burn():
    end = time.thread_time() + 0.05
    while time.thread_time() < end:
        pass
    done.set()
    leave.wait()
worker = threading.Thread(target=burn)
worker.start()
done.wait()
print(time.process_time(), flush=True)
sys.stdin.read()
leave.set()
"""


def test_threads_cpu_seconds_is_the_process_cpu_clock() -> None:
    """The sum over live threads matches the process's CPU clock (to what its print and read
    cost after it), at finer than clock-tick (10 ms) resolution."""
    child = subprocess.Popen([sys.executable, "-c", _BURN], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        clock = float(child.stdout.readline())
        read = procfs.threads_cpu_seconds(child.pid)
    finally:
        child.communicate("", timeout=30)
    assert clock >= 0.05
    assert clock - 0.001 <= read <= clock + 0.02
    assert round(read * 100) != read * 100  # not whole ticks


def test_threads_cpu_seconds_of_no_process_is_file_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        procfs.threads_cpu_seconds(2**22 + 12345)  # above the kernel's largest pid_max
