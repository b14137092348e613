"""RESTCONF errors as RFC 8040 section 7 shapes them: ``ietf-restconf:errors`` holding
``error`` entries (``error-type``, ``error-tag``, ``error-path``, ``error-message``), in JSON or
XML, with the HTTP status the RFC's table gives each error tag."""

from __future__ import annotations

import json
from dataclasses import dataclass
from xml.sax.saxutils import escape

RESTCONF_NS = "urn:ietf:params:xml:ns:yang:ietf-restconf"

#: RFC 8040, section 7: the status for each error-tag (the first where it offers several; a
#: caller that needs another passes ``status``).
STATUS: dict[str, int] = {
    "in-use": 409, "invalid-value": 400, "too-big": 413, "missing-attribute": 400,
    "bad-attribute": 400, "unknown-attribute": 400, "bad-element": 400,
    "unknown-element": 400, "unknown-namespace": 400, "access-denied": 403,
    "lock-denied": 409, "resource-denied": 409, "rollback-failed": 500, "data-exists": 409,
    "data-missing": 409, "operation-not-supported": 501, "operation-failed": 500,
    "partial-operation": 500, "malformed-message": 400,
}


@dataclass
class RestconfError(Exception):
    """One refused request: its error-tag, a message for people, the error-type (``protocol``
    for what the request's form gets wrong, ``application`` for what its data get wrong), the
    data node's path where one applies, and the HTTP status (by default the tag's)."""

    tag: str
    message: str
    type: str = "application"
    path: str | None = None
    status: int | None = None
    headers: tuple[tuple[bytes, bytes], ...] = ()

    def __post_init__(self) -> None:
        super().__init__(self.message)

    @property
    def http_status(self) -> int:
        """The status line's code."""
        return self.status if self.status is not None else STATUS.get(self.tag, 400)

    def entry(self) -> dict[str, str]:
        """The ``error`` entry, as JSON members."""
        found = {"error-type": self.type, "error-tag": self.tag}
        if self.path:
            found["error-path"] = self.path
        found["error-message"] = self.message
        return found


def errors_json(errors: list[RestconfError]) -> bytes:
    """``{"ietf-restconf:errors": {"error": [...]}}``."""
    return json.dumps({"ietf-restconf:errors": {"error": [e.entry() for e in errors]}},
                      indent=2).encode() + b"\n"


def errors_xml(errors: list[RestconfError]) -> bytes:
    """``<errors xmlns="urn:ietf:params:xml:ns:yang:ietf-restconf">...</errors>``."""
    parts = [f'<errors xmlns="{RESTCONF_NS}">']
    for error in errors:
        parts.append("<error>" + "".join(f"<{k}>{escape(v)}</{k}>"
                                         for k, v in error.entry().items()) + "</error>")
    parts.append("</errors>\n")
    return "".join(parts).encode()
