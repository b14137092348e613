"""A device: its platform, its facts (hostname, serial ...) and its state shared by all sessions."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

from mgmtbench.emulator.device.activity import Activity
from mgmtbench.emulator.device.clock import DeviceClock, clock_spec, fill
from mgmtbench.emulator.device.config import RunningConfig
from mgmtbench.emulator.device.configstore import ConfigStore
from mgmtbench.emulator.device.derived import DerivedState
from mgmtbench.emulator.device.filesystem import DEFAULT_SIZE, DeviceFileSystem
from mgmtbench.emulator.device.http3 import Http3Counts
from mgmtbench.emulator.device.identity import FactsIdentity, mac_address, made_own, serial_number
from mgmtbench.emulator.device.transcripts import (
    FACT_NAMES,
    PLACEHOLDER,
    CommandWords,
    Platform,
)
from mgmtbench.emulator.device.windows import WindowLog

RUNNING_CONFIG: CommandWords = ("show", "running-config")
HOSTNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$")


@dataclass(frozen=True)
class Heard:
    """One line a client typed: the mode it was typed in, whether the device took it, and what
    it printed (its first 64 KiB)."""

    mode: str
    line: str
    ok: bool
    output: str


@dataclass(frozen=True)
class DeviceFacts:
    """What a device's transcripts are filled with."""

    hostname: str
    serial: str
    mac: str
    mgmt_ip: str

    @classmethod
    def for_hostname(cls, hostname: str, mgmt_ip: str = "198.18.0.1",
                     form: FactsIdentity | None = None) -> DeviceFacts:
        """Facts derived from the hostname, so the same name always gives the same device;
        serial and MAC address in the platform's ``form`` (``platform.style.identity.facts``:
        a Cisco serial such as FDO2213A0PN, a MAC address in a Cisco OUI)."""
        form = form or FactsIdentity()
        digest = hashlib.sha256(hostname.encode()).hexdigest()
        return cls(hostname=hostname, serial=serial_number(form.serial_site, digest),
                   mac=mac_address(form.mac_oui, digest[16:]), mgmt_ip=mgmt_ip)

    def as_dict(self) -> dict[str, str]:
        """The facts as the variables that transcript templates are rendered with."""
        return {"hostname": self.hostname, "serial": self.serial, "mac": self.mac,
                "mgmt_ip": self.mgmt_ip}


