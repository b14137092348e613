"""The NETCONF operations a device answers, one function each (RFC 6241, section 7, and
``get-schema`` of RFC 6022), with the study's CLI envelope beside the modelled data.

An operation takes the :class:`Call` (the session's side of things, and the operation's
element) and returns the body of its ``<rpc-reply>``: ``<ok/>`` or a ``<data>`` element's text.
It raises :class:`~mgmtbench.emulator.netconf.errors.RpcError` to refuse.

The study's envelope (clibench v0.8): a ``get`` whose ``<filter type="cli">`` holds CLI commands
is answered with their output as the ``<data>`` element's text; an ``edit-config`` whose
``<config>`` holds ``<cli>`` configuration lines types them into the device's configuration
mode (at once for running, at ``commit`` for the candidate).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from xml.sax.saxutils import escape

from lxml import etree

from mgmtbench.emulator.cli.engine import Reply
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.netconf.datastores import DATASTORES, DeviceDatastores
from mgmtbench.emulator.netconf.errors import RpcError, bad_element, missing_element
from mgmtbench.emulator.yang import filters
from mgmtbench.emulator.yang.edit import EditError, edit
from mgmtbench.emulator.yang.modules import schema_text

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
MONITORING = "urn:ietf:params:xml:ns:yang:ietf-netconf-monitoring"
OK = "<ok/>"
DEFAULT_CONFIRM_TIMEOUT = 600.0


@dataclass
class Call:
    """One operation's context: the device's shared state, the session's id, the operation's
    element, the session's CLI (for the study's envelope) and how to set a timer."""

    stores: DeviceDatastores
    session_id: int
    element: etree._Element
    cli: CliSession
    schedule: Callable[[float, Callable[[], None]], Callable[[], None]]
    candidate: bool
    close: Callable[[], None]

    def child(self, name: str, namespace: str = BASE) -> etree._Element | None:
        """The operation's child element ``name`` (in ``namespace``, or unqualified: clients
        such as ncclient send ``<config>`` without the base namespace, and devices take it)."""
        found = self.element.find(f"{{{namespace}}}{name}")
        return found if found is not None else self.element.find(name)


def _datastore(call: Call, name: str) -> str:
    """The datastore named in the operation's ``<name>`` child (``<running/>``)."""
    holder = call.child(name)
    if holder is None:
        raise missing_element(name, etree.QName(call.element).localname)
    for node in holder:
        if isinstance(node.tag, str):
            store = etree.QName(node).localname
            if store == "candidate" and not call.candidate:
                break
            if store in DATASTORES:
                return store
            break
    raise bad_element(name, "the datastore must be running"
                      + (" or candidate" if call.candidate else ""))


def _filtered(call: Call, data: etree._Element) -> str:
    """``data`` under the operation's ``<filter>``, as the ``<data>`` element's text."""
    spec = call.child("filter")
    if spec is None:
        return etree.tostring(data, encoding="unicode")
    kind = spec.get("type", "subtree")
    if kind == "subtree":
        picked = filters.subtree(data, spec)
    elif kind == "xpath":
        select = spec.get("select")
        if not select:
            raise RpcError("missing-attribute", "an XPath filter needs a select attribute",
                           type="protocol", info={"bad-attribute": "select",
                                                  "bad-element": "filter"})
        try:
            picked = filters.xpath(data, select, spec.nsmap, call.stores.model.keys)
        except filters.FilterError as exc:
            raise RpcError("invalid-value", str(exc), path="/filter") from exc
    else:
        raise RpcError("bad-attribute", f"unknown filter type {kind!r}", type="protocol",
                       info={"bad-attribute": "type", "bad-element": "filter"})
    return etree.tostring(picked, encoding="unicode")


def _cli_filter(call: Call) -> str | None:
    spec = call.child("filter")
    if spec is None or spec.get("type") != "cli":
        return None
    return spec.text or ""


