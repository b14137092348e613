"""What a device keeps of its configuration besides the running one: the startup configuration
(NVRAM: ``show startup-config``, ``write memory``, ``copy ... startup-config``) and the names of
the configuration archive's files (``archive`` / ``path``: ``show archive``), which live in the
device file system. Shared by every session of the device."""

from __future__ import annotations

from collections.abc import Mapping

from mgmtbench.emulator.configdiff import body
from mgmtbench.emulator.transcripts import render

#: NVRAM size of the emulated IOS-XE router (``32768K bytes of non-volatile configuration
#: memory`` in its ``show version``): what ``show startup-config`` reports.
NVRAM_SIZE = 32768 * 1024


class ConfigStore:
    """The startup configuration (the boot configuration until something is saved) and the
    configuration archive's file names, oldest first."""

    def __init__(self, boot_template: str | None, facts: Mapping[str, str]) -> None:
        self._boot = (boot_template, dict(facts))  # rendered on first use: fleets are large
        self._startup: str | None = None
        self.archive: list[str] = []  # file names (``flash:archive-...-0``), oldest first
        self.archived = 0  # archive files made so far: the next one's number

    @property
    def startup(self) -> str:
        """The startup configuration's text (empty if the device has none)."""
        if self._startup is None:
            template, facts = self._boot
            self._startup = body(render(template, facts)) if template else ""
        return self._startup

    @startup.setter
    def startup(self, text: str) -> None:
        self._startup = text
