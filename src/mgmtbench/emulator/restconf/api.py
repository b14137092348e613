"""One RESTCONF request to one device, answered (RFC 8040; see the package docstring).

Resources: ``/.well-known/host-meta`` (the XRD that points at ``/restconf``), ``/restconf``
(the API root), ``/restconf/yang-library-version``, ``/restconf/operations`` (the device has
none), ``/restconf/data`` and below it the modelled data (:mod:`mgmtbench.emulator.yang`) with
``ietf-yang-library:yang-library`` (:mod:`.library`), and the study's ``cli:`` envelope
(:mod:`.envelope`).

Reads: ``GET`` / ``HEAD`` with ``depth``, ``fields``, ``content`` and ``with-defaults``
(:mod:`.query`), in JSON or XML by ``Accept`` (:mod:`.media`). Writes: ``PUT`` (replace; 201
when it creates, else 204), ``POST`` (create a child; 201 with ``Location``), ``PATCH`` (merge
into an existing resource, 204; or a YANG Patch, :mod:`.patch`), ``DELETE`` (204), each made on
a copy of the running configuration by NETCONF's edit (:func:`mgmtbench.emulator.yang.edit.
edit`) and written back through the device's CLI (:meth:`~mgmtbench.emulator.yang.datastore.
ModelledDevice.commit`), so a change shows in ``show running-config`` and over NETCONF.

Every data reply carries the datastore's ``ETag`` (its configuration's change count) and
``Last-Modified`` (when this server first saw that count); a write with an ``If-Match`` that
does not match, an ``If-None-Match: *`` on a resource that exists, or an
``If-Unmodified-Since`` older than the last change gets ``412``; a GET whose
``If-None-Match`` matches gets ``304``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from functools import cached_property

from lxml import etree

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.restconf import envelope, media, patch
from mgmtbench.emulator.restconf.codec import body_xml, codec_for, json_reply, xml_reply
from mgmtbench.emulator.restconf.errors import RestconfError, errors_json, errors_xml
from mgmtbench.emulator.restconf.library import VERSION, YANGLIB, yang_library
from mgmtbench.emulator.restconf.paths import Step, check_keys, instance, parse, select, skeleton
from mgmtbench.emulator.restconf.query import Query, nonconfig, parse_query, prune
from mgmtbench.emulator.yang.apply import ApplyError
from mgmtbench.emulator.yang.datastore import VERSIONS, ModelledDevice, modelled, platform_cli
from mgmtbench.emulator.yang.edit import OPERATION, EditError, edit
from mgmtbench.emulator.yang.validate import YangValidator

ROOT = "/restconf"
DATA = "/restconf/data"
HOST_META = "/.well-known/host-meta"
XRD = (b'<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="restconf" '
       b'href="/restconf"/></XRD>')
_DATA_METHODS = "GET, HEAD, PUT, POST, PATCH, DELETE, OPTIONS"
_LIBRARY_KEYS = {f"{{{YANGLIB}}}{name}": tuple(f"{{{YANGLIB}}}{k}" for k in keys)
                 for name, keys in {"module-set": ("name",), "module": ("name",),
                                    "import-only-module": ("name", "revision"),
                                    "submodule": ("name",), "schema": ("name",),
                                    "datastore": ("name",)}.items()}
_CACHE_SIZE = 128

Headers = Mapping[bytes, bytes]


def is_restconf(path: bytes) -> bool:
    """Whether a request's path is RESTCONF's to answer."""
    return path == HOST_META.encode() or path == ROOT.encode() or path.startswith(b"/restconf/")


@dataclass
class Answer:
    """A reply: status, headers (content type included) and body."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes = b""


@dataclass
class _DeviceState:
    """What the server keeps per device: when it saw each configuration change, and recent
    replies (a reply is made again when the data it was made from change)."""

    device: Device
    changed: tuple[int, float] = (-1, 0.0)
    replies: dict[tuple[object, ...], tuple[etree._Element, bytes]] = field(default_factory=dict)

    @cached_property
    def model(self) -> ModelledDevice:
        return modelled(self.device)

    @cached_property
    def codec(self) -> YangValidator:
        return codec_for(self.model.modules)

    @cached_property
    def keys(self) -> Mapping[str, tuple[str, ...]]:
        return {**self.model.keys, **_LIBRARY_KEYS}

    def version(self) -> int:
        """The configuration's change count (and its first sighting's time, kept)."""
        count = VERSIONS[platform_cli(self.device.platform)](self.device)
        if count != self.changed[0]:
            self.changed = (count, time.time())
        return count

    def etag(self) -> str:
        return f'"{self.device.hostname}-{self.version()}"'

    def validators(self) -> list[tuple[bytes, bytes]]:
        tag = self.etag()
        return [(b"etag", tag.encode()),
                (b"last-modified", formatdate(self.changed[1], usegmt=True).encode())]


