"""Device runtimes by name: ``netns`` (one emulator process in the lab's namespace, the default),
``docker`` (one container per device) and ``sshd`` (a real OpenSSH sshd per device). See
:mod:`.base` for the interface."""

from __future__ import annotations

from mgmtbench.errors import UsageError
from mgmtbench.lab.runtimes.base import DeviceRuntime, DeviceSpec, RuntimeContext, RuntimeOptions
from mgmtbench.lab.runtimes.docker import DEFAULT_IMAGE, DockerRuntime
from mgmtbench.lab.runtimes.netns import NetnsRuntime
from mgmtbench.lab.runtimes.sshd import SshdRuntime

RUNTIMES: dict[str, type[DeviceRuntime]] = {r.name: r for r in (NetnsRuntime, DockerRuntime,
                                                                SshdRuntime)}

__all__ = ["DEFAULT_IMAGE", "RUNTIMES", "DeviceRuntime", "DeviceSpec", "RuntimeContext",
           "RuntimeOptions", "choose"]


def choose(name: str, options: RuntimeOptions | None = None) -> DeviceRuntime:
    """A runtime ready to start, or one sentence on why it cannot run here."""
    if name not in RUNTIMES:
        raise UsageError(f"unknown device runtime {name!r}: choose {', '.join(RUNTIMES)}")
    runtime = RUNTIMES[name]
    made = runtime.from_options(options or RuntimeOptions())  # option errors first: no probing
    reason = runtime.unavailable()
    if reason is not None:
        raise UsageError(f"device runtime {name!r} cannot run here: {reason}")
    return made
