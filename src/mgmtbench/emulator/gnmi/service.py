"""One device's gNMI service: Capabilities, Get, Set (and Subscribe, :mod:`.subscribe`), with
every error a gRPC status.

- Authentication: the ``username`` and ``password`` call metadata gNMI specifies (the device's
  SSH and HTTPS credentials); missing or wrong: ``UNAUTHENTICATED``.
- Paths (:mod:`.paths`): the CLI's (the study's ``/cli/show/version``, origin ``cli``), answered
  with the command's output as the CLI prints it; OpenConfig's (origin ``openconfig`` or none)
  and any model's with origin ``rfc7951``, answered from the same YANG data NETCONF reads.
- Encodings: ``JSON_IETF`` (RFC 7951), ``JSON`` (OpenConfig's, names without modules),
  ``PROTO`` (scalar ``TypedValue``: one update per leaf), ``ASCII`` (the CLI's text; CLI paths
  only). ``BYTES`` and ``ASCII`` on data paths: ``UNIMPLEMENTED``, as the specification says
  for an encoding a target does not support.
- Get: one notification per path; a path that names nothing: ``NOT_FOUND``. ``CONFIG`` reads
  the configuration only, the other data types everything.
- Set: deletes, replaces, then updates, as one transaction: every edit applied to a copy of the
  configuration, checked (mandatory nodes, addresses), then written through the CLI in one go
  (:meth:`~mgmtbench.emulator.yang.datastore.ModelledDevice.commit`, NETCONF's path); if the CLI
  refuses a line, what was written is put back and the Set fails (``ABORTED``) with nothing
  changed. A CLI path's update runs its command, as the study's server does (its value, if any,
  is typed as configuration lines).
"""

from __future__ import annotations

import contextlib
import copy
import ipaddress
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from lxml import etree

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.gnmi import data as gdata
from mgmtbench.emulator.gnmi import paths
from mgmtbench.emulator.gnmi.paths import PathError, Step
from mgmtbench.emulator.gnmi.protos import GNMI_VERSION, grpc, pb
from mgmtbench.emulator.netconf.operations import cli_output
from mgmtbench.emulator.yang.apply import ApplyError
from mgmtbench.emulator.yang.datastore import ModelledDevice, modelled
from mgmtbench.emulator.yang.edit import EditError, edit
from mgmtbench.emulator.yang.modules import module_index

#: The encodings the device answers in (``CapabilityResponse.supported_encodings``).
ENCODINGS = ("JSON", "JSON_IETF", "PROTO", "ASCII")


class GnmiError(Exception):
    """An RPC's failure as a gRPC status code and message."""

    def __init__(self, code: Any, message: str) -> None:
        super().__init__(message)
        self.code = code


def invalid(message: str) -> GnmiError:
    """``INVALID_ARGUMENT``."""
    return GnmiError(grpc.StatusCode.INVALID_ARGUMENT, message)


@dataclass(frozen=True)
class Credentials:
    """Who may call: the device's user and password."""

    username: str
    password: str
    #: Whether a call without credentials is let in (``mgmtbench serve --gnmi-anonymous``).
    anonymous: bool = False


@dataclass(frozen=True)
class Resolved:
    """A request path: its origin, its elements (prefix included) and how many the prefix had."""

    origin: str
    elems: list[Any]
    prefix_length: int

    @property
    def cli(self) -> bool:
        """Whether it names a CLI command."""
        return paths.is_cli(self.origin, self.elems)


def resolve(prefix: Any, path: Any) -> Resolved:
    """A request's path under its prefix."""
    origin, elems = paths.joined(prefix, path)
    return Resolved(origin, elems, len(prefix.elem) if prefix is not None else 0)


