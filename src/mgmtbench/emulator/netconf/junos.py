"""Junos's own NETCONF RPCs (its XML API), as PyEZ (junos-eznc) and NAPALM's junos driver call
them: the operational ``get-*-information`` RPCs, ``<command>``, and the configuration workflow
(``lock-configuration``, ``load-configuration``, ``get-configuration``, ``commit-configuration``,
``unlock-configuration``), on the CLI dialect's candidate (:mod:`mgmtbench.emulator.cli.dialects.
junos`), so that ``show configuration`` in the CLI shows a NETCONF commit.

A platform has these when its ``platform.toml`` says ``netconf_rpcs = "junos"``
(:func:`mgmtbench.emulator.netconf.operations.platform_rpcs`). The operational RPCs run the
show command they stand for in the session's CLI and answer with its XML
(:mod:`mgmtbench.emulator.structured.juniper_junos`), or its text (``format="text"``, in
``<output>``) or JSON (``format="json"``, the reply's text).

``<ping>`` and ``<traceroute>`` run the CLI's ``ping`` / ``traceroute``
(:mod:`mgmtbench.emulator.cli.dialects.junos_reach`), as ``<command>ping ...</command>`` does.

Not emulated, and refused: ``commit-configuration`` with ``<confirmed/>``, loading XML or JSON
configuration. ``open-configuration`` (private, exclusive) answers but shares the one candidate.
FROM MEMORY, not a capture: the replies' element names beyond those PyEZ reads
(``commit-results/routing-engine/commit-success``, ``load-configuration-results``,
``configuration-information/configuration-output``, ``configuration-text``), the capability
URIs in :data:`CAPABILITIES` and the error messages.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping
from xml.sax.saxutils import escape

from lxml import etree

from mgmtbench.emulator.cli.dialects.junos import (
    TOP_LEVEL,
    Statement,
    commit_candidate,
    compare,
    config_of,
    delete_statement,
    find,
    parse,
    render,
    render_set,
    set_statement,
)
from mgmtbench.emulator.cli.grammar import ParseError
from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.netconf.errors import RpcError
from mgmtbench.emulator.netconf.operations import Call, StreamedData
from mgmtbench.emulator.structured import ShapeInput
from mgmtbench.emulator.structured import juniper_junos as jx
from mgmtbench.emulator.yang import filters

#: Capabilities a Junos device adds to its hello.
CAPABILITIES = ("http://xml.juniper.net/netconf/junos/1.0", "http://xml.juniper.net/dmi/system/1.0")


def _flag(call: Call, name: str) -> bool:
    return call.element.find(name) is not None


def _child_text(call: Call, name: str) -> str | None:
    node = call.element.find(name)
    return None if node is None else (node.text or "").strip()


def _failed(message: str, bad: str | None = None) -> RpcError:
    return RpcError("operation-failed", message, type="protocol",
                    info={"bad-element": bad} if bad else {})


def _cli_message(output: str) -> str:
    """A CLI error's message without its caret line."""
    lines = [line.strip() for line in output.splitlines() if line.strip() and line.strip() != "^"]
    return "; ".join(lines) or "error"


