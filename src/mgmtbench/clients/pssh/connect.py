"""What parallel-ssh's single-host adapters and its fleet runners share: login options, the
refusal of what the library cannot do, error translation, the leaked-descriptor fix and the
``tcp-nodelay`` knob's socket option."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Callable
from functools import cache
from typing import Any

from mgmtbench.clients.base import password_or_key_only
from mgmtbench.clients.translate import ErrorMap, first_line
from mgmtbench.errors import AuthenticationFailed, ClientError, ClientTimeout, ConnectionFailed
from mgmtbench.targets import Auth, Target


def check(client: str, target: Target) -> None:
    """:class:`~mgmtbench.errors.UsageError` for what parallel-ssh cannot do."""
    password_or_key_only(client, target, agent=" (parallel-ssh reads only SSH_AUTH_SOCK)",
                         algorithms=" (parallel-ssh has no option for them)")


def login_options(target: Target, key: str = "pkey") -> dict[str, Any]:
    """User and credentials for a parallel-ssh client (``key="private_key"`` for a
    ``HostConfig``): no agent, no probing of ~/.ssh keys."""
    options: dict[str, Any] = {"user": target.username, "allow_agent": False,
                               "identity_auth": False}
    if target.auth is Auth.KEY:
        options[key] = str(target.key_file)
    else:
        options["password"] = target.password
    return options


def no_delay(client: Any) -> None:
    """``TCP_NODELAY`` on a connected single-host client's socket (the ``tcp-nodelay`` knob):
    parallel-ssh has no option for it, and its public ``sock`` is the only way in."""
    client.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@cache
def no_delay_from_connect(client_class: type[Any]) -> type[Any]:
    """``client_class`` (a parallel-ssh single-host client) with ``TCP_NODELAY`` set as soon as
    its socket is connected, before the handshake (the ``tcp-nodelay-handshake`` knob): an
    override of the private ``_connect_socket``, the only place the socket is made."""

    def _connect_socket(self: Any, *args: Any, **kwargs: Any) -> Any:
        found = super(made, self)._connect_socket(*args, **kwargs)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return found

    made: type[Any] = type(f"NoDelay{client_class.__name__}", (client_class,),
                           {"_connect_socket": _connect_socket,
                            "__module__": client_class.__module__})
    return made


@cache
def error_map() -> ErrorMap:
    """parallel-ssh's, libssh2's and libssh's errors (each back end may be missing)."""
    errors: dict[type[BaseException], type[ClientError]] = {
        OSError: ConnectionFailed, EOFError: ConnectionFailed, TimeoutError: ClientTimeout}
    with contextlib.suppress(ImportError):
        from pssh import exceptions as pssh_exceptions

        errors.update({
            pssh_exceptions.AuthenticationError: AuthenticationFailed,
            pssh_exceptions.PKeyFileError: AuthenticationFailed,
            pssh_exceptions.ConnectionError: ConnectionFailed,
            pssh_exceptions.UnknownHostError: ConnectionFailed,
            pssh_exceptions.NoIPv6AddressFoundError: ConnectionFailed,
            pssh_exceptions.SessionError: ConnectionFailed,
            pssh_exceptions.Timeout: ClientTimeout,
            pssh_exceptions.ShellError: ClientError,
            pssh_exceptions.SSHError: ClientError,
        })
    with contextlib.suppress(ImportError):
        from ssh2.exceptions import SSH2Error

        errors[SSH2Error] = ClientError
    with contextlib.suppress(ImportError):
        from ssh.exceptions import BaseSSHError

        errors[BaseSSHError] = ClientError
    return errors


def message(exc: BaseException) -> str:
    """parallel-ssh's exceptions carry a format and its arguments: put them together."""
    args = exc.args
    if args and isinstance(args[0], str) and "%" in args[0]:
        try:
            return first_line(Exception(args[0] % args[1:]))
        except (TypeError, ValueError):
            pass
    return first_line(exc)


def closer_of_leaked(fd: int) -> Callable[[], None]:
    """A callback that closes descriptor ``fd`` once the library has detached it, if it is still
    the same socket (same inode: the number has not been reused in between)."""
    inode = os.fstat(fd).st_ino

    def close() -> None:
        with contextlib.suppress(OSError):
            if os.fstat(fd).st_ino == inode:
                os.close(fd)

    return close
