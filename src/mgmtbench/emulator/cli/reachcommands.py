"""``ping`` and ``traceroute`` as CLI commands, for any platform: the words after the command
parsed with the platform's option words (:mod:`.reach`), refused at the word at fault as the
platform refuses invalid input, else answered by the device's :class:`~.reach.Probe`."""

from __future__ import annotations

from collections.abc import Callable

from mgmtbench.emulator.cli import reach
from mgmtbench.emulator.cli.engine import Action, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind

__all__ = ["answer", "commands"]

#: How a platform makes its device's probe for a session.
ProbeFor = Callable[[Session], reach.Probe]


def answer(session: Session, typed: str, words: list[str], probe: reach.Probe,
           trace: bool) -> Reply:
    """Run ``ping`` (``traceroute`` when ``trace``) with ``words`` after ``typed`` (the
    command's own words, for the error's position)."""
    wording = probe.wording
    try:
        request = reach.parse(words, wording.trace_options if trace else wording.ping_options)
    except reach.BadWord as bad:
        position = len(" ".join([typed, *words[:bad.index]])) + 1
        line = " ".join([typed, *words])
        kind = ParseErrorKind.INCOMPLETE if bad.index >= len(words) else ParseErrorKind.INVALID
        return session._error(ParseError(kind, min(position, len(line))), line)
    text, ok = probe.traceroute(request) if trace else probe.ping(request)
    return Reply(text, ok=ok)


def commands(probe_for: ProbeFor) -> dict[str, Action]:
    """``ping <line>`` and ``traceroute <line>``, answered by ``probe_for(session)``."""
    def command(trace: bool) -> Action:
        def run(session: Session, found: Match[Action]) -> Reply:
            return answer(session, " ".join(found.words), found.args[0].split(),
                          probe_for(session), trace)
        return run
    return {"ping <line>": command(False), "traceroute <line>": command(True)}
