"""Output filters: what follows ``|`` after a show command (``show running-config | include ntp``).

Each platform names the filters it has in ``platform.toml`` (``filters``); their behaviour is the
same everywhere, and what IOS and ASA do:

- ``include RE`` / ``exclude RE``: the lines that match (do not match) the regular expression;
- ``begin RE``: everything from the first line that matches;
- ``section RE``: the sections (a line without leading space and the indented lines under it)
  with a line that matches;
- ``count RE``: ``Number of lines which match regexp = N`` (IOS);
- ``grep [-v] RE``: ``include`` (``-v``: ``exclude``), as on an ASA.

The regular expression is the rest of the line, spaces included, as on IOS (Python's ``re``: the
IOS subset, ``^ $ . * + ? [] () |``, means the same). Filters work a line at a time, so the long
outputs that are made while they are sent (``show bulk-output``) stay streamed.

Junos's pipes are listed as ``junos:<name>``: ``match RE``, ``except RE``, ``find RE`` (from the
first line that matches), ``count`` (``Count: N lines``), ``last N``, ``trim N`` (the first N
characters of each line cut) and ``no-more`` (the output is not paged). Their expression is one
word (quoted if it has spaces) and they chain: ``show route | match 198.19 | count``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator

from mgmtbench.emulator.cli.grammar import CommandTree, Match
from mgmtbench.emulator.device import banner

#: What ``?`` says of each filter (IOS's wording).
DESCRIPTIONS = {
    "begin": "Begin with the line that matches",
    "count": "Count number of lines which match regexp",
    "exclude": "Exclude lines that match",
    "grep": "Include/exclude lines that match",
    "include": "Include lines that match",
    "section": "Filter a section of output",
    # Junos
    "match": "Show only text that matches a pattern",
    "except": "Show only text that does not match a pattern",
    "find": "Search for first occurrence of pattern",
    "last": "Display end of output only",
    "trim": "Trim specified number of columns from start of line",
    "no-more": "Don't paginate output",
}
_CHUNK = 1 << 16


class LineFilter:
    """A filter's state over one output: :meth:`feed` each line (with its newline), then
    :meth:`end`; both return the text to print."""

    #: False: the output is not paged (Junos's ``| no-more``).
    paged = True

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern

    def feed(self, line: str) -> str:
        """The text to print for ``line``."""
        raise NotImplementedError

    def end(self) -> str:
        """The text to print once the output is over."""
        return ""


class _Include(LineFilter):
    def feed(self, line: str) -> str:
        return line if self.pattern.search(line.rstrip("\n")) else ""


class _Exclude(LineFilter):
    def feed(self, line: str) -> str:
        return "" if self.pattern.search(line.rstrip("\n")) else line


class _Begin(LineFilter):
    begun = False

    def feed(self, line: str) -> str:
        self.begun = self.begun or bool(self.pattern.search(line.rstrip("\n")))
        return line if self.begun else ""


class _Section(LineFilter):
    """A section is a line at the margin and the lines indented under it; a banner's text
    (``banner motd ^C`` to the closing ``^C``) is part of its section, margin or not."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__(pattern)
        self._lines: list[str] = []
        self._matched = False
        self._text_mark: str | None = None  # the delimiter of a banner whose text goes on

    def feed(self, line: str) -> str:
        out = ""
        text = line.rstrip("\n")
        if self._text_mark is not None:
            if self._text_mark in text:
                self._text_mark = None
        else:
            if line[:1] not in (" ", "\t"):
                out = self.end()
            self._text_mark = banner.opens(text, None)
        self._lines.append(line)
        self._matched = self._matched or bool(self.pattern.search(text))
        return out

    def end(self) -> str:
        out = "".join(self._lines) if self._matched else ""
        self._lines.clear()
        self._matched = False
        return out


class _Count(LineFilter):
    count = 0

    def feed(self, line: str) -> str:
        self.count += bool(self.pattern.search(line.rstrip("\n")))
        return ""

    def end(self) -> str:
        return f"Number of lines which match regexp = {self.count}\n"


class _JunosCount(LineFilter):
    count = 0

    def feed(self, line: str) -> str:
        self.count += 1
        return ""

    def end(self) -> str:
        return f"Count: {self.count} lines\n"


class _Pass(LineFilter):
    """``| no-more``: every line, not paged."""

    paged = False

    def feed(self, line: str) -> str:
        return line


class _Last(LineFilter):
    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__(pattern)
        self._lines: deque[str] = deque(maxlen=int(pattern.pattern))

    def feed(self, line: str) -> str:
        self._lines.append(line)
        return ""

    def end(self) -> str:
        return "".join(self._lines)