class DeviceGnmi:
    """The gNMI service of one device (see the module docstring)."""

    def __init__(self, device: Device, credentials: Credentials) -> None:
        self.device = device
        self.credentials = credentials
        self.model: ModelledDevice = modelled(device)
        self._cli: CliSession | None = None
        #: RPCs answered, by name (``Get``, ``Set`` ...), and subscriptions by mode.
        self.counts: dict[str, int] = {}

    # --- shared --------------------------------------------------------------------------------

    def check_auth(self, metadata: Any) -> None:
        """``UNAUTHENTICATED`` unless ``metadata`` carries the device's user and password."""
        found = dict(metadata or ())
        if self.credentials.anonymous and "username" not in found and "password" not in found:
            return
        if (found.get("username") != self.credentials.username
                or found.get("password") != self.credentials.password):
            raise GnmiError(grpc.StatusCode.UNAUTHENTICATED,
                            "username and password metadata required" if "username" not in found
                            else "authentication failed")

    def count(self, name: str) -> None:
        """One more ``name`` answered."""
        self.counts[name] = self.counts.get(name, 0) + 1

    def run(self, command: str) -> str:
        """A CLI command's output, as the CLI prints it (one privileged session, kept)."""
        if self._cli is None:
            self._cli = CliSession(self.device, mode=Mode.PRIV, user="gnmi", max_output=1 << 26)
        return cli_output(self._cli, command)

    def data(self, with_state: bool = True) -> etree._Element:
        """The device's modelled data (shared: copy before changing)."""
        return self.model.data(with_state=with_state)

    # --- Capabilities --------------------------------------------------------------------------

    def capabilities(self) -> Any:
        """The models the device writes its data in, the encodings, the gNMI version."""
        index = module_index()
        models = [pb.ModelData(name=name, organization=_organization(name),
                               version=index[name].revision)
                  for name in self.model.modules if name in index]
        return pb.CapabilityResponse(
            supported_models=models,
            supported_encodings=[pb.Encoding.Value(name) for name in ENCODINGS],
            gNMI_version=GNMI_VERSION)

    # --- Get -----------------------------------------------------------------------------------

    def get(self, request: Any) -> Any:
        """Each path's notification."""
        encoding = pb.Encoding.Name(request.encoding)
        if encoding not in ENCODINGS:
            raise GnmiError(grpc.StatusCode.UNIMPLEMENTED,
                            f"encoding {encoding} is not supported: use one of "
                            f"{', '.join(ENCODINGS)}")
        stamp = time.time_ns()
        prefix = request.prefix if request.HasField("prefix") else None
        with_state = request.type != pb.GetRequest.DataType.Value("CONFIG")
        notes = []
        for path in request.path:
            where = resolve(prefix, path)
            updates = list(self.updates(where, encoding, with_state))
            if not updates:
                raise GnmiError(grpc.StatusCode.NOT_FOUND,
                                f"no data at {paths.text(where.origin, where.elems)}")
            notes.append(pb.Notification(timestamp=stamp, prefix=prefix, update=updates))
        return pb.GetResponse(notification=notes)

    def updates(self, where: Resolved, encoding: str, with_state: bool = True) -> Iterator[Any]:
        """The ``gnmi.Update`` messages that answer one path (paths relative to its prefix)."""
        relative = where.elems[where.prefix_length:]
        if where.cli:
            command = paths.command_of(where.origin, where.elems)
            yield pb.Update(path=pb.Path(elem=relative), val=cli_value(self.run(command),
                                                                        encoding))
            return
        if encoding == "ASCII":
            raise GnmiError(grpc.StatusCode.UNIMPLEMENTED,
                            "ASCII is the cli origin's encoding: use JSON_IETF, JSON or PROTO")
        steps = self.steps(where)
        keys = self.model.keys
        for found in gdata.find(self.data(with_state), steps, keys, where.origin != "rfc7951"):
            if encoding == "PROTO":
                for leaf_steps, value in gdata.leaves(found.node, found.steps, keys):
                    yield pb.Update(path=_path(leaf_steps[where.prefix_length:]),
                                    val=scalar_value(value))
                continue
            ietf = encoding == "JSON_IETF"
            value = gdata.to_json(found.node, keys, ietf, qualify=not steps)
            blob = gdata.dumps(value)
            val = pb.TypedValue(json_ietf_val=blob) if ietf else pb.TypedValue(json_val=blob)
            yield pb.Update(path=_path(found.steps[where.prefix_length:]), val=val)

    def steps(self, where: Resolved) -> list[Step]:
        """A data path's steps (``INVALID_ARGUMENT`` for a bad one)."""
        try:
            return paths.steps(where.origin, where.elems)
        except PathError as exc:
            raise invalid(str(exc)) from exc

    # --- Set -----------------------------------------------------------------------------------

    def set(self, request: Any) -> Any:
        """Deletes, replaces and updates as one transaction (see the module docstring)."""
        prefix = request.prefix if request.HasField("prefix") else None
        ops = [(kind, resolve(prefix, path), path, val) for kind, path, val in (
            *(("delete", p, None) for p in request.delete),
            *(("replace", u.path, u.val) for u in request.replace),
            *(("update", u.path, u.val) for u in request.update))]
        modelled = any(not where.cli for _, where, _, _ in ops)
        # The configuration is copied and checked only for a Set that edits modelled data
        # (the study's CLI updates run their commands and edit nothing).
        before = self.data(with_state=False) if modelled else None
        after = copy.deepcopy(before) if before is not None else None
        keys = self.model.keys
        results = []
        commands: list[tuple[str, str]] = []
        op_codes = {"delete": "DELETE", "replace": "REPLACE", "update": "UPDATE"}
        for kind, where, path, val in ops:
            if where.cli:
                if kind == "delete":
                    raise invalid("a cli path cannot be deleted")
                commands.append((paths.command_of(where.origin, where.elems),
                                 _cli_lines(val)))
            else:
                assert after is not None
                steps = self.steps(where)
                value = None if val is None else json_of(val)
                operation = {"delete": "remove", "replace": "replace", "update": "merge"}[kind]
                try:
                    config = gdata.edit_config(after, steps, value, operation, keys,
                                               where.origin != "rfc7951")
                    if not steps and operation == "replace":
                        for node in list(after):
                            after.remove(node)
                    edit(after, config, "merge", keys)
                except PathError as exc:
                    raise invalid(f"{paths.text(where.origin, where.elems)}: {exc}") from exc
                except EditError as exc:
                    raise invalid(f"{exc.path}: {exc}") from exc
            results.append(pb.UpdateResult(path=path, op=pb.UpdateResult.Operation.Value(
                op_codes[kind])))
        if before is not None and after is not None:
            self._check(after)
        for command, lines in commands:
            self._cli_update(command, lines)
        if before is not None and after is not None:
            self._commit(before, after)
        return pb.SetResponse(prefix=prefix, response=results, timestamp=time.time_ns())

    def _check(self, after: etree._Element) -> None:
        """``INVALID_ARGUMENT`` for a configuration the device would refuse."""
        for family in self.model.families:
            for path in family.missing(after):
                raise invalid(f"mandatory node missing: {path}")
            read = family.read(after)
            if read.hostname is not None and not read.hostname.strip():
                raise invalid("the hostname is empty")
            for name, settings in (read.interfaces or {}).items():
                for address, length in settings.addresses:
                    try:
                        ipaddress.IPv4Interface(f"{address}/{length}")
                    except ValueError as exc:
                        raise invalid(f"interface {name}: {exc}") from exc

    def _commit(self, before: etree._Element, after: etree._Element) -> None:
        """Write the change through the CLI; put it back and fail (``ABORTED``) if refused."""
        original = copy.deepcopy(before)
        try:
            self.model.commit(before, after)
        except ApplyError as exc:
            # What cannot be put back stays as the CLI left it; the Set failed either way.
            with contextlib.suppress(ApplyError):
                self.model.commit(copy.deepcopy(self.data(with_state=False)), original)
            raise GnmiError(grpc.StatusCode.ABORTED,
                            f"the device refused {exc.line.strip()!r}: {exc.output}; nothing "
                            "was changed") from exc

    def _cli_update(self, command: str, lines: str) -> None:
        """The study's CLI update: run the path's command; a value's lines as configuration."""
        if lines.strip():
            session = CliSession(self.device, mode=Mode.PRIV, user="gnmi")
            for line in ("configure terminal", *lines.splitlines(), "end"):
                reply = session.execute(line)
                if not reply.ok:
                    session.execute("end")
                    raise GnmiError(grpc.StatusCode.ABORTED,
                                    f"{line.strip()}: {reply.output.strip()}")
            return
        self.run(command)


