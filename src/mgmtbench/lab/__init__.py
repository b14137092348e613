"""The lab network: device namespaces reached over a link impaired by a named profile.

:class:`Lab` builds it; :mod:`.profiles` names the impairments; :mod:`.backends` holds one module per
way of impairing a link (``netem``, ``tun``, ``none``); :mod:`.calibrate` measures what the lab
really gives.
"""

from mgmtbench.lab.lab import Lab, LabDevice, LinkCounters
from mgmtbench.lab.profiles import BUILTIN, LinkProfile, resolve

__all__ = ["BUILTIN", "Lab", "LabDevice", "LinkCounters", "LinkProfile", "resolve"]
