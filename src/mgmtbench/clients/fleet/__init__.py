"""Fleet runners: each library driven at concurrency the way its users scale out, one module per
library (:mod:`~mgmtbench.clients.fleet.base` has the interface and the phases).

``FLEET_RUNNERS`` maps a client name (the same names as the single-session adapters) to
``module:Class``; modules are imported on demand. Runs happen in a worker process of their own
(:mod:`~mgmtbench.clients.fleet.worker`) so that CPU time and peak memory are the client's alone.
"""

from __future__ import annotations

import importlib

from mgmtbench.clients.fleet.base import PHASES, FleetRunner, SessionTimes
from mgmtbench.errors import UsageError

FLEET_RUNNERS: dict[str, str] = {
    "paramiko": "mgmtbench.clients.fleet.paramiko_fleet:ParamikoFleet",
    "pssh-ssh2": "mgmtbench.clients.fleet.pssh_fleet:PsshSsh2Fleet",
    "pssh-ssh": "mgmtbench.clients.fleet.pssh_fleet:PsshSshFleet",
    "asyncssh": "mgmtbench.clients.fleet.asyncssh_fleet:AsyncsshFleet",
    "openssh": "mgmtbench.clients.fleet.openssh_fleet:OpensshFleet",
    "httpx-async": "mgmtbench.clients.fleet.httpx_fleet:HttpxFleet",
    "netmiko": "mgmtbench.clients.fleet.netmiko_fleet:NetmikoFleet",
    "scrapli-bin": "mgmtbench.clients.fleet.scrapli_fleet:ScrapliBinFleet",
    "scrapli-ssh2": "mgmtbench.clients.fleet.scrapli_fleet:ScrapliSsh2Fleet",
}

__all__ = ["FLEET_RUNNERS", "PHASES", "FleetRunner", "SessionTimes", "fleet_runner"]


def fleet_runner(name: str) -> type[FleetRunner]:
    """The fleet runner class for client ``name``."""
    if name not in FLEET_RUNNERS:
        raise UsageError(f"no fleet runner for client {name!r}: choose one of "
                         f"{', '.join(FLEET_RUNNERS)}")
    module, _, cls = FLEET_RUNNERS[name].partition(":")
    found: type[FleetRunner] = getattr(importlib.import_module(module), cls)
    return found