class RestconfApi:
    """Answers RESTCONF requests for any device (its state kept per device)."""

    def __init__(self, max_commands: int = 1000) -> None:
        self._max_commands = max_commands
        self._states: weakref.WeakKeyDictionary[Device, _DeviceState] = \
            weakref.WeakKeyDictionary()

    def _state(self, device: Device) -> _DeviceState:
        found = self._states.get(device)
        if found is None:
            found = self._states[device] = _DeviceState(device)
        return found

    async def answer(self, device: Device, method: str, raw_path: bytes, query: bytes,
                     headers: Headers, body: bytes) -> Answer:
        """The reply to one request (errors as RFC 8040 section 7 shapes them)."""
        try:
            encoding = media.reply_encoding(_header(headers, b"accept"))
        except RestconfError as error:
            return _error(error, "json")
        try:
            return await self._route(self._state(device), method, raw_path.decode("latin-1"),
                                     query, headers, body, encoding)
        except RestconfError as error:
            return _error(error, encoding)

    async def _route(self, state: _DeviceState, method: str, path: str, query: bytes,
                     headers: Headers, body: bytes, encoding: str) -> Answer:
        if path == HOST_META:
            _allow(method, "GET, HEAD")
            return Answer(200, [(b"content-type", b"application/xrd+xml")], XRD)
        path = path.rstrip("/") or "/"
        if path == ROOT:
            _allow(method, "GET, HEAD")
            return _document(encoding, "restconf", {"data": {}, "operations": {},
                                                   "yang-library-version": VERSION})
        if path == f"{ROOT}/yang-library-version":
            _allow(method, "GET, HEAD")
            return _document(encoding, "yang-library-version", VERSION)
        if path == f"{ROOT}/operations":
            _allow(method, "GET, HEAD")
            return _document(encoding, "operations", {})
        if path.startswith(f"{ROOT}/operations/"):
            raise RestconfError("invalid-value", "the device has no operation "
                                f"{path.rsplit('/', 1)[-1]!r}", type="protocol", status=404)
        if path != DATA and not path.startswith(DATA + "/"):
            raise RestconfError("invalid-value", f"no resource {path!r}: use {DATA}",
                                type="protocol", status=404)
        resource = path[len(DATA):]
        if method == "OPTIONS":
            return Answer(200, [(b"allow", _DATA_METHODS.encode())])
        if resource.startswith(envelope.PREFIX) and method in ("GET", "HEAD"):
            return await self._cli(state, envelope.command_of(resource), encoding, method)
        if method in ("GET", "HEAD"):
            return await self._read(state, resource, query, headers, encoding, method)
        if method == "PATCH" and media.body_kind(_header(headers, b"content-type"))[1]:
            return await self._patch(state, resource, headers, body)
        if method in ("PUT", "POST", "PATCH", "DELETE"):
            return await self._write(state, method, resource, query, headers, body, encoding)
        raise RestconfError("operation-not-supported", f"{method} is not a RESTCONF method "
                            "on data", type="protocol", status=405,
                            headers=((b"allow", _DATA_METHODS.encode()),))

    # --- the study's envelope --------------------------------------------------------------

    async def _cli(self, state: _DeviceState, command: str, encoding: str,
                   method: str) -> Answer:
        outputs = await _run_cli(state.device, [command])
        body = (envelope.output_xml if encoding == "xml" else envelope.output_json)(outputs[0])
        kind = media.XML if encoding == "xml" else media.JSON
        return Answer(200, [(b"content-type", kind.encode())], body)

    # --- reads -----------------------------------------------------------------------------

    async def _read(self, state: _DeviceState, resource: str, raw_query: bytes,
                    headers: Headers, encoding: str, method: str) -> Answer:
        tags = state.validators()
        wanted = _header(headers, b"if-none-match")
        if wanted is not None and _tag_matches(wanted, state.etag()):
            return Answer(304, tags)
        if state.device.processing_delay:
            await asyncio.sleep(state.device.processing_delay)
        query = parse_query(raw_query)
        kind = media.REPLY_TYPES[encoding]
        model = state.model
        with_state = query.content != "config"
        source = model.data(with_state=with_state)
        key = (resource, raw_query, encoding, with_state)
        cached = state.replies.get(key)
        if cached is not None and cached[0] is source:
            body = cached[1]
        else:
            body = self._made(state, resource, query, encoding, source)
            if len(state.replies) >= _CACHE_SIZE:
                state.replies.clear()
            state.replies[key] = (source, body)
        return Answer(200, [(b"content-type", kind.encode()), *tags],
                      body)

    def _made(self, state: _DeviceState, resource: str, query: Query, encoding: str,
              source: etree._Element) -> bytes:
        keys = state.keys
        steps = parse(resource) if resource.strip("/") else []
        check_keys(steps, keys)
        _keyed_ancestors(steps, keys)
        if query.content == "nonconfig":
            source = nonconfig(source, state.model.data(with_state=False), keys)
        tops = list(source)
        if query.content != "config":
            tops.append(yang_library(state.model.modules))
        nodes = select(tops, steps, keys) if steps else tops
        if steps and not nodes:
            raise RestconfError("invalid-value", "no data at this path", type="protocol",
                                path=instance(steps, keys), status=404)
        if steps:
            nodes = [prune(node, query, keys) for node in nodes]
        elif query.depth is not None or query.fields is not None:
            # The datastore is depth 1: its top-level nodes are depth 2.
            shifted = Query(None if query.depth is None else query.depth - 1, None,
                            query.content, query.with_defaults)
            nodes = [] if shifted.depth == 0 else [prune(node, shifted, keys) for node in nodes]
        if encoding == "xml":
            return xml_reply(nodes, datastore=not steps)
        return json_reply(state.codec, nodes, steps, keys)

    # --- writes ----------------------------------------------------------------------------

    def _preconditions(self, state: _DeviceState, headers: Headers, exists: bool) -> None:
        current = state.etag()
        match = _header(headers, b"if-match")
        if match is not None and not (match.strip() == "*" and exists) \
                and not _tag_matches(match, current):
            raise RestconfError("operation-failed", f"If-Match {match} does not match the "
                                f"datastore's entity tag {current}", status=412)
        none_match = _header(headers, b"if-none-match")
        if none_match is not None and ((none_match.strip() == "*" and exists)
                                       or _tag_matches(none_match, current)):
            raise RestconfError("operation-failed", "If-None-Match matches", status=412)
        since = _header(headers, b"if-unmodified-since")
        if since is not None:
            try:
                limit = parsedate_to_datetime(since).timestamp()
            except (TypeError, ValueError):
                return  # RFC 9110: an invalid date is ignored
            if int(state.changed[1]) > limit:
                raise RestconfError("operation-failed", "the data were modified since "
                                    f"{since}", status=412)

    async def _write(self, state: _DeviceState, method: str, resource: str, raw_query: bytes,
                     headers: Headers, body: bytes, encoding: str) -> Answer:
        parse_query(raw_query, allowed=())
        keys = state.keys
        steps = parse(resource) if resource.strip("/") else []
        check_keys(steps, keys)
        _keyed_ancestors(steps, keys, last=method != "POST")
        if not steps and method != "POST":
            raise RestconfError("operation-not-supported", f"{method} of the whole datastore "
                                "is not supported: name a resource", status=405,
                                headers=((b"allow", b"GET, HEAD, POST, PATCH"),))
        if any(step.module == "ietf-yang-library" for step in steps[:1]):
            raise RestconfError("access-denied", "the YANG library is read-only",
                                status=403)
        before = state.model.data(with_state=False)
        exists = bool(steps) and bool(select(list(before), steps, keys))
        self._preconditions(state, headers, exists)
        if method in ("PATCH", "DELETE") and not exists:
            raise RestconfError("invalid-value", "no data at this path", type="protocol",
                                path=instance(steps, keys), status=404)
        config = etree.Element("config")
        where = instance(steps, keys) if steps else "/"
        if method == "DELETE":
            skeleton(config, steps, keys).set(OPERATION, "delete")
        else:
            kind, _ = media.body_kind(_header(headers, b"content-type"))
            parents = steps if method == "POST" else steps[:-1]
            nodes = body_xml(state.codec, body, kind, parents, keys)
            if len(nodes) != 1:
                raise RestconfError("malformed-message", "the body must hold one resource",
                                    type="protocol")
            node = nodes[0]
            if method != "POST":
                _same_resource(node, steps[-1], keys, where)
            node.set(OPERATION, {"PUT": "replace", "POST": "create",
                                 "PATCH": "merge"}[method])
            skeleton(config, parents, keys).append(node)
        await self._commit(state, before, [config], where)
        status = 201 if method == "POST" or (method == "PUT" and not exists) else 204
        extra = []
        if method == "POST":
            extra.append((b"location", _location(resource, node, keys).encode()))
        return Answer(status, [*extra, *state.validators()])

    async def _commit(self, state: _DeviceState, before: etree._Element,
                      configs: list[etree._Element], where: str) -> None:
        """Make the edits on a copy of ``before`` and write the difference to the device."""
        after = copy.deepcopy(before)
        for config in configs:
            try:
                edit(after, config, "merge", state.keys)
            except EditError as exc:
                raise RestconfError(exc.tag, str(exc), path=where) from None
        await self._write_back(state, before, after, where)

    async def _write_back(self, state: _DeviceState, before: etree._Element,
                          after: etree._Element, where: str) -> None:
        """Write the difference between ``before`` and ``after`` to the device's CLI."""
        if state.device.processing_delay:
            await asyncio.sleep(state.device.processing_delay)
        try:
            state.model.commit(before, after)
        except ApplyError as exc:
            raise RestconfError("operation-failed", f"the device refused "
                                f"{exc.line.strip()!r}: {exc.output}", path=where) from None
        state.replies.clear()

    async def _patch(self, state: _DeviceState, resource: str, headers: Headers,
                     body: bytes) -> Answer:
        kind, _ = media.body_kind(_header(headers, b"content-type"))
        reply_type = (media.PATCH_XML if kind == "xml" else media.JSON).encode()
        commands = envelope.batch_commands(body, kind)
        if commands is not None:  # the study's batch-patch
            if len(commands) > self._max_commands:
                raise RestconfError("too-big", f"too many commands in one request: "
                                    f"{len(commands)} (limit {self._max_commands})")
            outputs = await _run_cli(state.device, commands)
            problem = envelope.refused(commands, outputs)
            if problem is not None:
                raise problem
            return Answer(200, [(b"content-type", media.XML.encode() if kind == "xml"
                                 else media.JSON.encode())],
                          envelope.XML_OK if kind == "xml" else envelope.JSON_OK)
        patch_id, found = patch.edits(body, kind)
        keys = state.keys
        base = parse(resource) if resource.strip("/") else []
        before = state.model.data(with_state=False)
        self._preconditions(state, headers, bool(base) and bool(select(list(before), base,
                                                                         keys)))
        after = copy.deepcopy(before)
        for item in found:  # every edit on one copy: the patch is all or nothing
            try:
                config = self._patch_config(state, base, item, kind, after)
                if config is None:
                    continue
                try:
                    edit(after, config, "merge", keys)
                except EditError as exc:
                    raise RestconfError(exc.tag, str(exc), path=item.target) from None
            except RestconfError as error:
                return Answer(error.http_status, [(b"content-type", reply_type)],
                              patch.status(patch_id, kind, (item.edit_id, error)))
        try:
            await self._write_back(state, before, after, "/")
        except RestconfError as error:
            return Answer(error.http_status, [(b"content-type", reply_type)],
                          patch.status(patch_id, kind, (found[-1].edit_id, error)))
        return Answer(200, [(b"content-type", reply_type), *state.validators()],
                      patch.status(patch_id, kind))

    def _patch_config(self, state: _DeviceState, base: list[Step], item: patch.Edit,
                      kind: str, current: etree._Element) -> etree._Element | None:
        """The ``<config>`` that makes one edit (None: nothing to do, a ``remove`` of what is
        not there)."""
        keys = state.keys
        relative = item.target.strip("/")
        steps = base + (parse(relative, base[-1].module if base else None) if relative else [])
        if not steps:
            raise RestconfError("invalid-value", "an edit's target must name a resource",
                                type="protocol")
        check_keys(steps, keys)
        _keyed_ancestors(steps, keys)
        config = etree.Element("config")
        if item.operation in ("delete", "remove"):
            # NETCONF's edit would make the missing ancestors of a node it deletes: what is
            # not there is settled here (delete: data-missing; remove: nothing to do).
            if not select(list(current), steps, keys):
                if item.operation == "remove":
                    return None
                raise RestconfError("data-missing", "the data to delete does not exist",
                                    path=instance(steps, keys))
            skeleton(config, steps, keys).set(OPERATION, item.operation)
            return config
        assert item.value is not None
        nodes = body_xml(state.codec, item.value.encode(), kind, steps[:-1], keys)
        if len(nodes) != 1:
            raise RestconfError("invalid-value", "an edit's value must be one resource",
                                type="protocol")
        _same_resource(nodes[0], steps[-1], keys, instance(steps, keys))
        nodes[0].set(OPERATION, item.operation)
        skeleton(config, steps[:-1], keys).append(nodes[0])
        return config


