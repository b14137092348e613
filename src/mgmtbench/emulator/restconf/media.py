"""RESTCONF's media types (RFC 8040 section 5.2, RFC 8072): which encoding a reply takes from
``Accept`` (406 for none the server has) and which a body has from ``Content-Type`` (415)."""

from __future__ import annotations

from functools import lru_cache

from mgmtbench.emulator.restconf.errors import RestconfError

JSON = "application/yang-data+json"
XML = "application/yang-data+xml"
PATCH_JSON = "application/yang-patch+json"
PATCH_XML = "application/yang-patch+xml"
#: What a reply can be, by encoding.
REPLY_TYPES = {"json": JSON, "xml": XML}
_ACCEPTED = {JSON: "json", XML: "xml", "application/json": "json", "application/xml": "xml",
             "text/xml": "xml", "application/yang-data": "json", "application/*": "json",
             "*/*": "json", PATCH_JSON: "json", PATCH_XML: "xml"}


def _types(header: str) -> list[tuple[str, float]]:
    found = []
    for position, item in enumerate(header.split(",")):
        kind, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if kind and quality > 0:
            found.append((kind.lower(), quality - position * 1e-6))
    return found


@lru_cache(maxsize=64)
def reply_encoding(accept: str | None, default: str = "json") -> str:
    """``json`` or ``xml`` for an ``Accept`` header (``default`` without one);
    ``406`` (:class:`RestconfError`) if it names neither."""
    if not accept:
        return default
    ranked = sorted(_types(accept), key=lambda item: -item[1])
    for kind, _ in ranked:
        if kind in _ACCEPTED:
            return _ACCEPTED[kind]
    raise RestconfError("invalid-value", f"cannot answer in {accept!r}: accept {JSON} or "
                        f"{XML}", type="protocol", status=406)


def body_kind(content_type: str | None) -> tuple[str, bool]:
    """The body's encoding (``json``/``xml``) and whether it is a YANG Patch, from its
    ``Content-Type``; ``415`` for a type RESTCONF does not take."""
    kind = (content_type or "").split(";")[0].strip().lower()
    if kind in (JSON, "application/json"):
        return "json", False
    if kind in (XML, "application/xml", "text/xml"):
        return "xml", False
    if kind == PATCH_JSON:
        return "json", True
    if kind == PATCH_XML:
        return "xml", True
    raise RestconfError("invalid-value", f"cannot take a body of type {kind or 'none'!r}: "
                        f"send {JSON}, {XML}, {PATCH_JSON} or {PATCH_XML}", type="protocol",
                        status=415)