@dataclass
class StreamedData:
    """A ``<data>`` whose CLI output is too long to hold (``show bulk-output``): what the
    commands before the long one printed, the long one's :class:`Reply`, and the commands after
    it, run in turn while the answer is sent (:meth:`pieces`), as a CLI runs them."""

    cli: CliSession
    before: str
    long: Reply
    rest: list[str]

    async def pieces(self) -> AsyncIterator[str]:
        """``<data>``, the escaped output in slices (the loop served between them), ``</data>``."""
        yield "<data>" + escape(self.before)
        async for chunk in self.long.stream():
            yield escape(chunk)
        for line in self.rest:
            async for chunk in self.cli.execute(line).stream():
                yield escape(chunk)
        yield "</data>"


def run_cli(cli: CliSession, commands: str) -> str | StreamedData:
    """``<data>`` holding the output of CLI ``commands`` (one per line), run in the session's
    CLI; from a command whose output is long on, a :class:`StreamedData` the session sends as it
    is made."""
    lines = [line.strip() for line in commands.strip().splitlines()]
    out: list[str] = []
    for at, line in enumerate(lines):
        reply = cli.execute(line)
        if reply.more is not None:
            return StreamedData(cli, "".join(out), reply, lines[at + 1:])
        out.append(reply.output)
    return f"<data>{escape(''.join(out))}</data>"


def cli_output(cli: CliSession, commands: str) -> str:
    """The output of CLI ``commands`` (one per line), run in ``cli``."""
    out = []
    for line in commands.strip().splitlines():
        reply = cli.execute(line.strip())
        out.append(reply.output if reply.more is None else
                   reply.output + "".join(reply.more()))
    return "".join(out)


def get(call: Call) -> str | StreamedData:
    """``get``: configuration and state (or the study's CLI output)."""
    commands = _cli_filter(call)
    if commands is not None:
        return run_cli(call.cli, commands)
    data = call.stores.model.data(with_state=True)
    return _filtered(call, data)


def get_config(call: Call) -> str | StreamedData:
    """``get-config``: a datastore's configuration."""
    store = _datastore(call, "source")
    commands = _cli_filter(call)
    if commands is not None:
        return run_cli(call.cli, commands)
    return _filtered(call, call.stores.config(store))


def _config_of(call: Call) -> etree._Element:
    config = call.child("config")
    if config is None:
        if call.child("url") is not None:
            raise RpcError("operation-not-supported", "the :url capability is not offered",
                           type="protocol")
        raise missing_element("config", "edit-config")
    return config


def edit_config(call: Call) -> str:
    """``edit-config`` (merge, replace, create, delete, remove; default-operation,
    test-option and error-option), or the study's ``<cli>`` lines."""
    store = _datastore(call, "target")
    call.stores.check_unlocked(store, call.session_id)
    config = _config_of(call)
    cli = config.find("cli")
    if cli is None:
        cli = config.find(f"{{{BASE}}}cli")
    if cli is not None:
        _cli_edit(call, store, cli.text or "")
        return OK
    default = _option(call, "default-operation", ("merge", "replace", "none"), "merge")
    test = _option(call, "test-option", ("test-then-set", "set", "test-only"), "test-then-set")
    on_error = _option(call, "error-option",
                       ("stop-on-error", "continue-on-error", "rollback-on-error"),
                       "stop-on-error")
    before = call.stores.config(store)
    after = copy.deepcopy(before)
    if default == "replace":
        for node in list(after):
            after.remove(node)
        default = "merge"
    problems: list[EditError] = []
    for node in config:
        if not isinstance(node.tag, str):
            continue
        one = etree.Element(config.tag)
        one.append(copy.deepcopy(node))
        try:
            edit(after, one, default, call.stores.model.keys)
        except EditError as exc:
            problems.append(exc)
            if on_error != "continue-on-error":
                break
    if problems and on_error != "continue-on-error":
        raise _edit_error(problems[0])
    _check_settings(call, after)
    if test != "test-only":
        if store == "running":
            call.stores.apply(copy.deepcopy(before), after)
        else:
            call.stores.write(store, after)
    if problems:
        raise _edit_error(problems[0])
    return OK


