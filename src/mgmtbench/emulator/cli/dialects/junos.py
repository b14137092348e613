"""Junos: a candidate configuration edited with ``set`` and ``delete``, made active by ``commit``.

The active configuration starts as the platform's ``show configuration`` transcript (the brace
form Junos prints). ``configure`` enters configuration mode (``[edit]`` above the prompt, from
``platform.toml``), where ``set`` and ``delete`` change the candidate that every session of the
device shares (Junos's shared ``configure``), ``show`` prints it, ``commit`` makes it active,
``rollback`` drops the changes and ``run`` runs an operational command; ``show configuration``
prints the active configuration, as the device does, and takes ``| display set`` (the
configuration as ``set`` commands) before the platform's other pipes (``| match X``,
``| no-more`` ...: :mod:`mgmtbench.emulator.cli.filters`), and ``| display xml`` / ``| display
json`` (its XML and JSON forms: :mod:`mgmtbench.emulator.structured.juniper_junos`).
:func:`commit_candidate`, :func:`compare` and :meth:`JunosConfig.rolled_back` serve NETCONF's
Junos RPCs too (:mod:`mgmtbench.emulator.netconf.junos`).

``edit <path>`` moves the session down the hierarchy (``[edit interfaces et-0/0/1]`` above the
prompt): ``set``, ``delete``, ``show`` and ``edit`` are then relative to it; ``up [n]`` goes up
one level (or n), ``top`` to the top, ``exit`` back to where the last ``edit`` started (from
the top: out of configuration mode), as Junos does. ``ping`` and ``traceroute``:
:mod:`.junos_reach`. ``show system uptime`` says when the
configuration was last committed.

Where a ``set`` path creates new statements, the hierarchy is found the way Junos shows it:
``unit 0``, ``family inet``, ``interface ge-0/0/1.0`` and the like are one level each, a
statement of one or two words is a leaf (``description "to R2";``), and a longer one starts with
a named level (``et-0/0/2 ...``).
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mgmtbench.emulator.cli import filters
from mgmtbench.emulator.cli.dialects import junos_reach
from mgmtbench.emulator.cli.engine import Action, Dialect, Question, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.clock import junos_time_text, uptime_text
from mgmtbench.emulator.device.derived import VIEWS, ViewInput, select
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.device.ifconfig import IfConfig
from mgmtbench.emulator.device.transcripts import CommandWords
from mgmtbench.emulator.structured import juniper_junos

INDENT = "    "
# Statements whose keyword and its value make one level of the hierarchy.
_TWO_WORD_LEVELS = frozenset({
    "unit", "family", "interface", "area", "community", "user", "host", "file", "group",
    "neighbor", "term", "filter", "policy-statement", "prefix-list", "routing-instances",
    "instance", "vlan", "zone", "security-zone", "rule", "rule-set", "trap-group", "class",
})
# Statements printed on one line however many words they have.
_ONE_LINE = frozenset({"route"})
# Statements that may appear more than once at a level (others: a new value replaces the old).
_REPEATED = frozenset({"address", "server", "route", "interface", "member", "host", "name-server",
                       "community", "domain-search", "authentication-key"})
# The top of the hierarchy (what ``set`` takes as its first word).
TOP_LEVEL = frozenset({
    "access", "accounting-options", "applications", "apply-groups", "bridge-domains", "chassis",
    "class-of-service", "event-options", "firewall", "forwarding-options", "groups",
    "interfaces", "logical-systems", "multi-chassis", "policy-options", "protocols",
    "routing-instances", "routing-options", "security", "services", "snmp", "switch-options",
    "system", "version", "vlans",
})


@dataclass(eq=False)
class Statement:
    """One statement: a level with statements under it (``children``) or a leaf (None)."""

    words: list[str]
    children: list[Statement] | None = None
    comment: str = ""  # `## SECRET-DATA` after a leaf

    def copy(self) -> Statement:
        """A deep copy."""
        kids = None if self.children is None else [c.copy() for c in self.children]
        return Statement(list(self.words), kids, self.comment)


def words_of(text: str) -> list[str]:
    """The words of a statement, quoted strings as one word (ValueError: unbalanced quotes)."""
    return shlex.split(text, posix=True)


def _show_word(word: str) -> str:
    return f'"{word}"' if (not word or any(c in word for c in ' \t;{}#"$!*')) else word


def parse(text: str) -> list[Statement]:
    """The statements of a configuration in brace form (``## ...`` header lines skipped)."""
    root: list[Statement] = []
    stack = [root]
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("##"):
            continue
        if line == "}":
            if len(stack) > 1:
                stack.pop()
            continue
        if line.endswith("{"):
            children: list[Statement] = []
            stack[-1].append(Statement(words_of(line[:-1]), children))
            stack.append(children)
            continue
        body, _, comment = line.partition(" ## ")
        stack[-1].append(Statement(words_of(body.rstrip(";")), None,
                                   f" ## {comment}" if comment else ""))
    return root


def render(statements: list[Statement], depth: int = 0) -> list[str]:
    """The brace form of ``statements`` at ``depth`` levels of indentation."""
    out: list[str] = []
    pad = INDENT * depth
    for st in statements:
        text = " ".join(_show_word(w) for w in st.words)
        if st.children is None:
            out.append(f"{pad}{text};{st.comment}")
        elif not st.children:
            out.append(f"{pad}{text};")
        else:
            out.append(f"{pad}{text} {{")
            out += render(st.children, depth + 1)
            out.append(f"{pad}}}")
    return out


def render_set(statements: list[Statement], path: list[str]) -> list[str]:
    """``| display set``: one ``set`` command per statement under ``path``."""
    out: list[str] = []
    for st in statements:
        here = [*path, *st.words]
        if st.children:
            out += render_set(st.children, here)
        else:
            out.append("set " + " ".join(_show_word(w) for w in here))
    return out


def levels(path: list[str]) -> list[list[str]]:
    """``path`` cut into the levels of the hierarchy (``unit 0`` is one), as ``up`` climbs them."""
    out: list[list[str]] = []
    rest = list(path)
    while rest:
        width = 2 if out and rest[0] in _TWO_WORD_LEVELS and len(rest) > 1 else 1
        out.append(rest[:width])
        rest = rest[width:]
    return out


def _level(statements: list[Statement], rest: list[str]) -> Statement | None:
    """The level under ``statements`` that ``rest`` starts with (the longest such)."""
    best: Statement | None = None
    for st in statements:
        n = len(st.words)
        if st.children is not None and rest[:n] == st.words and (best is None
                                                                 or n > len(best.words)):
            best = st
    return best


def set_statement(root: list[Statement], path: list[str]) -> None:
    """Add ``path`` (a ``set`` command's words) to the hierarchy ``root``."""
    here, rest = root, path
    while rest:
        level = _level(here, rest)
        if level is not None and level.children is not None:
            here, rest = level.children, rest[len(level.words):]
            continue
        if any(st.words == rest for st in here):
            return
        width = _level_width(rest)
        if width is None:
            at = next((i for i, st in enumerate(here) if st.children is None
                       and st.words[0] == rest[0] and rest[0] not in _REPEATED), None)
            if at is not None:  # a new value of a one-value statement takes the old one's place
                here[at] = Statement(list(rest))
                return
            # A new statement goes before the levels, as Junos shows `description` before `unit`.
            at = next((i for i, st in enumerate(here) if st.children is not None), len(here))
            here.insert(at, Statement(list(rest)))
            return
        children: list[Statement] = []
        here.append(Statement(rest[:width], children))
        here, rest = children, rest[width:]


def _level_width(rest: list[str]) -> int | None:
    """How many of ``rest``'s words make a new level (None: they are one leaf statement)."""
    if rest[0] in _ONE_LINE or len(rest) <= 2:
        return None
    return 2 if rest[0] in _TWO_WORD_LEVELS else 1


def delete_statement(root: list[Statement], path: list[str]) -> bool:
    """Remove what ``path`` names (a level or a statement); False if there is none."""
    here, rest = root, path
    while rest:
        for index, st in enumerate(here):
            n = len(st.words)
            if st.words == rest or (st.children is None and st.words[:len(rest)] == rest):
                del here[index]
                return True
            if st.children is not None and rest[:n] == st.words and len(rest) > n:
                here, rest = st.children, rest[n:]
                break
        else:
            return False
    return False


def compare(old: list[Statement], new: list[Statement], path: tuple[str, ...] = ()) -> list[str]:
    """The lines of ``show | compare``: what ``new`` removes (``-``) from ``old`` and adds
    (``+``), under an ``[edit ...]`` line for each level where something changed."""
    out: list[str] = []

    def key(st: Statement) -> tuple[tuple[str, ...], bool]:
        return tuple(st.words), st.children is None

    old_keys = {key(st): st for st in old}
    new_keys = {key(st): st for st in new}
    changes = [f"-{line[1:]}" for st in old if key(st) not in new_keys
               for line in render([st], 1)]
    changes += [f"+{line[1:]}" for st in new if key(st) not in old_keys
                for line in render([st], 1)]
    if changes:
        where = " ".join(_show_word(w) for w in path)
        out.append(f"[edit{' ' + where if where else ''}]")
        out += changes
    for st in new:
        before = old_keys.get(key(st))
        if st.children is not None and before is not None and before.children is not None:
            out += compare(before.children, st.children, (*path, *st.words))
    return out


def find(root: list[Statement], path: list[str]) -> list[Statement] | None:
    """The statements under the level ``path`` names (None: no such level)."""
    here, rest = root, path
    while rest:
        level = _level(here, rest)
        if level is None or level.children is None:
            return None
        here, rest = level.children, rest[len(level.words):]
    return here


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


_COMMITTED = re.compile(r"^## Last commit: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \S+ by (\S+)")


@dataclass(eq=False)
class JunosConfig:
    """A device's active configuration and the candidate its sessions edit."""

    active: list[Statement]
    candidate: list[Statement]
    committed: str = "## Last commit: 2026-11-20 09:12:44 UTC by admin"
    changed: bool = False
    #: Commits so far (what the active configuration's readers cache by).
    version: int = 0
    #: The configurations active before, newest first (``rollback 1`` is the first), at most
    #: 49 of them.
    history: list[list[Statement]] = field(default_factory=list)

    @classmethod
    def from_text(cls, text: str) -> JunosConfig:
        """The configuration in ``text`` (brace form), active and candidate alike."""
        header = next((line for line in text.splitlines() if line.startswith("## Last commit")),
                      "## Last commit: 2026-11-20 09:12:44 UTC by admin")
        active = parse(text)
        return cls(active, [st.copy() for st in active], header)

    def show_active(self, path: list[str]) -> str | None:
        """``show configuration [path]`` (None: nothing at ``path``)."""
        if not path:
            return "\n".join([self.committed, *render(self.active)]) + "\n"
        found = find(self.active, path)
        return None if found is None else "".join(f"{line}\n" for line in render(found))

    def show_candidate(self, path: list[str]) -> str | None:
        """Configuration mode's ``show [path]``."""
        found = self.candidate if not path else find(self.candidate, path)
        if found is None:
            return None
        header = [self.committed.replace("Last commit", "Last changed")] if not path else []
        return "".join(f"{line}\n" for line in [*header, *render(found)])

    def commit(self, user: str, moment: datetime) -> None:
        """Make the candidate active (at ``moment``, by the device's clock)."""
        self.history = [self.active, *self.history][:49]
        self.active = [st.copy() for st in self.candidate]
        self.committed = f"## Last commit: {_stamp(moment)} by {user or 'root'}"
        self.changed = False
        self.version += 1

    def last_commit(self) -> tuple[datetime, str] | None:
        """When the active configuration was committed, and by whom."""
        found = _COMMITTED.match(self.committed)
        if found is None:
            return None
        return (datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC),
                found.group(2))

    def rollback(self) -> None:
        """Drop the candidate's changes."""
        self.candidate = [st.copy() for st in self.active]
        self.changed = False

    def rolled_back(self, number: int) -> list[Statement] | None:
        """The configuration ``rollback NUMBER`` loads (0: the active one; None: none so
        old)."""
        if number == 0:
            return self.active
        return self.history[number - 1] if number <= len(self.history) else None

    def active_hostname(self) -> str | None:
        """``system host-name`` of the active configuration."""
        system = find(self.active, ["system"]) or []
        return next((st.words[1] for st in system
                     if st.children is None and len(st.words) == 2 and st.words[0] == "host-name"),
                    None)


