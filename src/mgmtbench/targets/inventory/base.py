"""What every inventory format module provides: :class:`InventoryFormat`, which reads a file into
:class:`HostEntry` values, as the file says them (platform names, credentials, ports), before
platforms are mapped and credentials resolved (:mod:`mgmtbench.targets.inventory`).

The settings beyond what a format has names for (every format has an address and a platform; not
all have ports, credentials or trust files) have the same names everywhere, :data:`SETTINGS`:
plain keys in the native TOML, under ``data`` in Nornir, ``mgmtbench_``-prefixed variables in
Ansible, ``mgmtbench-``-prefixed node labels in containerlab (:func:`settings`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from mgmtbench.errors import UsageError
from mgmtbench.targets.inventory.bounded import load_yaml as _load_yaml

#: Settings every format can carry, by their common names: what each becomes.
SETTINGS = ("platform", "ssh_port", "https_port", "netconf_port", "gnmi_port", "http3_port",
            "username", "password",
            "enable_secret", "key_file", "auth", "known_hosts", "ca_file", "timeout")
_PATHS = frozenset({"key_file", "known_hosts", "ca_file"})
_PORTS = frozenset({"ssh_port", "https_port", "netconf_port", "gnmi_port", "http3_port"})
# Values an inventory tool would expand and we cannot: Jinja templates, Ansible vault.
_TEMPLATED = re.compile(r"\{\{.*\}\}|^\$ANSIBLE_VAULT", re.DOTALL)


@dataclass(frozen=True)
class HostEntry:
    """One host as an inventory file describes it."""

    name: str
    host: str  # the address (or a DNS name, resolved once when the inventory is loaded)
    platform: str | None = None  # as the file names it (``ios``, ``cisco.ios.ios``, a kind ...)
    ssh_port: int = 22
    https_port: int = 443
    netconf_port: int = 830  # the NETCONF subsystem's port (a real device's 830)
    gnmi_port: int = 9339  # gNMI's port (a real device's 9339)
    http3_port: int | None = None  # the HTTPS API over HTTP/3 (UDP); None: not served
    groups: tuple[str, ...] = ()
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    enable_secret: str | None = field(default=None, repr=False)
    key_file: Path | None = None
    auth: str | None = None  # password, key or agent; None: inferred
    known_hosts: Path | None = None
    ca_file: Path | None = None
    timeout: float | None = None  # seconds for one round or probe of this host


class InventoryFormat(ABC):
    """One inventory file format: a module of :mod:`mgmtbench.targets.inventory` defines a
    subclass as ``FORMAT`` and is found by its module name."""

    #: The name users give with ``--inventory-format`` / ``--format``.
    name: ClassVar[str]
    #: One line for help texts and errors.
    description: ClassVar[str]

    @classmethod
    @abstractmethod
    def detect(cls, path: Path) -> bool:
        """Whether ``path`` looks like this format (cheap: a name, a suffix, a first parse); a
        :class:`~mgmtbench.errors.UsageError` for a file of this format's kind (its suffix) that
        does not parse, so the user learns why rather than "not an inventory"."""

    @abstractmethod
    def read(self, path: Path) -> list[HostEntry]:
        """Every host of the inventory at ``path``, in the file's order; a
        :class:`~mgmtbench.errors.UsageError` naming the file for anything unusable."""


def settings(raw: Mapping[str, Any], *, where: str, base: Path, prefix: str | None = "",
             names: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The :data:`SETTINGS` found in ``raw``: each under ``prefix + name`` (``mgmtbench_ca_file``
    in Ansible; ``prefix`` None: none of them), or under a format's own key for it (``names``:
    ``{"ansible_user": "username"}``), typed and checked; relative paths are relative to
    ``base``. ``where`` names the place in errors."""
    found: dict[str, Any] = {}
    common = {} if prefix is None else {prefix + n: n for n in SETTINGS}
    keys = {**(names or {}), **common}  # the common names last: they win
    for key, name in keys.items():
        if key not in raw or raw[key] is None:
            continue
        found[name] = convert(name, raw[key], where=f"{where}: {key}", base=base)
    return found


def convert(name: str, value: Any, *, where: str, base: Path) -> Any:
    """One setting's value, typed; a one-line :class:`UsageError` for a bad one."""
    if name in _PORTS:
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).isdigit() \
                or not 0 < int(value) < 65536:
            raise UsageError(f"{where}: a port is a number 1..65535, not {value!r}")
        return int(value)
    if name == "timeout":
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            raise UsageError(f"{where}: a time-out is a number of seconds, not {value!r}") from None
        if seconds <= 0:
            raise UsageError(f"{where}: a time-out must be positive, not {value!r}")
        return seconds
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise UsageError(f"{where}: expected text, not {type(value).__name__}")
    text = str(value)
    if _TEMPLATED.search(text):
        hint = ("export MGMTBENCH_PASSWORD instead" if name in ("password", "enable_secret")
                else "give the value itself")
        raise UsageError(f"{where}: templated or vault-encrypted values cannot be read: {hint}")
    if name in _PATHS:
        path = Path(text).expanduser()
        return path if path.is_absolute() else (base / path)
    return text


def entry(name: str, host: str, values: Mapping[str, Any], groups: tuple[str, ...] = ()) -> HostEntry:
    """A :class:`HostEntry` from the merged :func:`settings` of one host."""
    known = {k: v for k, v in values.items() if k in SETTINGS}
    return HostEntry(name=name, host=host, groups=groups, **known)


def mapping(value: Any, *, where: str) -> dict[str, Any]:
    """``value`` if it is a mapping (an absent one is empty), else a one-line error."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected a mapping, not {type(value).__name__}")
    return value


def load_yaml(path: Path) -> Any:
    """The YAML document at ``path`` (PyYAML's safe loader), bounded in size, depth and
    aliases (:mod:`mgmtbench.targets.inventory.bounded`); one line for a file that cannot be
    read or parsed (an Ansible ``!vault`` value included)."""
    return _load_yaml(path)
