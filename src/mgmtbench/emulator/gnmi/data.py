"""The device's modelled data as gNMI carries it: nodes found by path, written as RFC 7951 JSON
(``JSON_IETF``) or OpenConfig's JSON, or as scalar leaves (``PROTO``), and JSON values turned
back into the XML that :mod:`mgmtbench.emulator.yang.edit` applies.

The data are the ``<data>`` element :class:`~mgmtbench.emulator.yang.datastore.ModelledDevice`
makes (the same NETCONF's ``get`` answers with). A path's steps are matched by local name (a
qualified step also by module); a key left out or given as ``*`` matches every entry.

Leaf types without the schema: ``true``/``false`` are booleans, decimal integers are numbers,
except counters and other 64-bit leaves (a ``counters`` container's, ``boot-time``), which RFC
7951 writes as strings; identities are written ``module:identity``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache

from lxml import etree

from mgmtbench.emulator.gnmi.paths import PathError, Step
from mgmtbench.emulator.yang.modules import module_index

_INTEGER = re.compile(r"^-?\d{1,18}$")
#: 64-bit leaves (RFC 7951 writes them as strings), by their own or their container's name.
_WIDE = frozenset({"counters", "boot-time"})


@cache
def _modules_by_namespace() -> Mapping[str, str]:
    found: dict[str, str] = {}
    for info in module_index().values():
        if not info.submodule and info.namespace:
            found.setdefault(info.namespace, info.name)
    return found


@cache
def _namespaces_by_module() -> Mapping[str, str]:
    return {name: ns for ns, name in _modules_by_namespace().items()}


def module_of(node: etree._Element) -> str:
    """The module ``node``'s namespace belongs to ("" if none is vendored)."""
    return _modules_by_namespace().get(etree.QName(node).namespace or "", "")


def namespace_of(module: str) -> str | None:
    """A vendored module's namespace."""
    return _namespaces_by_module().get(module)


def _local(node: etree._Element) -> str:
    return etree.QName(node).localname


@dataclass(frozen=True)
class Found:
    """A node a path matched, and the path's steps with its keys filled in."""

    node: etree._Element
    steps: tuple[Step, ...]


def find(root: etree._Element, path: list[Step], keys: Mapping[str, tuple[str, ...]],
         openconfig_only: bool) -> list[Found]:
    """The nodes of ``root`` (a ``<data>`` element) that ``path`` names; ``openconfig_only``:
    the first step matches OpenConfig's modules only (origin ``openconfig`` or none)."""
    current = [Found(root, ())]
    for depth, step in enumerate(path):
        following: list[Found] = []
        for found in current:
            for child in found.node:
                if not isinstance(child.tag, str) or _local(child) != step.local:
                    continue
                module = module_of(child)
                if step.module is not None and module != step.module:
                    continue
                if depth == 0 and openconfig_only and not module.startswith("openconfig-"):
                    continue
                matched = _keys_match(child, step, keys)
                if matched is not None:
                    name = step.name if depth or step.module else step.local
                    following.append(Found(child, (*found.steps, Step(name, matched))))
        current = following
    return current


def _keys_match(node: etree._Element, step: Step,
                keys: Mapping[str, tuple[str, ...]]) -> tuple[tuple[str, str], ...] | None:
    """The entry's keys if ``node`` matches the step's (all when the step gives none)."""
    names = keys.get(str(node.tag), ())
    wanted = dict(step.keys)
    unknown = set(wanted) - {etree.QName(n).localname for n in names}
    if unknown:
        raise PathError(f"{step.local} has no key {sorted(unknown)[0]!r}")
    actual = []
    for qualified in names:
        name = etree.QName(qualified).localname
        value = (node.findtext(qualified) or "").strip()
        if wanted.get(name, "*") not in ("*", value):
            return None
        actual.append((name, value))
    return tuple(actual)


def _scalar(node: etree._Element, parent_name: str) -> object:
    text = (node.text or "").strip()
    if text in ("true", "false"):
        return text == "true"
    name = _local(node)
    if _INTEGER.match(text) and name not in _WIDE and parent_name not in _WIDE:
        return int(text)
    prefix, colon, identity = text.partition(":")
    if colon and prefix in (node.nsmap or {}):
        module = _modules_by_namespace().get(node.nsmap[prefix] or "", prefix)
        return f"{module}:{identity}"
    return text


def to_json(node: etree._Element, keys: Mapping[str, tuple[str, ...]], ietf: bool,
            qualify: bool = False) -> object:
    """``node``'s value: a leaf's scalar, a container's or list entry's object (RFC 7951's
    names with ``ietf``, where a child's module differs from its parent's, or ``qualify``
    for the top level's children)."""
    children = [c for c in node if isinstance(c.tag, str)]
    if not children and node.getparent() is not None and str(node.tag) not in keys:
        parent = node.getparent()
        return _scalar(node, _local(parent) if parent is not None else "")
    out: dict[str, object] = {}
    own = module_of(node)
    for child in children:
        module = module_of(child)
        name = _local(child)
        if ietf and (qualify or module != own) and module:
            name = f"{module}:{name}"
        value = to_json(child, keys, ietf)
        if str(child.tag) in keys:
            entries = out.setdefault(name, [])
            assert isinstance(entries, list)
            entries.append(value)
        elif name in out:  # a leaf-list
            previous = out[name]
            out[name] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            out[name] = value
    return out


