"""Inventories: real devices and lab fleets as targets, from the files automation users keep.

::

    inventory = load_inventory(Path("hosts.yaml"), limit="edge*,!edge-3")
    for host in inventory.hosts:
        host.target        # a Target, as a lab's (its address resolved once)
        host.platform      # our platform (cisco_ios ...), with its masks and version pattern

One module per format in this package, each defining ``FORMAT`` (an
:class:`~mgmtbench.targets.inventory.base.InventoryFormat`): :mod:`.nornir` (SimpleInventory),
:mod:`.ansible` (YAML inventory), :mod:`.containerlab` (topology data, inspect output),
:mod:`.native` (TOML). :func:`formats` finds them by module; a file's format is the one whose
``detect`` says so, or the one named. Adding a format is adding a module.

Loading maps each host's platform to ours (:mod:`mgmtbench.targets.platforms`; an unknown one is
refused with the list of known ones), resolves its credentials (:mod:`mgmtbench.targets.
credentials`), applies ``MGMTBENCH_CA_FILE`` / ``MGMTBENCH_KNOWN_HOSTS`` where the inventory
gives no trust file, and resolves DNS names once: every target holds an address of the
inventory, and nothing else is ever connected to.

``--limit``: comma-separated glob patterns matched against a host's name, address and groups;
``!pattern`` excludes (``--limit 'core,edge-*,!edge-9'``); exclusions alone start from every host.
"""

from __future__ import annotations

import fnmatch
import importlib
import os
import pkgutil
import socket
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mgmtbench.errors import UsageError
from mgmtbench.targets.base import Target, make_target
from mgmtbench.targets.credentials import CredentialSource, Prompt
from mgmtbench.targets.inventory.base import HostEntry, InventoryFormat
from mgmtbench.targets.platforms import InventoryPlatform, platform_for
from mgmtbench.targets.safety import address_refusal

__all__ = ["DEFAULT_TIMEOUT", "Inventory", "InventoryHost", "formats", "load_inventory",
           "select"]

CA_FILE, KNOWN_HOSTS = "MGMTBENCH_CA_FILE", "MGMTBENCH_KNOWN_HOSTS"
DEFAULT_TIMEOUT = 30.0  # seconds for one benchmark round or probe of a host without its own


@cache
def formats() -> dict[str, type[InventoryFormat]]:
    """Every format module's ``FORMAT``, by its name, in module order."""
    found: dict[str, type[InventoryFormat]] = {}
    for module in pkgutil.iter_modules(__path__):
        loaded = importlib.import_module(f"{__name__}.{module.name}")
        cls = getattr(loaded, "FORMAT", None)
        if cls is not None:
            found[cls.name] = cls
    return found


@dataclass(frozen=True)
class InventoryHost:
    """One host of an inventory, ready to benchmark."""

    name: str
    target: Target  # ``target.host`` is the resolved address
    platform: InventoryPlatform
    groups: tuple[str, ...]
    timeout: float  # seconds for one round or probe
    address: str  # as the inventory gave it (a name or an address)


@dataclass(frozen=True)
class Inventory:
    """An inventory file's hosts (after ``--limit``) and the format it was read as."""

    path: Path
    format: str
    hosts: tuple[InventoryHost, ...]

    def host(self, name: str) -> InventoryHost:
        """The host called ``name``."""
        for host in self.hosts:
            if host.name == name:
                return host
        raise UsageError(f"{self.path}: no host {name!r} (hosts: {self.names()})")

    def names(self) -> str:
        """The host names, for a message."""
        return ", ".join(h.name for h in self.hosts)


def detect(path: Path) -> type[InventoryFormat]:
    """The format of the inventory at ``path``."""
    if not path.exists():
        raise UsageError(f"{path}: no such inventory file or folder")
    for cls in formats().values():
        if cls.detect(path):
            return cls
    raise UsageError(f"{path}: not an inventory mgmtbench reads: give one of "
                     + "; ".join(f"{c.description} ({n})" for n, c in formats().items()))


