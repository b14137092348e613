"""Output filters: what follows ``|`` after a show command (``show running-config | include ntp``).

Each platform names the filters it has in ``platform.toml`` (``filters``); their behaviour is the
same everywhere, and what IOS and ASA do:

- ``include RE`` / ``exclude RE``: the lines that match (do not match) the regular expression;
- ``begin RE``: everything from the first line that matches;
- ``section RE``: the sections (a line without leading space and the indented lines under it)
  with a line that matches;
- ``count RE``: ``Number of lines which match regexp = N`` (IOS);
- ``grep [-v] RE``: ``include`` (``-v``: ``exclude``), as on an ASA.

The regular expression is the rest of the line, spaces included, as on IOS, run by RE2
(:mod:`.linematch`: time linear in the output whatever the expression; the IOS subset,
``^ $ . * + ? [] () |``, means the same). Filters work on blocks of whole lines, so the long
outputs that are made while they are sent (``show bulk-output``) stay streamed, a block of about
64 KiB at a time, and a transport can let other clients in between blocks
(:meth:`~mgmtbench.emulator.cli.engine.Reply.stream`) even when a filter prints nothing.

Junos's pipes are listed as ``junos:<name>``: ``match RE``, ``except RE``, ``find RE`` (from the
first line that matches), ``count`` (``Count: N lines``), ``last N``, ``trim N`` (the first N
characters of each line cut) and ``no-more`` (the output is not paged). Their expression is one
word (quoted if it has spaces) and they chain: ``show route | match 198.19 | count``.
``junos:display`` is Junos's ``display xml``, ``display json`` and ``display xml rpc``: the
command's output in another form (:mod:`mgmtbench.emulator.structured`), which the other pipes
may follow (``show version | display xml | no-more``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator

from mgmtbench.emulator.cli.grammar import CommandTree, Match
from mgmtbench.emulator.cli.linematch import BadExpression, LinePattern, split_lines
from mgmtbench.emulator.device import banner

__all__ = ["FORMATS", "BadExpression", "LineFilter", "filter_chunks", "filter_text", "filter_tree",
           "make_filter"]

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
    "display": "Show additional kinds of information",
    # EOS, NX-OS
    "json": "Produce JSON output for this command",
    "json-pretty": "Output in json pretty print format",
}
#: Pipes that print the command's output in another form instead of filtering its lines
#: (:mod:`mgmtbench.emulator.structured`): nothing may follow EOS's ``json``; Junos's
#: ``display`` pipes take the other pipes after them.
FORMATS = frozenset({"json", "json-pretty", "junos:display-xml", "junos:display-json",
                     "junos:display-xml-rpc"})
#: Junos's ``display`` pipes (:data:`FORMATS` that other pipes may follow), by their words.
_JUNOS_DISPLAY = {"display xml": "junos:display-xml", "display json": "junos:display-json",
                  "display xml rpc": "junos:display-xml-rpc"}
_CHUNK = 1 << 16


class LineFilter:
    """A filter's state over one output: :meth:`feed` it blocks of whole lines (each with its
    newline; the output's last line may lack one), then :meth:`end`; both return the text to
    print."""

    #: False: the output is not paged (Junos's ``| no-more``).
    paged = True

    def __init__(self, argument: str, *, literal: bool = False) -> None:
        self.argument = argument
        self.pattern = self._pattern(argument, literal)

    def _pattern(self, argument: str, literal: bool) -> LinePattern | None:
        return LinePattern(argument, literal=literal)

    def _hits(self, text: str) -> tuple[list[str], list[bool]]:
        """``text``'s lines and, for each, whether the expression matches in it."""
        lines = split_lines(text)
        assert self.pattern is not None
        return lines, self.pattern.hits(text.encode("utf-8", "replace"), len(lines))

    def feed(self, text: str) -> str:
        """The text to print for the lines of ``text``."""
        raise NotImplementedError

    def end(self) -> str:
        """The text to print once the output is over."""
        return ""


class _Include(LineFilter):
    keep = True

    def feed(self, text: str) -> str:
        lines, hits = self._hits(text)
        keep = self.keep
        return "".join([line for line, hit in zip(lines, hits, strict=True) if hit is keep])


class _Exclude(_Include):
    keep = False


class _Begin(LineFilter):
    begun = False

    def feed(self, text: str) -> str:
        if self.begun:
            return text
        lines, hits = self._hits(text)
        if True not in hits:
            return ""
        self.begun = True
        return "".join(lines[hits.index(True):])


