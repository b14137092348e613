"""The lab as a target source: the emulated devices of a lab, with its trust files."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mgmtbench.targets.base import Login, Target, make_target

if TYPE_CHECKING:
    from mgmtbench.lab.facts import LabLike


def lab_targets(lab: LabLike, login: Login, *, platform: str = "cisco_ios",
                count: int | None = None) -> list[Target]:
    """Targets for the first ``count`` devices of ``lab`` (all by default)."""
    devices = list(lab.devices) if count is None else list(lab.devices)[:count]
    return [make_target(d.address, d.ssh_port, d.https_port, platform=platform, login=login,
                        ca_file=lab.ca_file, known_hosts=lab.known_hosts,
                        netconf_port=getattr(d, "netconf_port", 830),
                        gnmi_port=getattr(d, "gnmi_port", 9339),
                        http3_port=getattr(d, "http3_port", 0) or None) for d in devices]
