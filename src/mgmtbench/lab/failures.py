"""One boundary for the lab's own failures: netlink refusals (pyroute2), namespace entry and
helper processes (``RuntimeError``), ``/dev/net/tun`` and ``/proc`` (``OSError``) become one
:class:`~mgmtbench.errors.LabError` with a one-line message, as httpx's
``map_httpcore_exceptions`` does for its transports. mgmtbench's own errors pass through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator

from pyroute2.netlink.exceptions import NetlinkError

from mgmtbench.errors import LabError, MgmtbenchError

#: What a lab step may raise that is not mgmtbench's own.
LAB_FAILURES = (NetlinkError, OSError, RuntimeError, LookupError, subprocess.SubprocessError)
_HINTS = {
    errno.EEXIST: "something of the same name is already there: `mgmtbench lab down` removes "
                  "what killed runs left behind",
    errno.EPERM: "run as root or with CAP_NET_ADMIN",
    errno.EACCES: "run as root or with CAP_NET_ADMIN",
}


@contextlib.contextmanager
def lab_failures(what: str) -> Iterator[None]:
    """Raise :class:`LabError` ("WHAT: why") from a lab failure inside the block."""
    try:
        yield
    except MgmtbenchError:
        raise
    except LAB_FAILURES as exc:
        raise LabError(f"{what}: {describe(exc)}") from exc


def describe(exc: BaseException) -> str:
    """A failure in one line: netlink's and the OS's error names, not their tuples."""
    code: int | None = None
    if isinstance(exc, NetlinkError):
        code = exc.code
        text = f"netlink refused ({os.strerror(code) if code else exc})"
    elif isinstance(exc, OSError):
        code = exc.errno
        text = exc.strerror or str(exc) or type(exc).__name__
        if exc.filename is not None:
            text += f": {exc.filename}"
    else:
        text = str(exc) or type(exc).__name__
    hint = _HINTS.get(code) if code is not None else None
    line = f"{text} ({hint})" if hint else text
    return " ".join(line.split())
