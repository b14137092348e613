"""The published study's RESTCONF envelope (clibench v0.8, ``internal/restconfserver``), answered
from the device's CLI so its client's requests work unchanged:

- ``GET /restconf/data/cli:show/ip/route`` runs ``show ip route`` (the steps after ``cli:``,
  joined by spaces; none: ``show version``), answered as ``{"cli:output": {"response":
  "<output>"}}`` in JSON, or ``<output xmlns="urn:cli"><response>...</response></output>`` in
  XML when ``Accept`` asks for ``application/yang-data+xml``, byte for byte as Go's encoders
  write them.
- ``PATCH /restconf/data/`` with ``Content-Type: application/yang-patch+json`` whose body is not
  an RFC 8072 patch: its lines are commands (the study's batch-patch sends ``show version``
  once per command, newline-separated), or the study's own shape, ``{"ietf-yang-patch:
  yang-patch": [{"target": "/cli:show/version", ...}]}`` (a ``/cli:`` target's steps are a
  command); an XML body's ``<target>/cli:...</target>`` lines likewise. Each command is run in
  one CLI session; the answer is the study's ``{"ietf-yang-patch:yang-patch-status":{"ok":{}}}``
  (or its XML), 200; a line the CLI refuses is an ``operation-failed`` error instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from urllib.parse import unquote

from mgmtbench.emulator.restconf.errors import RestconfError

PREFIX = "/cli:"
JSON_OK = b'{"ietf-yang-patch:yang-patch-status":{"ok":{}}}'
XML_OK = (b'<yang-patch-status xmlns="urn:ietf:params:xml:ns:yang:ietf-yang-patch"><ok/>'
          b"</yang-patch-status>")
_XML_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n'
_TARGET = re.compile(r"^\s*<target>(.*)</target>\s*$")
# Go's encoding/json escapes these for HTML; encoding/xml's EscapeText these.
_GO_JSON = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                          "\u2028": "\\u2028", "\u2029": "\\u2029"})
_GO_XML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;",
                         "\n": "&#xA;", "\r": "&#xD;", "\t": "&#x9;"})


def command_of(path: str) -> str:
    """The command a ``cli:`` data path names (``/cli:show/ip/route``: ``show ip route``)."""
    words = unquote(path[len(PREFIX):] if path.startswith(PREFIX) else path).split("/")
    return " ".join(w for w in " ".join(words).split(" ") if w) or "show version"


def path_of(command: str) -> str:
    """The data path of a command (the study's ``CommandToPath``)."""
    words = command.split()
    return "/restconf/data/cli:" + "/".join(words) if words else "/restconf/data/cli:show/version"


def output_json(output: str) -> bytes:
    """The study's JSON reply (Go's ``json.Encoder``: compact, HTML-escaped, a newline)."""
    if output.isascii():  # the C encoder's fast path; Go's own escapes on top
        text = json.dumps(output)
        if "<" in text or ">" in text or "&" in text:
            text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    else:  # Go keeps UTF-8 as it is
        text = json.dumps(output, ensure_ascii=False).translate(_GO_JSON)
    return ('{"cli:output":{"response":' + text + "}}\n").encode()


def output_xml(output: str) -> bytes:
    """The study's XML reply (``xml.Header``, then Go's ``xml.Encoder``)."""
    return (f'{_XML_HEADER}<output xmlns="urn:cli"><response>{output.translate(_GO_XML)}'
            "</response></output>").encode()


def batch_commands(body: bytes, encoding: str) -> list[str] | None:
    """The commands of a study batch-patch body; None if the body is an RFC 8072 patch whose
    targets are data (not ``/cli:``)."""
    text = body.decode("utf-8", "replace")
    if encoding == "xml":
        found = [_TARGET.match(line) for line in text.splitlines()]
        targets = [m.group(1) for m in found if m]
        if targets and all(t.startswith(PREFIX) for t in targets):
            return [command_of(t) for t in targets]
        if text.lstrip().startswith("<"):
            return None
        return _lines(text)
    try:
        document = json.loads(text)
    except ValueError:
        return _lines(text)
    patch = document.get("ietf-yang-patch:yang-patch") if isinstance(document, dict) else None
    if isinstance(patch, list):  # the study's own shape
        entries = [e for e in patch if isinstance(e, dict)]
        if not entries:
            return _lines(text)
        return [command_of(str(e.get("target", ""))) for e in entries]
    if isinstance(patch, dict):
        edits = patch.get("edit")
        if isinstance(edits, list) and edits and all(
                isinstance(e, dict) and str(e.get("target", "")).startswith(PREFIX)
                for e in edits):
            return [command_of(str(e["target"])) for e in edits]
        return None
    if isinstance(document, dict | list):
        return None
    return _lines(text)


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n") if line.strip()]


def refused(commands: Sequence[str], outputs: Sequence[str]) -> RestconfError | None:
    """``operation-failed`` for the first command the CLI refused (a line of its output starts
    with ``% ``, IOS's error mark), else None."""
    for command, output in zip(commands, outputs, strict=False):
        if any(line.startswith("% ") for line in output.splitlines()):
            return RestconfError("operation-failed", f"{command}: {output.strip()[:200]}",
                                 status=400)
    return None