def _header(headers: Headers, name: bytes) -> str | None:
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


def _allow(method: str, allowed: str) -> None:
    if method not in allowed.split(", "):
        raise RestconfError("operation-not-supported", f"use {allowed}", type="protocol",
                            status=405, headers=((b"allow", allowed.encode()),))


def _tag_matches(header: str, tag: str) -> bool:
    given = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in given or tag in given


def _keyed_ancestors(steps: list[Step], keys: Mapping[str, tuple[str, ...]],
                     last: bool = False) -> None:
    """``invalid-value`` for a list entry without its keys above the resource (or, with
    ``last``, the resource itself: a write names one entry)."""
    for step in steps if last else steps[:-1]:
        if step.tag in keys and step.keys is None:
            raise RestconfError("invalid-value", f"the list {step.name} needs its key values "
                                f"({step.name}=...)", type="protocol")


def _same_resource(node: etree._Element, step: Step, keys: Mapping[str, tuple[str, ...]],
                   where: str) -> None:
    """``invalid-value`` unless the body is the resource the URL names (its keys too)."""
    if node.tag != step.tag:
        raise RestconfError("invalid-value", f"the body is {etree.QName(node).localname}, "
                            f"not the resource {step.name}", type="protocol", path=where)
    for name, value in zip(keys.get(step.tag, ()), step.keys or (), strict=False):
        if (node.findtext(name) or "").strip() != value:
            raise RestconfError("invalid-value", f"the body's key {etree.QName(name).localname}"
                                f" is not the URL's {value!r}", type="protocol", path=where)


