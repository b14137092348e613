"""How the transport benchmark checks gNMI rounds, by mode and payload.

- ``cli`` reads (every mode but ``batch-set``): each round is the CLI text of the commands,
  checked as the SSH and HTTPS modes' rounds are (:meth:`~mgmtbench.testing.sites.Site.
  output_check`).
- ``yang`` reads: each round is one line per command, a JSON list of the values its path
  answered, none of them empty (:func:`~mgmtbench.clients.gnmi.requests.check_yang`).
- ``batch-set``: each round is ``ok`` for each of the Set's updates.
"""

from __future__ import annotations

from collections.abc import Sequence

from mgmtbench.clients.gnmi import requests
from mgmtbench.targets import Target
from mgmtbench.testing.modelled import unsupported_reads
from mgmtbench.testing.sites import OutputCheck, Site


def gnmi_unsupported(platform: str, commands: Sequence[str], mode: str,
                     payload: str) -> str | None:
    """Why a gNMI benchmark cannot run (a command the ``yang`` payload has no path for), or
    None."""
    return unsupported_reads(platform, commands, mode, payload, requests.check_commands)


def gnmi_output_check(site: Site, target: Target, commands: Sequence[str], mode: str,
                      payload: str) -> OutputCheck:
    """The check for one gNMI benchmark (see the module docstring)."""
    if mode == "batch-set":
        return lambda outputs: requests.check_set(outputs, len(commands))
    if payload == "cli":
        return site.output_check(target, commands)
    return lambda outputs: requests.check_yang(outputs, commands)
