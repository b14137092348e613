"""Validating instance data against the vendored YANG modules (``modules/``) with libyang.

The data are what a NETCONF server sends (XML: an ``<rpc-reply>``, its ``<data>``, or the
top-level data nodes themselves) or RFC 7951 JSON (what RESTCONF and gNMI carry). The schema
library is libyang (the C library, 4.x) through ``oopt-gnpy-libyang``, whose wheels bundle it:
nothing to build and no system package. This module imports it at import time, so an
``ImportError`` here means the library is not installed.

:class:`YangValidator` loads a set of modules once (with every feature enabled, as a device
that advertises none of its features' absence); :func:`validator` hands out one per module set
and keeps it. :func:`data_problem` is the one-call check of a ``<data>`` element that the
benchmark's output checks use. :func:`vendored_modules` lists what ``modules/`` holds (name,
revision, namespace, prefix, features, file) for hello capabilities, the YANG library and
get-schema.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import oopt_gnpy_libyang as ly  # type: ignore[import-not-found, unused-ignore]
from lxml import etree

from mgmtbench.emulator.yang.modules import MODULES_DIR, ModuleInfo, module_index

#: The modules a validator implements unless told otherwise: every data model the emulator
#: writes or may write, with NETCONF's own (what they import is loaded as well).
DEFAULT_MODULES: tuple[str, ...] = (
    "ietf-interfaces", "ietf-ip", "iana-if-type", "ietf-hardware", "iana-hardware",
    "ietf-routing", "ietf-ipv4-unicast-routing",
    "ietf-netconf", "ietf-netconf-monitoring", "ietf-netconf-with-defaults", "ietf-datastores",
    "openconfig-interfaces", "openconfig-if-ip", "openconfig-system",
    "Cisco-IOS-XE-native",
    "junos-conf-root", "junos-conf-interfaces", "junos-conf-system",
)

_NETCONF = "urn:ietf:params:xml:ns:netconf:base:1.0"
_NMDA = "urn:ietf:params:xml:ns:yang:ietf-netconf-nmda"
#: Elements whose children are the data: get/get-config's ``<data>``, get-data's, and
#: edit-config's ``<config>``.
_CONTAINERS = frozenset({f"{{{_NETCONF}}}data", f"{{{_NMDA}}}data", f"{{{_NETCONF}}}config"})
_REPLY = f"{{{_NETCONF}}}rpc-reply"
_DECLARATION = re.compile(rb"^\s*<\?xml[^>]*\?>")
_WRAPPER = "mgmtbench-yang-data"
_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)

# libyang's log: errors are kept for Context.errors() and nothing is printed (its warnings
# about the vendor modules' XPath would otherwise fill stderr at every load).
ly.set_log_level(ly.LogLevel.Error)
ly.set_log_options(ly.LogOptions.Store)


@dataclass(frozen=True)
class YangIssue:
    """One thing libyang found wrong: its message, the data node's path and the schema path
    (None where libyang gives none)."""

    message: str
    path: str | None = None
    schema_path: str | None = None

    def __str__(self) -> str:
        where = self.path or self.schema_path
        return f"{self.message} (at {where})" if where else self.message


class YangValidationError(ValueError):
    """Data that are not valid instance data of the loaded modules (or are not data at all).

    ``issues`` holds every problem libyang reported, the first being the one that stopped it;
    ``message`` and ``path`` are the first one's.
    """

    def __init__(self, issues: Sequence[YangIssue]) -> None:
        self.issues: tuple[YangIssue, ...] = tuple(issues) or (YangIssue("invalid data"),)
        super().__init__("; ".join(str(issue) for issue in self.issues))

    @property
    def message(self) -> str:
        """The first problem's message."""
        return self.issues[0].message

    @property
    def path(self) -> str | None:
        """The first problem's data path (``/module:node/list[key='value']/leaf``), if any."""
        return self.issues[0].path


class YangSchemaError(RuntimeError):
    """Modules that libyang could not load (not vendored, or not compiling)."""


def vendored_modules(folder: Path = MODULES_DIR) -> list[ModuleInfo]:
    """Every module and submodule in ``folder``, by name: what a server advertises (its
    capability URI), lists in its YANG library and serves with get-schema."""
    return sorted(module_index(folder).values(), key=lambda info: info.name)