def _run(call: Call, line: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Run ``line`` in the session's CLI: its command's words and arguments, and its text
    (:class:`RpcError` with the CLI's message when it fails)."""
    try:
        found = call.cli.trees().priv.match(line)
    except ParseError as exc:  # the CLI's own words for it
        raise _failed(_cli_message(call.cli.execute(line).output)) from exc
    reply = call.cli.execute(line)
    if not reply.ok:
        raise _failed(_cli_message(reply.output))
    return found.words, found.args, reply.text()


def _answer(call: Call, element: etree._Element, text: str, module: str = "") -> str:
    """The reply's body in the RPC's ``format``: XML (the default), text or JSON."""
    form = (call.element.get("format") or "xml").lower()
    device = call.cli.device
    if form == "text" or form == "ascii":
        return f"<output>\n{escape(text)}</output>"
    placed = jx.in_namespace(element, device, module)
    if form == "json":
        return escape(jx.render_json(jx.as_json(placed, device)) + "\n")
    return etree.tostring(placed, encoding="unicode")


def _show(line: str, maker: Callable[[ShapeInput], etree._Element] | None = None,
          module: str = "") -> Callable[[Call], str]:
    """An RPC that answers with the XML of show command ``line``."""
    def operation(call: Call) -> str:
        words, args, text = _run(call, line)
        rpc = jx.RPCS[" ".join(words)]
        element = (maker or rpc.make)(ShapeInput(text, args, call.cli.device))
        return _answer(call, element, text, module or rpc.module)
    return operation


def get_interface_information(call: Call) -> str:
    """``get-interface-information`` (``<terse/>``, ``<extensive/>``, ``<interface-name>``
    with Junos's wildcards)."""
    name = _child_text(call, "interface-name")
    terse = _flag(call, "terse")
    wildcard = name is not None and any(c in name for c in "*?[")
    line = "show interfaces terse" if terse else (
        f"show interfaces {name}" if name and not wildcard else "show interfaces")
    _, args, text = _run(call, line)
    source = ShapeInput(text, args, call.cli.device)
    element = (jx.interface_terse(source) if terse else
               jx.interface_information(source, extensive=_flag(call, "extensive")))
    if name is not None and (terse or wildcard):
        for ifd in element.findall("physical-interface"):
            own = ifd.findtext("name") or ""
            units = [u.findtext("name") or "" for u in ifd.findall("logical-interface")]
            if fnmatch.fnmatchcase(own, name):
                continue
            if any(fnmatch.fnmatchcase(unit, name) for unit in units):
                for unit in ifd.findall("logical-interface"):
                    if not fnmatch.fnmatchcase(unit.findtext("name") or "", name):
                        ifd.remove(unit)
                continue
            element.remove(ifd)
        if not wildcard and not len(element):
            raise _failed(f"device {name} not found", "interface-name")
    return _answer(call, element, text, "interface")


def get_arp_table_information(call: Call) -> str:
    """``get-arp-table-information`` (``<no-resolve/>``)."""
    line = "show arp no-resolve" if _flag(call, "no-resolve") else "show arp"
    return _show(line)(call)


def get_route_information(call: Call) -> str:
    """``get-route-information`` (``<destination>``, ``<table>``: only those routes)."""
    _, args, text = _run(call, "show route")
    element = jx.route_information(ShapeInput(text, args, call.cli.device))
    destination = _child_text(call, "destination")
    table_name = _child_text(call, "table")
    for table in element.findall("route-table"):
        if table_name and table.findtext("table-name") != table_name:
            element.remove(table)
            continue
        if destination:
            for route in table.findall("rt"):
                if route.findtext("rt-destination") != destination:
                    table.remove(route)
    return _answer(call, element, text, "routing")


def get_route_engine_information(call: Call) -> str:
    """``get-route-engine-information``: the one routing engine (from ``show system
    uptime`` and ``show chassis hardware``)."""
    _, args, text = _run(call, "show system uptime")
    uptime = jx.system_uptime(ShapeInput(text, args, call.cli.device))
    element = jx.route_engine(call.cli.device, uptime)
    return _answer(call, element, text)


def get_system_memory_information(call: Call) -> str:
    """``get-system-memory-information``: the routing engine's memory summary."""
    element = jx.system_memory(call.cli.device)
    return _answer(call, element, etree.tostring(element, encoding="unicode"))


def get_system_storage(call: Call) -> str:
    """``get-system-storage``: the routing engine's file systems."""
    element = jx.system_storage(call.cli.device)
    return _answer(call, element, etree.tostring(element, encoding="unicode"))


def command(call: Call) -> str:
    """``<command format="text|xml|json">show ...</command>``: the CLI command's output in
    ``<output>``, or its XML (``| display xml rpc``: the RPC it stands for)."""
    line = " ".join((call.element.text or "").split())
    form = (call.element.get("format") or "xml").lower()
    head, bar, pipe = line.partition("|")
    if bar and " ".join(pipe.split()) == "display xml rpc":
        words, args, _ = _run(call, head.strip())
        rpc = jx.RPCS.get(" ".join(words))
        if rpc is None:
            return "<output>\n</output>"
        holder = etree.Element("rpc")
        etree.SubElement(holder, rpc.name)
        return etree.tostring(holder, encoding="unicode")
    words, args, text = _run(call, line)
    if form in ("text", "ascii") or bar:
        return f"<output>\n{escape(text)}</output>"
    device = call.cli.device
    if words == ("show", "configuration"):
        config = config_of(device)
        element = jx.configuration(device, config.active, config.committed)
    else:
        made = jx.make(words, ShapeInput(text, args, device))
        if made is None:
            return f"<output>\n{escape(text)}</output>"
        rpc, element = made
        element = jx.in_namespace(element, device, rpc.module)
    if form == "json":
        return escape(jx.render_json(jx.as_json(element, device)) + "\n")
    return etree.tostring(element, encoding="unicode")


#: ``<ping>`` / ``<traceroute>`` children and the CLI words they stand for.
_REACH_OPTIONS = {"count": "count", "size": "size", "wait": "wait", "ttl": "ttl",
                  "source": "source", "interface": "interface",
                  "routing-instance": "routing-instance"}
_REACH_FLAGS = ("rapid", "no-resolve", "do-not-fragment")


def _reach_rpc(command_word: str) -> Callable[[Call], str]:
    """``<ping>`` / ``<traceroute>`` (``<host>``, ``<count>``, ``<size>``, ``<wait>``,
    ``<ttl>``, ``<source>``, ``<routing-instance>``, ``<rapid/>``): the CLI command they stand
    for, answered with its ``ping-results`` / ``traceroute-results``."""
    def operation(call: Call) -> str:
        host = _child_text(call, "host")
        if not host:
            raise _failed("syntax error, expecting <host>", command_word)
        words = [command_word, host]
        for tag, word in _REACH_OPTIONS.items():
            value = _child_text(call, tag)
            if value:
                words += [word, value]
        words += [flag for flag in _REACH_FLAGS if _flag(call, flag)]
        return _show(" ".join(words))(call)
    return operation


# --- configuration ------------------------------------------------------------------------------


def get_configuration(call: Call) -> str:
    """``get-configuration``: the committed (default) or candidate configuration as XML
    (a ``<configuration>`` child filters it), text, ``set`` commands or JSON; with
    ``compare="rollback" rollback="N"``, the candidate's differences from rollback N, as
    ``show | compare`` prints them."""
    device = call.cli.device
    config = config_of(device)
    attributes = call.element.attrib
    form = (attributes.get("format") or "xml").lower()
    if attributes.get("compare") == "rollback":
        number = _rollback_number(attributes.get("rollback", "0"))
        old = config.rolled_back(number)
        if old is None:
            raise _failed(f"rollback {number} does not exist")
        diff = compare(old, config.candidate)
        body = "\n" + "".join(f"{line}\n" for line in diff)
        return ("<configuration-information><configuration-output>"
                f"{escape(body)}</configuration-output></configuration-information>")
    candidate = attributes.get("database", "committed") == "candidate"
    statements = config.candidate if candidate else config.active
    header = (config.committed.replace("Last commit", "Last changed") if candidate else
              config.committed)
    if form == "text":
        text = "\n".join([header, *render(statements)]) + "\n"
        return f"<configuration-text>{escape(text)}</configuration-text>"
    if form == "set":
        text = "".join(f"{line}\n" for line in render_set(statements, []))
        return f"<configuration-set>{escape(text)}</configuration-set>"
    if form == "json":
        return escape(jx.configuration_json(device, statements, header))
    element = jx.configuration(device, statements, header)
    spec = call.element.find("{*}configuration")
    if spec is not None and len(spec):
        picked = filters.subtree(element, spec)
        for key, value in element.attrib.items():
            picked.set(key, value)
        element = picked
    return etree.tostring(element, encoding="unicode")


def _rollback_number(text: str) -> int:
    if not text.strip().isdigit() or int(text) > 49:
        raise RpcError("invalid-value", f"invalid rollback number {text!r}",
                       info={"bad-element": "rollback"})
    return int(text)


def lock_configuration(call: Call) -> str:
    """``lock-configuration``: the candidate's lock (NETCONF's ``<lock>`` on it too)."""
    try:
        call.stores.lock("candidate", call.session_id)
    except RpcError as exc:
        holder = exc.info.get("session-id", "")
        raise RpcError("lock-denied", "configuration database locked by another session"
                       + (f" (session-id {holder})" if holder else ""),
                       type="protocol", info=exc.info) from exc
    return "<ok/>"


def unlock_configuration(call: Call) -> str:
    """``unlock-configuration``: gives the lock back (nothing to do without one)."""
    if call.stores.locks.get("candidate") == call.session_id:
        call.stores.unlock("candidate", call.session_id)
    return "<ok/>"


def open_configuration(call: Call) -> str:
    """``open-configuration`` (private, exclusive, a database): the shared candidate."""
    return "<ok/>"


def close_configuration(call: Call) -> str:
    """``close-configuration``."""
    return "<ok/>"


def load_configuration(call: Call) -> str:
    """``load-configuration``: ``compare="rollback" rollback="N"`` (the candidate becomes
    rollback N), or text to merge, replace (its ``replace:`` levels), override the candidate
    with, or ``set`` commands (``action="set"``)."""
    call.stores.check_unlocked("candidate", call.session_id)
    device = call.cli.device
    config = config_of(device)
    attributes = call.element.attrib
    if attributes.get("rollback") is not None or attributes.get("compare") == "rollback":
        number = _rollback_number(attributes.get("rollback", "0"))
        old = config.rolled_back(number)
        if old is None:
            raise _failed(f"rollback {number} does not exist")
        config.candidate = [st.copy() for st in old]
        config.changed = number != 0
        return "<load-configuration-results><ok/></load-configuration-results>"
    action = attributes.get("action", "merge")
    form = attributes.get("format", "xml")
    if action == "set":
        node = call.element.find("{*}configuration-set")
        _load_set(call, node.text if node is not None else "")
    elif form == "text":
        node = call.element.find("{*}configuration-text")
        _load_text(config.candidate, node.text if node is not None else "", action)
    else:
        raise RpcError("operation-not-supported",
                       f"loading {form} configuration is not emulated (use format=\"text\")",
                       type="protocol")
    config.changed = True
    return "<load-configuration-results><ok/></load-configuration-results>"


def _load_set(call: Call, text: str | None) -> None:
    session = CliSession(call.cli.device, mode=Mode.PRIV, user=call.cli.user, peer=call.cli.peer)
    session.execute("configure")
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        reply = session.execute(line)
        if not reply.ok:
            raise RpcError("invalid-value", f"{line}: {_cli_message(reply.output)}",
                           info={"bad-element": line.split()[-1]})


def _load_text(candidate: list[Statement], text: str | None, action: str) -> None:
    try:
        statements = parse(text or "")
    except ValueError as exc:
        raise RpcError("invalid-value", f"syntax error: {exc}") from exc
    for statement in statements:
        top = statement.words[-1] if statement.words[0] in ("replace:", "delete:") else \
            statement.words[0]
        if top not in TOP_LEVEL:
            raise RpcError("invalid-value", f"syntax error: {' '.join(statement.words)}",
                           info={"bad-element": top})
    if action in ("override", "update"):
        candidate[:] = []
    for statement in statements:
        _merge(candidate, statement, [], replacing=action == "replace")


def _merge(candidate: list[Statement], statement: Statement, path: list[str], *,
           replacing: bool) -> None:
    words = list(statement.words)
    tag = words[0] if words and words[0] in ("replace:", "delete:") else None
    if tag is not None:
        words = words[1:]
    here = [*path, *words]
    if tag == "delete:":
        delete_statement(candidate, here)
        return
    if tag == "replace:" and replacing:
        delete_statement(candidate, here)
    if statement.children is None:
        if len(here) > 1:
            set_statement(candidate, here)
        return
    if not statement.children and find(candidate, here) is None and len(here) > 1:
        set_statement(candidate, here)
    for child in statement.children:
        _merge(candidate, child, here, replacing=replacing)


def commit_configuration(call: Call) -> str:
    """``commit-configuration`` (``<check/>``: only check; ``<log>``: a comment)."""
    if _flag(call, "check"):
        return ('<commit-results><routing-engine><name>re0</name><commit-check-success/>'
                '</routing-engine></commit-results>')
    if _flag(call, "confirmed"):
        raise RpcError("operation-not-supported", "commit confirmed is not emulated",
                       type="protocol", info={"bad-element": "confirmed"})
    call.stores.check_unlocked("candidate", call.session_id)
    commit_candidate(call.cli.device, call.cli.user)
    return ('<commit-results><routing-engine><name>re0</name><commit-success/>'
            '</routing-engine></commit-results>')


#: Junos's RPCs, by their element's name.
OPERATIONS: Mapping[str, Callable[[Call], str | StreamedData]] = {
    "get-software-information": _show("show version"),
    "get-interface-information": get_interface_information,
    "get-chassis-inventory": _show("show chassis hardware"),
    "get-lldp-neighbors-information": _show("show lldp neighbors"),
    "get-arp-table-information": get_arp_table_information,
    "get-route-information": get_route_information,
    "get-system-uptime-information": _show("show system uptime"),
    "get-route-engine-information": get_route_engine_information,
    "get-system-memory-information": get_system_memory_information,
    "get-system-storage": get_system_storage,
    "command": command,
    "ping": _reach_rpc("ping"),
    "traceroute": _reach_rpc("traceroute"),
    "get-configuration": get_configuration,
    "lock-configuration": lock_configuration,
    "unlock-configuration": unlock_configuration,
    "open-configuration": open_configuration,
    "close-configuration": close_configuration,
    "load-configuration": load_configuration,
    "commit-configuration": commit_configuration,
}
