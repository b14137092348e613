"""gRPC errors as mgmtbench's, and what a gNMI target needs (its CA file: gNMI runs over TLS,
verified)."""

from __future__ import annotations

from mgmtbench.clients.translate import Translator, first_line, translate_errors
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    UsageError,
)
from mgmtbench.targets import Auth, Target

try:
    import grpc
except ImportError:  # reported by Client.missing()
    grpc = None

#: Seconds an RPC may take.
TIMEOUT = 30.0


def check_target(client: str, target: Target) -> None:
    """:class:`UsageError` unless the target has a password login, the library's algorithms and
    a CA file to verify the device's certificate with."""
    if target.auth is not Auth.PASSWORD:
        raise UsageError(f"client {client} logs in with gNMI's username and password metadata, "
                         f"not with auth {target.auth.value!r}")
    if not target.algorithms.is_default():
        raise UsageError(f"client {client} speaks gNMI, not SSH: leave the target's algorithms "
                         "empty")
    if not target.gnmi_port:
        raise UsageError(f"client {client}: the target has no gNMI port (a device without YANG "
                         "models serves no gNMI)")
    if target.ca_file is None:
        raise UsageError(f"client {client} verifies the device's TLS certificate: give the "
                         "target a ca_file")


def metadata(target: Target) -> tuple[tuple[str, str], ...]:
    """gNMI's credentials, as call metadata."""
    return (("username", target.username), ("password", target.password))


def _classify(exc: BaseException) -> type[ClientError] | None:
    if grpc is None:
        return None
    if isinstance(exc, grpc.FutureTimeoutError):  # a channel never became ready
        return ConnectionFailed
    if not isinstance(exc, grpc.RpcError):
        return None
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return AuthenticationFailed
    if code == grpc.StatusCode.UNAVAILABLE:
        return ConnectionFailed
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ClientTimeout
    return ClientError


def _describe(exc: BaseException) -> str:
    details = getattr(exc, "details", None)
    code = getattr(exc, "code", None)
    if callable(details) and callable(code):
        return f"{code().name}: {details()}"
    return first_line(exc)


def translating(client: str) -> Translator:
    """gRPC's errors (and OS errors) as :class:`ClientError` subclasses, named after
    ``client``."""
    return translate_errors(client, {OSError: ConnectionFailed, TimeoutError: ClientTimeout},
                            describe=_describe, classify=_classify)
