"""The expected-output oracle: what a device must answer, computed from the transcripts alone.

Benchmarks and tests check every answer a client returns against this (a fast wrong answer
fails). The oracle builds the device the emulator would build for the same facts (hostname and
management address) and renders the transcripts: no server, no session state.

A device's clock, uptimes and interface counters run (:mod:`.clock`), and its clock starts at
the host's time when it is made (so its boot time is a few seconds apart from the oracle's
device's), so an answer is compared in its stable form (:func:`stable_output`): those values
masked with the platform's own masks for live devices (``volatile`` and ``counters`` in its
``platform.toml``), every other character compared. Digests (:func:`expected_digest`,
:func:`output_digest`) are of the stable form.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from datetime import datetime

from mgmtbench.emulator.device.device import Device, DeviceFacts
from mgmtbench.emulator.device.transcripts import load_platform


def expected_output(platform: str, hostname: str, address: str, commands: Sequence[str], *,
                    clock_start: datetime | str | None = None) -> str:
    """What the device ``hostname`` at ``address`` prints for ``commands``, concatenated (its
    clock started at ``clock_start``, as ``mgmtbench serve --clock-start``: the host's time by
    default, ``"transcript"`` for the transcripts' moment)."""
    loaded = load_platform(platform)
    facts = DeviceFacts.for_hostname(hostname, mgmt_ip=address,
                                     form=loaded.style.identity.facts)
    device = Device(loaded, facts, enable_secret="-", clock_start=clock_start)
    return "".join(device.transcript(tuple(c.split())) for c in commands)


def stable_output(platform: str, text: str) -> str:
    """``text`` with what changes by itself on the device masked: the clock, uptimes, counters
    (:func:`mgmtbench.targets.stable.mask` with the platform's masks)."""
    from mgmtbench.targets.platforms import inventory_platforms
    from mgmtbench.targets.stable import mask

    known = inventory_platforms().get(platform)
    return mask(text, known) if known is not None else text


def same_output(platform: str, got: str | bytes, want: str | bytes) -> bool:
    """Whether a device's answer ``got`` is the expected ``want`` once both are stable (bytes
    are ASCII text)."""
    if got == want:
        return True
    text = [v.decode("ascii", "replace") if isinstance(v, bytes) else v for v in (got, want)]
    return stable_output(platform, text[0]) == stable_output(platform, text[1])


def output_digest(platform: str, text: str) -> str:
    """The sha256 (hex) of ``text``'s stable form (:func:`stable_output`)."""
    stable = stable_output(platform, text)
    return hashlib.sha256(stable.encode("ascii", "replace")).hexdigest()


def expected_digest(platform: str, hostname: str, address: str, commands: Sequence[str]) -> str:
    """The digest (:func:`output_digest`) of :func:`expected_output`, for checks in another
    process."""
    return output_digest(platform, expected_output(platform, hostname, address, commands))


def show_commands(platform: str, count: int) -> list[str]:
    """``count`` show commands, cycling through the platform's everyday ones
    (``show_commands`` in its ``platform.toml``)."""
    everyday = load_platform(platform).style.show_commands
    return list(itertools.islice(itertools.cycle(everyday), count))
