"""The devices behind the edge proxy: name, SSH address and port, platform, and how commands run
on them (an exec channel per command, or an interactive shell).

An inventory file is JSON, ``{"devices": [{"name": "R1", "address": "198.18.4.1"}, ...]}``
(``port`` 22, ``platform`` ``cisco_ios`` and ``session`` ``auto`` by default). A request names a
device by name or by address; the proxy reaches nothing that is not in its inventory.

``session``: ``exec`` sends each command as its own exec request on the SSH connection (a channel
per command, as the published study's proxy does); ``pty`` opens one shell per request, with the
platform's session preparation (``enable`` where the login lands at ``>``, paging off, width) and
the prompt-and-echo steps every PTY client uses (:mod:`mgmtbench.clients.pty`). ``auto`` is the
platform's usual way: exec where the real devices run exec requests (IOS), a shell elsewhere (an
ASA has no exec requests).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from mgmtbench.emulator.device.transcripts import available_platforms
from mgmtbench.errors import UsageError

SESSIONS = ("auto", "exec", "pty")
#: Platforms whose devices accept exec requests (``session auto`` uses exec there, a shell
#: elsewhere).
EXEC_PLATFORMS = frozenset({"cisco_ios"})


@dataclass(frozen=True)
class ProxyDevice:
    """One device the proxy reaches over SSH."""

    name: str
    address: str
    port: int = 22
    platform: str = "cisco_ios"
    session: str = "auto"

    @property
    def uses_exec(self) -> bool:
        """Whether commands go as exec requests (else through a shell)."""
        if self.session == "auto":
            return self.platform in EXEC_PLATFORMS
        return self.session == "exec"

    def check(self) -> ProxyDevice:
        """The device itself, or a one-line UsageError for a bad field."""
        if not self.name or "/" in self.name:
            raise UsageError(f"device name {self.name!r}: give a name without '/'")
        if self.session not in SESSIONS:
            raise UsageError(f"device {self.name}: session {self.session!r}: choose "
                             f"{', '.join(SESSIONS)}")
        if not 1 <= self.port <= 65535:
            raise UsageError(f"device {self.name}: port {self.port} is not a port number")
        platforms = available_platforms()
        if self.platform not in platforms:
            raise UsageError(f"device {self.name}: unknown platform {self.platform!r}: choose "
                             f"{', '.join(platforms)}")
        return self


class Inventory:
    """The proxy's devices, found by name or address."""

    def __init__(self, devices: Iterable[ProxyDevice]) -> None:
        self.devices = [d.check() for d in devices]
        self._by_key: dict[str, ProxyDevice] = {}
        for device in self.devices:
            if device.name in self._by_key:
                raise UsageError(f"device {device.name} is in the inventory twice")
            self._by_key[device.name] = device
        for device in self.devices:
            self._by_key.setdefault(device.address, device)

    def find(self, key: str) -> ProxyDevice | None:
        """The device named ``key``, or else the one at address ``key``."""
        return self._by_key.get(key)

    def __iter__(self) -> Iterator[ProxyDevice]:
        return iter(self.devices)

    def __len__(self) -> int:
        return len(self.devices)

    @classmethod
    def load(cls, path: Path) -> Inventory:
        """An inventory file (see the module docstring)."""
        try:
            raw = json.loads(path.read_text())
            entries = raw["devices"] if isinstance(raw, dict) else raw
            return cls(ProxyDevice(**entry) for entry in entries)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read the proxy inventory {path}: {exc}") from exc

    def save(self, path: Path) -> None:
        """Write the inventory file."""
        path.write_text(json.dumps({"devices": [asdict(d) for d in self.devices]}, indent=1))


def parse_device(spec: str, platform: str = "cisco_ios", session: str = "auto") -> ProxyDevice:
    """``NAME=ADDRESS[:PORT]`` (``--device`` on the command line) as a device."""
    name, sep, where = spec.partition("=")
    address, _, port = where.rpartition(":") if where.count(":") == 1 else (where, "", "")
    if not sep or not name or not address:
        raise UsageError(f"--device {spec!r}: use NAME=ADDRESS or NAME=ADDRESS:PORT")
    try:
        number = int(port) if port else 22
    except ValueError:
        raise UsageError(f"--device {spec!r}: {port!r} is not a port number") from None
    return ProxyDevice(name, address, number, platform, session).check()
