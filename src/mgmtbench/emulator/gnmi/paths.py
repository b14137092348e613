"""gNMI paths (``gnmi.Path``): what one names, read as the device understands it.

Two kinds of path:

- the CLI's: the published study's ``/cli/show/version`` (no origin, a first element ``cli``,
  one element per word: clibench v0.7.0's ``CommandToPath``), or origin ``cli`` with the command
  in the elements (Arista's form: one element ``show version``); :func:`command_of` gives the
  command;
- the modelled data's: OpenConfig paths with origin ``openconfig`` or none
  (``/interfaces/interface[name=Gi0/0/1]/state``), or origin ``rfc7951`` with a
  module-qualified first element for any of the device's models
  (``/ietf-interfaces:interfaces``); :class:`Step` is one element with its keys, :func:`steps`
  the whole path after its prefix.

:func:`text` writes a path as gNMI's string form (for errors and for checked outputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Origins of the modelled data: OpenConfig (also the default, no origin) and RFC 7951 names.
DATA_ORIGINS = ("", "openconfig", "rfc7951")
#: The CLI's origin.
CLI = "cli"


class PathError(ValueError):
    """A path the device cannot take (gRPC's INVALID_ARGUMENT)."""


@dataclass(frozen=True)
class Step:
    """One path element: its name (``module:name`` allowed) and its keys."""

    name: str
    keys: tuple[tuple[str, str], ...] = ()

    @property
    def module(self) -> str | None:
        """The module a qualified name gives (``openconfig-interfaces:interfaces``)."""
        module, colon, _ = self.name.partition(":")
        return module if colon else None

    @property
    def local(self) -> str:
        """The name without its module."""
        return self.name.rpartition(":")[2]


def joined(prefix: Any, path: Any) -> tuple[str, list[Any]]:
    """The origin and the elements of ``path`` under ``prefix`` (both ``gnmi.Path``; gNMI 0.4's
    string ``element`` list is taken too)."""
    origin = path.origin or (prefix.origin if prefix is not None else "")
    elems = list(prefix.elem) if prefix is not None else []
    if prefix is not None and not prefix.elem and prefix.element:
        raise PathError("the deprecated string path elements are not supported: use elem")
    if not path.elem and path.element:
        raise PathError("the deprecated string path elements are not supported: use elem")
    return origin, elems + list(path.elem)


def is_cli(origin: str, elems: Sequence[Any]) -> bool:
    """Whether the path names a CLI command (origin ``cli``, or the study's ``/cli/...``)."""
    return origin == CLI or (origin == "" and bool(elems) and elems[0].name == CLI
                             and not elems[0].key)


def command_of(origin: str, elems: Sequence[Any]) -> str:
    """The CLI command a CLI path names: its elements' names joined by spaces (the study's
    leading ``cli`` element dropped)."""
    names = [e.name for e in elems]
    if origin != CLI and names and names[0] == CLI:
        names = names[1:]
    command = " ".join(" ".join(name.split()) for name in names)
    if not command:
        raise PathError("a cli path needs a command: /cli/show/version")
    return command


def steps(origin: str, elems: Sequence[Any]) -> list[Step]:
    """A data path's steps; :class:`PathError` for an origin the device has no data for."""
    if origin not in DATA_ORIGINS:
        raise PathError(f"unknown origin {origin!r}: use openconfig, rfc7951 or cli")
    found = [Step(e.name, tuple(sorted(e.key.items()))) for e in elems]
    if origin == "rfc7951" and found and found[0].module is None:
        raise PathError("origin rfc7951 needs a module-qualified first element "
                        "(/ietf-interfaces:interfaces)")
    return found


def text(origin: str, elems: Sequence[Any]) -> str:
    """The path as gNMI's string form: ``origin:/a/b[k=v]`` (no origin: ``/a/b[k=v]``)."""
    parts = []
    for e in elems:
        keys = "".join(f"[{k}={v}]" for k, v in sorted(e.key.items()))
        parts.append(f"{e.name}{keys}")
    body = "/" + "/".join(parts)
    return f"{origin}:{body}" if origin else body


def command_path(command: str) -> Any:
    """The study's path for a CLI command: ``/cli/<word>/<word>...`` (its ``CommandToPath``)."""
    from mgmtbench.emulator.gnmi.protos import pb

    return pb.Path(elem=[pb.PathElem(name=CLI)]
                   + [pb.PathElem(name=word) for word in command.split()])


def parse(spec: str) -> Any:
    """A ``gnmi.Path`` from its string form (``openconfig:/interfaces/interface[name=X]/state``,
    ``/system/state``); ``/`` inside a key's value is kept (``[name=Gi0/0/1]``)."""
    from mgmtbench.emulator.gnmi.protos import pb

    origin = ""
    head, colon, rest = spec.partition(":")
    if colon and "/" not in head and "[" not in head and rest.startswith("/"):
        origin, spec = head, rest
    elems = []
    for part in _split(spec.strip("/")):
        name, _, keys = part.partition("[")
        key: dict[str, str] = {}
        for pair in ("[" + keys).split("[")[1:] if keys else ():
            k, _, v = pair.rstrip("]").partition("=")
            key[k] = v
        elems.append(pb.PathElem(name=name, key=key))
    return pb.Path(origin=origin, elem=elems)


def _split(spec: str) -> list[str]:
    """``spec`` split at the ``/`` outside ``[...]``."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in spec:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "/" and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if current:
        parts.append("".join(current))
    return [p for p in parts if p]
