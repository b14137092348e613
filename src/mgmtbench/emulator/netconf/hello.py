"""The device's ``<hello>``: the protocol capabilities it offers and, as RFC 6020 (5.6.4) has a
NETCONF server list them, every YANG module its data is written in (with what they import) as a
capability URI, with the session id."""

from __future__ import annotations

from functools import cache

from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.yang.datastore import modelled
from mgmtbench.emulator.yang.modules import closure

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
PROTOCOL = (
    "urn:ietf:params:netconf:base:1.0",
    "urn:ietf:params:netconf:base:1.1",
    "urn:ietf:params:netconf:capability:writable-running:1.0",
    "urn:ietf:params:netconf:capability:rollback-on-error:1.0",
    "urn:ietf:params:netconf:capability:validate:1.1",
    "urn:ietf:params:netconf:capability:xpath:1.0",
)
CANDIDATE = (
    "urn:ietf:params:netconf:capability:candidate:1.0",
    "urn:ietf:params:netconf:capability:confirmed-commit:1.1",
)
#: Modules every device lists besides its data's: NETCONF's own and its monitoring.
SERVED = ("ietf-netconf", "ietf-netconf-monitoring")


def capabilities(modules: tuple[str, ...], candidate: bool) -> tuple[str, ...]:
    """The capability URIs of a device whose data is in ``modules``."""
    found = [*PROTOCOL, *(CANDIDATE if candidate else ())]
    try:
        infos = closure((*modules, *SERVED))
    except KeyError:  # modules not vendored: advertise none rather than some
        infos = ()
    found += [info.capability for info in infos if not info.submodule]
    return tuple(found)


@cache
def _capabilities_xml(modules: tuple[str, ...], candidate: bool,
                      extra: tuple[str, ...] = ()) -> str:
    return "".join(f"<capability>{uri.replace('&', '&amp;')}</capability>"
                   for uri in (*capabilities(modules, candidate), *extra))


def server_hello(device: Device, session_id: int, candidate: bool,
                 extra: tuple[str, ...] = ()) -> bytes:
    """The hello a device sends at the start of session ``session_id`` (``extra``: the
    capabilities of the platform's own RPCs)."""
    caps = _capabilities_xml(modelled(device).modules, candidate, extra)
    return (f'<?xml version="1.0" encoding="UTF-8"?><hello xmlns="{BASE}"><capabilities>'
            f"{caps}</capabilities><session-id>{session_id}</session-id></hello>").encode()
