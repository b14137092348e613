"""Link backends by name, and the automatic choice: the first of :data:`AUTO` that can impair the
profile and runs here (netem where the kernel has it; tbf for a rate-only profile; else tun)."""

from __future__ import annotations

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.base import LinkBackend, LinkEnds
from mgmtbench.lab.backends.netem import NetemBackend
from mgmtbench.lab.backends.none import NoneBackend
from mgmtbench.lab.backends.tbf import TbfBackend
from mgmtbench.lab.backends.tun import TunBackend
from mgmtbench.lab.profiles import LinkProfile

BACKENDS: dict[str, type[LinkBackend]] = {
    b.name: b for b in (NetemBackend, TbfBackend, TunBackend, NoneBackend)}
#: The automatic choice's order for an impaired link.
AUTO: tuple[type[LinkBackend], ...] = (NetemBackend, TbfBackend, TunBackend)

__all__ = ["AUTO", "BACKENDS", "LinkBackend", "LinkEnds", "NetemBackend", "NoneBackend", "TbfBackend",
           "TunBackend", "choose"]


def choose(name: str, profile: LinkProfile) -> type[LinkBackend]:
    """The backend class for ``name`` ("auto": the first of :data:`AUTO` that can impair
    ``profile`` and runs here; none for no impairment)."""
    if name == "auto":
        if not profile.impaired:
            return NoneBackend
        reasons = []
        for candidate in AUTO:
            reason = candidate.refusal(profile) or candidate.unavailable()
            if reason is None:
                return candidate
            reasons.append(f"{candidate.name}: {reason}")
        raise UsageError("no link backend can impair links here (" + "; ".join(reasons) + ")")
    if name not in BACKENDS:
        raise UsageError(f"unknown link backend {name!r}: choose auto, {', '.join(BACKENDS)}")
    backend = BACKENDS[name]
    refusal = backend.refusal(profile)
    if refusal is not None:
        raise UsageError(refusal)
    reason = backend.unavailable()
    if reason is not None:
        raise UsageError(f"link backend {name!r} cannot run here: {reason}")
    return backend
