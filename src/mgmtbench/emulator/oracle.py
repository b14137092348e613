"""The expected-output oracle: what a device must answer, computed from the transcripts alone.

Benchmarks and tests check every answer a client returns against this (a fast wrong answer
fails). The oracle builds the device the emulator would build for the same facts (hostname and
management address) and renders the transcripts: no server, no session state.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence

from mgmtbench.emulator.device import Device, DeviceFacts
from mgmtbench.emulator.transcripts import load_platform


def expected_output(platform: str, hostname: str, address: str, commands: Sequence[str]) -> str:
    """What the device ``hostname`` at ``address`` prints for ``commands``, concatenated."""
    facts = DeviceFacts.for_hostname(hostname, mgmt_ip=address)
    device = Device(load_platform(platform), facts, enable_secret="-")
    return "".join(device.transcript(tuple(c.split())) for c in commands)


def expected_digest(platform: str, hostname: str, address: str, commands: Sequence[str]) -> str:
    """The sha256 (hex) of :func:`expected_output`, for checks in another process."""
    text = expected_output(platform, hostname, address, commands)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def show_commands(platform: str, count: int) -> list[str]:
    """``count`` show commands, cycling through the platform's everyday ones
    (``show_commands`` in its ``platform.toml``)."""
    everyday = load_platform(platform).style.show_commands
    return list(itertools.islice(itertools.cycle(everyday), count))
