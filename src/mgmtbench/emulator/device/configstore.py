"""What a device keeps of its configuration besides the running one: the startup configuration
(NVRAM: ``show startup-config``, ``write memory``, ``copy ... startup-config``) and the names of
the configuration archive's files (``archive`` / ``path``: ``show archive``), which live in the
device file system. Shared by every session of the device."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mgmtbench.emulator.device.config import body
from mgmtbench.emulator.device.transcripts import render

#: NVRAM size of the emulated IOS-XE router (``32768K bytes of non-volatile configuration
#: memory`` in its ``show version``): what ``show startup-config`` reports.
NVRAM_SIZE = 32768 * 1024


@dataclass(frozen=True)
class PendingRevert:
    """A configuration change that reverts unless confirmed (IOS's Rollback Confirmed Change:
    ``configure terminal revert timer N``, ``configure replace ... revert timer N``): when the
    device clock's :meth:`~.clock.DeviceClock.elapsed` reaches ``deadline``, ``fire`` puts the
    configuration back."""

    deadline: float  # device seconds (DeviceClock.elapsed)
    minutes: int
    user: str
    configured: str  # the clock's time when the timer was set or reset, as IOS prints it
    fire: Callable[[], None]


class ConfigStore:
    """The startup configuration (the boot configuration until something is saved) and the
    configuration archive's file names, oldest first. The boot configuration is filled with
    ``facts`` and the device clock's ``times`` (its header's)."""

    def __init__(self, boot_template: str | None, facts: Mapping[str, str],
                 times: Callable[[], Mapping[str, str]] = dict) -> None:
        self._boot = (boot_template, dict(facts))  # rendered on first use: fleets are large
        self._times = times
        self._startup: str | None = None
        self.archive: list[str] = []  # file names (``flash:archive-...-0``), oldest first
        self.archived = 0  # archive files made so far: the next one's number
        #: The change that reverts unless confirmed, if one is pending (:mod:`.revert`).
        self.revert: PendingRevert | None = None

    def expire(self, elapsed: float) -> None:
        """Revert the pending change if its timer ran out by ``elapsed`` device seconds."""
        pending = self.revert
        if pending is not None and elapsed >= pending.deadline:
            self.revert = None
            pending.fire()

    @property
    def startup(self) -> str:
        """The startup configuration's text (empty if the device has none)."""
        if self._startup is None:
            template, facts = self._boot
            self._startup = (body(render(template, {**facts, **self._times()})) if template
                             else "")
        return self._startup

    @startup.setter
    def startup(self, text: str) -> None:
        self._startup = text
