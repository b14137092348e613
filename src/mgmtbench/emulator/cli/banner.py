"""Typing a banner at the CLI: ``banner motd ^C`` (and ``banner login``, ``banner exec``) in
configuration mode, then the lines that follow, each taken as text until the closing delimiter
(no prompt, no command: ``end`` is a line of text).

How the text is delimited, kept and shown is the configuration's
(:mod:`mgmtbench.emulator.device.banner`); this module is the session's side of it: what IOS
prints when the text goes on past the first line, and the text being typed
(:attr:`~mgmtbench.emulator.cli.session.CliSession.pending_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mgmtbench.emulator.device.banner import SHOWN, closed, delimiter, stored


def prompt(mark: str) -> str:
    """What IOS prints when the text goes on past the first line."""
    return f"Enter TEXT message.  End with the character '{mark}'.\n"


@dataclass
class PendingText:
    """Text being typed after ``head`` (``banner motd``) until ``mark`` comes again."""

    head: str
    mark: str
    lines: list[str] = field(default_factory=list)
    #: Characters taken so far, line ends included.
    size: int = 0

    def add(self, line: str) -> str | None:
        """Take one more typed line; the stored configuration line once the delimiter closes
        the text, else None."""
        end = line.find(self.mark)
        self.size += len(line) + 1
        if end < 0:
            self.lines.append(line)
            return None
        self.lines.append(line[:end])
        return stored(self.head, "\n".join(self.lines))


def start(head: str, text: str) -> str | PendingText:
    """``head`` typed with ``text``: the stored line when ``text`` closes itself, else what
    collects the next lines."""
    body = closed(text)
    if body is not None:
        return stored(head, body)
    mark = delimiter(text) or SHOWN
    first = text[len(mark):]
    return PendingText(head, mark, [first], len(head) + len(first) + 2)

