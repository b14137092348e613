"""Which lines of an output an output filter's regular expression matches, in time linear in the
output whatever the expression (RE2, google-re2).

Python's ``re`` backtracks: ``(a|a)*b`` or ``(a+)+$`` on a 32-character line takes seconds, and a
filter runs on the event loop that serves every client of every device. RE2 (what Go's
``regexp`` and Rust's ``regex`` follow) guarantees time linear in the text; IOS's own engine does
not backtrack either. It refuses what it cannot run in linear time (backreferences,
lookarounds): :class:`BadExpression`, which a session answers as any invalid input.

The expression is searched over a block of lines at once (``(?m)``, so ``^`` and ``$`` are a
line's ends) with ``never_nl`` (no match crosses a newline), as ``^.*(?:RE).*$``: one match per
matching line, all of them in one ``finditer`` pass. A call per line through google-re2's
wrapper costs ten times Python's ``re``; this costs about what ``re`` did per line (running
configuration ``| include ^interface``: 52 us against 64 us).
"""

from __future__ import annotations

import re2

#: RE2's memory for one compiled expression (its default, 8 MiB: an expression that needs more
#: is refused, not run slowly).
_MAX_MEM = 8 << 20


class BadExpression(ValueError):
    """An expression RE2 refuses (syntax, a backreference, a lookaround, too large)."""


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False  # a client's bad expression is its own mistake, not a log line
    options.never_nl = True
    options.max_mem = _MAX_MEM
    return options


class LinePattern:
    """An output filter's expression, compiled once per command."""

    def __init__(self, expression: str, *, literal: bool = False) -> None:
        self.expression = expression
        pattern = re2.escape(expression) if literal else expression
        try:
            re2.compile(pattern, _options())  # the expression's own errors, if any
            # A whole line with a match in it: one match per matching line, in one pass.
            self._lines = re2.compile(f"(?m)^.*(?:{pattern}).*$".encode(), _options())
        except re2.error as exc:
            raise BadExpression(f"invalid regular expression {expression!r}") from exc

    def hits(self, data: bytes, lines: int) -> list[bool]:
        """For each of the first ``lines`` lines of ``data`` (``\\n``-separated), whether the
        expression matches in it."""
        found = [False] * lines
        line = pos = 0
        for match in self._lines.finditer(data):
            start = match.start()
            line += data.count(b"\n", pos, start)
            if line >= lines:
                break
            found[line] = True
            pos = start
        return found


def split_lines(text: str) -> list[str]:
    """``text``'s lines, each with its newline (the last one without, if ``text`` does not end
    in one): lines are ``\\n``-separated, as the filters search them."""
    parts = text.split("\n")
    last = parts.pop()
    lines = [part + "\n" for part in parts]
    if last:
        lines.append(last)
    return lines
