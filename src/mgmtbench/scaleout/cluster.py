"""Which Dask cluster a distributed fleet runs on, and how it is started and stopped.

- ``local`` (the default, no set-up): :class:`~.local.NamespaceCluster`, a scheduler in this
  process and ``workers`` worker processes, each in a network namespace of its own (:mod:`.hub`),
  so each builds its labs on a network of its own, as a worker host would; for an inventory
  (nothing to build, devices the host reaches) Dask's own ``LocalCluster`` on loopback;
- ``scheduler``: an existing cluster at ``tcp://HOST:PORT`` (``--dask-scheduler``), deployed by
  the user with any of Dask's own tools (``dask scheduler``/``dask worker``, dask-kubernetes,
  dask-jobqueue);
- ``ssh``: Dask's ``SSHCluster`` (``--dask-ssh HOST,HOST,...``: the first host runs the scheduler,
  every host after it a worker), over asyncssh with the user's keys.

:func:`open_cluster` yields a :class:`Cluster`: a connected ``distributed.Client``, the workers'
addresses and the dashboard's link.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mgmtbench.errors import ClusterError, UsageError
from mgmtbench.scaleout.options import WORKER_OPTIONS, ClusterOptions

#: How long the workers a run started have to register with its scheduler (as long as each
#: has to start: :data:`mgmtbench.scaleout.local.START_TIMEOUT`).
START_TIMEOUT = float(os.environ.get("MGMTBENCH_DASK_START_TIMEOUT", "120"))


def _dask() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise UsageError("distributed fleets need Dask: pip install 'mgmtbench[dask]'") from exc
    return distributed


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
        if options.kind == "local" and options.isolated:
            from mgmtbench.scaleout.local import NamespaceCluster

            cluster = NamespaceCluster(options.workers)
            client = distributed.Client(cluster)
        elif options.kind == "local":
            cluster = distributed.LocalCluster(
                n_workers=options.workers, threads_per_worker=WORKER_OPTIONS["nthreads"],
                processes=True, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                memory_limit=WORKER_OPTIONS["memory_limit"])
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
        expected = {"local": options.workers, "ssh": len(options.ssh) - 1}.get(options.kind)
        if expected:  # started here: every worker registered with the scheduler, not just up
            try:
                client.wait_for_workers(expected, timeout=START_TIMEOUT)
            except TimeoutError as exc:
                raise ClusterError(f"only {len(client.scheduler_info()['workers'])} of "
                                   f"{expected} Dask workers registered in "
                                   f"{START_TIMEOUT:.0f} s") from exc
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

    # Host keys checked against ~/.ssh/known_hosts as ssh does, unless a file is given.
    connect: dict[str, Any] = {"port": options.ssh_port}
    if options.ssh_known_hosts:
        connect["known_hosts"] = str(options.ssh_known_hosts)
    if options.ssh_key:
        connect["client_keys"] = [str(options.ssh_key)]
    if options.ssh_user:
        connect["username"] = options.ssh_user
    try:
        return SSHCluster(list(options.ssh), connect_options=connect,
                          worker_options=dict(WORKER_OPTIONS),
                          # The scheduler (and its dashboard) on the address the user named
                          # for its host, not every interface of it.
                          scheduler_options={"host": options.ssh[0], "port": 0,
                                             "dashboard_address": f"{options.ssh[0]}:0"},
                          remote_python=sys.executable)
    except Exception as exc:  # asyncssh's and Dask's own errors: one line for the user
        raise ClusterError(f"SSHCluster on {', '.join(options.ssh)} failed: "
                           f"{type(exc).__name__}: {exc}") from exc


