"""Nornir's ``SimpleInventory``: ``hosts.yaml``, with ``groups.yaml`` and ``defaults.yaml`` beside
it (both optional).

Give the folder or its ``hosts.yaml``. Per host: ``hostname`` (the address; the host's name when
absent), ``port`` (SSH), ``username``, ``password``, ``platform`` (``cisco_ios``, ``cisco_xe``,
``ios``, ``cisco_asa`` ...), ``groups``. Nornir's inheritance: a host's own value, else its groups'
in order (each group before the groups it belongs to), else the defaults'. mgmtbench's other
settings (``https_port``, ``enable_secret``, ``key_file``, ``auth``, ``known_hosts``, ``ca_file``,
``timeout``) go under ``data``, inherited the same way; the enable secret may also be Netmiko's
``connection_options: {netmiko: {extras: {secret: ...}}}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.targets.inventory.base import (
    HostEntry,
    InventoryFormat,
    entry,
    load_yaml,
    mapping,
    settings,
)

NAMES = {"hostname": "host", "port": "ssh_port", "username": "username", "password": "password",
         "platform": "platform"}
HOST_KEYS = frozenset({*NAMES, "groups", "data", "connection_options"})
FILES = ("hosts.yaml", "hosts.yml")


def _hosts_file(path: Path) -> Path | None:
    if path.is_dir():
        return next((path / f for f in FILES if (path / f).is_file()), None)
    return path if path.name in FILES else None


class NornirSimpleInventory(InventoryFormat):
    """Nornir SimpleInventory (hosts.yaml, groups.yaml, defaults.yaml)."""

    name = "nornir"
    description = "Nornir SimpleInventory: hosts.yaml with groups.yaml and defaults.yaml"

    @classmethod
    def detect(cls, path: Path) -> bool:
        """A folder holding ``hosts.yaml``, or a file of that name whose hosts use Nornir's keys."""
        hosts = _hosts_file(path)
        if hosts is None:
            return False
        try:
            data = load_yaml(hosts)
        except UsageError:
            return path.is_dir()
        return isinstance(data, dict) and all(
            isinstance(v, dict | None) and set(v or {}) <= HOST_KEYS for v in data.values())

    def read(self, path: Path) -> list[HostEntry]:
        """Every host of ``hosts.yaml``, with groups and defaults applied."""
        hosts_file = _hosts_file(path)
        if hosts_file is None:
            raise UsageError(f"{path}: no hosts.yaml there")
        folder = hosts_file.parent
        hosts = mapping(load_yaml(hosts_file), where=str(hosts_file))
        groups = self._optional(folder, "groups")
        defaults = mapping(self._optional(folder, "defaults") or {}, where=f"{folder}/defaults")
        found = []
        for name, raw in hosts.items():
            where = f"{hosts_file}: {name}"
            host = mapping(raw, where=where)
            names = self._names(host, groups, where=where)
            # Lowest precedence first: defaults, the groups (the last named first), the host.
            layers = [("defaults", defaults),
                      *[(f"group {g}", mapping(groups[g], where=f"group {g}"))
                        for g in reversed(names)],
                      (where, host)]
            values: dict[str, Any] = {}
            for layer_where, layer in layers:
                values.update(self._layer(layer, where=layer_where, base=folder))
            address = str(values.pop("host", None) or name)
            found.append(entry(str(name), address, values, groups=tuple(names)))
        return found

    def _optional(self, folder: Path, stem: str) -> dict[str, Any]:
        for suffix in (".yaml", ".yml"):
            file = folder / f"{stem}{suffix}"
            if file.is_file():
                return mapping(load_yaml(file), where=str(file))
        return {}

    def _names(self, host: dict[str, Any], groups: dict[str, Any], *, where: str) -> list[str]:
        """The host's groups in Nornir's order: each group, then the groups it belongs to."""
        order: list[str] = []

        def visit(names: Any, where: str) -> None:
            if not isinstance(names, list):
                raise UsageError(f"{where}: groups is a list of group names")
            for group in map(str, names):
                if group not in groups:
                    raise UsageError(f"{where}: unknown group {group!r} (groups.yaml has "
                                     f"{', '.join(map(str, groups)) or 'none'})")
                if group not in order:
                    order.append(group)
                    visit(mapping(groups[group], where=f"group {group}").get("groups") or [],
                          f"group {group}")

        visit(host.get("groups") or [], where)
        return order

    def _layer(self, layer: dict[str, Any], *, where: str, base: Path) -> dict[str, Any]:
        """One level's settings: its own keys, its ``data``, Netmiko's enable secret."""
        values = settings(layer, where=where, base=base, prefix=None, names=NAMES)
        data = mapping(layer.get("data"), where=f"{where}: data")
        values.update(settings(data, where=f"{where}: data", base=base))
        options = mapping(layer.get("connection_options"), where=f"{where}: connection_options")
        extras = mapping(mapping(options.get("netmiko"), where=where).get("extras"), where=where)
        if extras.get("secret") is not None and "enable_secret" not in values:
            values.update(settings({"secret": extras["secret"]}, where=where, base=base,
                                   names={"secret": "enable_secret"}))
        return values


FORMAT = NornirSimpleInventory
