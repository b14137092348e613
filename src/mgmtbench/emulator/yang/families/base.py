"""One family of YANG models: how a device's state is written in its modules, and read back.

A family (``ietf-interfaces`` with ``ietf-ip``, OpenConfig's interfaces and system, a
platform's native module) builds its top-level data nodes from a
:class:`~mgmtbench.emulator.yang.state.DeviceState` (configuration only, or with the
operational state) and reads :class:`~mgmtbench.emulator.yang.state.Settings` back from data
in its own shape, whichever way that data was edited. ``lists`` names its lists' keys, which is
all :mod:`~mgmtbench.emulator.yang.edit` needs to know of the schema to merge, replace, create
and delete entries.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from lxml import etree

from mgmtbench.emulator.yang.state import DeviceState, IfSettings

#: The namespace of iana-if-type's identities (interface types).
IANAIFT = "urn:ietf:params:xml:ns:yang:iana-if-type"

_TYPES = (("Loopback", "softwareLoopback"), ("Tunnel", "tunnel"), ("Vlan", "l3ipvlan"),
          ("Port-channel", "ieee8023adLag"), ("Serial", "propPointToPointSerial"))


def interface_type(name: str) -> str:
    """The iana-if-type identity of a CLI interface name (an Ethernet unless it says other)."""
    if "." in name:
        return "l2vlan"
    return next((kind for prefix, kind in _TYPES if name.startswith(prefix)), "ethernetCsmacd")


def default_ns(namespace: str | None) -> Any:
    """An ``nsmap`` making ``namespace`` the default one (lxml takes ``None`` as the default
    prefix, which its type stubs do not allow)."""
    return {None: namespace}


def qname(namespace: str, name: str) -> str:
    """``{namespace}name``, as lxml names elements."""
    return f"{{{namespace}}}{name}"


def leaf(parent: etree._Element, tag: str, value: object) -> etree._Element:
    """A leaf under ``parent`` in ``parent``'s namespace (booleans as YANG writes them)."""
    namespace = etree.QName(parent).namespace or ""
    node = etree.SubElement(parent, qname(namespace, tag))
    node.text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return node


def child(parent: etree._Element, tag: str) -> etree._Element:
    """A container or list entry under ``parent``, in ``parent``'s namespace."""
    return etree.SubElement(parent, qname(etree.QName(parent).namespace or "", tag))


def type_leaf(parent: etree._Element, name: str) -> None:
    """The ``type`` leaf: an iana-if-type identity, its prefix declared on the leaf."""
    node = etree.SubElement(parent, qname(etree.QName(parent).namespace or "", "type"),
                            nsmap={"ianaift": IANAIFT})
    node.text = f"ianaift:{interface_type(name)}"


def text_of(node: etree._Element | None, tag: str) -> str | None:
    """The text of ``node``'s child ``tag`` (same namespace), None if there is none."""
    if node is None:
        return None
    found = node.find(qname(etree.QName(node).namespace or "", tag))
    return None if found is None else (found.text or "")


def interfaces_lacking(data: etree._Element, namespace: str, module: str,
                       path: tuple[str, ...]) -> list[str]:
    """Paths of ``/module:interfaces/interface`` entries of ``data`` without the node at
    ``path`` under them (a mandatory one: ``type``, ``config/type``)."""
    root = data.find(qname(namespace, "interfaces"))
    inner = "/".join(qname(namespace, part) for part in path)
    return [f"/{module}:interfaces/interface[name='{text_of(entry, 'name')}']/{'/'.join(path)}"
            for entry in (() if root is None else root.findall(qname(namespace, "interface")))
            if entry.find(inner) is None]


def flag(value: str | None, default: bool = True) -> bool:
    """A YANG boolean's text (``true``/``false``), ``default`` when absent."""
    return default if value is None else value.strip() == "true"


@dataclass(frozen=True)
class Read:
    """What a family's data says of the configuration: a hostname if it carries one, and the
    interfaces it lists (None: the family has no interfaces in the data)."""

    hostname: str | None
    interfaces: Mapping[str, IfSettings] | None


class Family(ABC):
    """One family of models (see the module docstring)."""

    #: The modules the family's data is written in (as the device advertises them).
    modules: ClassVar[tuple[str, ...]]
    #: Each list's element -> its key leaves (lxml names: ``{namespace}name``).
    lists: ClassVar[Mapping[str, tuple[str, ...]]]

    @abstractmethod
    def build(self, state: DeviceState, with_state: bool) -> list[etree._Element]:
        """The family's top-level data nodes: configuration, and state too if asked."""

    def missing(self, data: etree._Element) -> list[str]:
        """Paths of mandatory nodes ``data`` lacks in this family's configuration (none by
        default): a device refuses such a configuration."""
        return []

    @abstractmethod
    def read(self, data: etree._Element) -> Read:
        """The settings in ``data`` (a ``<data>`` or ``<config>`` element), as this family
        writes them."""
