"""``rpc-error`` as RFC 6241 (section 4.3 and appendix A) shapes it.

Every refusal of an operation is an :class:`RpcError`: its type (``transport``, ``rpc``,
``protocol``, ``application``), its tag from appendix A (``invalid-value``, ``lock-denied``,
``data-exists`` ...), a message for people, and where they apply a path and the
``error-info`` children (``bad-element``, ``session-id`` ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import escape

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"


@dataclass
class RpcError(Exception):
    """One ``rpc-error`` (see the module docstring)."""

    tag: str
    message: str
    type: str = "application"
    path: str | None = None
    info: dict[str, str] = field(default_factory=dict)
    severity: str = "error"

    def xml(self) -> str:
        """The ``<rpc-error>`` element, in the base namespace of its ``<rpc-reply>``."""
        parts = [f"<rpc-error><error-type>{self.type}</error-type>"
                 f"<error-tag>{self.tag}</error-tag>"
                 f"<error-severity>{self.severity}</error-severity>"]
        if self.path:
            parts.append(f"<error-path>{escape(self.path)}</error-path>")
        parts.append(f'<error-message xml:lang="en">{escape(self.message)}</error-message>')
        if self.info:
            parts.append("<error-info>" + "".join(
                f"<{k}>{escape(v)}</{k}>" for k, v in self.info.items()) + "</error-info>")
        parts.append("</rpc-error>")
        return "".join(parts)


def missing_element(element: str, parent: str) -> RpcError:
    """A required element is not there."""
    return RpcError("missing-element", f"<{parent}> needs <{element}>", type="protocol",
                    info={"bad-element": element})


def bad_element(element: str, message: str) -> RpcError:
    """An element whose value cannot be used."""
    return RpcError("bad-element", message, type="protocol", info={"bad-element": element})
