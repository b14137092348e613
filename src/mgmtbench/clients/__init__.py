"""Client adapters: one package per library, found by name.

Each library's package (``mgmtbench/clients/<library>/``) declares its clients in its
``__init__`` (``CLIENTS = [ClientSpec(...)]``, see :mod:`~mgmtbench.clients.registry`): adding a
library is adding a package and its pip extra. ``ADAPTERS`` maps every client name (as in test
ids and results), in the stable order, to its :class:`~mgmtbench.clients.registry.ClientSpec`.
Adapter modules are imported on demand, so a missing optional library only matters to the
clients that need it and gives an install hint (:meth:`Client.missing`).
"""

from __future__ import annotations

from collections.abc import Mapping

from mgmtbench.clients.base import (
    HTTPS_MODES,
    SSH_MODES,
    AnyClient,
    AsyncClient,
    Client,
    ClientError,
    Target,
    Transport,
    unserved,
)
from mgmtbench.clients.registry import ClientSpec, adapter_class, clients

ADAPTERS: Mapping[str, ClientSpec] = clients()

__all__ = ["ADAPTERS", "HTTPS_MODES", "SSH_MODES", "AnyClient", "AsyncClient", "Client",
           "ClientError", "ClientSpec", "Target", "Transport", "adapter", "pairs"]


def adapter(name: str) -> type[Client] | type[AsyncClient]:
    """The adapter class for client ``name`` (:class:`~mgmtbench.errors.UsageError` if unknown)."""
    return adapter_class(name)


def pairs(same_process: bool = False, platform: str | None = "cisco_ios") -> list[tuple[str, str]]:
    """Every (client, mode) pair an adapter supports, in a stable order; with ``same_process``
    only the clients that can talk to a server running in this process (not those whose calls
    hold the GIL while they wait: ``blocks_other_threads``). Only the modes a device of
    ``platform`` serves (default: the default device's, cisco_ios; the platform-API modes
    need their platform, :func:`~mgmtbench.clients.base.unserved`); None: every mode."""
    return [(name, mode) for name in ADAPTERS for mode in adapter(name).modes
            if not (same_process and adapter(name).blocks_other_threads)
            and (platform is None or unserved(mode, platform) is None)]
