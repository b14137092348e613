"""The device emulator: a Cisco-style CLI over SSH (exec and PTY shell) and the ASA-style HTTPS API.

Both transports drive one command engine (:mod:`.cli.session`), so the same command returns the same
bytes whichever way it is asked. :class:`Emulator` serves one or many devices; :class:`EmulatorThread`
runs it on a background event loop for tests and benchmarks.
"""

from mgmtbench.emulator.cli.session import CliSession, Reply
from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import Platform, available_platforms, load_platform
from mgmtbench.emulator.options import Credentials, EmulatorOptions, Limits
from mgmtbench.emulator.server import DeviceEndpoint, Emulator, EmulatorThread

__all__ = [
    "CliSession",
    "Credentials",
    "Device",
    "DeviceEndpoint",
    "DeviceFacts",
    "Emulator",
    "EmulatorOptions",
    "EmulatorThread",
    "Limits",
    "Platform",
    "Reply",
    "available_platforms",
    "load_platform",
]
