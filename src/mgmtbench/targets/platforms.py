"""Platform names in inventories, mapped to ours, and what each platform says of a live device.

Every platform folder's ``platform.toml`` has an ``[inventory]`` table: ``names`` (what Nornir,
Netmiko, NAPALM, Ansible, Scrapli and containerlab call it: ``cisco_xe``, ``ios``,
``cisco.ios.ios``, ``cisco_c8000v`` ...), ``version`` (the regular expression whose group 1 in
``show version`` is the device's own version string) and the masks a round-to-round comparison
applies (``volatile``, ``counters``: :mod:`mgmtbench.targets.stable`). Adding a platform folder
adds its names here; nothing else lists them.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from mgmtbench.errors import TranscriptError, UsageError


@dataclass(frozen=True)
class InventoryPlatform:
    """What an inventory needs to know of one of our platforms."""

    name: str
    names: tuple[str, ...]  # every name an inventory may use for it (ours first)
    version: re.Pattern[str] | None  # group 1: the device's version string in `show version`
    volatile: tuple[re.Pattern[str], ...]  # masked in place (group ``v``, else the whole match)
    counters: tuple[re.Pattern[str], ...]  # a line matching one has every number masked

    def version_of(self, show_version: str) -> str | None:
        """The device's own version string in its ``show version`` output, None if not found."""
        if self.version is None:
            return None
        found = self.version.search(show_version)
        return found.group(1).strip() if found else None


@cache
def inventory_platforms() -> dict[str, InventoryPlatform]:
    """Our platforms (name -> description), each read once from its ``platform.toml``."""
    from mgmtbench.emulator.device.transcripts import available_platforms, default_root

    root = default_root()
    return {name: _read(name, root / name / "platform.toml") for name in available_platforms(root)}


def _read(name: str, path: Path) -> InventoryPlatform:
    try:
        with path.open("rb") as handle:
            raw = tomllib.load(handle).get("inventory", {})
        version = raw.get("version")
        return InventoryPlatform(
            name=name, names=tuple(dict.fromkeys([name, *map(str, raw.get("names", []))])),
            version=re.compile(str(version), re.MULTILINE) if version else None,
            volatile=_patterns(raw, "volatile"), counters=_patterns(raw, "counters"))
    except (OSError, tomllib.TOMLDecodeError, re.error, TypeError) as exc:
        raise TranscriptError(f"{path}: bad [inventory] table ({exc})") from exc


def _patterns(raw: dict[str, object], key: str) -> tuple[re.Pattern[str], ...]:
    found = raw.get(key, [])
    if not isinstance(found, list):
        raise TypeError(f"{key} must be a list of regular expressions")
    return tuple(re.compile(str(p)) for p in found)


def known_names() -> str:
    """Every platform with the names it is known by, for a message: ``cisco_asa (asa, ...)``."""
    return "; ".join(f"{p.name} ({', '.join(p.names[1:])})" if len(p.names) > 1 else p.name
                     for p in inventory_platforms().values())


def platform_for(name: str | None, *, host: str) -> InventoryPlatform:
    """Our platform for an inventory's ``name`` of it (case-insensitive); a
    :class:`~mgmtbench.errors.UsageError` naming every known one for a name we do not know."""
    if not name:
        raise UsageError(f"host {host} has no platform: give one of {known_names()}")
    wanted = name.strip().lower()
    for platform in inventory_platforms().values():
        if wanted in (n.lower() for n in platform.names):
            return platform
    raise UsageError(f"host {host}: unknown platform {name!r}: known platforms are "
                     f"{known_names()}")