_CONFIGS: weakref.WeakKeyDictionary[Device, JunosConfig] = weakref.WeakKeyDictionary()


def config_of(device: Device) -> JunosConfig:
    """The device's configuration (made from its ``show configuration`` transcript)."""
    found = _CONFIGS.get(device)
    if found is None:
        found = JunosConfig.from_text(device.transcript(("show", "configuration")))
        _CONFIGS[device] = found
    return found


# --- interface outputs that follow the active configuration and the clock -----------------------

#: The view (:data:`mgmtbench.emulator.device.derived.VIEWS`) each command's transcript is
#: made into.
INTERFACE_VIEWS: dict[CommandWords, str] = {
    ("show", "interfaces"): "junos_interfaces",
    ("show", "interfaces", "terse"): "junos_terse",
}


def interface_configs(statements: list[Statement]) -> dict[str, IfConfig]:
    """The interfaces of a configuration (``interfaces { ... }`` of ``statements``) as the show
    commands tell them: each physical interface by its name (description, ``disable``, MTU),
    each unit as ``name.N`` (description, ``disable``, its first ``family inet`` address)."""
    found: dict[str, IfConfig] = {}
    for entry in find(statements, ["interfaces"]) or []:
        if entry.children is None or len(entry.words) != 1:
            continue
        name = entry.words[0]
        found[name] = _if_config(name, entry.children)
        for unit in entry.children:
            if unit.children is not None and unit.words[:1] == ["unit"] and len(unit.words) == 2:
                found[f"{name}.{unit.words[1]}"] = _if_config(f"{name}.{unit.words[1]}",
                                                              unit.children)
    return found


