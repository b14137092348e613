"""Transfer clients for the SSH algorithm matrix and raw channel throughput, one module per
library, found by name (imported on demand, so a missing library only matters to its client).

See :mod:`.base` for the interface. The names are those the results use. :func:`known_names`
gathers every algorithm name the clients and the servers know (for a library that can only check
names, not list them).
"""

from __future__ import annotations

import importlib

from mgmtbench.clients.algorithms import LISTS, SERVERS, AlgorithmLists, server_lists
from mgmtbench.clients.transfer.base import Negotiated, TransferClient
from mgmtbench.errors import UsageError

__all__ = ["TRANSFER_CLIENTS", "Negotiated", "TransferClient", "known_names", "transfer_client"]

#: Client name -> ``module:Class``, in the order results list them.
TRANSFER_CLIENTS = {
    "openssh": "mgmtbench.clients.transfer.openssh:OpensshTransfer",
    "asyncssh": "mgmtbench.clients.transfer.asyncssh:AsyncsshTransfer",
    "paramiko": "mgmtbench.clients.transfer.paramiko:ParamikoTransfer",
    "ssh2": "mgmtbench.clients.transfer.ssh2:Ssh2Transfer",
    "ssh-python": "mgmtbench.clients.transfer.libssh:LibsshTransfer",
}


def transfer_client(name: str) -> type[TransferClient]:
    """The transfer client class ``name`` (:class:`UsageError` if unknown; a missing library is
    :meth:`TransferClient.missing`'s to report)."""
    if name not in TRANSFER_CLIENTS:
        raise UsageError(f"unknown client {name!r}: choose from {', '.join(TRANSFER_CLIENTS)}")
    module, _, cls = TRANSFER_CLIENTS[name].partition(":")
    found: type[TransferClient] = getattr(importlib.import_module(module), cls)
    return found


def known_names(exclude: str = "") -> AlgorithmLists:
    """Every name a side here knows: both servers' and each installed transfer client's but
    ``exclude``'s (for a library that cannot list its own, only check names)."""
    sides = [server_lists(server) for server in SERVERS]
    for name in TRANSFER_CLIENTS:
        if name != exclude and transfer_client(name).missing() is None:
            sides.append(transfer_client(name).supported())
    return AlgorithmLists.of(*([n for side in sides for n in side.names(which)]
                               for which in LISTS))
