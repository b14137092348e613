"""A local Dask cluster whose workers each live in a network namespace of their own.

The scheduler runs in this process, on the hub's host end (:mod:`.hub`); each worker is a
``distributed.Worker`` process started in its namespace (``python -m mgmtbench.lab.nsexec``), the
way Dask's own ``SSHCluster`` starts one on a remote host (``distributed.cli.dask_spec``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import distributed
from distributed.deploy.spec import ProcessInterface

from mgmtbench.errors import ClusterError
from mgmtbench.scaleout.hub import Hub
from mgmtbench.scaleout.options import WORKER_OPTIONS

START_TIMEOUT = float(os.environ.get("MGMTBENCH_DASK_START_TIMEOUT", "120"))


class NamespaceCluster(distributed.SpecCluster):
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
            host = self.hub.scheduler_ip
            scheduler = {"cls": distributed.Scheduler, "options": {
                "host": host, "port": 0, "dashboard_address": f"{host}:0"}}
            super().__init__(workers=specs, scheduler=scheduler, name="mgmtbench")  # type: ignore[no-untyped-call]
        except BaseException:
            self.hub.down()
            raise

    def close(self, timeout: float | None = None) -> Any:
        """Stop the workers and the scheduler, then remove the namespaces."""
        try:
            return super().close(timeout=timeout)
        finally:
            self.hub.down()
            shutil.rmtree(self.logs, ignore_errors=True)


class NamespaceWorker(ProcessInterface):
    """One ``distributed.Worker`` process in network namespace ``netns``, listening on
    ``address``; its output goes to ``log`` (read for its start, quoted when it fails)."""

    def __init__(self, scheduler: str, *, name: str, netns: str, address: str,
                 log: Path) -> None:
        super().__init__(scheduler=scheduler, name=name)  # type: ignore[no-untyped-call]
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
        await super().start()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """SIGTERM (the worker closes cleanly), SIGKILL after 20 s."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        await super().close()  # type: ignore[no-untyped-call]

    def _log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""