def _if_config(name: str, body: list[Statement]) -> IfConfig:
    leaves = {st.words[0]: st.words[1:] for st in body if st.children is None and st.words}
    mtu = (leaves.get("mtu") or [""])[0]
    description = leaves.get("description")
    address = None
    for st in find(body, ["family", "inet"]) or []:
        if st.words[:1] == ["address"] and len(st.words) >= 2 and address is None:
            try:
                parsed = ipaddress.IPv4Interface(st.words[1])
            except ValueError:
                continue
            address = (str(parsed.ip), str(parsed.netmask))
    return IfConfig(name, description=" ".join(description) if description is not None else None,
                    address=address, shutdown="disable" in leaves,
                    mtu=int(mtu) if mtu.isdigit() else None)


@dataclass(eq=False)
class _Views:
    """A device's interface views: the default configuration's interfaces, and each view as
    last made (commit count, second, text)."""

    base: dict[str, IfConfig]
    made: dict[CommandWords, tuple[int, int, str]] = field(default_factory=dict)


_VIEWS: weakref.WeakKeyDictionary[Device, _Views] = weakref.WeakKeyDictionary()


def interface_view(device: Device, words: CommandWords) -> str:
    """The output of ``words`` (one of :data:`INTERFACE_VIEWS`) as of now: the transcript as the
    active configuration and the device's clock make it, once per commit and second."""
    views = _VIEWS.get(device)
    if views is None:
        views = _VIEWS[device] = _Views(interface_configs(
            parse(device.transcript(("show", "configuration")))))
    config = config_of(device)
    second = int(device.clock.elapsed())
    made = views.made.get(words)
    if made is not None and made[:2] == (config.version, second):
        return made[2]
    text = VIEWS[INTERFACE_VIEWS[words]](ViewInput(
        device.transcript(words), views.base, interface_configs(config.active), {}, second))
    views.made[words] = (config.version, second, text)
    return text