def load_inventory(path: Path, *, format: str | None = None, limit: str | None = None,
                   env: Mapping[str, str] | None = None, prompt: Prompt | None = None,
                   timeout: float | None = None) -> Inventory:
    """The hosts of the inventory at ``path`` (format detected unless named), limited by
    ``limit``, each with its platform mapped and credentials resolved (``env``: the environment
    by default; ``prompt``: how to ask for a password, None: never ask). ``timeout``: seconds per
    round or probe for hosts whose inventory gives none."""
    if format is not None and format not in formats():
        raise UsageError(f"unknown inventory format {format!r}: choose "
                         f"{', '.join(formats())}")
    cls = formats()[format] if format else detect(path)
    entries = select(cls().read(path), limit, where=str(path))
    environment = os.environ if env is None else env
    source = CredentialSource(environment, prompt)
    return Inventory(path, cls.name, tuple(
        _host(e, source, environment, timeout or DEFAULT_TIMEOUT) for e in entries))


def _host(entry: HostEntry, source: CredentialSource, env: Mapping[str, str],
          timeout: float) -> InventoryHost:
    platform = platform_for(entry.platform, host=entry.name)
    login = source.login(entry)
    ca_file = entry.ca_file or (Path(env[CA_FILE]) if env.get(CA_FILE) else None)
    known_hosts = entry.known_hosts or (Path(env[KNOWN_HOSTS]) if env.get(KNOWN_HOSTS) else None)
    for what, path in (("ca_file", ca_file), ("known_hosts", known_hosts)):
        if path is not None and not path.is_file():
            raise UsageError(f"host {entry.name}: {what} {path} does not exist")
    address = resolve_address(entry)
    refused = address_refusal(address)
    if refused is not None:
        raise UsageError(f"host {entry.name}: {refused}: refused")
    target = make_target(address, entry.ssh_port, entry.https_port,
                         platform=platform.name, login=login, ca_file=ca_file,
                         known_hosts=known_hosts, netconf_port=entry.netconf_port,
                         gnmi_port=entry.gnmi_port, http3_port=entry.http3_port)
    return InventoryHost(name=entry.name, target=target, platform=platform, groups=entry.groups,
                         timeout=entry.timeout or timeout, address=entry.host)


def resolve_address(entry: HostEntry) -> str:
    """The host's address: itself when it is one, else its name resolved once (the first
    address the system resolver gives)."""
    try:
        found = socket.getaddrinfo(entry.host, entry.ssh_port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_NUMERICHOST)
    except socket.gaierror:
        try:
            found = socket.getaddrinfo(entry.host, entry.ssh_port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise UsageError(f"host {entry.name}: cannot resolve {entry.host!r} ({exc})") from None
    return str(found[0][4][0])


def select(entries: list[HostEntry], limit: str | None, *, where: str) -> list[HostEntry]:
    """The entries ``limit`` selects (see the module docstring), in the inventory's order."""
    if not entries:
        raise UsageError(f"{where}: the inventory has no hosts")
    names = [e.name for e in entries]
    if len(set(names)) != len(names):
        twice = sorted(n for n, count in Counter(names).items() if count > 1)
        raise UsageError(f"{where}: host names must be unique ({', '.join(twice)} twice)")
    if not limit or not limit.strip():
        return entries
    patterns = [p.strip() for p in limit.split(",") if p.strip()]
    include = [p for p in patterns if not p.startswith("!")]
    exclude = [p[1:] for p in patterns if p.startswith("!")]

    def matches(entry: HostEntry, pattern: str) -> bool:
        return any(fnmatch.fnmatchcase(value, pattern)
                   for value in (entry.name, entry.host, *entry.groups))

    chosen = [e for e in entries
              if (not include or any(matches(e, p) for p in include))
              and not any(matches(e, p) for p in exclude)]
    if not chosen:
        raise UsageError(f"{where}: --limit {limit!r} matches no host (hosts: {', '.join(names)})")
    return chosen
