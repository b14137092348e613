"""Targets: where and how a client reaches one device, and the sources they come from.

A :class:`Target` is everything a client adapter or fleet runner needs to reach one device: its
address and ports, credentials, the auth method to use, trust files, the SSH algorithm choices of
the client, and the platform's paging commands. Targets come from a *source*, and every source
returns the same type:

- a lab (:func:`lab_targets`, in :mod:`.lab`): the emulated devices behind an impaired link;
- an inventory (:func:`~mgmtbench.targets.inventory.load_inventory`, in :mod:`.inventory`):
  real devices or lab fleets described in the files automation users already keep (Nornir,
  Ansible, containerlab, or mgmtbench's own TOML), one module per format; platform names mapped
  to ours by :mod:`.platforms`, credentials resolved by :mod:`.credentials`.

Around an inventory: :mod:`.stable` compares each round's output with the first round's (no
oracle for a real device), :mod:`.probe` measures a host (RTT by TCP connect and by an SSH echo,
SSH and TLS facts, the version string), :mod:`.safety` keeps a benchmark gentle (show commands
only, a session rate, per-host time-outs), and :mod:`.command` is ``mgmtbench inventory check``.

Importing this package loads :mod:`.base` and :mod:`.lab` only (standard library). The lab
(:mod:`mgmtbench.lab`) imports what it needs of targets from :mod:`.base`, not from here: this
package's :mod:`.lab` builds on the lab's facts (:class:`~mgmtbench.lab.facts.LabLike`).
"""

from mgmtbench.targets.base import Auth, Login, Service, SshAlgorithms, Target, make_target
from mgmtbench.targets.lab import lab_targets

__all__ = ["Auth", "Login", "Service", "SshAlgorithms", "Target", "lab_targets", "make_target"]
