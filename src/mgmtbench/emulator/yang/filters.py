"""The filters of ``get`` and ``get-config`` (RFC 6241, section 6 and the ``:xpath``
capability), applied to a datastore's data.

:func:`subtree` follows section 6.2: a filter node with no children selects the whole node
(a selection node), one with text must match the data's text for its parent to be kept (a
content match node) and one with children descends (a containment node); a list entry comes
with its keys. A filter node without a namespace matches that name in any namespace.
:func:`xpath` evaluates the ``select`` expression against the data (as lxml's XPath 1.0,
with the filter element's namespace prefixes) and returns each selected node with its
ancestors (their list keys only) around it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from lxml import etree


def _ns(node: etree._Element) -> Any:
    """``node``'s namespace map, as lxml takes it (its default prefix is None)."""
    return node.nsmap


class FilterError(ValueError):
    """A filter that cannot be evaluated (a bad XPath expression, a prefix not declared)."""


def _matches(data: etree._Element, wanted: etree._Element) -> bool:
    want = etree.QName(wanted)
    have = etree.QName(data)
    return want.localname == have.localname and (want.namespace is None
                                                 or want.namespace == have.namespace)


def subtree(data: etree._Element, spec: etree._Element) -> etree._Element:
    """The ``<data>`` that ``spec`` (a ``<filter type="subtree">``) selects from ``data``."""
    out = etree.Element(data.tag, nsmap=_ns(data))
    wanted = [node for node in spec if isinstance(node.tag, str)]
    for node in data:
        for each in wanted:
            if _matches(node, each):
                picked = _select(node, each)
                if picked is not None:
                    out.append(picked)
                break
    return out


def _select(node: etree._Element, spec: etree._Element) -> etree._Element | None:
    """``node`` as ``spec`` selects it, None if its content match nodes do not match."""
    children = [c for c in spec if isinstance(c.tag, str)]
    if not children:
        text = (spec.text or "").strip()
        if text and (node.text or "").strip() != text and len(node) == 0:
            return None
        return copy.deepcopy(node)
    matches = [c for c in children if len(c) == 0 and (c.text or "").strip()]
    others = [c for c in children if c not in matches]
    kept: list[etree._Element] = []
    for match in matches:
        found = [d for d in node if isinstance(d.tag, str) and _matches(d, match)]
        if not any((d.text or "").strip() == (match.text or "").strip() for d in found):
            return None
        kept.extend(found)
    if not others:  # only content matches: the whole node
        return copy.deepcopy(node)
    out = etree.Element(node.tag, nsmap=_ns(node))
    out.text = node.text
    picked: list[etree._Element] = []
    for sub in node:
        if not isinstance(sub.tag, str):
            continue
        if any(sub is k for k in kept):
            picked.append(copy.deepcopy(sub))
            continue
        for other in others:
            if _matches(sub, other):
                chosen = _select(sub, other)
                if chosen is not None:
                    picked.append(chosen)
                break
    if not picked and not kept and all(len(o) for o in others):
        return None  # containment only, nothing below it selected: not in the reply
    for each in picked:
        out.append(each)
    return out


_ABSOLUTE = re.compile(r"(^|[|(\[,]\s*)/")


def xpath(data: etree._Element, select: str, namespaces: Mapping[str | None, str],
          keys: Mapping[str, tuple[str, ...]]) -> etree._Element:
    """The ``<data>`` that the XPath ``select`` picks from ``data``."""
    relative = _ABSOLUTE.sub(lambda m: f"{m.group(1)}./", select.strip())
    prefixes = {k: v for k, v in namespaces.items() if k}
    try:
        found = data.xpath(relative, namespaces=prefixes)
    except etree.XPathError as exc:
        raise FilterError(f"bad XPath expression {select!r}: {exc}") from exc
    out = etree.Element(data.tag, nsmap=_ns(data))
    if not isinstance(found, list):
        return out
    made: dict[int, etree._Element] = {id(data): out}
    for node in found:
        if not isinstance(node, etree._Element) or node is data:
            continue
        chain = [node, *node.iterancestors()]
        if chain[-1] is not data:
            continue
        parent = out
        for ancestor in reversed(chain[1:-1]):
            key = id(ancestor)
            if key not in made:
                shell = etree.SubElement(made[id(ancestor.getparent())], ancestor.tag,
                                         nsmap=_ns(ancestor))
                for name in keys.get(ancestor.tag, ()):
                    key_node = ancestor.find(name)
                    if key_node is not None:
                        shell.append(copy.deepcopy(key_node))
                made[key] = shell
            parent = made[key]
        if id(node) not in made:
            copied = copy.deepcopy(node)
            names = keys.get(parent.tag, ())
            if node.tag in names and parent.find(node.tag) is not None:
                continue  # the key, already there
            parent.append(copied)
            made[id(node)] = copied
    return out
