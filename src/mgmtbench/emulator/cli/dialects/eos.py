"""EOS's own commands: configuration sessions, and the show commands of :mod:`.eos_show` and
:mod:`.eos_routing`.

Configuration sessions are a named copy of the running configuration, changed line by line,
compared, then committed or aborted — what NAPALM's eos driver and Ansible's arista.eos build
their configuration workflow on.

- ``configure session NAME`` opens (or re-enters) the session and enters configuration mode
  (``host(config-s-NAME)#``): configuration lines change the session's copy, not the running
  configuration; ``end`` leaves it pending;
- in it, ``rollback clean-config`` empties the copy (a replace starts there), ``commit`` makes
  it the running configuration and ``abort`` drops it, both leaving configuration mode;
- ``configure session NAME commit`` / ``abort`` do the same from exec mode;
- ``show session-config named NAME diffs`` (``show session-config diffs`` inside the session)
  prints a unified diff from the running configuration to the session's;
  ``show session-config named NAME`` prints the session's configuration;
- ``show configuration sessions [detail]``: the pending sessions (its JSON is
  :mod:`mgmtbench.emulator.structured.arista_eos`').

Sessions belong to the device, so a session opened by one eAPI request is there for the next,
as on EOS. A commit types the difference into the running configuration as ``configure
replace`` does (:func:`mgmtbench.emulator.cli.configdiff.replace_commands`).

Worded from EOS 4.2x's documentation and NAPALM's use of it, without a capture at hand: the
diff's two header lines (NAPALM drops them), the session table and the error lines.
"""

from __future__ import annotations

import difflib
import weakref
from dataclasses import dataclass

from mgmtbench.emulator.cli.configdiff import parse, replace_commands
from mgmtbench.emulator.cli.configgrammar import GLOBAL, config_grammar
from mgmtbench.emulator.cli.dialects import eos_routing, eos_show
from mgmtbench.emulator.cli.engine import Action, Dialect, Mode, Reply, Session
from mgmtbench.emulator.cli.fileops import (
    apply_config,
    config_commands,
    running_text,
    same_setting,
)
from mgmtbench.emulator.cli.grammar import Match
from mgmtbench.emulator.device.config import RunningConfig
from mgmtbench.emulator.device.device import Device

#: EOS keeps this many sessions open at once.
MAX_OPEN = 5


@dataclass
class ConfigSession:
    """One named configuration session: its configuration and who opened it."""

    name: str
    config: RunningConfig
    user: str
    #: Whether it started empty (``rollback clean-config``: a replace).
    clean: bool = False


_SESSIONS: weakref.WeakKeyDictionary[Device, dict[str, ConfigSession]] = \
    weakref.WeakKeyDictionary()


def sessions(device: Device) -> dict[str, ConfigSession]:
    """The pending configuration sessions of ``device``, by name, oldest first."""
    return _SESSIONS.setdefault(device, {})


def _open(session: Session, name: str) -> ConfigSession | Reply:
    pending = sessions(session.device)
    if name not in pending:
        if len(pending) >= MAX_OPEN:
            return Reply(f"% Maximum number of pending sessions ({MAX_OPEN}) reached\n",
                         ok=False)
        indent = session.device.platform.style.config_indent
        pending[name] = ConfigSession(name, RunningConfig(running_text(session.device), indent),
                                      session.user)
    return pending[name]


def _enter(session: Session, found: Match[Action]) -> Reply:
    """``configure session NAME``."""
    opened = _open(session, found.args[0])
    if isinstance(opened, Reply):
        return opened
    session.end_config()
    session.mode = Mode.CONFIG
    session.candidate, session.candidate_mode = opened.config, f"config-s-{opened.name}"
    return Reply()


def _named(session: Session, name: str) -> ConfigSession | Reply:
    found = sessions(session.device).get(name)
    if found is None:
        return Reply(f"% Session {name} does not exist\n", ok=False)
    return found


def _current(session: Session) -> ConfigSession | Reply:
    for pending in sessions(session.device).values():
        if pending.config is session.candidate:
            return pending
    return Reply("% Not in a configuration session\n", ok=False)


def _base(session: Session, pending: ConfigSession) -> str:
    """What the session's configuration is compared with: the running configuration, or for a
    session that started empty, the running configuration typed into an empty one the same
    way (lines in the order typed, and only what the platform's grammar keeps: ``no`` lines
    that remove nothing are not kept), so that a replace by the same configuration changes
    nothing and a changed line is all that differs."""
    text = running_text(session.device)
    if not pending.clean:
        return text
    typed = RunningConfig("", session.device.platform.style.config_indent)
    delimited = config_grammar(session.device.platform).modes[GLOBAL].delimited
    apply_config(session, config_commands(text, delimited), typed)
    return typed.render()


