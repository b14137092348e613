"""Link backends by name, and the automatic choice (netem where the kernel has it, else tun)."""

from __future__ import annotations

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.base import LinkBackend, LinkEnds
from mgmtbench.lab.backends.netem import NetemBackend
from mgmtbench.lab.backends.none import NoneBackend
from mgmtbench.lab.backends.tun import TunBackend
from mgmtbench.lab.profiles import LinkProfile

BACKENDS: dict[str, type[LinkBackend]] = {b.name: b for b in (NetemBackend, TunBackend, NoneBackend)}

__all__ = ["BACKENDS", "LinkBackend", "LinkEnds", "choose"]


def choose(name: str, profile: LinkProfile) -> type[LinkBackend]:
    """The backend class for ``name`` ("auto": netem if available, else tun; none for no impairment)."""
    if name == "auto":
        if not profile.impaired:
            return NoneBackend
        reasons = []
        for candidate in (NetemBackend, TunBackend):
            reason = candidate.unavailable()
            if reason is None:
                return candidate
            reasons.append(f"{candidate.name}: {reason}")
        raise UsageError("no link backend can impair links here (" + "; ".join(reasons) + ")")
    if name not in BACKENDS:
        raise UsageError(f"unknown link backend {name!r}: choose auto, {', '.join(BACKENDS)}")
    backend = BACKENDS[name]
    reason = backend.unavailable()
    if reason is not None:
        raise UsageError(f"link backend {name!r} cannot run here: {reason}")
    return backend
