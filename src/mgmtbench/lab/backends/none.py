"""``none``: a plain veth pair, no impairment (the local profile, and machines without netem)."""

from __future__ import annotations

from mgmtbench.errors import UsageError
from mgmtbench.lab.backends.veth import VethLink
from mgmtbench.lab.profiles import LinkProfile


class NoneBackend(VethLink):
    """A plain veth pair: no impairment."""
    name = "none"

    def __init__(self, ends, profile: LinkProfile) -> None:  # type: ignore[no-untyped-def]
        if profile.impaired:
            raise UsageError(f"the 'none' link backend cannot impair a link; profile "
                             f"{profile.name!r} needs netem or tun")
        super().__init__(ends, profile)