class YangValidator:
    """A libyang context with ``modules`` (and what they import) loaded from ``folder``, every
    feature enabled unless ``features`` names a module's (module name to feature names).

    Loading is the slow part (about 2 s for :data:`DEFAULT_MODULES`, 8 MB of YANG, most of it
    Junos's): build one per module set, or take :func:`validator`'s. Validation holds a lock, so
    one validator may serve several threads.
    """

    def __init__(self, modules: Iterable[str] = DEFAULT_MODULES, *, folder: Path = MODULES_DIR,
                 features: Mapping[str, Sequence[str]] | None = None) -> None:
        self.modules: tuple[str, ...] = tuple(dict.fromkeys(modules))
        self.folder = folder
        self._lock = threading.Lock()
        # RefImplemented: a module whose identities or leafref targets are used is implemented
        # too. (AllImplemented crashes libyang 4.5.5 when iana-if-type loads before
        # ietf-interfaces.)
        options = ly.ContextOptions.DisableSearchCwd | ly.ContextOptions.RefImplemented
        self._ctx: Any = ly.Context(str(folder), options)
        # libyang carries its own ietf-inet-types and ietf-yang-types (2025-12-22), which a
        # module importing them without a revision would get: implementing the vendored
        # revisions first has every module use those, as the device advertises them. Every
        # module is loaded at its vendored revision.
        vendored = module_index(folder)
        for name, revision in [(m.name, m.revision) for m in self._ctx.modules()]:
            info = vendored.get(name)
            if info is not None and not info.submodule and info.revision != revision:
                self._load(info.name, info.revision, [])
        for name in self.modules:
            info = vendored.get(name)
            self._load(name, info.revision if info is not None else None,
                       list(features[name]) if features and name in features else ["*"])

    def _load(self, name: str, revision: str | None, features: list[str]) -> None:
        try:
            self._ctx.load_module(name, revision, features)
        except ly.Error as exc:
            issues = self._issues(exc)
            raise YangSchemaError(f"cannot load YANG module {name!r} from {self.folder}: "
                                  + "; ".join(str(issue) for issue in issues)) from None

    def implemented(self) -> list[tuple[str, str | None]]:
        """The (name, revision) of every module the context implements, the ones loaded for
        their identities or leafrefs and libyang's own included."""
        found: list[tuple[str, str | None]] = [
            (str(module.name), module.revision) for module in self._ctx.modules()
            if module.implemented]
        return sorted(found)

    def validate_xml(self, data_xml: str | bytes | etree._Element, *, config_only: bool,
                     complete: bool = True) -> None:
        """Raise :class:`YangValidationError` unless ``data_xml`` is valid data.

        ``data_xml`` is a NETCONF ``<rpc-reply>`` (with ``<data>``), a ``<data>`` or
        ``<config>`` element, or the top-level data nodes themselves (several are fine).
        ``config_only``: the data are a configuration (get-config, edit-config), and any state
        (config false) node is an error; otherwise state is allowed and must be valid too
        (get). ``complete``: the data are whole (mandatory nodes, ``must``, ``when``, leafrefs
        and list keys' uniqueness are checked); False checks only what the data have (names,
        types, keys), for a filtered reply.
        """
        self._parse(_data_roots(data_xml), ly.DataFormat.XML, config_only, complete)

    def validate_json(self, data: str | bytes | Mapping[str, Any], *, config_only: bool,
                      complete: bool = True) -> None:
        """Raise :class:`YangValidationError` unless ``data`` (RFC 7951 JSON: an object whose
        members are ``"module:node"``) is valid data; the keywords are :meth:`validate_xml`'s."""
        if isinstance(data, Mapping):
            text = json.dumps(data)
        elif isinstance(data, bytes):
            text = data.decode("utf-8")
        else:
            text = data
        self._parse(text, ly.DataFormat.JSON, config_only, complete)

    def xml_to_json(self, data_xml: str, *, config_only: bool = False) -> str:
        """RFC 7951 JSON of top-level data nodes given as XML (names module-qualified,
        int64 and decimal64 as strings, identities with their modules): parsed for types and
        names only (a filtered reply need not be whole); :class:`YangValidationError` if
        they are not data of the loaded modules."""
        return self._convert(data_xml, ly.DataFormat.XML, ly.DataFormat.JSON, config_only)

    def json_to_xml(self, data_json: str, *, config_only: bool = False) -> str:
        """The XML of RFC 7951 JSON data (top-level members ``"module:node"``), each node with
        its namespace; :class:`YangValidationError` if they are not data of the loaded
        modules (with ``config_only``: any state node is an error)."""
        return self._convert(data_json, ly.DataFormat.JSON, ly.DataFormat.XML, config_only)

    def _convert(self, text: str, source: Any, target: Any, config_only: bool) -> str:
        parse = ly.ParseOptions.Strict | ly.ParseOptions.ParseOnly
        if config_only:
            parse |= ly.ParseOptions.NoState
        if not text.strip():
            return "{}" if target == ly.DataFormat.JSON else ""
        with self._lock:
            self._ctx.clean_all_errors()
            try:
                tree = self._ctx.parse_data(text, source, parse, ly.ValidationOptions.Present)
            except ly.Error as exc:
                raise YangValidationError(self._issues(exc)) from None
            if tree is None:
                return "{}" if target == ly.DataFormat.JSON else ""
            return str(tree.print(target, ly.PrintFlags.WithSiblings | ly.PrintFlags.Shrink
                                  | ly.PrintFlags.KeepEmptyCont))

    def _parse(self, text: str, fmt: Any, config_only: bool, complete: bool) -> None:
        parse = ly.ParseOptions.Strict
        validation = ly.ValidationOptions.Present | ly.ValidationOptions.MultiError
        if config_only:
            parse |= ly.ParseOptions.NoState
            validation |= ly.ValidationOptions.NoState
        if not complete:
            parse |= ly.ParseOptions.ParseOnly
        if not text.strip():
            return
        with self._lock:
            self._ctx.clean_all_errors()
            try:
                self._ctx.parse_data(text, fmt, parse, validation)
            except ly.Error as exc:
                raise YangValidationError(self._issues(exc)) from None

    def _issues(self, exc: Exception) -> list[YangIssue]:
        """What libyang logged for the failure ``exc`` (its errors, not its warnings)."""
        issues = [YangIssue(str(err.message), err.data_path or None, err.schema_path or None)
                  for err in self._ctx.errors() if err.level == ly.LogLevel.Error]
        self._ctx.clean_all_errors()
        return issues or [YangIssue(str(exc))]