class _Section(LineFilter):
    """A section is a line at the margin and the lines indented under it; a banner's text
    (``banner motd ^C`` to the closing ``^C``) is part of its section, margin or not."""

    def __init__(self, argument: str, *, literal: bool = False) -> None:
        super().__init__(argument, literal=literal)
        self._lines: list[str] = []
        self._matched = False
        self._text_mark: str | None = None  # the delimiter of a banner whose text goes on

    def feed(self, text: str) -> str:
        out: list[str] = []
        lines, hits = self._hits(text)
        for line, hit in zip(lines, hits, strict=True):
            if self._text_mark is not None:
                if self._text_mark in line:
                    self._text_mark = None
            else:
                if line[:1] not in (" ", "\t"):
                    out.append(self.end())
                self._text_mark = banner.opens(line.rstrip("\n"), None)
            self._lines.append(line)
            self._matched = self._matched or hit
        return "".join(out)

    def end(self) -> str:
        out = "".join(self._lines) if self._matched else ""
        self._lines.clear()
        self._matched = False
        return out


class _Count(LineFilter):
    count = 0

    def feed(self, text: str) -> str:
        self.count += self._hits(text)[1].count(True)
        return ""

    def end(self) -> str:
        return f"Number of lines which match regexp = {self.count}\n"


class _Unmatched(LineFilter):
    """A filter without an expression (its argument, if any, is a number)."""

    def _pattern(self, argument: str, literal: bool) -> LinePattern | None:
        return None


class _JunosCount(_Unmatched):
    count = 0

    def feed(self, text: str) -> str:
        self.count += len(split_lines(text))
        return ""

    def end(self) -> str:
        return f"Count: {self.count} lines\n"


class _Pass(_Unmatched):
    """``| no-more``: every line, not paged."""

    paged = False

    def feed(self, text: str) -> str:
        return text


class _Last(_Unmatched):
    def __init__(self, argument: str, *, literal: bool = False) -> None:
        super().__init__(argument)
        self._lines: deque[str] = deque(maxlen=int(argument))

    def feed(self, text: str) -> str:
        self._lines.extend(split_lines(text))
        return ""

    def end(self) -> str:
        return "".join(self._lines)


class _Trim(_Unmatched):
    def feed(self, text: str) -> str:
        columns = int(self.argument)
        out = []
        for line in split_lines(text):
            cut = line[columns:]
            out.append(cut if cut.endswith("\n") or not line.endswith("\n") else cut + "\n")
        return "".join(out)


class _Chain(_Unmatched):
    """Two filters one after the other (Junos: ``| match X | count``)."""

    def __init__(self, first: LineFilter, then: LineFilter) -> None:
        super().__init__(first.argument)
        self.first, self.then = first, then
        self.paged = first.paged and then.paged

    def feed(self, text: str) -> str:
        return self.then.feed(self.first.feed(text))

    def end(self) -> str:
        return self.then.feed(self.first.end()) + self.then.end()


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
        if name in FORMATS:
            tree.add(name, name)
            continue
        if name == "junos:display":
            for words, action in _JUNOS_DISPLAY.items():
                tree.add(words, action, pipe=True)
            tree.pipe = tree
            continue
        if name not in _FILTERS:
            raise ValueError(f"unknown output filter {name!r} (known: "
                             f"{sorted({*_FILTERS, *FORMATS, 'junos:display'})})")
        if name in _JUNOS_ARGS:
            tree.add(f"{name.removeprefix('junos:')} {_JUNOS_ARGS[name]}", name, pipe=True)
            tree.pipe = tree
        else:
            tree.add(f"{name} <line>", name)
    return tree


def make_filter(found: Match[str]) -> LineFilter:
    """The filter a ``| name RE`` match names, and those chained after it
    (:class:`BadExpression` for an expression RE2 refuses)."""
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
        # One word, its quotes dropped; a pattern RE2 refuses is matched as text.
        expression = expression[1:-1] if expression[:1] == expression[-1:] == '"' and \
            len(expression) > 1 else expression
        try:
            return kind(expression)
        except BadExpression:
            return kind(expression, literal=True)
    return kind(expression)


def filter_text(line_filter: LineFilter, text: str) -> str:
    """``text`` through the filter, at once (short output: long output goes through
    :func:`filter_chunks`)."""
    return line_filter.feed(text) + line_filter.end()


def filter_chunks(line_filter: LineFilter, chunks: Iterable[str]) -> Iterator[str]:
    """Streamed output through the filter, a block of whole lines at a time: a piece of output
    (of about 64 KiB or less, or ``""`` when the filter printed nothing yet) for each chunk
    taken, so that the work done between two pieces is bounded whatever the filter keeps."""
    rest = ""
    out: list[str] = []
    size = 0
    for chunk in chunks:
        text = rest + chunk
        cut = text.rfind("\n") + 1
        rest = text[cut:]
        kept = line_filter.feed(text[:cut]) if cut else ""
        if kept:
            out.append(kept)
            size += len(kept)
        if size >= _CHUNK:
            yield "".join(out)
            out.clear()
            size = 0
        else:
            yield ""
    if rest:
        out.append(line_filter.feed(rest))
    out.append(line_filter.end())
    tail = "".join(out)
    if tail:
        yield tail