class Device:
    """One emulated device. Sessions share its running configuration (``max_config_size`` bytes
    at most; None: no bound), hostname and file system (``files``: ``flash:`` or the
    platform's, ``file_system_size`` bytes, in memory). Its clock starts at ``clock_start``
    (:func:`~.clock.start_moment`: None for the host's time now, ``"transcript"`` for the
    transcripts' moment, or a time)."""

    def __init__(
        self,
        platform: Platform,
        facts: DeviceFacts,
        *,
        enable_secret: str,
        processing_delay: float = 0.0,
        file_system_size: int = DEFAULT_SIZE,
        max_config_size: int | None = None,
        clock_start: datetime | str | None = None,
    ) -> None:
        self.platform = platform
        self.facts = facts
        self.enable_secret = enable_secret
        self.processing_delay = processing_delay
        #: The device's clock: it runs from now, booted at a time its hostname decides; every
        #: time the device shows is read from it.
        self.clock = DeviceClock(clock_spec(platform), facts.hostname, clock_start)
        self.files = DeviceFileSystem(platform.style.file_system, file_system_size,
                                      now=self.clock.epoch)
        #: The client windows its SSH bulk source saw (:mod:`mgmtbench.emulator.device.windows`).
        self.ssh_windows = WindowLog()
        #: What its HTTP/3 server saw (:mod:`mgmtbench.emulator.device.http3`).
        self.http3_counts = Http3Counts()
        #: Its open CLI sessions and the events it logged (:mod:`.activity`).
        self.activity = Activity(self.clock.elapsed, self.clock.now)
        self._rendered: dict[CommandWords, str] = {}
        # Transcripts with the clock's placeholders, split at them.
        self._dynamic: dict[CommandWords, list[str]] = {}
        # (config version, rendered, split at the clock's placeholders if it has any)
        self._config_text: tuple[int, str, list[str] | None] | None = None
        template = platform.transcripts.get(RUNNING_CONFIG)
        # Its header's times (``! Last configuration change at ...``) are the clock's: left as
        # placeholders in the configuration, filled when it is shown (only those: a line typed
        # with ``{{x}}`` in it stays as typed).
        self._config_clock = frozenset(PLACEHOLDER.findall(template or "")) - FACT_NAMES
        self.config = (RunningConfig(fill(template, facts.as_dict()),
                                     indent=platform.style.config_indent,
                                     capacity=max_config_size) if template else None)
        #: The startup configuration and the archive's files (:mod:`.configstore`).
        self.saved = ConfigStore(template, facts.as_dict(), self.clock.values)
        #: Outputs that follow the configuration (show interfaces, byte count ...).
        first = facts.as_dict()
        #: Called after every CLI line any session runs (:meth:`lines_ran`): how a
        #: subscriber hears of a change made by the CLI, NETCONF or gNMI, all of which write
        #: through the CLI. Each watcher decides cheaply whether anything it follows changed.
        self.watchers: list[Callable[[], None]] = []
        #: What clients typed, when someone listens (a list: :mod:`mgmtbench.emulator.coverage`
        #: sets one; None: nobody does, and nothing is kept).
        self.heard: list[Heard] | None = None
        self.derived = (DerivedState(platform, self.config, self._static, self.clock.elapsed,
                                     lambda: fill(template or "", first))
                        if self.config is not None else None)

    @property
    def hostname(self) -> str:
        """The device's current hostname, as its prompt and transcripts show it."""
        return self.facts.hostname

    def set_hostname(self, hostname: str) -> None:
        """Rename the device: its transcripts and running configuration follow the new name."""
        self.facts = replace(self.facts, hostname=hostname)
        self._rendered.clear()
        self._dynamic.clear()
        if self.config is not None:
            self.config.set(f"hostname {hostname}")

    def lines_ran(self) -> None:
        """A CLI session ran a line (which may have changed the configuration): tell the
        :attr:`watchers`."""
        for watcher in list(self.watchers):
            watcher()

    def transcript(self, words: CommandWords) -> str:
        """The output of a transcript command for this device, as of now."""
        if words == RUNNING_CONFIG and self.config is not None:
            # Rendered once per change: every request that shows it shares one string (the
            # clock's times, if its header has any, filled in each time).
            if self._config_text is None or self._config_text[0] != self.config.version:
                text = self.config.render()
                if self.derived is not None:
                    text = self.derived.running_config(text)
                self._config_text = (self.config.version, text,
                                     PLACEHOLDER.split(text) if "{{" in text else None)
            _, text, split = self._config_text
            return text if split is None else self._clocked(split, self._config_clock)
        if self.derived is not None and self.derived.has(words):
            return self.derived.output(words)
        text = self._static(words)
        pieces = self._dynamic.get(words)
        return text if pieces is None else self._clocked(pieces)

    def _clocked(self, pieces: list[str], names: frozenset[str] | None = None) -> str:
        """A text split at the clock's placeholders (text, a placeholder's name, text ...) with
        their values as of now (only those of ``names``, if given: others stay as written)."""
        value = self.clock.value
        return "".join(piece if not odd else value(piece) if names is None or piece in names
                       else f"{{{{{piece}}}}}"
                       for odd, piece in zip(itertools.cycle((False, True)), pieces))

    def _static(self, words: CommandWords) -> str:
        """A transcript filled with the device's facts (its clock placeholders left as they are)."""
        text = self._rendered.get(words)
        if text is None:
            # Every MAC address and module serial of the transcript made this device's own (a
            # fleet's devices share none); the placeholders, its own base MAC and serial among
            # them, filled after.
            own = made_own(self.platform.transcripts[words], self.facts.mac, self.facts.serial,
                           self.platform.style.identity.facts.module_serials)
            text = fill(own, self.facts.as_dict())
            self._rendered[words] = text
            if "{{" in text:
                self._dynamic[words] = PLACEHOLDER.split(text)
        return text
