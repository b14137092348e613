"""``asyncssh.connect`` options for a target, shared by the adapter and the fleet runner.

Login follows ``target.auth``: the password only (``client_keys=None, agent_path=None``, as
before); the private key in ``target.key_file`` (``client_keys=[key_file]``, no agent, no
password); or the agent at ``target.agent_socket`` (``agent_path``; asyncssh then also offers its
default key files, ``~/.ssh/id_*``, as OpenSSH does). ``target.algorithms`` become ``kex_algs``,
``encryption_algs``, ``mac_algs`` and ``server_host_key_algs``, in the order given; empty lists keep
asyncssh's defaults. Names asyncssh does not support are refused up front (:func:`check`).

Counting application round trips (:mod:`~mgmtbench.clients.roundtrips`): asyncssh's ``tunnel=``
takes any object with ``create_connection(protocol_factory, host, port)``; :class:`CountingTunnel`
makes the same ``loop.create_connection`` asyncssh makes without one, with the connection's
protocol wrapped so that every arrival and every write is counted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import asyncssh
from asyncssh.encryption import get_encryption_algs
from asyncssh.kex import get_kex_algs
from asyncssh.mac import get_mac_algs
from asyncssh.public_key import get_certificate_algs, get_public_key_algs

from mgmtbench.clients.asyncssh.knobs import AES128_GCM, KEX_ORDER
from mgmtbench.clients.base import check_algorithm_names, require_credentials
from mgmtbench.clients.roundtrips import RoundTripCounter, counting_protocol
from mgmtbench.errors import AuthenticationFailed, ClientError, ClientTimeout, ConnectionFailed
from mgmtbench.targets import Auth, Target

ERRORS = {
    asyncssh.Error: ClientError,
    asyncssh.PermissionDenied: AuthenticationFailed,
    asyncssh.ConnectionLost: ConnectionFailed,
    asyncssh.DisconnectError: ConnectionFailed,
    asyncssh.KeyImportError: AuthenticationFailed,
    OSError: ConnectionFailed,
    EOFError: ConnectionFailed,
    TimeoutError: ClientTimeout,  # also asyncio.TimeoutError
}

#: SshAlgorithms field -> (connect option, the names asyncssh supports).
_OPTIONS = {
    "kex": ("kex_algs", get_kex_algs),
    "ciphers": ("encryption_algs", get_encryption_algs),
    "macs": ("mac_algs", get_mac_algs),
    "host_key": ("server_host_key_algs", lambda: get_public_key_algs() + get_certificate_algs()),
}


def check(target: Target) -> None:
    """:class:`~mgmtbench.errors.UsageError` for a choice asyncssh cannot make."""
    check_algorithm_names("asyncssh", target, _supported)
    require_credentials("asyncssh", target)


def _supported(field: str) -> list[str]:
    return [name.decode() for name in _OPTIONS[field][1]()]


def connect_options(target: Target, known_hosts: Any,
                    tuned_with: Callable[[str], bool] = lambda knob: False) -> dict[str, Any]:
    """Keyword arguments of ``asyncssh.connect`` for ``target`` (``known_hosts`` as asyncssh
    takes it: a path, a parsed ``SSHKnownHosts``, or None for no check), with the knobs
    (:mod:`.knobs`) that ``tuned_with`` (the client's) says it runs with; a choice the target
    makes itself wins over a knob's."""
    options: dict[str, Any] = {"host": target.host, "port": target.ssh_port,
                               "username": target.username, "known_hosts": known_hosts}
    if target.auth is Auth.PASSWORD:
        options.update(password=target.password, client_keys=None, agent_path=None)
    elif target.auth is Auth.KEY:
        options.update(client_keys=[str(target.key_file)], agent_path=None, password=None)
    else:
        options.update(agent_path=str(target.agent_socket), password=None)
    if tuned_with(AES128_GCM.name):
        options["encryption_algs"] = "^aes128-gcm@openssh.com"
    if tuned_with(KEX_ORDER.name):
        options["kex_algs"] = "^curve25519-sha256,ecdh-sha2-nistp256"
    for field, (option, _) in _OPTIONS.items():
        if chosen := getattr(target.algorithms, field):
            options[option] = list(chosen)
    return options


class CountingTunnel:
    """asyncssh's ``tunnel=`` for a direct TCP connection whose round trips go into ``counter``."""

    def __init__(self, counter: RoundTripCounter) -> None:
        self.counter = counter

    async def create_connection(self, protocol_factory: Callable[[], asyncio.Protocol],
                                host: str, port: int) -> tuple[asyncio.BaseTransport, Any]:
        """Connect to ``host``:``port`` as asyncssh does; its connection object comes back as
        the session."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.create_connection(
            counting_protocol(protocol_factory, self.counter), host, port)
        return transport, protocol.inner

    def close(self) -> None:
        """Nothing to close: the connection closes its own transport."""

    async def wait_closed(self) -> None:
        """Nothing to wait for."""
