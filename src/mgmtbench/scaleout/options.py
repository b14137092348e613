"""How a distributed fleet gets its Dask cluster, as the command line says (no Dask imported)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError

#: Each worker runs one task at a time (a shard's set-up, its rounds and its tear-down in turn),
#: and Dask never pauses it for memory: what it holds is the fleet worker's and the labs'.
WORKER_OPTIONS: dict[str, Any] = {"nthreads": 1, "memory_limit": 0}


@dataclass
class ClusterOptions:
    """How to get a cluster: a local one of ``workers`` (default), an existing ``scheduler``
    address, or an ``ssh`` host list (``ssh_port``, ``ssh_key``, ``ssh_known_hosts`` for it).

    A local cluster's workers each live in a network namespace of their own (``isolated``,
    the default: each brings up its own labs); without, they are Dask's own ``LocalCluster`` in
    this host's namespace, which reaches what the host reaches (an inventory's devices)."""

    workers: int = 2
    scheduler: str | None = None
    ssh: tuple[str, ...] = ()
    ssh_port: int = 22
    ssh_key: Path | None = None
    ssh_known_hosts: Path | None = None
    ssh_user: str | None = None
    isolated: bool = True

    @property
    def kind(self) -> str:
        """``scheduler``, ``ssh`` or ``local``."""
        return "scheduler" if self.scheduler else "ssh" if self.ssh else "local"

    def check(self) -> None:
        """A one-line error for options that cannot work together."""
        if self.scheduler and self.ssh:
            raise UsageError("give --dask-scheduler or --dask-ssh, not both")
        if self.scheduler and not self.scheduler.startswith(("tcp://", "tls://")):
            raise UsageError(f"--dask-scheduler wants tcp://HOST:PORT, not {self.scheduler!r}")
        if self.ssh and len(self.ssh) < 2:
            raise UsageError("--dask-ssh wants the scheduler's host, then at least one worker's")
        if not self.scheduler and not self.ssh and not 1 <= self.workers <= 200:
            raise UsageError(f"--dask-workers must be 1..200, not {self.workers}")
