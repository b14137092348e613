"""A device's data as its YANG models write it, made from the device and written back to it.

:class:`ModelledDevice` holds a device's families of models (which ones: the platform's
``[yang] families`` in its ``platform.toml``, :data:`FAMILIES` names them). :meth:`data` is the
``<data>`` of every family, configuration only (``get-config`` of running) or with state
(``get``), made once per change of configuration and second of the clock; :meth:`commit` writes
the difference between two configurations back through the CLI
(:mod:`~mgmtbench.emulator.yang.apply`).
"""

from __future__ import annotations

import tomllib
import weakref
from collections.abc import Callable, Mapping
from functools import cache, cached_property
from pathlib import Path

from lxml import etree

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.device.transcripts import Platform, default_root
from mgmtbench.emulator.yang import apply as applying
from mgmtbench.emulator.yang.families.base import Family, default_ns
from mgmtbench.emulator.yang.families.ietf import IetfInterfaces
from mgmtbench.emulator.yang.families.ietf_state import IetfHardware, IetfRouting
from mgmtbench.emulator.yang.families.iosxe import IosXeNative
from mgmtbench.emulator.yang.families.junos import JunosConfiguration
from mgmtbench.emulator.yang.families.openconfig import OpenconfigInterfaces, OpenconfigSystem
from mgmtbench.emulator.yang.junos_cli import junos_settings, junos_version
from mgmtbench.emulator.yang.state import Settings, settings_of, state_of

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"

#: The families by the name a platform's ``[yang] families`` gives them.
FAMILIES: Mapping[str, type[Family]] = {
    "ietf-interfaces": IetfInterfaces,
    "openconfig-interfaces": OpenconfigInterfaces,
    "openconfig-system": OpenconfigSystem,
    "cisco-ios-xe-native": IosXeNative,
    "ietf-hardware": IetfHardware,
    "ietf-routing": IetfRouting,
    "junos-configuration": JunosConfiguration,
}
#: Where each CLI style keeps the configuration the models cover (a platform's ``[yang] cli``).
SETTINGS: Mapping[str, Callable[[Device], Settings]] = {"ios": settings_of,
                                                       "junos": junos_settings}


def _ios_version(device: Device) -> int:
    return device.config.version if device.config is not None else 0


#: How each CLI style counts changes to that configuration (what the data are cached by).
VERSIONS: Mapping[str, Callable[[Device], int]] = {"ios": _ios_version, "junos": junos_version}
#: The families of a platform that names none.
DEFAULT_FAMILIES = ("ietf-interfaces", "openconfig-interfaces", "openconfig-system")


def platform_vendor(platform: Platform) -> str:
    """The vendor the platform's ``[yang] vendor`` names (ietf-hardware's ``mfg-name``)."""
    folder = getattr(platform, "folder", None)
    return _vendor(Path(folder) if folder else default_root() / platform.name)


@cache
def _vendor(folder: Path) -> str:
    return str(_yang_section(folder).get("vendor", ""))


def platform_cli(platform: Platform) -> str:
    """How the platform's CLI keeps and takes its configuration (``[yang] cli``: ``ios``, the
    default, or ``junos``)."""
    folder = getattr(platform, "folder", None)
    return _cli(Path(folder) if folder else default_root() / platform.name)


@cache
def _cli(folder: Path) -> str:
    return str(_yang_section(folder).get("cli", "ios"))


def _yang_section(folder: Path) -> dict[str, object]:
    path = folder / "platform.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    section = raw.get("yang")
    return dict(section) if isinstance(section, dict) else {}


def platform_families(platform: Platform) -> tuple[str, ...] | None:
    """The families a platform's ``platform.toml`` names in ``[yang] families`` (the
    :data:`DEFAULT_FAMILIES` if its ``[yang]`` names none), None if it has no ``[yang]``: the
    platform speaks no model-driven protocol (an ASA)."""
    folder = getattr(platform, "folder", None)
    return _families(Path(folder) if folder else default_root() / platform.name)


@cache
def _families(folder: Path) -> tuple[str, ...] | None:
    path = folder / "platform.toml"
    raw = tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    if "yang" not in raw:
        return None
    names = raw["yang"].get("families")
    return tuple(str(n) for n in names) if names else DEFAULT_FAMILIES


class ModelledDevice:
    """One device's modelled data (see the module docstring)."""

    def __init__(self, device: Device, families: tuple[str, ...] | None = None) -> None:
        self.device = device
        names = families if families is not None else (
            platform_families(device.platform) or DEFAULT_FAMILIES)
        unknown = [name for name in names if name not in FAMILIES]
        if unknown:
            raise ValueError(f"platform {device.platform.name}: unknown YANG families "
                             f"{unknown} (known: {sorted(FAMILIES)})")
        self.families = tuple(FAMILIES[name]() for name in names)
        self._made: dict[bool, tuple[tuple[object, ...], etree._Element]] = {}

    @cached_property
    def keys(self) -> Mapping[str, tuple[str, ...]]:
        """Every family's lists and their keys."""
        found: dict[str, tuple[str, ...]] = {}
        for family in self.families:
            found.update(family.lists)
        return found

    @cached_property
    def modules(self) -> tuple[str, ...]:
        """The modules the families write in."""
        return tuple(dict.fromkeys(m for family in self.families for m in family.modules))

    def _version(self, with_state: bool) -> tuple[object, ...]:
        version = VERSIONS[platform_cli(self.device.platform)](self.device)
        second = int(self.device.clock.elapsed()) if with_state else 0
        return version, self.device.hostname, second

    def data(self, with_state: bool) -> etree._Element:
        """The ``<data>`` element (shared: callers copy before they change it)."""
        version = self._version(with_state)
        made = self._made.get(with_state)
        if made is not None and made[0] == version:
            return made[1]
        state = state_of(self.device, platform_vendor(self.device.platform), with_state,
                         SETTINGS[platform_cli(self.device.platform)])
        root = etree.Element(f"{{{BASE}}}data", nsmap=default_ns(BASE))
        for family in self.families:
            for node in family.build(state, with_state):
                root.append(node)
        self._made[with_state] = (version, root)
        return root

    def commit(self, before: etree._Element, after: etree._Element) -> None:
        """Make the device's configuration what ``after`` says where it differs from
        ``before`` (each family compares its own reads); :class:`~.apply.ApplyError` if the
        CLI refuses a line."""
        found = applying.Changes()
        for family in self.families:
            found.merge(applying.changes(family.read(before), family.read(after)))
        applying.apply(self.device, found, cli=platform_cli(self.device.platform))


_MODELLED: weakref.WeakKeyDictionary[Device, ModelledDevice] = weakref.WeakKeyDictionary()


def modelled(device: Device) -> ModelledDevice:
    """The device's :class:`ModelledDevice` (one per device, made when first asked)."""
    found = _MODELLED.get(device)
    if found is None:
        found = _MODELLED[device] = ModelledDevice(device)
    return found