class _Trim(LineFilter):
    def feed(self, line: str) -> str:
        cut = line[int(self.pattern.pattern):]
        return cut if cut.endswith("\n") or not line.endswith("\n") else cut + "\n"


class _Chain(LineFilter):
    """Two filters one after the other (Junos: ``| match X | count``)."""

    def __init__(self, first: LineFilter, then: LineFilter) -> None:
        super().__init__(first.pattern)
        self.first, self.then = first, then
        self.paged = first.paged and then.paged

    def _on(self, text: str) -> str:
        return "".join([self.then.feed(line) for line in text.splitlines(keepends=True)])

    def feed(self, line: str) -> str:
        return self._on(self.first.feed(line))

    def end(self) -> str:
        return self._on(self.first.end()) + self.then.end()


_FILTERS: dict[str, type[LineFilter]] = {
    "include": _Include, "exclude": _Exclude, "begin": _Begin, "section": _Section,
    "count": _Count, "grep": _Include,
    "junos:match": _Include, "junos:except": _Exclude, "junos:find": _Begin,
    "junos:count": _JunosCount, "junos:last": _Last, "junos:trim": _Trim,
    "junos:no-more": _Pass,
}
#: How each Junos pipe is typed after its name (none: no argument); they chain.
_JUNOS_ARGS = {"junos:match": "<word>", "junos:except": "<word>", "junos:find": "<word>",
               "junos:count": "", "junos:last": "<1-100000>", "junos:trim": "<0-1024>",
               "junos:no-more": ""}


def filter_tree(names: Iterable[str]) -> CommandTree[str]:
    """The filters ``names`` (of :data:`DESCRIPTIONS`) as a tree of ``<name> <line>`` commands
    (Junos's ``junos:<name>`` as ``<name> [<word>]``, and another filter may follow them)."""
    tree: CommandTree[str] = CommandTree()
    for name in names:
        if name not in _FILTERS:
            raise ValueError(f"unknown output filter {name!r} (known: {sorted(_FILTERS)})")
        if name in _JUNOS_ARGS:
            tree.add(f"{name.removeprefix('junos:')} {_JUNOS_ARGS[name]}", name, pipe=True)
            tree.pipe = tree
        else:
            tree.add(f"{name} <line>", name)
    return tree


def make_filter(found: Match[str]) -> LineFilter:
    """The filter a ``| name RE`` match names, and those chained after it (:class:`re.error`
    for a bad expression)."""
    line_filter = _one_filter(found)
    if found.pipe is not None:
        return _Chain(line_filter, make_filter(found.pipe))
    return line_filter


def _one_filter(found: Match[str]) -> LineFilter:
    expression = found.args[0] if found.args else ""
    kind = _FILTERS[found.action]
    if found.action == "grep" and (expression == "-v" or expression.startswith("-v ")):
        kind, expression = _Exclude, expression[2:].strip()
    if found.action in _JUNOS_ARGS:
        # One word, its quotes dropped; a pattern Python's re refuses is matched as text.
        expression = expression[1:-1] if expression[:1] == expression[-1:] == '"' and \
            len(expression) > 1 else expression
        try:
            return kind(re.compile(expression))
        except re.error:
            return kind(re.compile(re.escape(expression)))
    return kind(re.compile(expression))


def filter_text(line_filter: LineFilter, text: str) -> str:
    """``text`` through the filter."""
    lines = text.splitlines(keepends=True)
    kind = type(line_filter)
    if kind is _Include or kind is _Exclude:  # the common case, without a call per line
        search, keep = line_filter.pattern.search, kind is _Include
        return "".join([line for line in lines if bool(search(line.rstrip("\n"))) is keep])
    feed = line_filter.feed
    return "".join([feed(line) for line in lines]) + line_filter.end()


def filter_chunks(line_filter: LineFilter, chunks: Iterable[str]) -> Iterator[str]:
    """Streamed output through the filter, a line at a time, in pieces of about 64 KiB."""
    feed = line_filter.feed
    rest = ""
    out: list[str] = []
    size = 0
    for chunk in chunks:
        lines = (rest + chunk).split("\n")
        rest = lines.pop()
        for line in lines:
            kept = feed(line + "\n")
            if kept:
                out.append(kept)
                size += len(kept)
        if size >= _CHUNK:
            yield "".join(out)
            out.clear()
            size = 0
    if rest:
        out.append(feed(rest))
    out.append(line_filter.end())
    tail = "".join(out)
    if tail:
        yield tail