def _data_roots(data_xml: str | bytes | etree._Element) -> str:
    """The top-level data nodes of a reply, ``<data>``, ``<config>`` or bare nodes, as one XML
    text (each node with the namespace declarations it inherited)."""
    if isinstance(data_xml, etree._Element):
        nodes = [data_xml]
    else:
        raw = data_xml.encode("utf-8") if isinstance(data_xml, str) else data_xml
        raw = _DECLARATION.sub(b"", raw, count=1)
        try:
            wrapper = etree.fromstring(b"<%s>%s</%s>" % (_WRAPPER.encode(), raw,
                                                         _WRAPPER.encode()), _XML_PARSER)
        except etree.XMLSyntaxError as exc:
            raise YangValidationError([YangIssue(f"not XML: {exc}")]) from None
        nodes = [node for node in wrapper if isinstance(node.tag, str)]
    if len(nodes) == 1 and nodes[0].tag == _REPLY:
        data = [node for node in nodes[0] if node.tag in _CONTAINERS]
        if not data:
            raise YangValidationError([YangIssue("the rpc-reply has no <data>")])
        nodes = data
    if len(nodes) == 1 and nodes[0].tag in _CONTAINERS:
        nodes = list(nodes[0])
    return "".join(etree.tostring(node, encoding="unicode") for node in nodes
                   if isinstance(node.tag, str))


@cache
def _validator(modules: tuple[str, ...], folder: Path) -> YangValidator:
    return YangValidator(modules, folder=folder)


def validator(modules: Iterable[str] = DEFAULT_MODULES, folder: Path = MODULES_DIR
              ) -> YangValidator:
    """The validator of ``modules`` (every feature enabled), built on the first call for that
    set and kept."""
    return _validator(tuple(dict.fromkeys(modules)), folder)


def data_problem(data: etree._Element | str | bytes, *, config_only: bool = False,
                 modules: Iterable[str] = DEFAULT_MODULES) -> str | None:
    """What is wrong with a ``<data>`` element (or reply) against ``modules``, or None if it
    is valid: the check that a get (or, with ``config_only``, a get-config) reply's data are
    whole, valid instance data."""
    try:
        validator(modules).validate_xml(data, config_only=config_only)
    except YangValidationError as exc:
        return str(exc)
    return None
