"""Listening sockets for the servers mgmtbench runs (the emulator's devices, the edge proxy):
bound before their loops serve them, with one clear line when the address cannot be had."""

from __future__ import annotations

import errno
import socket

from mgmtbench.errors import UsageError

__all__ = ["bind_error", "bound"]


def bound(what: str, host: str, port: int, kind: socket.SocketKind) -> socket.socket:
    """A non-blocking socket of ``kind`` bound to ``host:port`` (a TCP one listening, with
    SO_REUSEADDR); a :class:`UsageError` naming ``what`` if it cannot be."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, kind)
    try:
        if kind == socket.SOCK_STREAM:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        if kind == socket.SOCK_STREAM:
            sock.listen(1024)
    except OSError as exc:
        sock.close()
        raise bind_error(what, host, port, exc) from exc
    sock.setblocking(False)
    return sock


def bind_error(what: str, host: str, port: int, exc: OSError) -> UsageError:
    """The one-line error for ``exc`` from binding ``what`` (``SSH``, ``HTTPS`` ...) to
    ``host:port``: in use, not allowed (a port under 1024 without root), or the system's words."""
    if exc.errno == errno.EADDRINUSE:
        return UsageError(f"{what} port {port} on {host} is already in use: "
                          "pick another port or stop what is using it")
    if exc.errno == errno.EACCES:
        return UsageError(f"not allowed to bind {what} port {port} on {host}: "
                          "use a port above 1023 or run as root")
    return UsageError(f"cannot listen for {what} on {host}:{port}: {exc.strerror or exc}")
