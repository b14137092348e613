"""RESTCONF's query parameters on a data GET (RFC 8040 section 4.8): ``depth`` (1 to 65535 or
``unbounded``), ``fields`` (``a;b/c;d(e;f)``), ``content`` (``config``, ``nonconfig``,
``all``) and ``with-defaults`` (``report-all``, ``trim``, ``explicit``,
``report-all-tagged``). :func:`parse_query` checks them (``invalid-value`` for an unknown name
or value, as section 4.8 says); :func:`prune` cuts a reply's nodes to ``depth`` and ``fields``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

from lxml import etree

from mgmtbench.emulator.restconf.errors import RestconfError
from mgmtbench.emulator.restconf.paths import namespace_of

CONTENT = ("config", "nonconfig", "all")
WITH_DEFAULTS = ("report-all", "trim", "explicit", "report-all-tagged")
#: The parameters a data GET takes; every other (``insert``, ``filter`` ...) is refused.
KNOWN = ("depth", "fields", "content", "with-defaults")
#: A fields selection: child name (``{ns}name``, or a bare name: the parent's module) to what
#: is selected below it (None: all of it).
Fields = dict[str, "Fields | None"]


@dataclass(frozen=True)
class Query:
    """A GET's parameters, checked."""

    depth: int | None = None
    fields: Fields | None = None
    content: str = "all"
    with_defaults: str = "explicit"


def _bad(name: str, message: str) -> RestconfError:
    return RestconfError("invalid-value", f"query parameter {name}: {message}", type="protocol")


def parse_query(raw: bytes | str, allowed: tuple[str, ...] = KNOWN) -> Query:
    """The checked parameters of a query string."""
    text = raw.decode("latin-1") if isinstance(raw, bytes) else raw
    values: dict[str, str] = {}
    for name, value in parse_qsl(text, keep_blank_values=True, strict_parsing=False):
        if name not in allowed:
            raise _bad(name, "not supported here" if name in KNOWN or name in (
                "insert", "point", "filter", "start-time", "stop-time") else "unknown")
        if name in values:
            raise _bad(name, "given twice")
        values[name] = value
    depth = None
    if "depth" in values and values["depth"] != "unbounded":
        if not values["depth"].isdigit() or not 1 <= int(values["depth"]) <= 65535:
            raise _bad("depth", f"{values['depth']!r} is not 1..65535 or unbounded")
        depth = int(values["depth"])
    content = values.get("content", "all")
    if content not in CONTENT:
        raise _bad("content", f"{content!r} is not one of {', '.join(CONTENT)}")
    defaults = values.get("with-defaults", "explicit")
    if defaults not in WITH_DEFAULTS:
        raise _bad("with-defaults", f"{defaults!r} is not one of {', '.join(WITH_DEFAULTS)}")
    fields = _fields(values["fields"]) if "fields" in values else None
    return Query(depth, fields, content, defaults)


def _fields(text: str) -> Fields:
    """``a;b/c;d(e;f)`` as a :data:`Fields` tree (a module prefix as ``{namespace}name``)."""
    position = 0

    def name() -> str:
        nonlocal position
        start = position
        while position < len(text) and text[position] not in ";/()":
            position += 1
        ident = text[start:position]
        if not ident:
            raise _bad("fields", f"a name is missing at {start} in {text!r}")
        module, colon, local = ident.rpartition(":")
        return f"{{{namespace_of(module)}}}{local}" if colon else local

    def path_list() -> Fields:
        nonlocal position
        found: Fields = {}
        while True:
            target = found
            key = name()
            while position < len(text) and text[position] == "/":
                position += 1
                below = target.get(key)
                if below is None:
                    below = target[key] = {}
                target = below
                key = name()
            if position < len(text) and text[position] == "(":
                position += 1
                below = path_list()
                if position >= len(text) or text[position] != ")":
                    raise _bad("fields", f"unclosed '(' in {text!r}")
                position += 1
                existing = target.get(key)
                target[key] = below if existing is None else {**existing, **below}
            elif key not in target:
                target[key] = None
            if position < len(text) and text[position] == ";":
                position += 1
                continue
            return found

    tree = path_list()
    if position != len(text):
        raise _bad("fields", f"unexpected {text[position]!r} at {position} in {text!r}")
    return tree


def _wanted(child: etree._Element, fields: Fields) -> tuple[bool, Fields | None]:
    qname = etree.QName(child)
    for key in (child.tag, qname.localname):
        if key in fields:
            return True, fields[key]
    return False, None


def prune(node: etree._Element, query: Query, keys: Mapping[str, tuple[str, ...]]
          ) -> etree._Element:
    """A copy of ``node`` (the target, at depth 1) cut to the query's ``depth`` and
    ``fields``; a list entry keeps its keys (a reply needs them to name the entry)."""
    if query.depth is None and query.fields is None:
        return node
    made = copy.deepcopy(node)
    _cut(made, 1, query.depth, query.fields, keys)
    return made


def _cut(node: etree._Element, depth: int, limit: int | None, fields: Fields | None,
         keys: Mapping[str, tuple[str, ...]]) -> None:
    kept = set(keys.get(node.tag, ()))
    for child in list(node):
        if not isinstance(child.tag, str):
            continue
        if child.tag in kept:
            continue
        below: Fields | None = None
        if fields is not None:
            wanted, below = _wanted(child, fields)
            if not wanted:
                node.remove(child)
                continue
        if limit is not None and depth + 1 > limit:
            node.remove(child)
            continue
        _cut(child, depth + 1, limit, below, keys)


def nonconfig(state: etree._Element, config: etree._Element,
              keys: Mapping[str, tuple[str, ...]]) -> etree._Element:
    """A copy of ``state`` (the data with state) without the configuration ``config`` holds:
    a leaf there is configuration; list entries keep their keys, and nodes left with nothing
    but keys go."""
    configured = {_leaf_path(leaf, keys) for leaf in config.iter()
                  if isinstance(leaf.tag, str) and len(leaf) == 0 and leaf is not config}
    made = copy.deepcopy(state)
    for leaf in list(made.iter()):
        if (isinstance(leaf.tag, str) and len(leaf) == 0 and leaf is not made
                and leaf.getparent() is not None
                and leaf.tag not in keys.get(leaf.getparent().tag, ())  # type: ignore[union-attr]
                and _leaf_path(leaf, keys) in configured):
            leaf.getparent().remove(leaf)  # type: ignore[union-attr]
    _drop_empty(made, keys)
    return made


def _leaf_path(leaf: etree._Element, keys: Mapping[str, tuple[str, ...]]) -> tuple[object, ...]:
    parts: list[object] = []
    node: etree._Element | None = leaf
    while node is not None and node.getparent() is not None:
        names = keys.get(node.tag, ())
        parts.append((node.tag, tuple(node.findtext(n) for n in names)))
        node = node.getparent()
    parts.append(leaf.text)
    return tuple(parts)


def _drop_empty(node: etree._Element, keys: Mapping[str, tuple[str, ...]]) -> None:
    for child in list(node):
        if not isinstance(child.tag, str) or len(child) == 0:
            continue
        _drop_empty(child, keys)
        names = set(keys.get(child.tag, ()))
        if all(grand.tag in names for grand in child):
            node.remove(child)
