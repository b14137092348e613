"""The protocol minimum in round trips of each transport mode, for one iteration of n commands:
the README's mode table as numbers (``fixed + per_command * n``).

Where the minimum depends on the device's TLS version, the larger (TLS 1.2, the emulated images'
own) is kept: a count above it is above the minimum at either version. NETCONF has no entry: its
minimum depends on the SSH client's channel handling, and no table states it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROMPT_PLATFORMS", "Minimum", "minimum"]


@dataclass(frozen=True)
class Minimum:
    """Round trips of one iteration: ``fixed`` plus ``per_command`` for each command."""

    fixed: int
    per_command: int

    def at(self, commands: int) -> int:
        """The minimum for ``commands`` commands."""
        return self.fixed + self.per_command * commands


_TABLE: dict[tuple[str, str], Minimum] = {
    ("ssh", "fresh-conn"): Minimum(6, 2), ("ssh", "reuse-conn"): Minimum(0, 2),
    ("ssh", "batch-exec"): Minimum(8, 0), ("ssh", "pty-fresh"): Minimum(12, 1),
    ("ssh", "pty-reuse"): Minimum(5, 1), ("ssh", "pty-kept"): Minimum(0, 1),
    ("ssh", "pipelined"): Minimum(2, 0),
    ("https", "fresh-conn"): Minimum(0, 4), ("https", "keep-alive"): Minimum(0, 1),
    ("https", "batch-post"): Minimum(1, 0), ("https", "multi-cmd"): Minimum(1, 0),
    ("https", "tls-resume"): Minimum(0, 3), ("https", "h2-multiplex"): Minimum(1, 0),
    ("https", "conn-per-iteration"): Minimum(3, 1), ("https", "batch-post-fresh"): Minimum(4, 0),
    ("https", "multi-cmd-fresh"): Minimum(4, 0), ("https", "eapi-batch"): Minimum(1, 0),
    ("https", "nxapi-batch"): Minimum(1, 0),
    ("restconf", "fresh-conn"): Minimum(0, 4), ("restconf", "keep-alive"): Minimum(0, 1),
    ("restconf", "batch-patch"): Minimum(1, 0), ("restconf", "json-vs-xml"): Minimum(0, 1),
    ("restconf", "h2-multiplex"): Minimum(1, 0),
    ("restconf", "conn-per-iteration"): Minimum(3, 1),
    ("gnmi", "fresh-conn"): Minimum(5, 0), ("gnmi", "reuse-stream"): Minimum(0, 1),
    ("gnmi", "batch-set"): Minimum(1, 0), ("gnmi", "subscribe-once"): Minimum(1, 0),
    ("gnmi", "fresh-get-per-cmd"): Minimum(5, 1), ("gnmi", "batch-get"): Minimum(1, 0),
    ("http3", "fresh-conn"): Minimum(1, 1), ("http3", "keep-alive"): Minimum(0, 1),
    ("http3", "batch-post"): Minimum(1, 0), ("http3", "0rtt-resumption"): Minimum(1, 1),
    ("http3", "0rtt"): Minimum(0, 1),
}
#: Platforms whose login lands at ``host>``: a new shell also sends ``enable`` and its secret.
PROMPT_PLATFORMS = frozenset({"cisco_asa"})
_NEW_SHELL = frozenset({"pty-fresh", "pty-reuse"})


def minimum(transport: str, mode: str, commands: int, platform: str | None = None) -> int | None:
    """The protocol minimum of ``mode`` over ``transport`` for ``commands`` commands (None: no
    stated minimum)."""
    found = _TABLE.get((transport, mode))
    if found is None:
        return None
    extra = 2 if transport == "ssh" and mode in _NEW_SHELL and platform in PROMPT_PLATFORMS else 0
    return found.at(commands) + extra
