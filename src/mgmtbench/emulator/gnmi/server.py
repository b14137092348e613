"""Serving gNMI: one ``grpc.aio`` server per device, on the emulator's own event loop, with the
device's TLS certificate (the emulator's CA, :mod:`mgmtbench.emulator.https.tls`).

Why ``grpc.aio`` on the loop and not grpc's thread-pool server beside it: the device and its
CLI live on the loop's thread, so an aio handler reads them directly, while a thread-pool
handler has to hand every call over to the loop and wait (``run_coroutine_threadsafe``); the
README's gNMI section has the figures (warm-channel Get latency and server CPU, both ways).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.gnmi.paths import PathError
from mgmtbench.emulator.gnmi.protos import grpc, pb, rpc
from mgmtbench.emulator.gnmi.service import Credentials, DeviceGnmi, GnmiError, invalid
from mgmtbench.emulator.gnmi.subscribe import Subscription
from mgmtbench.errors import UsageError

#: The port devices serve gNMI on (IANA's gnmi, 9339).
GNMI_PORT = 9339


class GnmiServicer:
    """The gRPC methods of one device's gNMI service (``gnmi.gNMI``), errors as statuses."""

    def __init__(self, service: DeviceGnmi) -> None:
        self.service = service

    async def _abort(self, context: Any, exc: GnmiError | PathError) -> None:
        error = invalid(str(exc)) if isinstance(exc, PathError) else exc
        await context.abort(error.code, str(error))

    async def Capabilities(self, request: Any, context: Any) -> Any:
        """``Capabilities``."""
        try:
            self.service.check_auth(context.invocation_metadata())
            self.service.count("Capabilities")
            return self.service.capabilities()
        except (GnmiError, PathError) as exc:
            await self._abort(context, exc)
            raise  # abort raised already

    async def Get(self, request: Any, context: Any) -> Any:
        """``Get``."""
        try:
            self.service.check_auth(context.invocation_metadata())
            self.service.count("Get")
            return self.service.get(request)
        except (GnmiError, PathError) as exc:
            await self._abort(context, exc)
            raise

    async def Set(self, request: Any, context: Any) -> Any:
        """``Set``."""
        try:
            self.service.check_auth(context.invocation_metadata())
            self.service.count("Set")
            return self.service.set(request)
        except (GnmiError, PathError) as exc:
            await self._abort(context, exc)
            raise

    async def Subscribe(self, requests: AsyncIterator[Any], context: Any) -> None:
        """``Subscribe`` (:mod:`.subscribe`)."""
        try:
            self.service.check_auth(context.invocation_metadata())
            await Subscription(self.service, context.read, context.write).run()
        except (GnmiError, PathError) as exc:
            await self._abort(context, exc)


def server_credentials(cert: Path, key: Path) -> Any:
    """gRPC's TLS credentials from the device's certificate chain and key (PEM files)."""
    return grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])


async def serve_gnmi(device: Device, host: str, port: int, credentials: Credentials,
                     tls: Any) -> tuple[Any, int, DeviceGnmi]:
    """Start one device's gNMI server on ``host:port`` (0: any free port); the server, the
    port it got and the service (for its counts)."""
    service = DeviceGnmi(device, credentials)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    rpc.add_gNMIServicer_to_server(GnmiServicer(service), server)
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        bound = server.add_secure_port(address, tls)
    except RuntimeError as exc:
        bound = 0
        reason = str(exc)
    else:
        reason = "the address is in use or cannot be bound"
    if not bound:
        await server.stop(None)
        raise UsageError(f"gNMI port {port} on {host} cannot be used ({reason}): pick another "
                         "port or stop what is using it")
    await server.start()
    return server, int(bound), service


__all__ = ["GNMI_PORT", "GnmiServicer", "pb", "serve_gnmi", "server_credentials"]