def _organization(module: str) -> str:
    for prefix, name in (("openconfig-", "OpenConfig working group"), ("ietf-", "IETF"),
                         ("iana-", "IANA"), ("Cisco-", "Cisco Systems, Inc."),
                         ("junos", "Juniper Networks, Inc.")):
        if module.startswith(prefix):
            return name
    return ""


def _path(steps: tuple[Step, ...]) -> Any:
    return pb.Path(elem=[pb.PathElem(name=s.name, key=dict(s.keys)) for s in steps])


def cli_value(text: str, encoding: str) -> Any:
    """A CLI output as a ``TypedValue`` in ``encoding``."""
    if encoding == "ASCII":
        return pb.TypedValue(ascii_val=text)
    if encoding == "JSON_IETF":
        return pb.TypedValue(json_ietf_val=gdata.dumps(text))
    if encoding == "JSON":
        return pb.TypedValue(json_val=gdata.dumps(text))
    return pb.TypedValue(string_val=text)


def scalar_value(value: object) -> Any:
    """A leaf's value as a scalar ``TypedValue`` (``PROTO``)."""
    if isinstance(value, bool):
        return pb.TypedValue(bool_val=value)
    if isinstance(value, int):
        return pb.TypedValue(int_val=value) if value < 0 else pb.TypedValue(uint_val=value)
    return pb.TypedValue(string_val=str(value))


def json_of(val: Any) -> object:
    """A Set value as JSON (``json_ietf_val``, ``json_val``, or a scalar)."""
    import json

    kind = val.WhichOneof("value")
    if kind in ("json_ietf_val", "json_val"):
        try:
            return json.loads(getattr(val, kind))
        except ValueError as exc:
            raise invalid(f"the value is not JSON: {exc}") from exc
    if kind in ("string_val", "ascii_val", "int_val", "uint_val", "bool_val", "double_val",
                "float_val"):
        return getattr(val, kind)
    raise invalid(f"a {kind or 'missing'} value is not supported in a Set")


def _cli_lines(val: Any) -> str:
    if val is None:
        return ""
    kind = val.WhichOneof("value")
    if kind in ("ascii_val", "string_val"):
        return str(getattr(val, kind))
    if kind in ("json_val", "json_ietf_val"):
        text = json_of(val)
        return text if isinstance(text, str) else ""
    return ""