def _show_interfaces(session: Session, found: Match[Action]) -> Reply:
    return Reply(interface_view(session.device, found.words))


def _show_interface(session: Session, found: Match[Action]) -> Reply:
    """``show interfaces et-0/0/0``: that interface's block."""
    name = found.args[0]
    text = select(interface_view(session.device, ("show", "interfaces")), name,
                  INTERFACE_VIEWS[("show", "interfaces")])
    return Reply(text) if text is not None else \
        Reply(f"error: device {name} not found\n", ok=False)


def _syntax_error(session: Session, line: str, position: int, message: str) -> Reply:
    caret = " " * (len(session.prompt.rsplit("\n", 1)[-1]) + position) + "^"
    return Reply(f"{caret}\n{message}\n", ok=False)


def _path(found: Match[Action]) -> list[str]:
    return words_of(found.args[0]) if found.args else []


# --- operational mode ---------------------------------------------------------------------------


def _show_configuration(session: Session, found: Match[Action]) -> Reply:
    config = config_of(session.device)
    return _shown(session, found, [], config.show_active, lambda: config.active)


def _shown(session: Session, found: Match[Action], base: list[str],
           show: Callable[[list[str]], str | None],
           statements: Callable[[], list[Statement]]) -> Reply:
    """``show`` (the active or the candidate configuration) at ``base`` and the command's path,
    through ``| display set`` and the platform's pipes if the line has them."""
    line = found.args[0] if found.args else ""
    head, pipes = _split_pipes(line)
    try:
        path = [*base, *words_of(head)]
    except ValueError:
        return Reply("error: syntax error\n", ok=False)
    as_set = bool(pipes) and _is_display_set(pipes[0])
    form = _display_form(pipes[0]) if pipes else None
    if form is not None:  # `| display xml`, `| display json`
        pipes = pipes[1:]
        found_level = statements() if not path else find(statements(), path)
        config = config_of(session.device)
        header = (config.committed if show == config.show_active else
                  config.committed.replace("Last commit", "Last changed"))
        render = (juniper_junos.configuration_xml if form == "xml" else
                  juniper_junos.configuration_json)
        shown_level = found_level or []
        for level in reversed(levels(path)):  # the levels above it, as Junos's XML has them
            shown_level = [Statement(level, shown_level)]
        text = render(session.device, shown_level, header)
    elif as_set:
        pipes = pipes[1:]
        found_level = statements() if not path else find(statements(), path)
        text = ("".join(f"{line}\n" for line in render_set(found_level, path))
                if found_level is not None else "")
    else:
        shown = show(path)
        text = shown if shown is not None else ""
    if not pipes:
        return Reply(text)
    tree = session.trees().priv.pipe
    typed = " ".join((*found.words, line))
    if tree is None:
        return session._error(ParseError(ParseErrorKind.INVALID, typed.index("|")), typed)
    rest = " | ".join(pipes)
    try:
        line_filter = filters.make_filter(tree.match(rest))
    except ParseError as exc:
        at = len(typed) - len(rest)
        return session._error(ParseError(exc.kind, exc.position + at, exc.words), typed)
    return Reply(filters.filter_text(line_filter, text), paged=line_filter.paged)


