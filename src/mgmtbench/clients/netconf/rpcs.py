"""The RPCs a NETCONF benchmark sends, for each payload, and the output of their replies.

Two payloads, an axis of their own:

- ``cli``: the published study's envelope (clibench v0.8): a benchmark command is a ``<get>``
  whose ``<filter type="cli">`` holds it, answered with its CLI text as the ``<data>``
  element's text; an edit is an ``<edit-config>`` whose ``<config>`` holds ``<cli>`` lines.
- ``yang``: the command's data as a modelled read (:data:`READS`): ``show version`` is
  openconfig-system's state, ``show ip interface brief`` ietf-interfaces' names, status and
  addresses, ``show inventory`` ietf-hardware's components ...; an edit is an
  ``<edit-config>`` of ietf-interfaces (an interface's description), then ``<commit/>``.

:func:`read_rpc` and :func:`edit_rpc` give an operation's element as text (the client library
wraps it in ``<rpc>``); :func:`output` turns a reply into the text a benchmark checks: the CLI
text for ``cli``, the ``<data>`` element for ``yang``.
"""

from __future__ import annotations

from collections.abc import Mapping
from xml.sax.saxutils import escape

from lxml import etree

from mgmtbench.errors import UsageError

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
PAYLOADS = ("cli", "yang")
_OC_SYS = "http://openconfig.net/yang/system"
_IF = "urn:ietf:params:xml:ns:yang:ietf-interfaces"
_IP = "urn:ietf:params:xml:ns:yang:ietf-ip"
_HW = "urn:ietf:params:xml:ns:yang:ietf-hardware"
_RT = "urn:ietf:params:xml:ns:yang:ietf-routing"

_BRIEF = (f'<interfaces xmlns="{_IF}"><interface><name/><enabled/><oper-status/>'
          f'<ipv4 xmlns="{_IP}"><address/></ipv4></interface></interfaces>')
#: Each benchmark command's modelled read: the subtree filter of a ``<get>`` (None: a
#: ``<get-config>`` of running without a filter, the whole configuration).
READS: Mapping[str, str | None] = {
    "show version": f'<system xmlns="{_OC_SYS}"><state/></system>',
    "show clock": f'<system xmlns="{_OC_SYS}"><state><current-datetime/></state><clock/></system>',
    "show ip interface brief": _BRIEF,
    "show interface brief": _BRIEF,
    "show interfaces status": _BRIEF,
    "show interface status": _BRIEF,
    "show interfaces": f'<interfaces xmlns="{_IF}"/>',
    "show inventory": f'<hardware xmlns="{_HW}"/>',
    "show ip route": f'<routing xmlns="{_RT}"><ribs/></routing>',
    "show ip arp": (f'<interfaces xmlns="{_IF}"><interface><name/><ipv4 xmlns="{_IP}">'
                    f"<neighbor/></ipv4></interface></interfaces>"),
    "show running-config": None,
}


def check_payload(payload: str) -> None:
    """:class:`UsageError` for a payload that is not one of :data:`PAYLOADS`."""
    if payload not in PAYLOADS:
        raise UsageError(f"unknown NETCONF payload {payload!r}: choose one of "
                         f"{', '.join(PAYLOADS)}")


def check_commands(commands: list[str], payload: str) -> None:
    """:class:`UsageError` naming the first command the ``yang`` payload has no read for."""
    if payload == "yang":
        missing = [c for c in commands if c not in READS]
        if missing:
            raise UsageError(f"the yang payload has no modelled read for {missing[0]!r} "
                             f"(it has: {', '.join(READS)})")


def read_rpc(command: str, payload: str) -> str:
    """The operation that reads ``command``'s data in ``payload``."""
    if payload == "cli":
        return f'<get><filter type="cli">{escape(command)}</filter></get>'
    spec = READS[command]
    if spec is None:
        return "<get-config><source><running/></source></get-config>"
    return f'<get><filter type="subtree">{spec}</filter></get>'


#: The interface an ``edit-commit`` iteration describes, per platform: a physical port from the
#: platform's ``show running-config`` transcript (on cisco_ios the study's, GigabitEthernet0/0/1).
EDIT_INTERFACE: Mapping[str, str] = {
    "cisco_ios": "GigabitEthernet0/0/1",
    "cisco_asa": "GigabitEthernet1/1",
    "cisco_nxos": "Ethernet1/1",
    "arista_eos": "Ethernet1",
    "juniper_junos": "et-0/0/0",
}
#: The interface for a platform :data:`EDIT_INTERFACE` does not name.
DEFAULT_EDIT_INTERFACE = "GigabitEthernet0/0/1"


def edit_interface(platform: str) -> str:
    """The interface an ``edit-commit`` iteration describes on a device of ``platform``."""
    return EDIT_INTERFACE.get(platform, DEFAULT_EDIT_INTERFACE)


def edit_lines(interface: str, commands: int) -> list[str]:
    """The configuration an ``edit-commit`` iteration makes for ``commands`` commands: as the
    study's, an interface's description set once per command."""
    return [f"interface {interface}\n description mgmtbench-{i}" for i in range(commands)]


def edit_rpc(interface: str, commands: int, payload: str, target: str = "candidate") -> str:
    """One ``<edit-config>`` of ``target`` that makes :func:`edit_lines`'s change."""
    if payload == "cli":
        body = f"<cli>{escape(chr(10).join(edit_lines(interface, commands)))}</cli>"
    else:
        body = (f'<interfaces xmlns="{_IF}"><interface><name>{escape(interface)}</name>'
                f"<description>mgmtbench-{commands - 1}</description></interface></interfaces>")
    return (f"<edit-config><target><{target}/></target><config>{body}</config>"
            "</edit-config>")


COMMIT = "<commit/>"


def output(reply: str | bytes, payload: str) -> str:
    """The text a benchmark checks from an ``<rpc-reply>``: for ``cli`` the ``<data>``
    element's text, for ``yang`` the ``<data>`` element itself; ``<ok/>`` as ``ok``; an
    ``<rpc-error>`` raises ValueError with its message."""
    root = etree.fromstring(reply.encode() if isinstance(reply, str) else reply)
    # A library may hand over the reply with its namespaces stripped (ncclient's junos handler).
    ns = f"{{{BASE}}}" if root.tag.startswith(f"{{{BASE}}}") else ""
    error = root.find(f"{ns}rpc-error")
    if error is not None:
        message = error.findtext(f"{ns}error-message") or error.findtext(
            f"{ns}error-tag") or "rpc-error"
        raise ValueError(message.strip())
    if root.find(f"{ns}ok") is not None:
        return "ok\n"
    data = root.find(f"{ns}data")
    if data is None:
        return ""
    if payload == "cli":
        return data.text or ""
    return etree.tostring(data, encoding="unicode")
