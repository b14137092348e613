"""The edge proxy's open-files limit: enough descriptors for its caps, raised at start.

A process starts with the soft limit its shell gave it (``ulimit -n``, often 1,024): fewer than
the proxy's HTTPS connection cap and its SSH connections together, so before this a flood ran it
out of descriptors (``accept`` failing in a loop, every client refused) instead of meeting the
cap. ``mgmtbench serve`` raises its limit the same way
(:func:`mgmtbench.emulator.server.open_files_for`).
"""

from __future__ import annotations

import resource

from mgmtbench.emulator.options import Limits
from mgmtbench.errors import UsageError
from mgmtbench.proxy.pool import PoolSettings

#: Descriptors for everything else: listeners, the HTTP/3 socket, logs, the CA files, DNS.
SPARE = 256


def open_files_needed(limits: Limits, pool: PoolSettings, devices: int) -> int:
    """HTTPS connections at the cap, SSH connections to the devices in use (``per_device``
    each, at most one per HTTPS connection) and idle (``size``), and :data:`SPARE`."""
    in_use = min(pool.per_device * devices, limits.max_https_connections)
    return limits.max_https_connections + in_use + pool.size + SPARE


def open_files_for(limits: Limits, pool: PoolSettings, devices: int) -> int:
    """Raise the soft open-files limit to :func:`open_files_needed`, up to the hard limit; a
    one-line :class:`UsageError` when the hard limit is lower. Returns the soft limit in force."""
    needed = open_files_needed(limits, pool, devices)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise UsageError(
            f"the open-files limit is {hard} (ulimit -Hn) and the proxy's caps need {needed}: "
            f"raise it (ulimit -Hn {needed}) or lower --max-connections, --per-device or "
            "--pool-size")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    except (ValueError, OSError) as exc:
        raise UsageError(f"cannot raise the open-files limit from {soft} to {needed}: "
                         f"{exc}") from None
    return needed
