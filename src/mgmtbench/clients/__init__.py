"""Client adapters: one module per library, found by name.

``ADAPTERS`` maps a client name (as in test ids and results) to ``module:Class``; modules are
imported on demand, so a missing optional library only matters to the adapters that need it and
gives an install hint (:meth:`Client.missing`).
"""

from __future__ import annotations

import importlib

from mgmtbench.clients.base import (
    HTTPS_MODES,
    SSH_MODES,
    AnyClient,
    AsyncClient,
    Client,
    ClientError,
    Target,
    Transport,
)

ADAPTERS: dict[str, str] = {
    "paramiko": "mgmtbench.clients.paramiko_client:ParamikoClient",
    "ssh2": "mgmtbench.clients.ssh2_client:Ssh2Client",
    "pssh-ssh2": "mgmtbench.clients.pssh_client:PsshSsh2Client",
    "pssh-ssh": "mgmtbench.clients.pssh_client:PsshSshClient",
    "asyncssh": "mgmtbench.clients.asyncssh_client:AsyncsshClient",
    "openssh": "mgmtbench.clients.openssh_client:OpensshClient",
    "httpx": "mgmtbench.clients.httpx_client:HttpxClient",
    "httpx-async": "mgmtbench.clients.httpx_client:HttpxAsyncClient",
    "netmiko": "mgmtbench.clients.netmiko_client:NetmikoClient",
    "scrapli-bin": "mgmtbench.clients.scrapli_client:ScrapliBinClient",
    "scrapli-ssh2": "mgmtbench.clients.scrapli_client:ScrapliSsh2Client",
}

__all__ = ["ADAPTERS", "HTTPS_MODES", "SSH_MODES", "AnyClient", "AsyncClient", "Client",
           "ClientError", "Target", "Transport", "adapter", "pairs"]


def adapter(name: str) -> type[Client] | type[AsyncClient]:
    """The adapter class for client ``name``."""
    if name not in ADAPTERS:
        from mgmtbench.errors import UsageError

        raise UsageError(f"unknown client {name!r}: choose one of {', '.join(ADAPTERS)}")
    module, _, cls = ADAPTERS[name].partition(":")
    found: type[Client] | type[AsyncClient] = getattr(importlib.import_module(module), cls)
    return found


def pairs() -> list[tuple[str, str]]:
    """Every (client, mode) pair an adapter supports, in a stable order."""
    return [(name, mode) for name in ADAPTERS for mode in adapter(name).modes]