def _commit(session: Session, pending: ConfigSession) -> Reply:
    sessions(session.device).pop(pending.name, None)
    if session.candidate is pending.config:
        session.end_config()
    plan = replace_commands(parse(_base(session, pending)), parse(pending.config.render()),
                            same_setting)
    errors = apply_config(session, plan)
    return Reply("".join(errors), ok=not errors)


def _abort(session: Session, pending: ConfigSession) -> Reply:
    sessions(session.device).pop(pending.name, None)
    if session.candidate is pending.config:
        session.end_config()
    return Reply()


def _exec_commit(session: Session, found: Match[Action]) -> Reply:
    """``configure session NAME commit``."""
    pending = _named(session, found.args[0])
    return pending if isinstance(pending, Reply) else _commit(session, pending)


def _exec_abort(session: Session, found: Match[Action]) -> Reply:
    """``configure session NAME abort``."""
    pending = _named(session, found.args[0])
    return pending if isinstance(pending, Reply) else _abort(session, pending)


def _config_commit(session: Session, found: Match[Action]) -> Reply:
    """``commit`` inside a session."""
    pending = _current(session)
    return pending if isinstance(pending, Reply) else _commit(session, pending)


def _config_abort(session: Session, found: Match[Action]) -> Reply:
    """``abort`` inside a session."""
    pending = _current(session)
    return pending if isinstance(pending, Reply) else _abort(session, pending)


def _clean_config(session: Session, found: Match[Action]) -> Reply:
    """``rollback clean-config`` inside a session: its configuration starts empty."""
    pending = _current(session)
    if isinstance(pending, Reply):
        return pending
    pending.config = RunningConfig("", session.device.platform.style.config_indent)
    pending.clean = True
    session.candidate = pending.config
    session.block, session.block_prompt, session.config_mode = None, None, None
    session.config_outer = []
    return Reply()


def diff(session: Session, pending: ConfigSession) -> str:
    """The unified diff from the running configuration to the session's."""
    lines = difflib.unified_diff(
        _base(session, pending).splitlines(), pending.config.render().splitlines(),
        "system:/running-config", f"session:/{pending.name}-session-config", lineterm="")
    return "".join(f"{line}\n" for line in lines)


def _diffs_named(session: Session, found: Match[Action]) -> Reply:
    pending = _named(session, found.args[0])
    return pending if isinstance(pending, Reply) else Reply(diff(session, pending))


def _diffs_here(session: Session, found: Match[Action]) -> Reply:
    pending = _current(session)
    return pending if isinstance(pending, Reply) else Reply(diff(session, pending))


def _show_named(session: Session, found: Match[Action]) -> Reply:
    pending = _named(session, found.args[0])
    return pending if isinstance(pending, Reply) else Reply(pending.config.render())


def _show_sessions(session: Session, found: Match[Action]) -> Reply:
    """``show configuration sessions [detail]``: the limits, then a row per pending session
    (``*`` marks the one this session is in)."""
    rows = [f"Maximum number of completed sessions: 1\n"
            f"Maximum number of pending sessions: {MAX_OPEN}\n\n",
            "  Name                 State         User        Terminal\n",
            "  -------------------- ------------- ----------- --------\n"]
    for pending in sessions(session.device).values():
        mark = "*" if pending.config is session.candidate else " "
        rows.append(f"{mark} {pending.name:<20} {'pending':<13} {pending.user:<11}\n")
    return Reply("".join(rows))


#: Privileged exec: opening, committing, aborting and showing sessions.
PRIVILEGED: dict[str, Action] = {
    "configure session <word>": _enter,
    "configure session <word> commit": _exec_commit,
    "configure session <word> abort": _exec_abort,
    "show session-config named <word> diffs": _diffs_named,
    "show session-config named <word>": _show_named,
    "show session-config diffs": _diffs_here,
    "show configuration sessions": _show_sessions,
    "show configuration sessions detail": _show_sessions,
}
#: Configuration mode, inside a session.
CONFIG: dict[str, Action] = {
    "commit": _config_commit,
    "abort": _config_abort,
    "rollback clean-config": _clean_config,
}
DIALECT = Dialect(exec={**eos_show.EXEC, **eos_routing.EXEC}, config=CONFIG,
                  privileged=PRIVILEGED)
