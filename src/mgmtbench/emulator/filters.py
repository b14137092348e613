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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from mgmtbench.emulator.grammar import CommandTree, Match

#: What ``?`` says of each filter (IOS's wording).
DESCRIPTIONS = {
    "begin": "Begin with the line that matches",
    "count": "Count number of lines which match regexp",
    "exclude": "Exclude lines that match",
    "grep": "Include/exclude lines that match",
    "include": "Include lines that match",
    "section": "Filter a section of output",
}
_CHUNK = 1 << 16


class LineFilter:
    """A filter's state over one output: :meth:`feed` each line (with its newline), then
    :meth:`end`; both return the text to print."""

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
    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__(pattern)
        self._lines: list[str] = []
        self._matched = False

    def feed(self, line: str) -> str:
        out = ""
        if line[:1] not in (" ", "\t"):
            out = self.end()
        self._lines.append(line)
        self._matched = self._matched or bool(self.pattern.search(line.rstrip("\n")))
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


_FILTERS: dict[str, type[LineFilter]] = {
    "include": _Include, "exclude": _Exclude, "begin": _Begin, "section": _Section,
    "count": _Count, "grep": _Include,
}


def filter_tree(names: Iterable[str]) -> CommandTree[str]:
    """The filters ``names`` (of :data:`DESCRIPTIONS`) as a tree of ``<name> <line>`` commands."""
    tree: CommandTree[str] = CommandTree()
    for name in names:
        if name not in _FILTERS:
            raise ValueError(f"unknown output filter {name!r} (known: {sorted(_FILTERS)})")
        tree.add(f"{name} <line>", name)
    return tree


def make_filter(found: Match[str]) -> LineFilter:
    """The filter a ``| name RE`` match names (:class:`re.error` for a bad expression)."""
    expression = found.args[0]
    kind = _FILTERS[found.action]
    if found.action == "grep" and (expression == "-v" or expression.startswith("-v ")):
        kind, expression = _Exclude, expression[2:].strip()
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

