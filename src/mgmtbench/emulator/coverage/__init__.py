"""How much of what automation tools send the emulator answers: each tool (NAPALM, Ansible,
pyATS) run for real against a served device of each platform, the lines the device heard from
it (:attr:`~mgmtbench.emulator.device.device.Device.heard`), which it answered, and which of
the answers the parsers people use (ntc-templates, Genie) parse.

A tool is a module of :mod:`.tools` with ``NAME``, ``PLATFORMS`` (the platforms it has a
driver for, and that driver's name) and ``run(target)`` (its own verdicts: getters, tasks,
connections); a parser a module of :mod:`.parsers` with ``NAME`` and ``parses(platform,
command, text)``. :func:`~.measure.measure` runs one tool on one platform; ``mgmtbench coverage``
prints the table for all of them (:mod:`.command`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Outcome", "Target", "ToolRun"]


@dataclass(frozen=True)
class Target:
    """A served device a tool is pointed at, with the credentials it logs in with."""

    platform: str
    host: str
    ssh_port: int
    https_port: int | None
    hostname: str
    username: str
    password: str
    secret: str
    #: The emulator's CA file (HTTPS APIs), None when it serves no TLS.
    ca_file: str | None = None
    #: Where the tool may write files of its own (Ansible's inventory and playbook).
    workdir: str = ""
    #: The device's NETCONF port (its SSH port when NETCONF is a subsystem there).
    netconf_port: int | None = None


@dataclass(frozen=True)
class Outcome:
    """One thing a tool did (a getter, a task, a connection) and whether it worked."""

    name: str
    ok: bool
    detail: str = ""


@dataclass
class ToolRun:
    """What one tool sent one platform and how that went."""

    tool: str
    platform: str
    driver: str
    outcomes: list[Outcome] = field(default_factory=list)
    #: The distinct exec-mode lines the device heard, and whether it answered each.
    sent: dict[str, bool] = field(default_factory=dict)
    #: parser name -> the answered show commands it parsed, of those it was tried on.
    parsed: dict[str, tuple[int, int]] = field(default_factory=dict)
    error: str = ""

    @property
    def answered(self) -> int:
        """How many of the lines sent the device answered."""
        return sum(self.sent.values())

    @property
    def refused(self) -> list[str]:
        """The lines the device did not answer."""
        return [line for line, ok in self.sent.items() if not ok]