def leaves(node: etree._Element, steps: tuple[Step, ...],
           keys: Mapping[str, tuple[str, ...]]) -> Iterator[tuple[tuple[Step, ...], object]]:
    """Every leaf under ``node`` (itself if it is one) with its full path: what a ``PROTO``
    reply and an ON_CHANGE comparison carry."""
    children = [c for c in node if isinstance(c.tag, str)]
    if not children and str(node.tag) not in keys:
        yield steps, to_json(node, keys, ietf=True)
        return
    for child in children:
        matched = _keys_match(child, Step(_local(child)), keys)
        yield from leaves(child, (*steps, Step(_local(child), matched or ())), keys)


def dumps(value: object) -> bytes:
    """A JSON value as gNMI's ``json_val`` / ``json_ietf_val`` bytes."""
    return json.dumps(value, separators=(",", ":")).encode()


# --- from gNMI to the XML an edit applies ----------------------------------------------------


def edit_config(data: etree._Element, path: list[Step], value: object | None,
                operation: str, keys: Mapping[str, tuple[str, ...]],
                openconfig_only: bool) -> etree._Element:
    """A ``<config>`` element that makes one Set operation (``merge`` for an update,
    ``replace``, ``delete``) of ``value`` at ``path``, for :func:`~mgmtbench.emulator.yang.
    edit.edit`; namespaces come from the qualified names or from ``data`` (the device's
    configuration), where the same node is."""
    from mgmtbench.emulator.yang.edit import OPERATION

    config = etree.Element("config")
    parent: etree._Element = config
    like: etree._Element | None = data
    removing = operation in ("delete", "remove")
    if not path:
        if removing:
            raise PathError("deleting the root is not supported")
        if not isinstance(value, dict):
            raise PathError("a value at the root must be a JSON object")
        for name, inner in value.items():
            _json_into(config, name, inner, like, keys, top=True,
                       openconfig_only=openconfig_only)
        return config
    scalar = not isinstance(value, (dict, list)) and not removing
    for depth, step in enumerate(path):
        namespace, like = _namespace(step, parent, like, depth == 0, openconfig_only)
        last = depth == len(path) - 1
        if last and scalar:
            text, nsmap = _text(value, step.local)
            node = etree.SubElement(parent, f"{{{namespace}}}{step.local}", nsmap=nsmap)
            node.text = text
        else:
            node = etree.SubElement(parent, f"{{{namespace}}}{step.local}")
        for key, key_value in step.keys:
            if key_value == "*":
                raise PathError("a Set path cannot have a wildcard key")
            leaf = etree.SubElement(node, f"{{{namespace}}}{key}")
            leaf.text = key_value
        parent = node
    if operation != "merge":
        parent.set(OPERATION, operation)
    if isinstance(value, dict) and not removing:
        for name, inner in value.items():
            _json_into(parent, name, inner, like, keys, top=False,
                       openconfig_only=openconfig_only)
    elif isinstance(value, list):
        raise PathError(f"a list value for {path[-1].local}: name one entry in the path")
    return config


def _namespace(step: Step, parent: etree._Element, like: etree._Element | None, top: bool,
               openconfig_only: bool) -> tuple[str, etree._Element | None]:
    """The namespace of ``step`` under ``parent``, and the matching node of the device's data."""
    if step.module is not None:
        namespace = namespace_of(step.module)
        if namespace is None:
            raise PathError(f"unknown module {step.module!r}")
    else:
        namespace = etree.QName(parent).namespace or ""
    same = None
    if like is not None:
        for child in like:
            if not isinstance(child.tag, str) or _local(child) != step.local:
                continue
            module = module_of(child)
            if top and openconfig_only and not module.startswith("openconfig-"):
                continue
            if step.module is None or module == step.module:
                same = child
                break
    if same is not None and step.module is None:
        namespace = etree.QName(same).namespace or namespace
    if not namespace:
        raise PathError(f"no data at {step.local!r}")
    return namespace, same


def _json_into(parent: etree._Element, name: str, value: object, like: etree._Element | None,
               keys: Mapping[str, tuple[str, ...]], *, top: bool,
               openconfig_only: bool) -> None:
    namespace, same = _namespace(Step(name), parent, like, top, openconfig_only)
    local = Step(name).local
    for one in value if isinstance(value, list) else [value]:
        if isinstance(one, dict):
            node = etree.SubElement(parent, f"{{{namespace}}}{local}")
            for inner_name, inner in one.items():
                _json_into(node, inner_name, inner, same, keys, top=False,
                           openconfig_only=openconfig_only)
        else:
            text, nsmap = _text(one, local)
            node = etree.SubElement(parent, f"{{{namespace}}}{local}", nsmap=nsmap)
            node.text = text


def _text(value: object, name: str) -> tuple[str, dict[str, str]]:
    """A JSON scalar as a leaf's text, and the prefix an identity (``module:name``) needs."""
    if isinstance(value, bool):
        return ("true" if value else "false"), {}
    if isinstance(value, (dict, list)) or value is None:
        raise PathError(f"{name} takes a scalar value")
    text = str(value)
    module, colon, _ = text.partition(":")
    namespace = namespace_of(module) if colon else None
    if namespace is not None:
        return text, {module: namespace}
    return text, {}