def _edit_error(exc: EditError) -> RpcError:
    return RpcError(exc.tag, str(exc), type="protocol" if exc.tag == "bad-attribute"
                    else "application", path=exc.path)


def _check_settings(call: Call, data: etree._Element) -> None:
    """``invalid-value`` for settings the device would refuse (an address that is none)."""
    import ipaddress

    for family in call.stores.model.families:
        for path in family.missing(data):
            raise RpcError("data-missing", f"mandatory node {path.rsplit('/', 1)[1]!r} is "
                           "missing", path=path)
        read = family.read(data)
        if read.hostname is not None and not read.hostname.strip():
            raise RpcError("invalid-value", "the hostname is empty", path="/hostname")
        for name, settings in (read.interfaces or {}).items():
            for address, length in settings.addresses:
                try:
                    ipaddress.IPv4Interface(f"{address}/{length}")
                except ValueError as exc:
                    raise RpcError("invalid-value", f"interface {name}: {exc}",
                                   path=f"/interface[name='{name}']") from exc


def _cli_edit(call: Call, store: str, lines: str) -> None:
    text = lines.strip()
    if store == "candidate":
        call.stores.pending_cli.append(text)
        return
    _type_config(call, text)


def _type_config(call: Call, text: str) -> None:
    session = CliSession(call.cli.device, mode=Mode.PRIV, user=call.cli.user, peer=call.cli.peer)
    for line in ("configure terminal", *text.splitlines(), "end"):
        reply = session.execute(line)
        if not reply.ok:
            session.execute("end")
            raise RpcError("operation-failed", f"{line.strip()}: {reply.output.strip()}")


def _option(call: Call, name: str, allowed: tuple[str, ...], default: str) -> str:
    node = call.child(name)
    if node is None:
        return default
    value = (node.text or "").strip()
    if value not in allowed:
        raise bad_element(name, f"{name} is one of {', '.join(allowed)}, not {value!r}")
    return value


def commit(call: Call) -> str:
    """``commit``: the candidate to running (``confirmed``, ``confirm-timeout``, ``persist``,
    ``persist-id``)."""
    if not call.candidate:
        return OK  # as the study's server: nothing to commit without a candidate
    call.stores.check_unlocked("running", call.session_id)
    timeout = DEFAULT_CONFIRM_TIMEOUT
    node = call.child("confirm-timeout")
    if node is not None:
        text = (node.text or "").strip()
        if not text.isdigit() or int(text) == 0:
            raise bad_element("confirm-timeout", "confirm-timeout is a whole number of seconds")
        timeout = float(text)
    persist = call.child("persist")
    persist_id = call.child("persist-id")
    pending_cli, call.stores.pending_cli = call.stores.pending_cli, []
    call.stores.commit(call.session_id, confirmed=call.child("confirmed") is not None,
                       timeout=timeout, persist=None if persist is None else persist.text or "",
                       persist_id=None if persist_id is None else persist_id.text or "",
                       schedule=call.schedule)
    for text in pending_cli:
        _type_config(call, text)
    return OK


def cancel_commit(call: Call) -> str:
    """``cancel-commit``: undo a pending confirmed commit."""
    persist_id = call.child("persist-id")
    call.stores.cancel_commit(call.session_id,
                              None if persist_id is None else persist_id.text or "")
    return OK


def discard_changes(call: Call) -> str:
    """``discard-changes``: the candidate back to running."""
    call.stores.check_unlocked("candidate", call.session_id)
    call.stores.candidate = None
    call.stores.pending_cli = []
    return OK


def lock(call: Call) -> str:
    """``lock``."""
    call.stores.lock(_datastore(call, "target"), call.session_id)
    return OK


def unlock(call: Call) -> str:
    """``unlock``."""
    call.stores.unlock(_datastore(call, "target"), call.session_id)
    return OK