def _split_pipes(line: str) -> tuple[str, list[str]]:
    """``path | pipe | pipe`` cut at the ``|`` outside quotes."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in line:
        if char == '"':
            quoted = not quoted
        if char == "|" and not quoted:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    parts.append("".join(current).strip())
    return parts[0], parts[1:]


def _display_form(pipe: str) -> str | None:
    """``xml`` or ``json`` for ``display xml`` / ``display json`` (abbreviated or not)."""
    words = pipe.split()
    if len(words) != 2 or not ("display".startswith(words[0]) and len(words[0]) >= 2):
        return None
    return next((form for form in ("xml", "json") if form.startswith(words[1])
                 and len(words[1]) >= 1), None)


def _is_display_set(pipe: str) -> bool:
    words = pipe.split()
    return (len(words) == 2 and "display".startswith(words[0]) and len(words[0]) >= 2
            and "set".startswith(words[1]))


def _show_system_uptime(session: Session, found: Match[Action]) -> Reply:
    """The transcript, its ``Last configured`` line from the active configuration's commit."""
    device = session.device
    text = device.transcript(found.words)
    last = config_of(device).last_commit()
    if last is None:
        return Reply(text)
    moment, user = last
    ago = uptime_text(max(0, int((device.clock.now() - moment).total_seconds())), "junos")
    line = (f"Last configured: {junos_time_text(moment, device.clock.spec.timezone)} "
            f"({ago} ago) by {user}")
    return Reply(re.sub(r"(?m)^Last configured: .*$", line, text, count=1))


# --- configuration mode -------------------------------------------------------------------------


def edit_path(session: Session) -> list[str]:
    """Where ``edit`` has taken the session (``[]``: the top, ``[edit]``)."""
    prompt = session.block_prompt
    return words_of(prompt)[1:] if prompt else []


def _go(session: Session, path: list[str]) -> None:
    session.block_prompt = ("edit " + " ".join(_show_word(w) for w in path)) if path else None


# Per session: where each ``edit`` started, for ``exit``.
_EDITS: weakref.WeakKeyDictionary[Session, list[list[str]]] = weakref.WeakKeyDictionary()


def _set(session: Session, found: Match[Action]) -> Reply:
    line = found.args[0]
    try:
        here, path = edit_path(session), words_of(line)
    except ValueError:
        return Reply("error: unmatched quote\n", ok=False)
    full = [*here, *path]
    if not here and path[0] not in TOP_LEVEL:
        return _syntax_error(session, "set " + line, len("set "), "syntax error.")
    if len(full) == 1:
        return _syntax_error(session, "set " + line, len("set " + line) + 1, "syntax error.")
    config = config_of(session.device)
    set_statement(config.candidate, full)
    config.changed = True
    return Reply()


