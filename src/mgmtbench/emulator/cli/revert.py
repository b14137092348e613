"""``configure replace`` and IOS's Rollback Confirmed Change: a configuration change that reverts
by itself unless confirmed — what NAPALM's ios driver runs for ``commit_config(revert_in=N)``,
``confirm_commit()``, ``has_pending_commit()`` and ``rollback()``.

- ``configure terminal revert timer N`` (1-120 minutes) backs the running configuration up to
  the archive and enters configuration mode; ``configure replace FILE ... revert timer N`` (or
  ``time N``) replaces the running configuration and keeps the one it replaced. Either way the
  configuration goes back to the kept one when the timer runs out;
- ``configure confirm`` keeps the change; ``configure revert now`` reverts at once;
  ``configure revert timer N`` sets the timer again to N minutes from now;
- ``show archive config rollback timer`` shows the pending change (or ``%No Rollback Confirmed
  Change pending``): when the timer was set, its type and value, and who set it (NAPALM only
  lets that user confirm it);
- ``configure replace ... revert trigger error``: when the device refuses a line of the
  replacement, the original configuration comes back at once.

The timer runs on the device clock (:class:`~.clock.DeviceClock`, which a test may move on
with ``advance``). The revert happens before the next command the device runs after the
deadline, from any session or transport: every way a client can see the configuration is a
command, so it sees the revert exactly when it could on the device.

Worded as IOS-XE 17 words it, as far as known without a capture at hand: the wording of
``show archive config rollback timer`` (the four lines NAPALM parses) and of the restore
message (``The original configuration has been successfully restored``, which NAPALM looks for)
are from Cisco's documentation and NAPALM's parser; ``configure terminal revert timer`` without
an archive prints the ``configure replace`` refusal (``%Please turn config archive on``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mgmtbench.emulator.cli.configdiff import parse, replace_commands
from mgmtbench.emulator.cli.engine import Action, Question, Reply, Session, _configure_terminal
from mgmtbench.emulator.cli.fileops import (
    _error,
    _shown,
    apply_config,
    archive_settings,
    locate,
    read,
    running_text,
    same_setting,
    save_archive,
)
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.clock import time_text
from mgmtbench.emulator.device.configstore import PendingRevert
from mgmtbench.emulator.device.device import Device

MINUTES = (1, 120)  # what `revert timer` takes
_REPLACE_QUESTION = (
    "This will apply all necessary additions and deletions\n"
    "to replace the current running configuration with the\n"
    "contents of the specified configuration file, which is\n"
    "assumed to be a complete configuration, not a partial\n"
    "configuration. Enter Y if you are sure you want to proceed. ? [no]: ")
_REPLACE_DONE = "Total number of passes: 1\nRollback Done\n"
_RESTORED = "\nThe original configuration has been successfully restored.\n"
_NO_ARCHIVE = "%Please turn config archive on\n"
_NONE_PENDING = "%No Rollback Confirmed Change pending\n"
_REPLACE_KEYWORDS = frozenset({"force", "list", "revert", "trigger", "error", "nolock",
                               "ignorecase"})


def restore(session: Session, text: str) -> list[str]:
    """Make the running configuration of ``session``'s device ``text`` (what ``configure
    replace`` types to get there); the error messages of the lines the device refused."""
    plan = replace_commands(parse(running_text(session.device)), parse(text), same_setting)
    return apply_config(session, plan)


def start(session: Session, minutes: int, backup: str) -> None:
    """Set the revert timer of ``session``'s device, for ``session``'s user: ``backup`` comes
    back in ``minutes`` unless confirmed."""
    def fire() -> None:
        restore(session, backup)

    device = session.device
    device.saved.revert = _pending(device, session.user, minutes, fire)


def _pending(device: Device, user: str, minutes: int, fire: Callable[[], None]) -> PendingRevert:
    clock = device.clock
    return PendingRevert(deadline=clock.elapsed() + minutes * 60, minutes=minutes, user=user,
                         configured=time_text(clock.now(), clock.spec.timezone), fire=fire)


# --- command actions ---------------------------------------------------------------------------


def _configure_revert_timer(session: Session, found: Match[Action]) -> Reply:
    """``configure terminal revert timer N``: back up, set the timer, enter configuration mode."""
    device = session.device
    settings = archive_settings(device)
    if settings is None:
        return Reply(_NO_ARCHIVE, ok=False)
    minutes = int(found.args[-1])
    pending = device.saved.revert
    if pending is not None:  # one change pending at a time: this sets its timer again
        device.saved.revert = _pending(device, pending.user, minutes, pending.fire)
    else:
        backup = running_text(device)
        save_archive(device, settings)
        start(session, minutes, backup)
    return _configure_terminal(session, found)


def _confirm(session: Session, found: Match[Action]) -> Reply:
    if session.device.saved.revert is None:
        return Reply(_NONE_PENDING, ok=False)
    session.device.saved.revert = None
    return Reply()


def _revert_now(session: Session, found: Match[Action]) -> Reply:
    pending = session.device.saved.revert
    if pending is None:
        return Reply(_NONE_PENDING, ok=False)
    session.device.saved.revert = None
    pending.fire()
    return Reply(_REPLACE_DONE)


def _revert_timer(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    pending = device.saved.revert
    if pending is None:
        return Reply(_NONE_PENDING, ok=False)
    device.saved.revert = _pending(device, pending.user, int(found.args[-1]), pending.fire)
    return Reply()


def _rollback_timer(session: Session, found: Match[Action]) -> Reply:
    pending = session.device.saved.revert
    if pending is None:
        return Reply(_NONE_PENDING)
    return Reply(f"Time configured(or reset): {pending.configured}\n"
                 f"Timer type: confirm timer\n"
                 f"Timer value: {pending.minutes} min\n"
                 f"User: {pending.user}\n")


@dataclass
class _Options:
    """``configure replace``'s options after the file: its keywords, the timer's minutes
    (``timer N`` or ``time N``), and the index of the first word it does not take (-1: none;
    ``len(words)``: a number is missing at the end)."""

    keywords: set[str]
    minutes: int | None = None
    bad: int = -1


def _options(words: list[str]) -> _Options:
    found = _Options(set())
    at = 0
    while at < len(words):
        word = words[at].lower()
        if word in ("timer", "time"):
            if at + 1 >= len(words):
                found.bad = len(words)
                return found
            value = words[at + 1]
            if not value.isdigit() or not MINUTES[0] <= int(value) <= MINUTES[1]:
                found.bad = at + 1
                return found
            found.minutes = int(value)
            at += 2
            continue
        if word not in _REPLACE_KEYWORDS:
            found.bad = at
            return found
        found.keywords.add(word)
        at += 1
    return found


def _configure_replace(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    words = found.args[0].split()
    target = words[0]
    parsed = _options(words[1:])
    if parsed.bad >= 0:
        return _refused(session, found, words, parsed.bad + 1)
    options, minutes = parsed.keywords, parsed.minutes
    try:
        text = read(device, locate(device.files, target))
    except OSError as exc:
        return _error("opening", _shown(device.files, target), exc)
    if (minutes is not None or "revert" in options) and archive_settings(device) is None:
        return Reply(_NO_ARCHIVE, ok=False)

    def replace(answer: str) -> Reply:
        if answer.strip().lower() not in ("y", "yes"):
            return Reply()
        before = running_text(device)
        plan = replace_commands(parse(before), parse(text), same_setting)
        errors = apply_config(session, plan)
        listed = ""
        if "list" in options:
            listed = "!Pass 1\n!List of Commands:\n" + "".join(f"{c}\n" for c in plan) + "end\n\n"
        if errors and {"trigger", "error"} <= options:
            restore(session, before)
            return Reply(listed + "".join(errors) + _RESTORED, ok=False)
        if minutes is not None:
            start(session, minutes, before)
        return Reply(listed + "".join(errors) + _REPLACE_DONE)

    if "force" in options or not device.platform.style.file_prompts:
        return replace("y")
    return Reply(ask=Question(_REPLACE_QUESTION, replace))


def _refused(session: Session, found: Match[Action], words: list[str], bad: int) -> Reply:
    """The device's error for ``configure replace`` options it does not take: invalid input
    under word ``bad`` of ``words`` (the file, then the options), incomplete past the end."""
    typed = " ".join((*found.words, *found.args))
    if bad >= len(words):
        return session._error(ParseError(ParseErrorKind.INCOMPLETE), typed)
    at = len(" ".join(found.words))
    for word in words[:bad + 1]:
        at = typed.index(word, at) + len(word)
    return session._error(ParseError(ParseErrorKind.INVALID, at - len(words[bad])), typed)


COMMANDS: dict[str, Action] = {
    "configure replace <line>": _configure_replace,
    "configure terminal revert timer <1-120>": _configure_revert_timer,
    "configure confirm": _confirm,
    "configure revert now": _revert_now,
    "configure revert timer <1-120>": _revert_timer,
    "show archive config rollback timer": _rollback_timer,
}
