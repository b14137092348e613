"""The edge proxy's open-files limit: enough descriptors for its caps, raised at start.

A process starts with the soft limit its shell gave it (``ulimit -n``, often 1,024): fewer than
the proxy's HTTPS connection cap and its SSH connections together, so before this a flood ran it
out of descriptors (``accept`` failing in a loop, every client refused) instead of meeting the
cap. ``mgmtbench serve`` raises its limit the same way
(:func:`mgmtbench.openfiles.raise_open_files`).
"""

from __future__ import annotations

from mgmtbench.emulator.options import Limits
from mgmtbench.openfiles import raise_open_files
from mgmtbench.proxy.pool import PoolSettings

#: Descriptors for everything else: listeners, the HTTP/3 socket, logs, the CA files, DNS.
SPARE = 256


def open_files_needed(limits: Limits, pool: PoolSettings, devices: int) -> int:
    """HTTPS connections at the cap, SSH connections to the devices in use (``per_device``
    each, at most one per HTTPS connection) and idle (``size``), and :data:`SPARE`."""
    in_use = min(pool.per_device * devices, limits.max_https_connections)
    return limits.max_https_connections + in_use + pool.size + SPARE


def open_files_for(limits: Limits, pool: PoolSettings, devices: int) -> int:
    """Raise the soft open-files limit to :func:`open_files_needed` (see
    :func:`~mgmtbench.openfiles.raise_open_files`). Returns the soft limit in force."""
    return raise_open_files(open_files_needed(limits, pool, devices), "the proxy's caps",
                            ") or lower --max-connections, --per-device or --pool-size")
