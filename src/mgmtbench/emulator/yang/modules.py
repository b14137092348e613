"""The published YANG modules the emulator ships (``modules/``, named ``name@revision.yang``,
with their licences): what a device advertises in its NETCONF hello, lists in its YANG
library and serves with ``get-schema``.

:func:`module_index` reads each file's header once (name, revision, namespace, prefix, what it
imports); :func:`closure` is a set of modules with everything they import; :func:`schema_text`
is a module's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

MODULES_DIR = Path(__file__).resolve().parent / "modules"

_NAMESPACE = re.compile(r'^\s*namespace\s+"?([^";\s]+)"?\s*;', re.MULTILINE)
_PREFIX = re.compile(r'^\s*prefix\s+"?([\w.-]+)"?\s*;', re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+([\w.-]+)\s*\{", re.MULTILINE)
_INCLUDE = re.compile(r"^\s*include\s+([\w.-]+)\s*[{;]", re.MULTILINE)
_FEATURE = re.compile(r"^\s*feature\s+([\w.-]+)\s*[{;]", re.MULTILINE)
_HEAD = re.compile(r"^\s*(module|submodule)\s+([\w.-]+)\s*\{", re.MULTILINE)


@dataclass(frozen=True)
class ModuleInfo:
    """One vendored module (or submodule)."""

    name: str
    revision: str
    namespace: str  # a submodule's: its module's
    prefix: str
    path: Path
    submodule: bool
    imports: tuple[str, ...]
    includes: tuple[str, ...]
    features: tuple[str, ...]

    @property
    def capability(self) -> str:
        """The NETCONF hello capability that advertises the module (RFC 6020, 5.6.4)."""
        features = f"&features={','.join(self.features)}" if self.features else ""
        return f"{self.namespace}?module={self.name}&revision={self.revision}{features}"


@cache
def module_index(folder: Path = MODULES_DIR) -> Mapping[str, ModuleInfo]:
    """Every vendored module and submodule by name (the newest revision of each)."""
    found: dict[str, ModuleInfo] = {}
    for path in sorted(folder.glob("*.yang")):
        name, _, revision = path.stem.partition("@")
        text = path.read_text(encoding="utf-8")
        head = _HEAD.search(text)
        namespace = _NAMESPACE.search(text)
        prefix = _PREFIX.search(text)
        info = ModuleInfo(name=name, revision=revision,
                          namespace=namespace.group(1) if namespace else "",
                          prefix=prefix.group(1) if prefix else "", path=path,
                          submodule=bool(head and head.group(1) == "submodule"),
                          imports=tuple(_IMPORT.findall(text)),
                          includes=tuple(_INCLUDE.findall(text)),
                          features=tuple(_FEATURE.findall(text)))
        if name not in found or found[name].revision < revision:
            found[name] = info
    for info in list(found.values()):  # a submodule's namespace is its module's
        for sub in info.includes:
            if sub in found and not found[sub].namespace:
                found[sub] = ModuleInfo(**{**found[sub].__dict__, "namespace": info.namespace})
    return found


def closure(names: Iterable[str], folder: Path = MODULES_DIR) -> tuple[ModuleInfo, ...]:
    """``names`` with every module they import or include, in a stable order; KeyError for a
    module that is not vendored."""
    index = module_index(folder)
    seen: dict[str, ModuleInfo] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        info = index[name]
        seen[name] = info
        todo.extend(info.imports)
        todo.extend(info.includes)
    return tuple(sorted(seen.values(), key=lambda m: m.name))


def schema_text(name: str, revision: str | None, folder: Path = MODULES_DIR) -> str | None:
    """The YANG text of module ``name`` (at ``revision``, if given), None if not vendored."""
    info = module_index(folder).get(name)
    if info is None or (revision and revision != info.revision):
        return None
    return info.path.read_text(encoding="utf-8")
