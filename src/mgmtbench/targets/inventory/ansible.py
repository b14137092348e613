"""An Ansible YAML inventory (``all:`` with ``hosts``, ``vars`` and ``children`` groups).

Per host: ``ansible_host`` (the address; the host's name when absent), ``ansible_port`` (SSH),
``ansible_user``, ``ansible_password`` (or ``ansible_ssh_pass``), ``ansible_become_password``
(or ``ansible_become_pass``: the enable secret), ``ansible_ssh_private_key_file`` and
``ansible_network_os`` (``cisco.ios.ios``, ``ios``, ``cisco.asa.asa`` ...). mgmtbench's other
settings are ``mgmtbench_``-prefixed variables (``mgmtbench_https_port``, ``mgmtbench_ca_file``,
``mgmtbench_known_hosts``, ``mgmtbench_auth``, ``mgmtbench_timeout``, ``mgmtbench_platform``).
Variables follow Ansible's precedence: ``all``'s, then each group's from parent to child (groups
at the same depth in file order), then the host's own. Templated (``{{ ... }}``) and vault values
are refused: export ``MGMTBENCH_PASSWORD`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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

NAMES = {"ansible_host": "host", "ansible_port": "ssh_port", "ansible_user": "username",
         "ansible_ssh_user": "username", "ansible_password": "password",
         "ansible_ssh_pass": "password", "ansible_become_password": "enable_secret",
         "ansible_become_pass": "enable_secret", "ansible_ssh_private_key_file": "key_file",
         "ansible_network_os": "platform"}
GROUP_KEYS = frozenset({"hosts", "vars", "children"})
SUFFIXES = (".yaml", ".yml")


@dataclass
class _Host:
    layers: list[tuple[int, int, str, dict[str, Any]]] = field(default_factory=list)
    visits: set[int] = field(default_factory=set)  # the layers' visit numbers: each once
    groups: list[str] = field(default_factory=list)
    own: dict[str, Any] = field(default_factory=dict)


class AnsibleYamlInventory(InventoryFormat):
    """Ansible's YAML inventory."""

    name = "ansible"
    description = "Ansible YAML inventory (all: hosts, vars, children)"

    @classmethod
    def detect(cls, path: Path) -> bool:
        """A YAML file whose top-level values are groups (only ``hosts``, ``vars``,
        ``children``)."""
        if not path.is_file() or path.suffix not in SUFFIXES:
            return False
        data = load_yaml(path)  # a YAML file that does not parse: say why, not "unknown format"
        return isinstance(data, dict) and bool(data) and all(
            isinstance(g, dict | None) and set(g or {}) <= GROUP_KEYS for g in data.values()) \
            and any(set(g or {}) & {"hosts", "children"} for g in data.values())

    def read(self, path: Path) -> list[HostEntry]:
        """Every host, in the order first met, with its variables merged."""
        data = mapping(load_yaml(path), where=str(path))
        hosts: dict[str, _Host] = {}
        order = iter(range(1_000_000))
        base = path.parent

        def walk(name: str, group: Any, seen: tuple[str, ...],
                 chain: tuple[tuple[int, int, str, dict[str, Any]], ...]) -> None:
            """Visit a group: its hosts get its variables and every ancestor's (``chain``)."""
            where = f"{path}: group {name}"
            if name in seen:
                raise UsageError(f"{where}: a group cannot contain itself")
            body = mapping(group, where=where)
            unknown = set(body) - GROUP_KEYS
            if unknown:
                raise UsageError(f"{where}: unknown keys {sorted(unknown)} (a group has "
                                 "hosts, vars and children)")
            depth = 0 if name == "all" else len([g for g in seen if g != "all"]) + 1
            chain = (*chain, (depth, next(order), where,
                              mapping(body.get("vars"), where=f"{where}: vars")))
            for host_name, host_vars in mapping(body.get("hosts"), where=where).items():
                host = hosts.setdefault(str(host_name), _Host())
                # Set membership, not a list scan: a host in many groups stays linear.
                for layer in chain:
                    if layer[1] not in host.visits:
                        host.visits.add(layer[1])
                        host.layers.append(layer)
                host.groups.extend(g for g in (*seen, name) if g not in host.groups)
                host.own.update(mapping(host_vars, where=f"{where}: {host_name}"))
            for child, child_body in mapping(body.get("children"), where=where).items():
                walk(str(child), child_body, (*seen, name), chain)

        for name, group in data.items():
            walk(str(name), group, (), ())
        found = []
        for name, host in hosts.items():
            values: dict[str, Any] = {}
            for _, _, where, variables in sorted(host.layers, key=lambda item: item[:2]):
                values.update(self._variables(variables, where=where, base=base))
            values.update(self._variables(host.own, where=f"{path}: {name}", base=base))
            address = str(values.pop("host", None) or name)
            groups = tuple(g for g in host.groups if g != "all")
            found.append(entry(name, address, values, groups=groups))
        return found

    def _variables(self, variables: dict[str, Any], *, where: str, base: Path) -> dict[str, Any]:
        return settings(variables, where=where, base=base, prefix="mgmtbench_", names=NAMES)


FORMAT = AnsibleYamlInventory
