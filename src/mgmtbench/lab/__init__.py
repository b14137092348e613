"""The lab network: device namespaces reached over a link impaired by a named profile.

:func:`open_lab` picks the kind of lab (:class:`Lab` in namespaces, or
:class:`~mgmtbench.lab.local.LocalLab` on loopback without privileges); both are
:class:`LabLike` and describe themselves as :class:`LabFacts`. :mod:`.profiles` names the
impairments; :mod:`.backends` holds one module per way of impairing a link (``netem``, ``tun``,
``none``); :mod:`.runtimes` one per way of running the devices; :mod:`.calibrate` measures what
the lab really gives; :mod:`.cleanup` removes what killed runs left behind.

The names below are imported when first used, not with the package: the lab's helper processes
(``python -m mgmtbench.lab.echo``, ``.nsexec``, ``.nsconfig``, ``.delayline``) import this package
first, and need none of the emulator, client or TLS code that :class:`Lab` pulls in. A Python
process that imported all of it took 30-45 s to start in a VM under software emulation, and a lab
starts several.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mgmtbench.lab.cleanup import clean_stale
    from mgmtbench.lab.facts import LabDevice, LabFacts, LabLike, LinkCounters
    from mgmtbench.lab.lab import Lab
    from mgmtbench.lab.opening import open_lab
    from mgmtbench.lab.profiles import BUILTIN, LinkProfile, resolve

__all__ = ["BUILTIN", "Lab", "LabDevice", "LabFacts", "LabLike", "LinkCounters", "LinkProfile",
           "clean_stale", "open_lab", "resolve"]

_HOMES = {
    "clean_stale": "cleanup",
    "LabDevice": "facts", "LabFacts": "facts", "LabLike": "facts", "LinkCounters": "facts",
    "Lab": "lab",
    "open_lab": "opening",
    "BUILTIN": "profiles", "LinkProfile": "profiles", "resolve": "profiles",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