def _edit(session: Session, found: Match[Action]) -> Reply:
    line = found.args[0]
    try:
        here, path = edit_path(session), words_of(line)
    except ValueError:
        return Reply("error: unmatched quote\n", ok=False)
    if not here and path[0] not in TOP_LEVEL:
        return _syntax_error(session, "edit " + line, len("edit "), "syntax error.")
    _EDITS.setdefault(session, []).append(here)
    _go(session, [*here, *path])
    return Reply()


def _up(session: Session, found: Match[Action]) -> Reply:
    steps = int(found.args[0]) if found.args else 1
    here = levels(edit_path(session))
    _go(session, [w for level in here[:max(0, len(here) - steps)] for w in level])
    return Reply()


def _top(session: Session, found: Match[Action]) -> Reply:
    _EDITS.pop(session, None)
    _go(session, [])
    return Reply()


def _delete(session: Session, found: Match[Action]) -> Reply:
    try:
        path = [*edit_path(session), *words_of(found.args[0])]
    except ValueError:
        return Reply("error: unmatched quote\n", ok=False)
    config = config_of(session.device)
    if not delete_statement(config.candidate, path):
        return Reply("warning: statement not found\n")
    config.changed = True
    return Reply()


def commit_candidate(device: Device, user: str) -> None:
    """Make the device's candidate active (``commit``, and NETCONF's ``commit-configuration``):
    a new ``system host-name`` renames the device."""
    config = config_of(device)
    config.commit(user, device.clock.now())
    name = config.active_hostname()
    if name and name != device.hostname:
        device.set_hostname(name)


def _commit(session: Session, found: Match[Action]) -> Reply:
    commit_candidate(session.device, session.user)
    return Reply("commit complete\n")


def _commit_check(session: Session, found: Match[Action]) -> Reply:
    return Reply("configuration check succeeds\n")


def _commit_and_quit(session: Session, found: Match[Action]) -> Reply:
    reply = _commit(session, found)
    _EDITS.pop(session, None)
    session.end_config()
    return Reply(reply.output + session.device.platform.style.config_exit_banner)


def _rollback(session: Session, found: Match[Action]) -> Reply:
    config_of(session.device).rollback()
    return Reply("load complete\n")


def _show_candidate(session: Session, found: Match[Action]) -> Reply:
    config = config_of(session.device)
    return _shown(session, found, edit_path(session), config.show_candidate,
                  lambda: config.candidate)


def _run(session: Session, found: Match[Action]) -> Reply:
    return session.run(session.trees().priv, found.args[0])


def _exit(session: Session, found: Match[Action]) -> Reply:
    """``exit``: back to where the last ``edit`` started; at the top, out of configuration
    mode (as ``exit configuration-mode`` and ``quit``)."""
    if not edit_path(session):
        return _leave(session, found)
    started = _EDITS.get(session)
    _go(session, started.pop() if started else [])
    return Reply()


def _leave(session: Session, found: Match[Action]) -> Reply:
    """``exit configuration-mode`` (and ``exit``, ``quit`` at the top level): with changes not
    committed, Junos asks first (the candidate stays, shared, for the next ``configure``)."""
    _EDITS.pop(session, None)
    banner = session.device.platform.style.config_exit_banner

    def answer(line: str) -> Reply:
        if line.strip().lower() not in ("", "y", "yes"):
            return Reply()
        session.end_config()
        return Reply(banner)

    if not config_of(session.device).changed:
        return answer("yes")
    return Reply("The configuration has been changed but not committed\n",
                 ask=Question("Exit with uncommitted changes? [yes,no] (yes) ", answer))


DIALECT = Dialect(
    exec={
        "show configuration": _show_configuration,
        "show configuration <line>": _show_configuration,
        "show system uptime": _show_system_uptime,
        "show interfaces": _show_interfaces,
        "show interfaces terse": _show_interfaces,
        "show interfaces <word>": _show_interface,
        **junos_reach.EXEC,
    },
    config={
        "set <line>": _set,
        "delete <line>": _delete,
        "commit": _commit,
        "commit check": _commit_check,
        "commit and-quit": _commit_and_quit,
        "commit comment <word>": _commit,
        "rollback": _rollback,
        "rollback <0-49>": _rollback,
        "show": _show_candidate,
        "show <line>": _show_candidate,
        "run <line>": _run,
        "edit <line>": _edit,
        "up": _up,
        "up <1-64>": _up,
        "top": _top,
        "exit": _exit,
        "exit configuration-mode": _leave,
        "quit": _exit,
    },
    free_config=False,
)
