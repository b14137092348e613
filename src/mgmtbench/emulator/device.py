"""A device: its platform, its facts (hostname, serial ...) and its state shared by all sessions."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace

from mgmtbench.emulator.config import RunningConfig
from mgmtbench.emulator.filesystem import DEFAULT_SIZE, DeviceFileSystem
from mgmtbench.emulator.transcripts import CommandWords, Platform, render
from mgmtbench.emulator.windows import WindowLog

RUNNING_CONFIG: CommandWords = ("show", "running-config")
HOSTNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True)
class DeviceFacts:
    """What a device's transcripts are filled with."""

    hostname: str
    serial: str
    mac: str
    mgmt_ip: str

    @classmethod
    def for_hostname(cls, hostname: str, mgmt_ip: str = "198.18.0.1") -> DeviceFacts:
        """Facts derived from the hostname, so the same name always gives the same device."""
        digest = hashlib.sha256(hostname.encode()).hexdigest().upper()
        serial = "FTX" + digest[:8]
        mac = f"5254.{digest[8:12]}.{digest[12:16]}".lower()
        return cls(hostname=hostname, serial=serial, mac=mac, mgmt_ip=mgmt_ip)

    def as_dict(self) -> dict[str, str]:
        """The facts as the variables that transcript templates are rendered with."""
        return {"hostname": self.hostname, "serial": self.serial, "mac": self.mac,
                "mgmt_ip": self.mgmt_ip}


class Device:
    """One emulated device. Sessions share its running configuration, hostname and file system
    (``files``: ``flash:`` or the platform's, ``file_system_size`` bytes, in memory)."""

    def __init__(
        self,
        platform: Platform,
        facts: DeviceFacts,
        *,
        enable_secret: str,
        processing_delay: float = 0.0,
        file_system_size: int = DEFAULT_SIZE,
    ) -> None:
        self.platform = platform
        self.facts = facts
        self.enable_secret = enable_secret
        self.processing_delay = processing_delay
        self.files = DeviceFileSystem(platform.style.file_system, file_system_size)
        #: The client windows its SSH bulk source saw (:mod:`mgmtbench.emulator.windows`).
        self.ssh_windows = WindowLog()
        self._rendered: dict[CommandWords, str] = {}
        self._config_text: tuple[int, str] | None = None  # (config version, rendered)
        template = platform.transcripts.get(RUNNING_CONFIG)
        self.config = RunningConfig(render(template, facts.as_dict())) if template else None

    @property
    def hostname(self) -> str:
        """The device's current hostname, as its prompt and transcripts show it."""
        return self.facts.hostname

    def set_hostname(self, hostname: str) -> None:
        """Rename the device: its transcripts and running configuration follow the new name."""
        self.facts = replace(self.facts, hostname=hostname)
        self._rendered.clear()
        if self.config is not None:
            self.config.set(f"hostname {hostname}")

    def transcript(self, words: CommandWords) -> str:
        """The output of a transcript command for this device, as of now."""
        if words == RUNNING_CONFIG and self.config is not None:
            # Rendered once per change: every request that shows it shares one string.
            if self._config_text is None or self._config_text[0] != self.config.version:
                self._config_text = (self.config.version, self.config.render())
            return self._config_text[1]
        text = self._rendered.get(words)
        if text is None:
            text = render(self.platform.transcripts[words], self.facts.as_dict())
            self._rendered[words] = text
        return text