def validate(call: Call) -> str:
    """``validate``: a datastore's or a ``<config>``'s settings, as a commit would check them."""
    source = call.child("source")
    if source is None:
        raise missing_element("source", "validate")
    config = source.find(f"{{{BASE}}}config")
    config = config if config is not None else source.find("config")
    if config is None:
        data = call.stores.config(_datastore(call, "source"))
    else:
        data = copy.deepcopy(call.stores.config("running"))
        try:
            edit(data, config, "merge", call.stores.model.keys)
        except EditError as exc:
            raise _edit_error(exc) from exc
    _check_settings(call, data)
    return OK


def close_session(call: Call) -> str:
    """``close-session``: the reply, then the session ends."""
    call.close()
    return OK


def kill_session(call: Call) -> str:
    """``kill-session``: end another session, its locks released."""
    node = call.child("session-id")
    if node is None:
        raise missing_element("session-id", "kill-session")
    text = (node.text or "").strip()
    if not text.isdigit():
        raise bad_element("session-id", "session-id is a number")
    target = int(text)
    if target == call.session_id:
        raise RpcError("invalid-value", "a session cannot kill itself (use close-session)",
                       type="protocol")
    peer = call.stores.sessions.get(target)
    if peer is None:
        raise RpcError("invalid-value", f"no session {target}", type="protocol")
    peer.kill()
    call.stores.leave(target)
    return OK


def get_schema(call: Call) -> str:
    """``get-schema`` (RFC 6022): a module's YANG text."""
    identifier = call.child("identifier", MONITORING)
    if identifier is None or not (identifier.text or "").strip():
        raise missing_element("identifier", "get-schema")
    version = call.child("version", MONITORING)
    form = call.child("format", MONITORING)
    if form is not None and (form.text or "").strip().split(":")[-1] not in ("yang", ""):
        raise RpcError("invalid-value", "only the yang format is served", path="/format")
    text = schema_text((identifier.text or "").strip(),
                       None if version is None else (version.text or "").strip() or None)
    if text is None:
        raise RpcError("invalid-value", f"no schema {(identifier.text or '').strip()!r}",
                       path="/identifier")
    return f'<data xmlns="{MONITORING}">{escape(text)}</data>'


#: Every operation by its element's name.
OPERATIONS: Mapping[str, Callable[[Call], str | StreamedData]] = {
    f"{{{BASE}}}get": get,
    f"{{{BASE}}}get-config": get_config,
    f"{{{BASE}}}edit-config": edit_config,
    f"{{{BASE}}}commit": commit,
    f"{{{BASE}}}cancel-commit": cancel_commit,
    f"{{{BASE}}}discard-changes": discard_changes,
    f"{{{BASE}}}lock": lock,
    f"{{{BASE}}}unlock": unlock,
    f"{{{BASE}}}validate": validate,
    f"{{{BASE}}}close-session": close_session,
    f"{{{BASE}}}kill-session": kill_session,
    f"{{{MONITORING}}}get-schema": get_schema,
}


@dataclass(frozen=True)
class PlatformRpcs:
    """A platform's own RPCs (by their element's name, unqualified or in the base namespace)
    and the capabilities its hello adds for them."""

    operations: Mapping[str, Callable[[Call], str | StreamedData]]
    capabilities: tuple[str, ...] = ()


_NO_RPCS = PlatformRpcs({})


def platform_rpcs(device: Device) -> PlatformRpcs:
    """The RPCs of ``device``'s platform (``netconf_rpcs`` in its ``platform.toml``: a module of
    this package with ``OPERATIONS`` and, optionally, ``CAPABILITIES``)."""
    name = device.platform.style.netconf_rpcs
    if not name:
        return _NO_RPCS
    module = importlib.import_module(f"mgmtbench.emulator.netconf.{name}")
    return PlatformRpcs(module.OPERATIONS, tuple(getattr(module, "CAPABILITIES", ())))