def _location(resource: str, node: etree._Element, keys: Mapping[str, tuple[str, ...]]) -> str:
    from urllib.parse import quote

    from mgmtbench.emulator.restconf.paths import module_of

    qname = etree.QName(node)
    parent_module = resource.strip("/").split("/")[-1].split(":")[0] if ":" in resource else None
    module = module_of(qname.namespace or "")
    step = qname.localname if module == parent_module and resource.strip("/") else \
        f"{module}:{qname.localname}"
    names = keys.get(node.tag, ())
    if names:
        step += "=" + ",".join(quote(node.findtext(n) or "", safe="") for n in names)
    return f"{DATA}{resource.rstrip('/')}/{step}"


def _document(encoding: str, name: str, value: object) -> Answer:
    """A small ietf-restconf document (the API root, the library version, operations)."""
    if encoding == "xml":
        from mgmtbench.emulator.restconf.errors import RESTCONF_NS

        inner = value if isinstance(value, str) else "".join(
            f"<{k}>{v if isinstance(v, str) else ''}</{k}>" for k, v in dict(value).items()  # type: ignore[call-overload]
        )
        body = f'<{name} xmlns="{RESTCONF_NS}">{inner}</{name}>\n'.encode()
        return Answer(200, [(b"content-type", media.XML.encode())], body)
    body = json.dumps({f"ietf-restconf:{name}": value}, indent=2).encode() + b"\n"
    return Answer(200, [(b"content-type", media.JSON.encode())], body)


def _error(error: RestconfError, encoding: str) -> Answer:
    xml = encoding == "xml"
    body = (errors_xml if xml else errors_json)([error])
    return Answer(error.http_status, [(b"content-type", (media.XML if xml else media.JSON)
                                       .encode()), *error.headers], body)


async def _run_cli(device: Device, commands: list[str]) -> list[str]:
    """Each command's output, run in order in one exec session of the device."""
    session = CliSession(device, mode=Mode.PRIV, user="restconf", max_output=1 << 24)
    outputs = []
    for command in commands:
        if device.processing_delay:
            await asyncio.sleep(device.processing_delay)
        reply = session.execute(command)
        outputs.append("".join([chunk async for chunk in reply.stream()]))  # the loop served between
    return outputs
