"""Command grammar: a word trie with device-style abbreviation, errors, help and completion.

Commands are registered as patterns such as ``"show ip route"`` or ``"terminal length <0-512>"``
(``<lo-hi>`` an integer, ``<word>`` any word, ``<line>`` the rest of the line). Matching accepts any
unambiguous word prefix (``sh ip ro``), as IOS does, and raises :class:`ParseError` carrying what a
device would say: invalid input with the caret under the first character no command accepts, an
ambiguous word, or an incomplete command. A command registered with ``pipe=True`` takes an output
filter after a ``|`` word, matched by the tree's :attr:`CommandTree.pipe` (``show run | inc ntp``).
:meth:`CommandTree.help` and :meth:`CommandTree.complete` answer ``?`` and Tab.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

A = TypeVar("A")
_TOKEN = re.compile(r"\S+")
_INT_ARG = re.compile(r"^<(\d+)-(\d+)>$")
PIPE = "|"


class ParseErrorKind(Enum):
    """Why a line does not name one command, each with its own device error message."""
    INVALID = "invalid"
    AMBIGUOUS = "ambiguous"
    INCOMPLETE = "incomplete"


class ParseError(Exception):
    """The input does not name exactly one command; ``position`` is where the device puts its
    caret, ``words`` the full words matched before the line ended (for an incomplete command)."""

    def __init__(self, kind: ParseErrorKind, position: int = 0,
                 words: tuple[str, ...] = ()) -> None:
        super().__init__(kind.value, position)
        self.kind = kind
        self.position = position
        self.words = words


@dataclass(frozen=True)
class _Arg:
    kind: str  # "int", "word" or "line"
    low: int = 0
    high: int = 0

    def accepts(self, token: str) -> bool:
        if self.kind != "int":
            return True
        return token.isdigit() and self.low <= int(token) <= self.high

    def good_prefix(self, token: str) -> int:
        """How many leading characters of a refused ``token`` could start an argument."""
        if self.kind != "int" or token.isdigit():
            return 0
        return len(token) - len(token.lstrip("0123456789"))

    @property
    def label(self) -> str:
        """How ``?`` names the argument: ``<0-512>``, ``WORD`` or ``LINE``."""
        return f"<{self.low}-{self.high}>" if self.kind == "int" else self.kind.upper()


@dataclass
class _Node(Generic[A]):
    words: dict[str, _Node[A]] = field(default_factory=dict)
    arg: _Arg | None = None
    arg_node: _Node[A] | None = None
    action: A | None = None
    pipe: bool = False  # the command takes an output filter after "|"
    hidden: bool = False  # matched, but not offered by ? and Tab


@dataclass(frozen=True)
class Match(Generic[A]):
    """A resolved command: its action, the full words it matched, its arguments and its output
    filter (``| include RE``: a match in the tree's :attr:`CommandTree.pipe`), if any."""

    action: A
    words: tuple[str, ...]
    args: tuple[str, ...]
    pipe: Match[str] | None = None


@dataclass(frozen=True)
class Options:
    """What may come next at the end of a typed line, for ``?``.

    ``words`` are the full words of the command so far (``("show", "ip")``, ``("|",)`` after a
    pipe), ``keywords`` the visible keywords that fit (those starting with ``partial`` when the
    line ends inside a word), ``arg`` the argument's label if one may come, ``complete`` whether
    the command can run here (``<cr>``) and ``pipe`` whether an output filter may follow."""

    words: tuple[str, ...]
    keywords: tuple[str, ...]
    partial: str = ""
    arg: str | None = None
    complete: bool = False
    pipe: bool = False


class CommandTree(Generic[A]):
    """Commands of one mode; ``match`` resolves a typed line to exactly one of them."""

    def __init__(self, pipe: CommandTree[str] | None = None) -> None:
        self._root: _Node[A] = _Node()
        #: The output filters a ``pipe=True`` command takes after ``|`` (None: no filters).
        self.pipe = pipe

    def add(self, pattern: str, action: A, *, pipe: bool = False, hidden: bool = False) -> None:
        """Register ``pattern`` (words and ``<...>`` arguments) to run ``action``; ``pipe``: it
        takes an output filter; ``hidden``: ``?`` and Tab do not offer its last word."""
        node = word_node = self._root
        for part in pattern.split():
            if part.startswith("<"):
                arg = _parse_arg(part)
                if node.arg is not None and node.arg != arg:
                    raise ValueError(f"conflicting arguments in {pattern!r}")
                node.arg = arg
                node.arg_node = node.arg_node or _Node()
                node = node.arg_node
            else:
                node = word_node = node.words.setdefault(part.lower(), _Node())
        if node.action is not None:
            raise ValueError(f"command {pattern!r} registered twice")
        node.action = action
        node.pipe = pipe
        word_node.hidden = word_node.hidden or hidden

    def add_all(self, patterns: dict[str, A], *, pipe: bool = False) -> None:
        """Register every pattern of ``patterns`` with its action."""
        for pattern, action in patterns.items():
            self.add(pattern, action, pipe=pipe)

    def __contains__(self, pattern: object) -> bool:
        """Whether exactly ``pattern`` (full words, as registered) is a command already."""
        if not isinstance(pattern, str):
            return False
        node: _Node[A] | None = self._root
        for part in pattern.split():
            if node is None:
                return False
            node = node.arg_node if part.startswith("<") else node.words.get(part.lower())
        return node is not None and node.action is not None

    def match(self, line: str) -> Match[A]:
        """Resolve a typed line, abbreviations allowed, to its command, or raise :class:`ParseError`."""
        node = self._root
        words: list[str] = []
        args: list[str] = []
        tokens = list(_TOKEN.finditer(line))
        if not tokens:
            raise ParseError(ParseErrorKind.INCOMPLETE)
        for token in tokens:
            text = token.group()
            if node.arg is not None and node.arg.kind == "line" and node.arg_node is not None:
                args.append(line[token.start() :].rstrip())
                node = node.arg_node
                break
            if text == PIPE and node.pipe and node.action is not None and self.pipe is not None:
                return Match(node.action, tuple(words), tuple(args),
                             self.pipe.match_at(line, token.end()))
            nxt = self._step(node, text, words, args, token.start())
            if nxt is None:
                raise ParseError(ParseErrorKind.INVALID,
                                 token.start() + _good_prefix(node, text))
            node = nxt
        if node.action is None:
            raise ParseError(ParseErrorKind.INCOMPLETE, 0, tuple(words))
        return Match(node.action, tuple(words), tuple(args))

    def match_at(self, line: str, start: int) -> Match[A]:
        """:meth:`match` of ``line[start:]``, error positions counted in ``line``."""
        try:
            return self.match(line[start:])
        except ParseError as exc:
            shift = start if exc.kind is ParseErrorKind.INVALID else 0
            raise ParseError(exc.kind, exc.position + shift, exc.words) from None

    def help(self, line: str) -> Options:
        """What ``?`` lists at the end of ``line`` (:class:`ParseError` if the line goes wrong
        before its end)."""
        node = self._root
        words: list[str] = []
        args: list[str] = []
        tokens = list(_TOKEN.finditer(line))
        partial = ""
        if tokens and tokens[-1].end() == len(line):
            partial = tokens.pop().group()
        for token in tokens:
            text = token.group()
            if node.arg is not None and node.arg.kind == "line" and node.arg_node is not None:
                return Options(tuple(words), (), partial, None, True)
            if text == PIPE and node.pipe and node.action is not None and self.pipe is not None:
                inner = self.pipe.help(line[token.end():])
                return Options((PIPE, *inner.words), inner.keywords, inner.partial, inner.arg,
                               inner.complete)
            nxt = self._step(node, text, words, args, token.start())
            if nxt is None:
                raise ParseError(ParseErrorKind.INVALID, token.start() + _good_prefix(node, text))
            node = nxt
        if partial:
            if node.arg is not None and node.arg.kind == "line":
                return Options(tuple(words), (), partial, None, True)
            found = tuple(sorted(w for w, n in node.words.items()
                                 if w.startswith(partial.lower()) and not n.hidden))
            arg = node.arg.label if node.arg is not None and node.arg.accepts(partial) else None
            if partial == PIPE and node.pipe and node.action is not None and self.pipe:
                found = (PIPE,)
            return Options(tuple(words), found, partial, arg)
        visible = tuple(sorted(w for w, n in node.words.items() if not n.hidden))
        return Options(tuple(words), visible, "", node.arg.label if node.arg else None,
                       node.action is not None,
                       node.pipe and node.action is not None and self.pipe is not None)

    def complete(self, line: str) -> str | None:
        """The full word that Tab completes the line's last (partial) word to, or None when no
        single visible keyword fits."""
        try:
            options = self.help(line)
        except ParseError:
            return None
        if not options.partial or len(options.keywords) != 1:
            return None
        return options.keywords[0]

    @staticmethod
    def _step(
        node: _Node[A], text: str, words: list[str], args: list[str], position: int
    ) -> _Node[A] | None:
        word = text.lower()
        exact = node.words.get(word)
        if exact is not None:
            words.append(word)
            return exact
        candidates = [w for w in node.words if w.startswith(word)]
        if len(candidates) > 1:
            raise ParseError(ParseErrorKind.AMBIGUOUS, position)
        if candidates:
            words.append(candidates[0])
            return node.words[candidates[0]]
        if node.arg is not None and node.arg.accepts(text):
            args.append(text)
            return node.arg_node
        return None


def _good_prefix(node: _Node[A], text: str) -> int:
    """How far into a refused word the device's caret goes: past the longest start of it that
    some keyword (or the argument) here shares."""
    word = text.lower()
    best = node.arg.good_prefix(text) if node.arg is not None else 0
    for keyword in node.words:
        common = next((i for i, (a, b) in enumerate(zip(keyword, word, strict=False)) if a != b),
                      min(len(keyword), len(word)))
        best = max(best, common)
    return best


def _parse_arg(part: str) -> _Arg:
    if part in ("<word>", "<line>"):
        return _Arg(part[1:-1])
    found = _INT_ARG.match(part)
    if not found:
        raise ValueError(f"bad argument pattern {part!r}")
    return _Arg("int", int(found.group(1)), int(found.group(2)))
