"""RESTCONF resource paths (RFC 8040 section 3.5.3): ``/restconf/data/`` then steps
``module:name`` (the module only where it changes), a list entry's keys after ``=``, comma
separated and percent-encoded (``/ietf-interfaces:interfaces/interface=Gi0%2F0%2F1``).

:func:`parse` turns the path into :class:`Step` s with their namespaces (from the vendored
modules, :mod:`mgmtbench.emulator.yang.modules`); :func:`select` finds the nodes a path names in
a datastore's data; :func:`skeleton` makes the ancestors a body or an edit sits in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from lxml import etree

from mgmtbench.emulator.restconf.errors import RestconfError
from mgmtbench.emulator.yang.modules import module_index


@dataclass(frozen=True)
class Step:
    """One node of a path: its module, namespace and name, and a list entry's key values (None:
    not a list entry, or every entry)."""

    module: str
    namespace: str
    name: str
    keys: tuple[str, ...] | None = None

    @property
    def tag(self) -> str:
        """The node's name as lxml writes it."""
        return f"{{{self.namespace}}}{self.name}"


def namespace_of(module: str) -> str:
    """The namespace of a vendored module; ``unknown-namespace`` for one the device lacks."""
    info = module_index().get(module)
    if info is None or info.submodule:
        raise RestconfError("unknown-namespace", f"the device has no module {module!r}",
                            type="protocol", status=400)
    return info.namespace


def module_of(namespace: str) -> str:
    """The vendored module whose namespace is ``namespace`` (the namespace itself if none)."""
    for info in module_index().values():
        if info.namespace == namespace and not info.submodule:
            return info.name
    return namespace


def parse(text: str, module: str | None = None) -> list[Step]:
    """The steps of a path (percent-encoded, without ``/restconf/data``): ``/a:b/c=k1,k2``.
    ``module``: the module of the node the path starts under (a YANG Patch target's)."""
    steps: list[Step] = []
    for raw in text.strip("/").split("/"):
        if not raw:
            raise RestconfError("invalid-value", "empty step in the path", type="protocol")
        ident, has_keys, keys = raw.partition("=")
        ident = unquote(ident)
        prefix, colon, name = ident.rpartition(":")
        if colon:
            module = prefix
        if module is None:
            raise RestconfError("invalid-value", f"the first step {ident!r} needs its module "
                                "(module:name)", type="protocol")
        values = tuple(unquote(k) for k in keys.split(",")) if has_keys else None
        steps.append(Step(module, namespace_of(module), name, values))
    return steps


def instance(steps: Sequence[Step], keys: Mapping[str, tuple[str, ...]]) -> str:
    """The path as an instance-identifier (an error's ``error-path``)."""
    out = []
    previous = None
    for step in steps:
        head = step.name if step.module == previous else f"{step.module}:{step.name}"
        previous = step.module
        names = keys.get(step.tag, ())
        if step.keys:
            head += "".join(f"[{etree.QName(n).localname}='{v}']"
                            for n, v in zip(names, step.keys, strict=False))
        out.append(head)
    return "/" + "/".join(out)


def _matches(node: etree._Element, step: Step, keys: Mapping[str, tuple[str, ...]]) -> bool:
    if node.tag != step.tag:
        return False
    if step.keys is None:
        return True
    names = keys.get(step.tag, ())
    return all((node.findtext(name) or "").strip() == value
               for name, value in zip(names, step.keys, strict=True))


def check_keys(steps: Sequence[Step], keys: Mapping[str, tuple[str, ...]]) -> None:
    """``invalid-value`` for keys given to a node that is not a list, or too few or many."""
    for step in steps:
        if step.keys is None:
            continue
        names = keys.get(step.tag)
        if names is None:
            raise RestconfError("invalid-value", f"{step.name} is not a list: it takes no key",
                                type="protocol")
        if len(names) != len(step.keys):
            raise RestconfError("invalid-value", f"{step.name} takes {len(names)} key "
                                f"value(s), not {len(step.keys)}", type="protocol")


def select(tops: Sequence[etree._Element], steps: Sequence[Step],
           keys: Mapping[str, tuple[str, ...]]) -> list[etree._Element]:
    """The nodes the path names among the top-level nodes ``tops`` and below them (several:
    a list's entries)."""
    found = [node for node in tops if steps and _matches(node, steps[0], keys)]
    for step in steps[1:]:
        found = [child for node in found for child in node if _matches(child, step, keys)]
        if not found:
            break
    return found


def skeleton(parent: etree._Element, steps: Sequence[Step],
             keys: Mapping[str, tuple[str, ...]]) -> etree._Element:
    """Below ``parent``, the nodes of ``steps`` (each list entry with its keys); the last one."""
    node = parent
    for step in steps:
        node = etree.SubElement(node, step.tag)
        for name, value in zip(keys.get(step.tag, ()), step.keys or (), strict=False):
            etree.SubElement(node, name).text = value
    return node
