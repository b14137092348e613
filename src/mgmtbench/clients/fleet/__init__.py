"""Fleet runners: each library driven at concurrency the way its users scale out, each in its
library's package next to its adapter (:mod:`~mgmtbench.clients.fleet.base` has the interface and
the phases; :mod:`~mgmtbench.clients.fleet.adapted` runs a single-session adapter in threads).

``FLEET_RUNNERS`` maps each client name that has a runner (declared with ``fleet=`` in its
package's ``CLIENTS``, see :mod:`~mgmtbench.clients.registry`) to its spec, in the clients' order;
modules are imported on demand. Runs happen in a worker process of their own
(:mod:`~mgmtbench.clients.fleet.worker`) so that CPU time and peak memory are the client's alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from mgmtbench.clients.fleet.base import PHASES, FleetRunner, SessionTimes
from mgmtbench.clients.registry import ClientSpec, clients, fleet_class

FLEET_RUNNERS: Mapping[str, ClientSpec] = {
    name: spec for name, spec in clients().items() if spec.fleet is not None}

__all__ = ["FLEET_RUNNERS", "PHASES", "FleetRunner", "SessionTimes", "fleet_runner"]


def fleet_runner(name: str) -> type[FleetRunner]:
    """The fleet runner class for client ``name`` (:class:`~mgmtbench.errors.UsageError` if it
    has none)."""
    return fleet_class(name)
