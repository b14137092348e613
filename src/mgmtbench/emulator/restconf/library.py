"""The device's YANG library (RFC 8525, ``ietf-yang-library:yang-library``), which RESTCONF
servers list their modules in (RFC 8040 section 10): one module set with the modules the
device's data are written in (and the library's own) implemented, with every feature, and what
they import as import-only modules; one schema; the running and operational datastores."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import cache

from lxml import etree

from mgmtbench.emulator.yang.modules import closure

YANGLIB = "urn:ietf:params:xml:ns:yang:ietf-yang-library"
DATASTORES = "urn:ietf:params:xml:ns:yang:ietf-datastores"
#: The revision of ietf-yang-library the device implements (``/restconf/yang-library-version``).
VERSION = "2019-01-04"
_SET = "complete"


def _leaf(parent: etree._Element, name: str, text: str) -> etree._Element:
    node = etree.SubElement(parent, f"{{{YANGLIB}}}{name}")
    node.text = text
    return node


@cache
def _library(implemented: tuple[str, ...]) -> etree._Element:
    root = etree.Element(f"{{{YANGLIB}}}yang-library", nsmap={None: YANGLIB,  # type: ignore[dict-item]
                                                               "ds": DATASTORES})
    module_set = etree.SubElement(root, f"{{{YANGLIB}}}module-set")
    _leaf(module_set, "name", _SET)
    everything = closure(implemented)
    names = set(implemented)
    included = {sub for info in everything for sub in info.includes}
    for info in everything:
        if info.submodule or info.name in included:
            continue
        entry = etree.SubElement(module_set, f"{{{YANGLIB}}}"
                                 + ("module" if info.name in names else "import-only-module"))
        _leaf(entry, "name", info.name)
        _leaf(entry, "revision", info.revision)
        _leaf(entry, "namespace", info.namespace)
        for sub in info.includes:
            sub_info = next((s for s in everything if s.name == sub), None)
            if sub_info is not None:
                node = etree.SubElement(entry, f"{{{YANGLIB}}}submodule")
                _leaf(node, "name", sub_info.name)
                _leaf(node, "revision", sub_info.revision)
        if info.name in names:
            for feature in info.features:
                _leaf(entry, "feature", feature)
    schema = etree.SubElement(root, f"{{{YANGLIB}}}schema")
    _leaf(schema, "name", _SET)
    _leaf(schema, "module-set", _SET)
    for store in ("running", "operational"):
        datastore = etree.SubElement(root, f"{{{YANGLIB}}}datastore")
        _leaf(datastore, "name", f"ds:{store}")
        _leaf(datastore, "schema", _SET)
    digest = hashlib.sha256(etree.tostring(root)).hexdigest()[:16]
    _leaf(root, "content-id", digest)
    return root


def yang_library(modules: Iterable[str]) -> etree._Element:
    """The ``yang-library`` element for a device whose data are written in ``modules``
    (shared: copy before changing it)."""
    return _library(tuple(dict.fromkeys((*modules, "ietf-yang-library"))))
