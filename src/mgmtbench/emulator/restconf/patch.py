"""YANG Patch (RFC 8072) on the device's data: ``ietf-yang-patch:yang-patch`` with its
``patch-id`` and ``edit`` entries (``edit-id``, ``operation``, ``target`` below the request's
resource, ``value``), in JSON or XML. :func:`edits` reads a patch into :class:`Edit` s; the
caller makes every edit on one copy of the configuration and commits once, so a patch is all or
nothing; :func:`status` is the ``yang-patch-status`` reply."""

from __future__ import annotations

import json
from dataclasses import dataclass
from xml.sax.saxutils import escape

from lxml import etree

from mgmtbench.emulator.restconf.errors import RestconfError

YANG_PATCH = "urn:ietf:params:xml:ns:yang:ietf-yang-patch"
#: RFC 8072's operations that the device's lists take (none is ordered by the user, so
#: ``insert`` and ``move`` have nothing to do).
OPERATIONS = ("create", "delete", "merge", "replace", "remove")
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True)


@dataclass
class Edit:
    """One edit: its id, operation, target (a path below the resource) and value: a JSON
    body (``{"module:node": ...}``, as text) or an XML element's text."""

    edit_id: str
    operation: str
    target: str
    value: str | None


def _malformed(message: str) -> RestconfError:
    return RestconfError("malformed-message", message, type="protocol")


def edits(body: bytes, encoding: str) -> tuple[str, list[Edit]]:
    """The patch's id and edits; ``malformed-message`` for a body that is not a patch,
    ``operation-not-supported`` for an operation the device does not do."""
    if encoding == "json":
        try:
            document = json.loads(body)
        except ValueError as exc:
            raise _malformed(f"the patch is not JSON: {exc}") from exc
        patch = document.get("ietf-yang-patch:yang-patch") if isinstance(document, dict) \
            else None
        if not isinstance(patch, dict) or not isinstance(patch.get("edit"), list):
            raise _malformed('a YANG Patch is {"ietf-yang-patch:yang-patch": {"patch-id": '
                             '..., "edit": [...]}}')
        found = [Edit(str(e.get("edit-id", "")), str(e.get("operation", "")),
                      str(e.get("target", "")),
                      json.dumps(e["value"]) if "value" in e else None)
                 for e in patch["edit"] if isinstance(e, dict)]
        patch_id = str(patch.get("patch-id", ""))
    else:
        try:
            root = etree.fromstring(body, _PARSER)
        except etree.XMLSyntaxError as exc:
            raise _malformed(f"the patch is not XML: {exc}") from exc
        if root.tag != f"{{{YANG_PATCH}}}yang-patch":
            raise _malformed(f"a YANG Patch is <yang-patch xmlns=\"{YANG_PATCH}\">")
        ns = f"{{{YANG_PATCH}}}"
        found = []
        for entry in root.iterfind(f"{ns}edit"):
            value = entry.find(f"{ns}value")
            found.append(Edit(entry.findtext(f"{ns}edit-id") or "",
                              entry.findtext(f"{ns}operation") or "",
                              entry.findtext(f"{ns}target") or "",
                              None if value is None else "".join(
                                  etree.tostring(n, encoding="unicode") for n in value
                                  if isinstance(n.tag, str))))
        patch_id = root.findtext(f"{ns}patch-id") or ""
    if not found:
        raise _malformed("the patch has no edit")
    for edit in found:
        if edit.operation in ("insert", "move"):
            raise RestconfError("operation-not-supported", f"edit {edit.edit_id}: the "
                                f"device's lists are not ordered by the user: no {edit.operation}")
        if edit.operation not in OPERATIONS:
            raise RestconfError("invalid-value", f"edit {edit.edit_id}: unknown operation "
                                f"{edit.operation!r}", type="protocol")
        if edit.operation in ("create", "merge", "replace") and not edit.value:
            raise RestconfError("invalid-value", f"edit {edit.edit_id}: {edit.operation} "
                                "needs a value", type="protocol")
    return patch_id, found


def status(patch_id: str, encoding: str, failed: tuple[str, RestconfError] | None = None
           ) -> bytes:
    """The ``yang-patch-status`` reply: ``ok``, or the edit that failed and its error."""
    if encoding == "json":
        body: dict[str, object] = {"patch-id": patch_id}
        if failed is None:
            body["ok"] = [None]
        else:
            edit_id, error = failed
            body["edit-status"] = {"edit": [{"edit-id": edit_id, "errors": {
                "error": [error.entry()]}}]}
        return json.dumps({"ietf-yang-patch:yang-patch-status": body},
                          indent=2).encode() + b"\n"
    parts = [f'<yang-patch-status xmlns="{YANG_PATCH}"><patch-id>{escape(patch_id)}</patch-id>']
    if failed is None:
        parts.append("<ok/>")
    else:
        edit_id, error = failed
        parts.append(f"<edit-status><edit><edit-id>{escape(edit_id)}</edit-id><errors>"
                     "<error>" + "".join(f"<{k}>{escape(v)}</{k}>"
                                         for k, v in error.entry().items())
                     + "</error></errors></edit></edit-status>")
    parts.append("</yang-patch-status>\n")
    return "".join(parts).encode()
