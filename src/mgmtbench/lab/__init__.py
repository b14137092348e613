"""The lab network: device namespaces reached over a link impaired by a named profile.

:func:`open_lab` picks the kind of lab (:class:`Lab` in namespaces, or
:class:`~mgmtbench.lab.local.LocalLab` on loopback without privileges); both are
:class:`LabLike` and describe themselves as :class:`LabFacts`. :mod:`.profiles` names the
impairments; :mod:`.backends` holds one module per way of impairing a link (``netem``, ``tun``,
``none``); :mod:`.runtimes` one per way of running the devices; :mod:`.calibrate` measures what
the lab really gives; :mod:`.cleanup` removes what killed runs left behind.
"""

from mgmtbench.lab.cleanup import clean_stale
from mgmtbench.lab.facts import LabDevice, LabFacts, LabLike, LinkCounters
from mgmtbench.lab.lab import Lab
from mgmtbench.lab.opening import open_lab
from mgmtbench.lab.profiles import BUILTIN, LinkProfile, resolve

__all__ = ["BUILTIN", "Lab", "LabDevice", "LabFacts", "LabLike", "LinkCounters", "LinkProfile",
           "clean_stale", "open_lab", "resolve"]
