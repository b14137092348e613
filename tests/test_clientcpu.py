"""The client's CPU in the transport benchmark: its own processes counted, the site's set apart."""

from __future__ import annotations

import subprocess
import sys

from mgmtbench.lab import proctree
from mgmtbench.lab.procfs import TICK
from mgmtbench.testing.clientcpu import client_cpu_seconds

# Burns 0.5 s of CPU, says so, then waits to be stopped (a live descendant, like a kept ssh).
BUSY = ("import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass\n"
        "print('done', flush=True)\ntime.sleep(60)\n")


def test_a_live_client_process_counts_and_the_sites_does_not() -> None:
    before = client_cpu_seconds([])
    with (subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
          as client,
          subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, text=True)
          as site):
        try:
            assert client.stdout is not None
            assert site.stdout is not None
            assert client.stdout.readline() == "done\n"
            assert site.stdout.readline() == "done\n"
            spent = client_cpu_seconds([site.pid]) - before
            both = client_cpu_seconds([]) - before
            site_alone = proctree.tree_cpu_seconds(site.pid)
        finally:
            client.kill()
            site.kill()
    assert site_alone >= 0.5 - 2 / TICK
    assert spent >= 0.5 - 2 / TICK  # the client's half second, and this process's own
    assert both - spent >= site_alone - 2 / TICK  # the site's was set apart


def test_a_reaped_child_counts() -> None:
    before = client_cpu_seconds([])
    subprocess.run([sys.executable, "-c", BUSY.replace("time.sleep(60)", "pass")], check=True,
                   capture_output=True)
    assert client_cpu_seconds([]) - before >= 0.5 - 2 / TICK
