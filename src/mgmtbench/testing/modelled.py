"""What the model-driven transports' benchmarks (NETCONF, RESTCONF, gNMI) have in common."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mgmtbench.clients.base import UNREAD_MODES
from mgmtbench.errors import UsageError

__all__ = ["unsupported_reads"]


def unsupported_reads(platform: str, commands: Sequence[str], mode: str, payload: str,
                      check_commands: Callable[[list[str], str], None]) -> str | None:
    """Why a benchmark cannot run: a command the payload has no read for (``check_commands``,
    the transport's own, says which), or None; modes that read nothing
    (:data:`~mgmtbench.clients.base.UNREAD_MODES`) always run."""
    if mode in UNREAD_MODES:
        return None
    try:
        check_commands(list(commands), payload)
    except UsageError as exc:
        return f"{platform}: {exc}"
    return None
