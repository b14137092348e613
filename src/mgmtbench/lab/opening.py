"""The one rule for which lab to make: a lab network in namespaces where this process may build
one (CAP_NET_ADMIN), else loopback for what needs no network, else one sentence on why not."""

from __future__ import annotations

from mgmtbench.emulator.options import Credentials, SshServerOptions
from mgmtbench.errors import LabNeedsPrivileges
from mgmtbench.lab.lab import Lab, has_net_admin
from mgmtbench.lab.local import LocalLab
from mgmtbench.lab.profiles import LinkProfile, resolve


def open_lab(
    profile: LinkProfile | str,
    *,
    devices: int = 1,
    platform: str = "cisco_ios",
    hostname: str = "R1",
    credentials: Credentials | None = None,
    backend: str = "auto",
    runtime: str = "netns",
    image: str | None = None,
    emulator_processes: int = 1,
    ssh: SshServerOptions | None = None,
    calibration_samples: int = 20,
) -> Lab | LocalLab:
    """A lab for ``profile``, up: call ``down()`` when done, or use it in a ``with`` block
    (entering a lab that is up does not start it again).

    With CAP_NET_ADMIN (root): a :class:`Lab` in namespaces, whatever the profile. Without: a
    :class:`LocalLab` on loopback when nothing needs a lab network (an unimpaired profile, the
    automatic backend, the netns runtime with one process); otherwise
    :class:`~mgmtbench.errors.LabNeedsPrivileges` (a ``UsageError``) saying what needs one.
    """
    link = resolve(profile) if isinstance(profile, str) else profile
    if has_net_admin():
        return Lab(link, backend=backend, devices=devices, platform=platform, hostname=hostname,
                   credentials=credentials, calibration_samples=calibration_samples,
                   runtime=runtime, image=image, emulator_processes=emulator_processes,
                   ssh=ssh).up()
    reason = needs_lab_network(link, backend=backend, runtime=runtime,
                               emulator_processes=emulator_processes)
    if reason is not None:
        raise LabNeedsPrivileges(f"the lab needs root or CAP_NET_ADMIN to create network namespaces "
                         f"for {reason}; without them only an unimpaired profile (local) runs, "
                         "on 127.0.0.1")
    return LocalLab(link, devices=devices, platform=platform, hostname=hostname,
                    credentials=credentials, calibration_samples=calibration_samples,
                    ssh=ssh).up()


def needs_lab_network(profile: LinkProfile, *, backend: str = "auto", runtime: str = "netns",
                      emulator_processes: int = 1) -> str | None:
    """What in a lab request needs a lab network (None: loopback serves it as asked)."""
    if profile.impaired:
        return f"profile {profile.name} (an impaired link)"
    if backend != "auto":
        return f"link backend {backend}"
    if runtime != "netns":
        return f"device runtime {runtime}"
    if emulator_processes != 1:
        return f"{emulator_processes} emulator processes"
    return None
