"""A RESTCONF reply's data in XML or RFC 7951 JSON, and a request body's data as XML.

The device's data are XML trees (:mod:`mgmtbench.emulator.yang`). XML replies are those nodes
as they are. JSON needs the schema (module-qualified names where the module changes, int64 and
decimal64 as strings, ``empty`` as ``[null]``, identities with their modules): libyang prints
it (:meth:`~mgmtbench.emulator.yang.validate.YangValidator.xml_to_json`) from the reply's nodes
inside their ancestors, and the reply is the target's member of that. A JSON body is read by
libyang the same way round, inside the ancestors the URL names (:func:`body_xml`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from lxml import etree

from mgmtbench.emulator.restconf.errors import RESTCONF_NS, RestconfError
from mgmtbench.emulator.restconf.paths import Step, module_of, skeleton
from mgmtbench.emulator.yang.validate import YangValidationError, YangValidator, validator

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
#: What the served modules need beside the device's families' (the YANG library).
EXTRA_MODULES = ("ietf-yang-library",)


def codec_for(modules: Iterable[str]) -> YangValidator:
    """The libyang context for a device whose families write in ``modules`` (loaded once per
    set of modules)."""
    return validator((*modules, *EXTRA_MODULES))


def _member(container: Mapping[str, Any], step: Step, parent: Step | None) -> Any:
    for key in ((step.name, f"{step.module}:{step.name}") if parent is not None
                and parent.module == step.module else (f"{step.module}:{step.name}",)):
        if key in container:
            return container[key]
    return None


def json_reply(codec: YangValidator, nodes: Sequence[etree._Element], steps: Sequence[Step],
               keys: Mapping[str, tuple[str, ...]]) -> bytes:
    """The JSON reply for ``nodes``, the resource ``steps`` names (none: the datastore)."""
    if not steps:
        text = codec.xml_to_json("".join(etree.tostring(n, encoding="unicode") for n in nodes))
        return _dump({"ietf-restconf:data": json.loads(text)})
    holder = etree.Element("holder")
    parent = skeleton(holder, steps[:-1], keys) if len(steps) > 1 else holder
    key_names = keys.get(parent.tag, ()) if len(steps) > 1 else ()
    for node in nodes:
        if node.tag not in key_names:  # a key is in the skeleton already
            parent.append(copy.deepcopy(node))
    data = json.loads(codec.xml_to_json(
        "".join(etree.tostring(n, encoding="unicode") for n in holder)))
    value: Any = data
    previous: Step | None = None
    for step in steps:
        value = _member(value, step, previous)
        if step is not steps[-1] and isinstance(value, list):
            value = value[0] if value else None
        previous = step
        if value is None:
            break
    return _dump({f"{steps[-1].module}:{steps[-1].name}": value})


def _dump(value: object) -> bytes:
    return json.dumps(value, indent=2).encode() + b"\n"


def xml_reply(nodes: Sequence[etree._Element], datastore: bool) -> bytes:
    """The XML reply: the nodes, inside ``<data>`` of ietf-restconf for the datastore."""
    text = "".join(etree.tostring(n, encoding="unicode") for n in nodes)
    if datastore:
        text = f'<data xmlns="{RESTCONF_NS}">{text}</data>'
    return text.encode() + b"\n"


def body_xml(codec: YangValidator, body: bytes, encoding: str, parents: Sequence[Step],
             keys: Mapping[str, tuple[str, ...]]) -> list[etree._Element]:
    """The data nodes of a request body (JSON or XML) that sits below ``parents`` (the
    resource's ancestors: the body is the resource itself), each checked against the schema
    (configuration only); ``malformed-message`` / ``invalid-value`` otherwise."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RestconfError("malformed-message", "the body is not UTF-8", type="protocol"
                            ) from exc
    if encoding == "json":
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise RestconfError("malformed-message", f"the body is not JSON: {exc}",
                                type="protocol") from exc
        if not isinstance(document, dict) or len(document) != 1:
            raise RestconfError("malformed-message", "the body must be one object with one "
                                "member, the resource", type="protocol")
        wrapped = _wrap_json(document, parents, keys)
        try:
            text = codec.json_to_xml(json.dumps(wrapped), config_only=True)
        except YangValidationError as exc:
            raise RestconfError("invalid-value", exc.message, path=exc.path) from None
        nodes = _parse_nodes(text)
    else:
        nodes = _parse_nodes(text)
        if len(nodes) != 1:
            raise RestconfError("malformed-message", "the body must hold one element, the "
                                "resource", type="protocol")
        holder = etree.Element("holder")
        parent = skeleton(holder, parents, keys)
        parent.append(nodes[0])
        try:
            codec.xml_to_json("".join(etree.tostring(n, encoding="unicode") for n in holder),
                              config_only=True)
        except YangValidationError as exc:
            raise RestconfError("invalid-value", exc.message, path=exc.path) from None
        return [nodes[0]]
    for index, step in enumerate(parents):  # down to the resource inside its ancestors
        nodes = [n for n in nodes if n.tag == step.tag] if index == 0 else [
            n for node in nodes for n in node if n.tag == step.tag]
    if parents:
        nodes = [n for node in nodes for n in node if isinstance(n.tag, str)]
    names = keys.get(parents[-1].tag, ()) if parents else ()
    return [n for n in nodes if n.tag not in names] or nodes


def _parse_nodes(text: str) -> list[etree._Element]:
    try:
        holder = etree.fromstring(f"<holder>{text}</holder>".encode(), _PARSER)
    except etree.XMLSyntaxError as exc:
        raise RestconfError("malformed-message", f"the body is not XML: {exc}",
                            type="protocol") from exc
    return [node for node in holder if isinstance(node.tag, str)]


def _wrap_json(document: dict[str, Any], parents: Sequence[Step],
               keys: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """``document`` (the resource's member) inside its ancestors, as RFC 7951 nests them."""
    (name, value), = document.items()
    inner: dict[str, Any] = {name: value}
    for index in range(len(parents) - 1, -1, -1):
        step = parents[index]
        entry: dict[str, Any] = {}
        for key, key_value in zip(keys.get(step.tag, ()), step.keys or (), strict=False):
            entry[etree.QName(key).localname] = key_value
        entry.update(inner)
        qualified = f"{step.module}:{step.name}"
        inner = {qualified: [entry] if step.tag in keys else entry}
    return inner


__all__ = ["body_xml", "codec_for", "json_reply", "module_of", "xml_reply"]
