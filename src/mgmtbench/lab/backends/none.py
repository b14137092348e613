"""``none``: a plain veth pair, no impairment (the local profile, and machines without netem).

It supports nothing, so :meth:`~mgmtbench.lab.backends.base.LinkBackend.refusal` refuses any
profile that impairs the link.
"""

from __future__ import annotations

from mgmtbench.lab.backends.veth import VethLink


class NoneBackend(VethLink):
    """A plain veth pair: no impairment."""
    name = "none"
