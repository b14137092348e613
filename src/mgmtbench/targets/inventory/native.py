"""mgmtbench's own inventory: a small TOML file.

::

    [defaults]                  # any setting, for every host (optional)
    platform = "cisco_ios"      # or any name an inventory may use: ios, cisco_xe, asa ...
    username = "netops"
    password_env = "LAB_PASSWORD"   # the environment variable holding the password
    ca_file = "lab-ca.pem"      # paths relative to this file
    known_hosts = "known_hosts"

    [groups.edge]               # settings for the hosts of a group (optional)
    timeout = 20

    [hosts.r1]
    host = "198.18.0.1"         # the address; the host's name when absent
    groups = ["edge"]
    ssh_port = 22
    https_port = 443

Settings: ``platform``, ``ssh_port``, ``https_port``, ``netconf_port`` (830), ``gnmi_port``
(9339), ``http3_port`` (none: the device serves no HTTP/3), ``username``, ``password_env``,
``enable_secret_env``, ``key_file``, ``auth`` (password, key or agent), ``known_hosts``,
``ca_file``, ``timeout``. A host's own value wins over its groups' (the first listed group
first), which win over the defaults. Passwords are never written in this file: name an
environment variable, or let :mod:`mgmtbench.targets.credentials` find one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.targets.inventory.base import HostEntry, InventoryFormat, entry, mapping, settings
from mgmtbench.targets.inventory.bounded import load_toml

SECRETS = {"password_env": "password", "enable_secret_env": "enable_secret"}


class NativeToml(InventoryFormat):
    """mgmtbench's TOML inventory."""

    name = "toml"
    description = "mgmtbench's TOML inventory ([defaults], [groups.NAME], [hosts.NAME])"

    @classmethod
    def detect(cls, path: Path) -> bool:
        """A ``.toml`` file."""
        return path.is_file() and path.suffix == ".toml"

    def read(self, path: Path) -> list[HostEntry]:
        """Every ``[hosts.NAME]`` table, with its groups and the defaults applied."""
        data = load_toml(path)
        unknown = set(data) - {"defaults", "groups", "hosts"}
        if unknown:
            raise UsageError(f"{path}: unknown tables {sorted(unknown)} (defaults, groups, hosts)")
        defaults = mapping(data.get("defaults"), where=f"{path}: [defaults]")
        groups = mapping(data.get("groups"), where=f"{path}: [groups]")
        hosts = mapping(data.get("hosts"), where=f"{path}: [hosts]")
        if not hosts:
            raise UsageError(f"{path}: no [hosts.NAME] tables")
        found = []
        for name, raw in hosts.items():
            where = f"{path}: [hosts.{name}]"
            host = mapping(raw, where=where)
            member = host.get("groups", [])
            if not isinstance(member, list) or not all(g in groups for g in member):
                raise UsageError(f"{where}: groups must list [groups.NAME] tables "
                                 f"(defined: {', '.join(groups) or 'none'})")
            layers = [("[defaults]", defaults),
                      *[(f"[groups.{g}]", mapping(groups[g], where=f"{path}: [groups.{g}]"))
                        for g in reversed(member)],
                      (where, host)]
            values: dict[str, Any] = {}
            for layer_where, layer in layers:
                values.update(self._layer(layer, where=f"{path}: {layer_where}", base=path.parent))
            found.append(entry(str(name), str(values.pop("host", None) or name), values,
                               groups=tuple(map(str, member))))
        return found

    def _layer(self, layer: dict[str, Any], *, where: str, base: Path) -> dict[str, Any]:
        for secret in ("password", "enable_secret"):
            if secret in layer:
                raise UsageError(f"{where}: keep {secret}s out of the file: name an environment "
                                 f"variable with {secret}_env, or export MGMTBENCH_"
                                 f"{secret.upper()}")
        allowed = {"host", "groups", "platform", "ssh_port", "https_port", "netconf_port",
                   "gnmi_port", "http3_port", "username", "key_file", "auth", "known_hosts",
                   "ca_file", "timeout", *SECRETS}
        unknown = set(layer) - allowed
        if unknown:
            raise UsageError(f"{where}: unknown settings {sorted(unknown)} (known: "
                             f"{', '.join(sorted(allowed))})")
        values = settings(layer, where=where, base=base, names={"host": "host"})
        for key, secret in SECRETS.items():
            if key in layer:
                variable = str(layer[key])
                if variable not in os.environ:
                    raise UsageError(f"{where}: {key} names {variable}, which is not set")
                values[secret] = os.environ[variable]
        return values


FORMAT = NativeToml
