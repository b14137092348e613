"""The OpenSSH binary at scale: per device a real ControlMaster (``ssh -M ... -fN``, a process
of its own) and one ``ssh -S`` process per command through it, driven from a thread pool. Every
``ssh`` process's CPU time and memory count as the client's."""

from __future__ import annotations

from mgmtbench.clients.fleet.adapted import AdaptedFleet
from mgmtbench.clients.openssh.adapter import OpensshClient


class OpensshFleet(AdaptedFleet):
    """OpenSSH fleet runner: a ControlMaster per device, in a thread pool."""
    name = "openssh"
    how = "ThreadPoolExecutor, a ControlMaster process per device, ssh -S per command"
    adapter = OpensshClient
    mode = "reuse-conn"
    spawns = True
