"""The one registry of client libraries: every subpackage of :mod:`mgmtbench.clients` that
declares ``CLIENTS`` in its ``__init__``.

A library's package says what it offers, without importing the library itself::

    # mgmtbench/clients/paramiko/__init__.py
    CLIENTS = [ClientSpec(name="paramiko", order=10,
                          adapter="mgmtbench.clients.paramiko.adapter:ParamikoClient",
                          fleet="mgmtbench.clients.paramiko.fleet:ParamikoFleet")]

Adding a library is adding such a package (and its pip extra): nothing else lists clients.
Clients are sorted by ``order`` (then name), which fixes the order of test ids and benchmarks;
the classes are imported only when asked for, so a missing optional library only matters to the
clients that need it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from mgmtbench.clients.tuning import Knob, shipped_name, with_knobs
from mgmtbench.errors import UsageError

if TYPE_CHECKING:
    from mgmtbench.clients.base import AsyncClient, Client
    from mgmtbench.clients.fleet.base import FleetRunner

__all__ = ["ClientSpec", "adapter_class", "clients", "fleet_class", "knob_clients", "knobs_of",
           "tuning_clients"]

#: The clients package (this module's: found without importing it), whose sub-packages declare
#: the clients.
_PACKAGE = __name__.rpartition(".")[0]
_PACKAGE_DIR = Path(__file__).parent


@dataclass(frozen=True)
class ClientSpec:
    """One client: its name (as in test ids and results), its place in the order, and where its
    single-session adapter and (optionally) its fleet runner live, as ``module:Class``."""

    name: str
    order: int
    adapter: str
    fleet: str | None = None
    #: Where the library's knobs are, as ``module:NAME`` (a tuple of
    #: :class:`~mgmtbench.clients.tuning.Knob`, in a module that imports nothing of the library):
    #: each is a client of its own, ``<name>+<knob>`` (:func:`knob_clients`).
    knobs: str | None = None


@cache
def clients() -> Mapping[str, ClientSpec]:
    """Every declared client by name, in the stable order."""
    found: list[ClientSpec] = []
    for info in pkgutil.iter_modules([str(_PACKAGE_DIR)], prefix=f"{_PACKAGE}."):
        if not info.ispkg:
            continue
        declared = getattr(importlib.import_module(info.name), "CLIENTS", None)
        if declared is not None:
            found.extend(declared)
    found.sort(key=lambda spec: (spec.order, spec.name))
    by_name: dict[str, ClientSpec] = {}
    for spec in found:
        if spec.name in by_name:
            raise UsageError(f"client {spec.name!r} is declared twice: rename one")
        by_name[spec.name] = spec
    return by_name


def _load(path: str) -> object:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def knobs_of(name: str) -> tuple[Knob, ...]:
    """The knobs the library of client ``name`` declares (none if it declares none)."""
    spec = clients().get(shipped_name(name))
    if spec is None or spec.knobs is None:
        return ()
    found: tuple[Knob, ...] = _load(spec.knobs)  # type: ignore[assignment]
    return found


def knob_clients() -> list[str]:
    """Every library with one of its knobs, ``<library>+<knob>``, in the clients' order: clients
    that only ``--clients`` names (the knob benchmark), not the default matrix."""
    return [f"{name}+{knob.name}" for name in clients() for knob in knobs_of(name)
            if "+" not in name]


def tuning_clients() -> list[str]:
    """What ``--clients tuned`` runs: every library that declares knobs, as shipped, with each
    knob alone, and its ``+tuned`` clients (those declared), library by library."""
    out: list[str] = []
    for name in clients():
        if "+" not in name and knobs_of(name):
            out += [name, *(f"{name}+{knob.name}" for knob in knobs_of(name) if knob.correct),
                    *(tuned for tuned in clients() if tuned.startswith(name + "+"))]
    return out


def adapter_class(name: str) -> type[Client] | type[AsyncClient]:
    """The adapter class for client ``name``, a declared client or ``<library>+<knob>[+...]``
    (:class:`UsageError` for an unknown name)."""
    known = clients()
    if name not in known:
        if "+" in name and shipped_name(name) in known and knobs_of(name):
            return _with_knobs(name)
        raise UsageError(f"unknown client {name!r}: choose one of {', '.join(known)} (or "
                         "<library>+<knob>, one of {', '.join(knob_clients())})")
    found: type[Client] | type[AsyncClient] = _load(known[name].adapter)  # type: ignore[assignment]
    return found


@cache
def _with_knobs(name: str) -> type[Client] | type[AsyncClient]:
    """``<library>+<knob>[+...]``: one class per name, however often asked for."""
    return with_knobs(adapter_class(shipped_name(name)), name.split("+")[1:])


def fleet_class(name: str) -> type[FleetRunner]:
    """The fleet runner class for client ``name`` (:class:`UsageError` if it has none)."""
    with_fleet = [spec.name for spec in clients().values() if spec.fleet]
    spec = clients().get(name)
    if spec is None or spec.fleet is None:
        raise UsageError(f"no fleet runner for client {name!r}: choose one of "
                         f"{', '.join(with_fleet)}")
    found: type[FleetRunner] = _load(spec.fleet)  # type: ignore[assignment]
    return found
