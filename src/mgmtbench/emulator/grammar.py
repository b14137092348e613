"""Command grammar: a word trie with device-style abbreviation and errors.

Commands are registered as patterns such as ``"show ip route"`` or ``"terminal length <0-512>"``
(``<lo-hi>`` an integer, ``<word>`` any word, ``<line>`` the rest of the line). Matching accepts any
unambiguous word prefix (``sh ip ro``), as IOS does, and raises :class:`ParseError` carrying what a
device would say: invalid input at a character position, an ambiguous word, or an incomplete command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

A = TypeVar("A")
_TOKEN = re.compile(r"\S+")
_INT_ARG = re.compile(r"^<(\d+)-(\d+)>$")


class ParseErrorKind(Enum):
    """Why a line does not name one command, each with its own device error message."""
    INVALID = "invalid"
    AMBIGUOUS = "ambiguous"
    INCOMPLETE = "incomplete"


class ParseError(Exception):
    """The input does not name exactly one command; ``position`` is where the device puts its caret."""

    def __init__(self, kind: ParseErrorKind, position: int = 0) -> None:
        super().__init__(kind.value, position)
        self.kind = kind
        self.position = position


@dataclass(frozen=True)
class _Arg:
    kind: str  # "int", "word" or "line"
    low: int = 0
    high: int = 0

    def accepts(self, token: str) -> bool:
        if self.kind != "int":
            return True
        return token.isdigit() and self.low <= int(token) <= self.high


@dataclass
class _Node(Generic[A]):
    words: dict[str, _Node[A]] = field(default_factory=dict)
    arg: _Arg | None = None
    arg_node: _Node[A] | None = None
    action: A | None = None


@dataclass(frozen=True)
class Match(Generic[A]):
    """A resolved command: its action, the full words it matched and its arguments."""

    action: A
    words: tuple[str, ...]
    args: tuple[str, ...]


class CommandTree(Generic[A]):
    """Commands of one mode; ``match`` resolves a typed line to exactly one of them."""

    def __init__(self) -> None:
        self._root: _Node[A] = _Node()

    def add(self, pattern: str, action: A) -> None:
        """Register ``pattern`` (words and ``<...>`` arguments) to run ``action``."""
        node = self._root
        for part in pattern.split():
            if part.startswith("<"):
                arg = _parse_arg(part)
                if node.arg is not None and node.arg != arg:
                    raise ValueError(f"conflicting arguments in {pattern!r}")
                node.arg = arg
                node.arg_node = node.arg_node or _Node()
                node = node.arg_node
            else:
                node = node.words.setdefault(part.lower(), _Node())
        if node.action is not None:
            raise ValueError(f"command {pattern!r} registered twice")
        node.action = action

    def add_all(self, patterns: dict[str, A]) -> None:
        """Register every pattern of ``patterns`` with its action."""
        for pattern, action in patterns.items():
            self.add(pattern, action)

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
            nxt = self._step(node, text, words, args, token.start())
            if nxt is None:
                raise ParseError(ParseErrorKind.INVALID, token.start())
            node = nxt
        if node.action is None:
            raise ParseError(ParseErrorKind.INCOMPLETE)
        return Match(node.action, tuple(words), tuple(args))

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


def _parse_arg(part: str) -> _Arg:
    if part in ("<word>", "<line>"):
        return _Arg(part[1:-1])
    found = _INT_ARG.match(part)
    if not found:
        raise ValueError(f"bad argument pattern {part!r}")
    return _Arg("int", int(found.group(1)), int(found.group(2)))

