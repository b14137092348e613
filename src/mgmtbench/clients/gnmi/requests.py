"""What a gNMI benchmark asks for, for each payload, and the output a benchmark checks.

Two payloads, as NETCONF's (:mod:`mgmtbench.clients.netconf.rpcs`):

- ``cli``: the published study's paths (clibench v0.7.0, ``CommandToPath``): ``show version``
  is ``/cli/show/version``, read in the ``ASCII`` encoding; a Set update of such a path (the
  study's ``batch-set``) runs the command and carries an empty value.
- ``yang``: the command's data as OpenConfig paths where OpenConfig models them (``show
  version`` is ``/system/state``, ``show ip interface brief`` every interface's state), the
  device's IETF models otherwise (origin ``rfc7951``: ``show inventory`` is
  ``/ietf-hardware:hardware``), read in ``JSON_IETF``: :data:`READS` is the same mapping
  idea as NETCONF's ``READS``, written as gNMI paths. A Set describes an interface
  (``/interfaces/interface[name=X]/config``), once per command, in one Set.

Outputs: ``cli`` reads give the commands' CLI text concatenated (the check every CLI transport
has); ``yang`` reads give one line per command, a JSON list of that command's values; a Set
gives ``ok`` per update result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from mgmtbench.errors import UsageError

PAYLOADS = ("cli", "yang")

_BRIEF = "/interfaces/interface/state"
#: Each benchmark command's modelled read, as a gNMI path string.
READS: Mapping[str, str] = {
    "show version": "/system/state",
    "show clock": "/system/state/current-datetime",
    "show ip interface brief": _BRIEF,
    "show interface brief": _BRIEF,
    "show interfaces status": _BRIEF,
    "show interface status": _BRIEF,
    "show interfaces": "/interfaces",
    "show inventory": "rfc7951:/ietf-hardware:hardware",
    "show ip route": "rfc7951:/ietf-routing:routing/ribs",
    "show ip arp": "rfc7951:/ietf-interfaces:interfaces",
    "show running-config": "/",
}


def check_commands(commands: Sequence[str], payload: str) -> None:
    """:class:`UsageError` naming the first command the ``yang`` payload has no path for."""
    if payload == "yang":
        missing = [c for c in commands if c not in READS]
        if missing:
            raise UsageError(f"the gNMI yang payload has no path for {missing[0]!r} (it has: "
                             f"{', '.join(READS)})")


def read_path(command: str, payload: str) -> str:
    """The path (gNMI's string form) that reads ``command``'s data in ``payload``."""
    if payload == "cli":
        return "/cli/" + "/".join(command.split())
    return READS[command]


def encoding(payload: str) -> str:
    """The encoding a read asks for: the study's ``ASCII`` for CLI text, ``JSON_IETF`` else."""
    return "ASCII" if payload == "cli" else "JSON_IETF"


#: The interface a ``yang`` Set describes (as NETCONF's edit-commit, per platform).
def edit_path(interface: str) -> str:
    """The container a ``yang`` Set update writes: the interface's OpenConfig config."""
    return f"/interfaces/interface[name={interface}]/config"


def edit_value(index: int) -> dict[str, str]:
    """Update ``index``'s value (a description, as the study's edits)."""
    return {"description": f"mgmtbench-{index}"}


def yang_output(values: Sequence[object]) -> str:
    """One command's line of output: its values as a JSON list."""
    return json.dumps(list(values), separators=(",", ":"), sort_keys=True) + "\n"


def check_set(outputs: Sequence[str], commands: int) -> str | None:
    """The check of ``batch-set`` rounds: ``ok`` for every update."""
    wanted = "ok\n" * commands
    wrong = [i for i, out in enumerate(outputs) if out != wanted]
    return None if not wrong else (f"rounds {wrong} were not {commands} update results (first: "
                                   f"{outputs[wrong[0]][:200]!r})")


def check_yang(outputs: Sequence[str], commands: Sequence[str]) -> str | None:
    """The check of ``yang`` read rounds: per command a JSON list of values, none empty, each
    naming data of the path's model (an object or a scalar)."""
    for index, out in enumerate(outputs):
        lines = out.splitlines()
        if len(lines) != len(commands):
            return f"round {index} has {len(lines)} answers for {len(commands)} commands"
        for command, line in zip(commands, lines, strict=True):
            try:
                values = json.loads(line)
            except ValueError as exc:
                return f"round {index}, {command!r}: not JSON: {exc}"
            if not values or any(v in ({}, [], None, "") for v in values):
                return f"round {index}, {command!r}: no data"
    return None
