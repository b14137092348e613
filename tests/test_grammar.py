"""The command trie: abbreviations, arguments and device-style parse errors."""

from __future__ import annotations

import pytest

from mgmtbench.emulator.grammar import CommandTree, ParseError, ParseErrorKind


@pytest.fixture
def tree() -> CommandTree[str]:
    t: CommandTree[str] = CommandTree()
    t.add_all({
        "show version": "version",
        "show interfaces": "interfaces",
        "show inventory": "inventory",
        "show ip route": "route",
        "show ip interface brief": "brief",
        "terminal length <0-512>": "length",
        "hostname <word>": "hostname",
        "do <line>": "do",
    })
    return t


@pytest.mark.parametrize(
    ("line", "action", "args"),
    [
        ("show version", "version", ()),
        ("sh ver", "version", ()),
        ("  SH   VER  ", "version", ()),
        ("sh int", "interfaces", ()),
        ("sh inv", "inventory", ()),
        ("sh ip ro", "route", ()),
        ("sh ip int br", "brief", ()),
        ("term len 0", "length", ("0",)),
        ("hostname Edge-7", "hostname", ("Edge-7",)),
        ("do show  ip route", "do", ("show  ip route",)),
    ],
)
def test_matches(tree: CommandTree[str], line: str, action: str, args: tuple[str, ...]) -> None:
    found = tree.match(line)
    assert (found.action, found.args) == (action, args)


@pytest.mark.parametrize(
    ("line", "kind", "position"),
    [
        ("sh i", ParseErrorKind.AMBIGUOUS, 3),
        ("show", ParseErrorKind.INCOMPLETE, 0),
        ("show ip", ParseErrorKind.INCOMPLETE, 0),
        ("show versionx", ParseErrorKind.INVALID, 5),
        ("show ../../etc/passwd", ParseErrorKind.INVALID, 5),
        ("show version extra", ParseErrorKind.INVALID, 13),
        ("terminal length 513", ParseErrorKind.INVALID, 16),
        ("terminal length -1", ParseErrorKind.INVALID, 16),
        ("bogus", ParseErrorKind.INVALID, 0),
        ("", ParseErrorKind.INCOMPLETE, 0),
    ],
)
def test_errors(tree: CommandTree[str], line: str, kind: ParseErrorKind, position: int) -> None:
    with pytest.raises(ParseError) as caught:
        tree.match(line)
    assert (caught.value.kind, caught.value.position) == (kind, position)


def test_duplicate_registration_is_refused(tree: CommandTree[str]) -> None:
    with pytest.raises(ValueError, match="twice"):
        tree.add("show version", "again")
