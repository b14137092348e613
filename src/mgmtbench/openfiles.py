"""Raise the process's open-files limit to what its caps need (``mgmtbench serve`` and
``mgmtbench proxy``).

A process starts with the soft limit its shell gave it (``ulimit -n``, often 1,024): fewer than
a server's connection caps, so without this a flood runs it out of descriptors (``accept``
failing, every client refused) before it meets its caps.
"""

from __future__ import annotations

import resource

from mgmtbench.errors import UsageError


def raise_open_files(needed: int, why: str, advice: str) -> int:
    """Raise the soft open-files limit to ``needed``, up to the hard limit; a one-line
    :class:`UsageError` when the hard limit is lower (``why`` needs ``needed``: ``advice``).
    Returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return soft
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise UsageError(f"the open-files limit is {hard} (ulimit -Hn) and {why} need {needed}: "
                         f"raise it (ulimit -Hn {needed}{advice}")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    except (ValueError, OSError) as exc:
        raise UsageError(f"cannot raise the open-files limit from {soft} to {needed}: "
                         f"{exc}") from None
    return needed
