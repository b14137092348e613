"""Which Dask cluster a distributed fleet runs on, and how it is started and stopped.

- ``local`` (the default, no set-up): :class:`NamespaceCluster`, a scheduler in this process and
  ``workers`` worker processes, each in a network namespace of its own (:mod:`.hub`), so each
  builds its labs on a network of its own, as a worker host would;
- ``scheduler``: an existing cluster at ``tcp://HOST:PORT`` (``--dask-scheduler``), deployed by
  the user with any of Dask's own tools (``dask scheduler``/``dask worker``, dask-kubernetes,
  dask-jobqueue);
- ``ssh``: Dask's ``SSHCluster`` (``--dask-ssh HOST,HOST,...``: the first host runs the scheduler,
  every host after it a worker), over asyncssh with the user's keys.

:func:`open_cluster` yields a :class:`Cluster`: a connected ``distributed.Client``, the workers'
addresses and the dashboard's link.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mgmtbench.errors import ClusterError, UsageError
from mgmtbench.scaleout.hub import SCHEDULER_IP, Hub

log = logging.getLogger("mgmtbench.scaleout")
START_TIMEOUT = float(os.environ.get("MGMTBENCH_DASK_START_TIMEOUT", "120"))
#: Each worker runs one task at a time: a shard's set-up, its rounds and its tear-down in turn.
WORKER_OPTIONS: dict[str, Any] = {"nthreads": 1, "memory_limit": 0}


def _dask() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError("distributed fleets need Dask: pip install 'mgmtbench[dask]'") from exc
    return distributed


@dataclass
class ClusterOptions:
    """How to get a cluster: a local one of ``workers`` (default), an existing ``scheduler``
    address, or an ``ssh`` host list (``ssh_port``, ``ssh_key``, ``ssh_known_hosts`` for it)."""

    workers: int = 2
    scheduler: str | None = None
    ssh: tuple[str, ...] = ()
    ssh_port: int = 22
    ssh_key: Path | None = None
    ssh_known_hosts: Path | None = None
    ssh_user: str | None = None

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


@dataclass
class Cluster:
    """A connected client and what the run records about its cluster."""

    client: Any  # distributed.Client
    kind: str
    dashboard: str | None
    workers: list[str] = field(default_factory=list)  # worker addresses, in a stable order

    def describe(self) -> dict[str, Any]:
        """For the results."""
        return {"cluster": self.kind, "dask_workers": len(self.workers),
                "dask_dashboard": self.dashboard}


@contextlib.contextmanager
def open_cluster(options: ClusterOptions) -> Iterator[Cluster]:
    """The cluster ``options`` ask for, with a client; stopped (if started here) on exit."""
    options.check()
    distributed = _dask()
    # Dask's own INFO lines (every worker registering, every client connecting) are not the
    # run's: warnings and errors still show.
    logging.getLogger("distributed").setLevel(logging.WARNING)
    cluster: Any = None
    try:
        if options.kind == "local":
            cluster = NamespaceCluster(options.workers)
            client = distributed.Client(cluster)
        elif options.kind == "ssh":
            cluster = _ssh_cluster(options)
            client = distributed.Client(cluster)
        else:
            client = distributed.Client(options.scheduler, timeout=30)
    except (OSError, TimeoutError) as exc:
        if cluster is not None:
            cluster.close()
        raise ClusterError(f"no Dask cluster ({options.kind}): {exc}") from exc
    try:
        info = client.scheduler_info(n_workers=-1)
        workers = sorted(info["workers"])
        if not workers:
            raise ClusterError(f"the Dask scheduler at {client.scheduler.address} has no workers")
        yield Cluster(client, options.kind, client.dashboard_link if _has_dashboard(info) else None,
                      workers)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _has_dashboard(info: dict[str, Any]) -> bool:
    return bool(info.get("services", {}).get("dashboard"))


def _ssh_cluster(options: ClusterOptions) -> Any:
    from distributed import SSHCluster

    connect: dict[str, Any] = {"port": options.ssh_port,
                               "known_hosts": str(options.ssh_known_hosts)
                               if options.ssh_known_hosts else None}
    if options.ssh_key:
        connect["client_keys"] = [str(options.ssh_key)]
    if options.ssh_user:
        connect["username"] = options.ssh_user
    try:
        return SSHCluster(list(options.ssh), connect_options=connect,
                          worker_options=dict(WORKER_OPTIONS),
                          scheduler_options={"port": 0, "dashboard_address": ":0"},
                          remote_python=sys.executable)
    except Exception as exc:  # asyncssh's and Dask's own errors: one line for the user
        raise ClusterError(f"SSHCluster on {', '.join(options.ssh)} failed: "
                           f"{type(exc).__name__}: {exc}") from exc


def _spec_cluster_class() -> Any:
    return _dask().SpecCluster


class NamespaceCluster(_spec_cluster_class()):  # type: ignore[misc]
    """A local cluster: the scheduler here, on the hub's host end, and ``workers`` workers, each a
    ``distributed.Worker`` process in a namespace of its own (:class:`NamespaceWorker`)."""

    def __init__(self, workers: int) -> None:
        self.hub = Hub()
        self.logs = Path(tempfile.mkdtemp(prefix="mgmtbench-dask-"))
        try:
            self.hub.up()
            specs = {}
            for number in range(workers):
                netns, address = self.hub.add_worker()
                specs[f"shard-{number}"] = {"cls": NamespaceWorker, "options": {
                    "netns": netns, "address": address, "log": self.logs / f"w{number}.log"}}
            from distributed import Scheduler

            scheduler = {"cls": Scheduler, "options": {
                "host": SCHEDULER_IP, "port": 0, "dashboard_address": f"{SCHEDULER_IP}:0"}}
            super().__init__(workers=specs, scheduler=scheduler, name="mgmtbench")
        except BaseException:
            self.hub.down()
            raise

    def close(self, timeout: float | None = None) -> Any:
        """Stop the workers and the scheduler, then remove the namespaces."""
        try:
            return super().close(timeout=timeout)
        finally:
            self.hub.down()


class NamespaceWorker(_dask().deploy.ProcessInterface):  # type: ignore[misc]
    """One ``distributed.Worker`` process in network namespace ``netns``, listening on
    ``address``; its output goes to ``log`` (read for its start, quoted when it fails)."""

    def __init__(self, scheduler: str, *, name: str, netns: str, address: str,
                 log: Path) -> None:
        super().__init__(scheduler=scheduler, name=name)
        self.name = name
        self.scheduler_address = scheduler
        self.netns, self.bind, self.log_path = netns, address, log
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        """Start the process inside its namespace; return once it says it is serving."""
        spec = {"cls": "distributed.Worker", "opts": {
            **WORKER_OPTIONS, "name": self.name, "host": self.bind, "dashboard": False}}
        with self.log_path.open("wb") as out:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "mgmtbench.lab.nsexec", self.netns, sys.executable, "-m",
                "distributed.cli.dask_spec", self.scheduler_address, "--spec", json.dumps(spec),
                stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while "Start worker at" not in self._log():
            if self.proc.returncode is not None or loop.time() > deadline:
                last = self._log().strip().splitlines()[-1:] or ["no output"]
                raise ClusterError(f"Dask worker {self.name} in {self.netns} did not start: "
                                   f"{last[0]}")
            await asyncio.sleep(0.1)
        await super().start()

    async def close(self) -> None:
        """SIGTERM (the worker closes cleanly), SIGKILL after 20 s."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        await super().close()

    def _log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""
