"""A platform's own HTTP API beside its CLI: Arista's eAPI (:mod:`.eapi`), and the others a
platform names in its ``platform.toml`` (``apis = ["eapi"]``).

Each API is a module here with ``PATH`` (where it answers) and ``answer(device, request)``; the
device's HTTPS server (:mod:`mgmtbench.emulator.https.server`) hands it the requests to that
path, authenticated. Every API runs its commands in a :class:`~mgmtbench.emulator.cli.session.
CliSession`, so it shows the same state as the CLI, in the platform's structured form
(:mod:`mgmtbench.emulator.structured`) where the client asks for it.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.options import Limits

__all__ = ["ApiAnswer", "ApiRequest", "api_for"]


@dataclass(frozen=True)
class ApiRequest:
    """One authenticated request to a platform API."""

    method: str
    body: bytes
    content_type: str
    limits: Limits


@dataclass(frozen=True)
class ApiAnswer:
    """A platform API's reply."""

    status: int
    content_type: str
    body: bytes


Handler = Callable[[Device, ApiRequest], Awaitable[ApiAnswer]]


@cache
def _module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{name}")


def api_for(device: Device, path: bytes) -> Handler | None:
    """The handler of the API of ``device``'s platform that answers at ``path``, or None."""
    for name in device.platform.style.apis:
        module = _module(name)
        if path == module.PATH:
            handler: Handler = module.answer
            return handler
    return None
