"""``edit-config``'s operations on instance data (RFC 6241, section 7.2).

:func:`edit` applies a ``<config>`` element to a copy of a datastore's data, node by node:
``merge`` (the default), ``replace``, ``create`` (``data-exists`` if the node is there),
``delete`` (``data-missing`` if it is not), ``remove`` and ``none``, each node's operation
inherited from its parent's unless it names its own (the ``operation`` attribute in the base
namespace). A list entry is the same entry when its keys are equal (the keys come from the
models' families), a leaf-list entry when its value is; everything else is matched by name.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from lxml import etree

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
OPERATION = f"{{{BASE}}}operation"
OPERATIONS = ("merge", "replace", "create", "delete", "remove", "none")


class EditError(Exception):
    """An edit that cannot be made: its RFC 6241 error tag and the path of the node."""

    def __init__(self, tag: str, message: str, path: str) -> None:
        super().__init__(message)
        self.tag = tag
        self.path = path


def _key(node: etree._Element, keys: Mapping[str, tuple[str, ...]]) -> tuple[object, ...]:
    names = keys.get(node.tag)
    if names is None:
        if len(node) == 0:  # a leaf or leaf-list entry: by name (a leaf-list's: and value)
            return (node.tag,)
        return (node.tag,)
    values = []
    for name in names:
        found = node.find(name)
        values.append(None if found is None else (found.text or "").strip())
    return (node.tag, *values)


def _find(parent: etree._Element, node: etree._Element,
          keys: Mapping[str, tuple[str, ...]]) -> etree._Element | None:
    wanted = _key(node, keys)
    for candidate in parent.iterchildren(node.tag):
        if _key(candidate, keys) == wanted:
            return candidate
    return None


def _path(node: etree._Element) -> str:
    parts = []
    while node is not None and etree.QName(node).localname not in ("config", "data"):
        parts.append(etree.QName(node).localname)
        node = node.getparent()  # type: ignore[assignment]
    return "/" + "/".join(reversed(parts))


def _clean(node: etree._Element) -> etree._Element:
    """A copy of ``node`` without operation attributes, with the namespace prefixes its text
    uses (identityrefs such as ``ianaift:ethernetCsmacd``) declared on it."""
    made = copy.deepcopy(node)
    for each in made.iter():
        if isinstance(each.tag, str) and OPERATION in each.attrib:
            del each.attrib[OPERATION]
    return made


def _validate_operation(node: etree._Element) -> str | None:
    operation = node.get(OPERATION)
    if operation is not None and operation not in OPERATIONS:
        raise EditError("bad-attribute", f"unknown operation {operation!r}", _path(node))
    return operation


def edit(target: etree._Element, config: etree._Element, default_operation: str,
         keys: Mapping[str, tuple[str, ...]]) -> None:
    """Apply ``config``'s children to ``target`` (both the datastore's root: ``<data>`` /
    ``<config>``) in place; :class:`EditError` at the first node that cannot be edited (the
    caller edits a copy, so nothing is half made)."""
    for node in config:
        if isinstance(node.tag, str):
            _edit_node(target, node, default_operation, keys)


def _edit_node(parent: etree._Element, node: etree._Element, inherited: str,
               keys: Mapping[str, tuple[str, ...]]) -> None:
    operation = _validate_operation(node) or inherited
    existing = _find(parent, node, keys)
    if operation == "create" and existing is not None:
        raise EditError("data-exists", "the data to create exists already", _path(node))
    if operation == "delete" and existing is None:
        raise EditError("data-missing", "the data to delete does not exist", _path(node))
    if operation in ("delete", "remove"):
        if existing is not None:
            parent.remove(existing)
        return
    if operation in ("replace", "create") or (existing is None and operation == "merge"):
        made = _clean(node)
        if existing is not None:
            existing.addprevious(made)
            parent.remove(existing)
        else:
            parent.append(made)
        return
    children = [c for c in node if isinstance(c.tag, str)]
    if existing is None:  # "none": descend only if something below changes it
        if not any(_validate_operation(c) not in (None, "none") or len(c)
                   for c in node.iter() if isinstance(c.tag, str) and c is not node):
            if any(_validate_operation(c) == "delete" for c in node.iter()):
                raise EditError("data-missing", "the data to delete does not exist",
                                _path(node))
            return
        existing = etree.SubElement(parent, node.tag)
        for name in keys.get(node.tag, ()):
            found = node.find(name)
            if found is not None:
                existing.append(_clean(found))
    if not children:  # a leaf
        if operation == "merge":
            existing.text = node.text
        return
    key_names = set(keys.get(node.tag, ()))
    for sub in children:
        if sub.tag in key_names and _validate_operation(sub) is None:
            continue  # the entry's key: it is how the entry was found
        _edit_node(existing, sub, operation, keys)
