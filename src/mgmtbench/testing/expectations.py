"""Expected answers for a lab's devices, in the form a fleet worker checks them (sha256)."""

from __future__ import annotations

from mgmtbench.emulator.oracle import expected_digest
from mgmtbench.lab.facts import LabLike


def expected_digests(lab: LabLike, command: str, *, count: int | None = None,
                     platform: str = "cisco_ios") -> list[str]:
    """The sha256 of what each of the first ``count`` devices of ``lab`` (all by default) must
    answer to ``command``: its own hostname and address."""
    devices = list(lab.devices) if count is None else list(lab.devices)[:count]
    return [expected_digest(platform, d.hostname, d.reported_ip, [command]) for d in devices]
