"""The command trie: abbreviations, arguments and device-style parse errors."""

from __future__ import annotations

import pytest

from mgmtbench.emulator.cli.grammar import CommandTree, ParseError, ParseErrorKind


@pytest.fixture
def tree() -> CommandTree[str]:
    pipe: CommandTree[str] = CommandTree()
    pipe.add_all({"include <line>": "include", "exclude <line>": "exclude"})
    t: CommandTree[str] = CommandTree(pipe)
    t.add("show clock", "clock", pipe=True)
    t.add("show bulk-output <0-99>", "bulk", hidden=True)
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
        ("show versionx", ParseErrorKind.INVALID, 12),  # the caret under the first bad character
        ("show verx", ParseErrorKind.INVALID, 8),
        ("show ip rx", ParseErrorKind.INVALID, 9),
        ("show zzz", ParseErrorKind.INVALID, 5),
        ("terminal length 5a", ParseErrorKind.INVALID, 17),
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


@pytest.mark.parametrize(
    ("line", "words", "pipe", "args"),
    [
        ("show clock | include UTC", ("show", "clock"), "include", ("UTC",)),
        ("sh cl | i a | i b", ("show", "clock"), "include", ("a | i b",)),  # the rest of the line
        ("show clock | e ^ *x$", ("show", "clock"), "exclude", ("^ *x$",)),
        ("show clock", ("show", "clock"), None, ()),
    ],
)
def test_output_filter_after_a_pipe(tree: CommandTree[str], line: str, words: tuple[str, ...],
                                    pipe: str | None, args: tuple[str, ...]) -> None:
    found = tree.match(line)
    assert (found.action, found.words) == ("clock", words)
    assert (found.pipe.action if found.pipe else None) == pipe
    assert (found.pipe.args if found.pipe else ()) == args


@pytest.mark.parametrize(
    ("line", "kind", "position"),
    [
        ("show clock | x y", ParseErrorKind.INVALID, 13),
        ("show clock | inx y", ParseErrorKind.INVALID, 15),
        ("show clock |", ParseErrorKind.INCOMPLETE, 0),
        ("show clock | include", ParseErrorKind.INCOMPLETE, 0),
        ("show version | include x", ParseErrorKind.INVALID, 13),  # no filters on it
        ("show | include x", ParseErrorKind.INVALID, 5),
    ],
)
def test_output_filter_errors(tree: CommandTree[str], line: str, kind: ParseErrorKind,
                              position: int) -> None:
    with pytest.raises(ParseError) as caught:
        tree.match(line)
    assert (caught.value.kind, caught.value.position) == (kind, position)


def test_incomplete_says_which_words_matched(tree: CommandTree[str]) -> None:
    with pytest.raises(ParseError) as caught:
        tree.match("sh ip")
    assert caught.value.words == ("show", "ip")


def test_help_lists_next_words_arguments_and_cr(tree: CommandTree[str]) -> None:
    options = tree.help("sh ")
    assert options.words == ("show",)
    assert options.keywords == ("clock", "interfaces", "inventory", "ip", "version")  # no hidden
    assert not options.complete
    clock = tree.help("show clock ")
    assert (clock.keywords, clock.complete, clock.pipe) == ((), True, True)
    assert tree.help("terminal length ").arg == "<0-512>"
    assert tree.help("hostname ").arg == "WORD"
    assert tree.help("show clock | ").keywords == ("exclude", "include")
    assert tree.help("show clock | include ").arg == "LINE"


def test_help_on_a_partial_word_lists_its_completions(tree: CommandTree[str]) -> None:
    options = tree.help("show in")
    assert (options.partial, options.keywords) == ("in", ("interfaces", "inventory"))
    assert tree.help("show clock | e").keywords == ("exclude",)
    assert tree.help("show b").keywords == ()  # hidden


def test_help_of_a_line_that_goes_wrong_raises(tree: CommandTree[str]) -> None:
    with pytest.raises(ParseError) as caught:
        tree.help("show bogus ")
    assert caught.value.kind is ParseErrorKind.INVALID
    with pytest.raises(ParseError) as caught:
        tree.help("sh i ")
    assert caught.value.kind is ParseErrorKind.AMBIGUOUS


@pytest.mark.parametrize(
    ("line", "word"),
    [("sh", "show"), ("show ver", "version"), ("show i", None), ("show ", None), ("zz", None),
     ("show clock | inc", "include"), ("show b", None)],
)
def test_tab_completes_a_unique_word(tree: CommandTree[str], line: str, word: str | None) -> None:
    assert tree.complete(line) == word


def test_contains_names_registered_commands(tree: CommandTree[str]) -> None:
    assert "show ip route" in tree
    assert "terminal length <0-512>" in tree
    assert "show ip" not in tree
    assert "show nothing" not in tree
