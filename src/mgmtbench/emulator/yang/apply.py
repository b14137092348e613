"""Modelled configuration written back through the device's CLI.

A change made in any model (a description in ietf-interfaces, an address in OpenConfig, a
``shutdown`` in the native model) is the difference between the settings that model read
before and after the edit: :func:`changes` takes it, and :func:`apply` types the configuration
lines that make it (``interface Gi0/0/1``, `` description uplink``, `` no shutdown`` ...) into a
CLI session of the device, so the change is the CLI's own: it shows in ``show running-config``
and ``show interfaces`` at once, and the CLI's refusals are the protocol's errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.yang.families.base import Read
from mgmtbench.emulator.yang.state import IfSettings, network


@dataclass
class Changes:
    """What an edit changed: a new hostname, interfaces set (to their new settings, with the
    old ones if they existed) and interfaces removed."""

    hostname: str | None = None
    interfaces: dict[str, tuple[IfSettings | None, IfSettings]] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.hostname or self.interfaces or self.removed)

    def merge(self, other: Changes) -> None:
        """Add ``other``'s changes (a later model's win where both change one thing)."""
        self.hostname = other.hostname or self.hostname
        self.interfaces.update(other.interfaces)
        self.removed += [name for name in other.removed if name not in self.removed]


def changes(before: Read, after: Read) -> Changes:
    """What differs between one model's reads of the data before and after an edit."""
    found = Changes()
    if after.hostname and after.hostname != before.hostname:
        found.hostname = after.hostname
    old: Mapping[str, IfSettings] = before.interfaces or {}
    if after.interfaces is None:
        return found
    for name, settings in after.interfaces.items():
        if old.get(name) != settings:
            found.interfaces[name] = (old.get(name), settings)
    if before.interfaces is not None:
        found.removed = [name for name in old if name not in after.interfaces]
    return found


class ApplyError(Exception):
    """The CLI refused a line: ``line`` and the device's words."""

    def __init__(self, line: str, output: str) -> None:
        super().__init__(f"{line.strip()}: {output.strip()}")
        self.line = line
        self.output = output.strip()


def config_lines(found: Changes) -> Iterator[str]:
    """The CLI configuration lines that make ``found`` (IOS's syntax), between ``configure
    terminal`` and ``end``."""
    yield "configure terminal"
    yield from _ios_lines(found)
    yield "end"


def _ios_lines(found: Changes) -> Iterator[str]:
    if found.hostname:
        yield f"hostname {found.hostname}"
    for name in found.removed:
        yield f"no interface {name}"
    for name, (old, new) in found.interfaces.items():
        yield f"interface {name}"
        if old is None or old.description != new.description:
            yield (" no description" if new.description is None
                   else f" description {new.description}")
        if old is None or old.enabled != new.enabled:
            yield " no shutdown" if new.enabled else " shutdown"
        if old is None or old.addresses != new.addresses:
            if old is not None and old.addresses:
                yield " no ip address"
            for index, address in enumerate(new.addresses):
                mask = network(address).netmask
                yield f" ip address {address[0]} {mask}" + (" secondary" if index else "")
        yield " exit"


def junos_config_lines(found: Changes) -> Iterator[str]:
    """The Junos configuration-mode commands that make ``found``, committed."""
    from mgmtbench.emulator.yang.junos_cli import junos_lines

    yield "configure"
    yield from junos_lines(found.hostname, found.removed, found.interfaces)
    yield "commit and-quit"


#: How each CLI style types a change (a platform's ``[yang] cli``).
WRITERS: dict[str, Callable[[Changes], Iterator[str]]] = {
    "ios": config_lines, "junos": junos_config_lines}


def apply(device: Device, found: Changes, user: str = "netconf", cli: str = "ios") -> None:
    """Type ``found``'s lines into a configuration session of ``device`` in its CLI's style;
    :class:`ApplyError` at the first line the CLI refuses (the lines before it stay made,
    as on the device)."""
    if not found:
        return
    session = CliSession(device, mode=Mode.PRIV, user=user, max_output=1 << 20)
    lines = list(WRITERS[cli](found))
    for line in lines:
        reply = session.execute(line)
        if not reply.ok or reply.output.lstrip().startswith(("%", "error:")):
            session.execute(lines[-1])
            raise ApplyError(line, reply.output)
