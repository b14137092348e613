"""The requests a RESTCONF benchmark sends, for each payload, and the output of their replies.

Two payloads, as NETCONF's (:mod:`mgmtbench.clients.netconf.rpcs`):

- ``cli``: the published study's envelope (clibench v0.8): a command is ``GET
  /restconf/data/cli:<its words, slash-separated>``, answered with ``{"cli:output":
  {"response": <CLI text>}}`` (or its XML); a batch is one ``PATCH /restconf/data/`` with
  ``Content-Type: application/yang-patch+json`` whose body is the commands, one a line (the
  study's body), answered with the study's ``yang-patch-status``.
- ``yang``: the command's modelled read, the same data NETCONF's ``yang`` payload reads
  (:data:`~mgmtbench.clients.netconf.rpcs.READS`, shared): a subtree filter's top node is the
  resource (``/restconf/data/openconfig-system:system``) and what it selects below is the
  ``fields`` parameter (``fields=state``); the whole configuration is ``GET
  /restconf/data?content=config``. A batch is one RFC 8072 YANG Patch with one edit per
  command (an interface's description, as NETCONF's ``edit-commit``), answered ``ok``.

:func:`read` gives a request's path, query and ``Accept``; :func:`output` the text a
benchmark checks from a reply: the CLI text for ``cli``, the reply's document for ``yang``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from urllib.parse import quote

from lxml import etree

from mgmtbench.clients.netconf.rpcs import READS, edit_interface
from mgmtbench.emulator.yang.modules import module_index

PAYLOADS = ("cli", "yang")
JSON = "application/yang-data+json"
XML = "application/yang-data+xml"
PATCH_JSON = "application/yang-patch+json"
DATA = "/restconf/data"
#: The untimed request that opens a kept connection (and checks the credentials).
WARMUP = f"{DATA}/cli:show/clock"
#: The study's batch-patch reply (its server writes exactly this).
STUDY_PATCH_OK = '{"ietf-yang-patch:yang-patch-status":{"ok":{}}}'
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


@dataclass(frozen=True)
class Read:
    """One GET: path (percent-encoded), query string ('' for none) and ``Accept``."""

    path: str
    query: str
    accept: str

    @property
    def url(self) -> str:
        """Path and query, as a request target."""
        return f"{self.path}?{self.query}" if self.query else self.path


@cache
def _module(namespace: str) -> str:
    for info in module_index().values():
        if info.namespace == namespace and not info.submodule:
            return info.name
    raise ValueError(f"no vendored module has namespace {namespace!r}")


def _fields(node: etree._Element) -> str:
    parts = []
    parent_ns = etree.QName(node).namespace
    for child in node:
        if not isinstance(child.tag, str):
            continue
        qname = etree.QName(child)
        name = qname.localname if qname.namespace == parent_ns else \
            f"{_module(qname.namespace or '')}:{qname.localname}"
        inner = _fields(child)
        parts.append(f"{name}({inner})" if inner else name)
    return ";".join(parts)


@cache
def modelled_read(command: str) -> tuple[str, str]:
    """The path and query of ``command``'s modelled read (KeyError: it has none)."""
    spec = READS[command]
    if spec is None:
        return DATA, "content=config"
    top = etree.fromstring(spec, _PARSER)
    qname = etree.QName(top)
    path = f"{DATA}/{_module(qname.namespace or '')}:{qname.localname}"
    fields = _fields(top)
    return path, f"fields={quote(fields, safe='();:/')}" if fields else ""


def cli_path(command: str) -> str:
    """The study's path for a command (its ``CommandToPath``: the words, slash-separated)."""
    words = command.split()
    return f"{DATA}/cli:" + "/".join(quote(w, safe="") for w in words) if words \
        else f"{DATA}/cli:show/version"


def read(command: str, payload: str, xml: bool = False) -> Read:
    """The GET that reads ``command``'s data in ``payload`` (XML replies if ``xml``)."""
    accept = XML if xml else JSON
    if payload == "cli":
        return Read(cli_path(command), "", accept)
    path, query = modelled_read(command)
    return Read(path, query, accept)


def batch(commands: list[str], payload: str, platform: str) -> tuple[str, bytes]:
    """The one ``PATCH`` of a ``batch-patch`` iteration: its path and body (content type
    :data:`PATCH_JSON`)."""
    if payload == "cli":
        return f"{DATA}/", "".join(f"{c}\n" for c in commands).encode()
    name = edit_interface(platform)
    target = f"/ietf-interfaces:interfaces/interface={quote(name, safe='')}"
    edits = [{"edit-id": f"e{i}", "operation": "merge", "target": target,
              "value": {"ietf-interfaces:interface": [
                  {"name": name, "description": f"mgmtbench-{i}"}]}}
             for i in range(len(commands))]
    body = {"ietf-yang-patch:yang-patch": {"patch-id": "mgmtbench", "edit": edits}}
    return DATA, json.dumps(body).encode()


def batch_ok(payload: str) -> str:
    """The output a successful batch's reply gives (:func:`output`)."""
    return STUDY_PATCH_OK if payload == "cli" else "ok\n"


def output(body: str, payload: str, xml: bool = False, patched: bool = False) -> str:
    """The text a benchmark checks from a reply: the CLI text of the study's envelope, the
    document itself for ``yang``; a YANG Patch status as :func:`batch_ok` has it.
    ValueError for a reply that is not what the request asks for."""
    if patched:
        if payload == "cli":
            return body
        status = json.loads(body).get("ietf-yang-patch:yang-patch-status", {})
        if "ok" not in status:
            raise ValueError(f"the YANG Patch failed: {body[:300]}")
        return "ok\n"
    if payload == "yang":
        return body
    if xml:
        root = etree.fromstring(body.encode(), _PARSER)
        found = root.find("{urn:cli}response")
        if found is None:
            raise ValueError(f"not the study's XML envelope: {body[:200]!r}")
        return found.text or ""
    return str(json.loads(body)["cli:output"]["response"])


__all__ = ["JSON", "PATCH_JSON", "PAYLOADS", "WARMUP", "XML", "Read", "batch", "batch_ok",
           "cli_path", "modelled_read", "output", "read"]
