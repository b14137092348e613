"""Connecting with paramiko, for the adapter and the fleet runner alike.

Login follows ``target.auth``: the password (``look_for_keys=False, allow_agent=False``: no other
method is tried, as before); the private key in ``target.key_file`` (``key_filename``); or the keys
of the ssh-agent at ``target.agent_socket`` (paramiko's own agent only reads ``SSH_AUTH_SOCK``, so
the adapter asks that agent for its keys and offers them in turn as ``pkey``).

``target.algorithms`` become the transport's security options before the handshake
(``Transport.get_security_options()``: ``kex``, ``ciphers``, ``digests``, ``key_types``), in the
order given, through ``SSHClient.connect(transport_factory=...)``; names paramiko does not know are
refused up front (:func:`check`). Empty lists keep paramiko's defaults.

The host key is checked against ``target.known_hosts`` when given (``RejectPolicy``), else
accepted (``AutoAddPolicy``).

With a :class:`~mgmtbench.clients.roundtrips.RoundTripCounter` (``counter=``), the TCP connection
is made here (``socket.create_connection``, as paramiko does it: the address's families in turn,
the time-out for the connect) and handed to paramiko as ``sock=`` inside a
:class:`~mgmtbench.clients.roundtrips.CountingSocket`; paramiko reads and writes through it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import paramiko
from paramiko.agent import AgentSSH

from mgmtbench.clients.base import check_algorithm_names, require_credentials
from mgmtbench.clients.roundtrips import CountingSocket, RoundTripCounter
from mgmtbench.errors import AuthenticationFailed, ClientError, ClientTimeout, ConnectionFailed
from mgmtbench.targets import Auth, SshAlgorithms, Target

ERRORS = {
    paramiko.AuthenticationException: AuthenticationFailed,
    paramiko.SSHException: ClientError,
    paramiko.ssh_exception.NoValidConnectionsError: ConnectionFailed,
    OSError: ConnectionFailed,
    EOFError: ConnectionFailed,
    TimeoutError: ClientTimeout,
}

#: SshAlgorithms field -> (security option, paramiko's table of known names).
_OPTIONS = {
    "kex": ("kex", paramiko.Transport._kex_info),
    "ciphers": ("ciphers", paramiko.Transport._cipher_info),
    "macs": ("digests", paramiko.Transport._mac_info),
    "host_key": ("key_types", paramiko.Transport._key_info),
}


def check(target: Target) -> None:
    """:class:`~mgmtbench.errors.UsageError` for a choice paramiko cannot make."""
    check_algorithm_names("paramiko", target, lambda field: list(_OPTIONS[field][1]))
    require_credentials("paramiko", target)


def _factory(algorithms: SshAlgorithms) -> Any:
    if algorithms.is_default():
        return None

    def transport(sock: Any, disabled_algorithms: Any = None) -> paramiko.Transport:
        made = paramiko.Transport(sock, disabled_algorithms=disabled_algorithms)
        options = made.get_security_options()
        for field, (option, _) in _OPTIONS.items():
            if chosen := getattr(algorithms, field):
                setattr(options, option, chosen)
        return made

    return transport


def _agent(path: str) -> AgentSSH:
    """A connection to the ssh-agent listening at ``path``."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        raise
    agent = AgentSSH()
    agent._connect(sock)  # paramiko.Agent() would read SSH_AUTH_SOCK instead
    return agent


def _counted(target: Target, timeout: float, counter: RoundTripCounter | None,
             nodelay: bool) -> dict[str, Any]:
    """``sock=`` for ``SSHClient.connect``: a new connection (with ``TCP_NODELAY`` if
    ``nodelay``: the ``tcp-nodelay`` knob), counting if given a counter; or nothing (paramiko
    connects itself)."""
    if counter is None and not nodelay:
        return {}
    raw = socket.create_connection((target.host, target.ssh_port), timeout=timeout)
    if nodelay:
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if counter is None:
        return {"sock": raw}
    return {"sock": CountingSocket(raw, counter.connection())}


def connect(target: Target, timeout: float, counter: RoundTripCounter | None = None,
            nodelay: bool = False, **extra: Any) -> paramiko.SSHClient:
    """A connected, authenticated client (closed again if logging in fails); its round trips
    counted into ``counter`` if one is given; ``TCP_NODELAY`` on its socket with ``nodelay``."""
    check(target)
    client = paramiko.SSHClient()
    try:
        if target.known_hosts is not None:
            client.load_host_keys(str(target.known_hosts))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        options: dict[str, Any] = {"look_for_keys": False, "allow_agent": False,
                                   "timeout": timeout, **extra}
        factory = _factory(target.algorithms)
        if factory is not None:
            options["transport_factory"] = factory
        if target.auth is Auth.PASSWORD:
            client.connect(target.host, port=target.ssh_port, username=target.username,
                           password=target.password, **options,
                           **_counted(target, timeout, counter, nodelay))
        elif target.auth is Auth.KEY:
            client.connect(target.host, port=target.ssh_port, username=target.username,
                           key_filename=str(target.key_file), **options,
                           **_counted(target, timeout, counter, nodelay))
        else:
            _connect_with_agent(client, target, options, lambda: _counted(target, timeout, counter, nodelay))
    except BaseException:
        client.close()
        raise
    return client


def _connect_with_agent(client: paramiko.SSHClient, target: Target, options: dict[str, Any],
                        counted: Callable[[], dict[str, Any]]) -> None:
    assert target.agent_socket is not None
    agent = _agent(str(target.agent_socket))
    try:
        keys = list(agent.get_keys())
        if not keys:
            raise AuthenticationFailed(f"paramiko: the agent at {target.agent_socket} has no keys")
        for key in keys:
            try:
                client.connect(target.host, port=target.ssh_port, username=target.username,
                               pkey=key, **options, **counted())  # a new connection per key
                return
            except paramiko.AuthenticationException:
                if key is keys[-1]:
                    raise
    finally:
        agent._close()
