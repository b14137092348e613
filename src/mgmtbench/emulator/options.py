"""What an emulator serves: devices, credentials, ports, algorithms and limits."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

HOST_KEY_TYPES = {
    "ed25519": "ssh-ed25519",
    "ecdsa": "ecdsa-sha2-nistp256",
    "rsa": "ssh-rsa",
}


@dataclass(frozen=True)
class Credentials:
    """Who may log in: one user with a password and/or public keys, and the enable secret."""

    username: str = "admin"
    password: str = "admin"
    enable_secret: str = "admin"
    authorized_keys: Path | None = None  # OpenSSH authorized_keys file for public-key auth


@dataclass(frozen=True)
class Limits:
    """Protection against bad clients; every limit gives a device-style refusal, not a crash."""

    max_sessions: int = 1000  # concurrent SSH connections per device
    max_body: int = 1024 * 1024  # bytes of a POST /admin/config body
    max_line: int = 4096  # characters of one command line
    login_timeout: float = 120.0  # seconds to finish SSH authentication (IOS `ip ssh time-out`)


@dataclass(frozen=True)
class Algorithms:
    """SSH algorithm lists offered by the server (None: asyncssh's defaults)."""

    kex: tuple[str, ...] | None = None
    ciphers: tuple[str, ...] | None = None
    macs: tuple[str, ...] | None = None
    compression: tuple[str, ...] = ("none",)


@dataclass(frozen=True)
class EmulatorOptions:
    """Everything ``mgmtbench serve`` and the test fixtures configure."""

    hostname: str = "R1"
    platform: str = "cisco_ios"
    devices: int = 1
    bind: str = "127.0.0.1"
    # One address per device (a lab's fleet): device i listens on addresses[i], all on the same
    # ports. Empty: every device on ``bind``, device i on port + i.
    addresses: tuple[str, ...] = ()
    ssh_port: int = 0  # 0: any free port; with N devices, device i gets port + i
    https_port: int = 0
    credentials: Credentials = field(default_factory=Credentials)
    limits: Limits = field(default_factory=Limits)
    algorithms: Algorithms = field(default_factory=Algorithms)
    host_key_type: str = "ed25519"
    processing_delay: float = 0.0  # seconds of device CPU time per command
    transcripts: Path | None = None  # None: the bundled transcripts
    state_dir: Path | None = None  # where the CA, keys and known_hosts go (None: a temp dir)
    ssh: bool = True
    https: bool = True
    # Explicit hostnames, one per device (a shard of a larger fleet); empty: derived from hostname.
    names: tuple[str, ...] = ()

    def address(self, index: int) -> str:
        return self.addresses[index] if self.addresses else self.bind

    def mgmt_ip(self, index: int) -> str:
        """The address device ``index`` reports as its management address: the one it is served
        on (a lab's), or 198.18.0.1 when served on loopback or a wildcard address."""
        try:
            address = ipaddress.ip_address(self.address(index))
        except ValueError:  # a name such as "localhost"
            return "198.18.0.1"
        if address.is_loopback or address.is_unspecified:
            return "198.18.0.1"
        return str(address)

    def port(self, base: int, index: int) -> int:
        """Device ``index``'s port: the same on every address, or ``base + index`` on one."""
        if not base:
            return 0
        return base if self.addresses else base + index

    def hostnames(self) -> list[str]:
        """Distinct hostnames: ``R1`` for one device, ``R1-001`` ... for a fleet (or ``names``)."""
        if self.names:
            return list(self.names)
        if self.devices == 1:
            return [self.hostname]
        width = max(3, len(str(self.devices)))
        return [f"{self.hostname}-{i:0{width}d}" for i in range(1, self.devices + 1)]
