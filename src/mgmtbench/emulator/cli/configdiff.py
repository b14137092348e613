"""Configuration files as IOS compares them: a tree of lines (a child indented under its
parent), and the three comparisons the archive feature makes of two such trees:

- :func:`contextual_diff` — ``show archive config differences A B``: ``+line`` for what only B
  has, ``-line`` for what only A has, each under the (unsigned) parent lines they sit in;
- :func:`incremental_diff` — ``show archive config incremental-diffs F``: the lines of F that the
  running configuration lacks, as commands under their parents (what merging F would add);
- :func:`replace_commands` — what ``configure replace`` types to turn one configuration into
  another: ``no`` for each line only the old one has, then each line only the new one has.

Blocks nest to any depth (IOS's ``router bgp`` / ``address-family ipv4`` / ``neighbor ...
activate``, the ASA's ``policy-map`` / ``class`` / ``inspect ...``): a changed line is shown and
typed under all its parents. Comment lines (``!``, ``:`` on an ASA), blank lines, ``end``, the
closing lines of nested blocks (``exit-address-family``: the device adds it to the block it
closes, so it is no change of its own) and the header ``show running-config`` prints
(``Building configuration...``, ``Current configuration : N bytes``) are not configuration and
are left out of every comparison. (That IOS leaves the closing lines out of its own diffs is an
assumption, written without a capture of ``show archive config differences`` at hand.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mgmtbench.emulator.device.banner import group_lines
from mgmtbench.emulator.device.config import HEADERS

NO_CHANGES = "!No changes were found"


@dataclass
class Node:
    """One configuration line and the lines indented under it."""

    text: str
    children: list[Node] = field(default_factory=list)


def parse(text: str) -> list[Node]:
    """The top-level lines of a configuration file, each with the lines indented under it."""
    root: list[Node] = []
    stack: list[tuple[int, list[Node]]] = [(-1, root)]
    for raw in group_lines(text.splitlines()):  # a banner of several lines is one line
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        if not is_config_line(stripped):
            continue
        depth = len(line) - len(stripped)
        while len(stack) > 1 and stack[-1][0] >= depth:
            stack.pop()
        node = Node(stripped)
        stack[-1][1].append(node)
        stack.append((depth, node.children))
    return root


def is_config_line(stripped: str) -> bool:
    """Whether a line (without its indentation) configures something: not a comment, a blank
    line, ``end``, a block's closing line (``exit-address-family``: the block it closes is
    the block indented above it) or ``show running-config``'s header."""
    return bool(stripped) and stripped[0] not in "!:" and stripped != "end" \
        and not stripped.startswith(HEADERS) and not stripped.startswith("exit-")


def contextual_diff(old: list[Node], new: list[Node]) -> str:
    """``show archive config differences old new``: ``!Contextual Config Diffs:``, then the
    lines only ``new`` has (``+``), then those only ``old`` has (``-``); ``!No changes were
    found`` when they hold the same lines."""
    added = list(_only_in(new, old, "+", key=_exact))
    removed = list(_only_in(old, new, "-", key=_exact))
    lines = ["!Contextual Config Diffs:", *added, *removed]
    if not added and not removed:
        lines.append(NO_CHANGES)
    return "\n".join(lines) + "\n"


def incremental_diff(running: list[Node], file: list[Node], *, ignorecase: bool = False) -> str:
    """``show archive config incremental-diffs file [ignorecase]``: the lines of ``file`` that
    ``running`` lacks, as the commands (under their parents) that would add them."""
    key = _folded if ignorecase else _exact
    lines = ["!List of Commands:", *_only_in(file, running, "", key=key), "end"]
    if len(lines) == 2:
        lines.append(NO_CHANGES)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Command:
    """One configuration command of a plan, at the depth (sub-mode level) it is typed at."""

    depth: int
    text: str

    def __str__(self) -> str:
        return " " * self.depth + self.text


def replace_commands(old: list[Node], new: list[Node],
                     same_setting: Callable[[str, str], bool]) -> list[Command]:
    """What to type to turn ``old`` into ``new``: ``no <line>`` for lines only ``old`` has
    (except a setting that ``new`` sets to another value: ``same_setting(a, b)`` says whether
    two lines set the same thing), then the lines only ``new`` has, each under its parents."""
    plan: list[Command] = []
    _removals(old, new, same_setting, [], plan)
    for line in _only_in(new, old, "", key=_exact):
        depth = len(line) - len(line.lstrip(" "))
        plan.append(Command(depth, line.lstrip(" ")))
    return plan


def _removals(old: list[Node], new: list[Node], same_setting: Callable[[str, str], bool],
              parents: list[str], plan: list[Command]) -> None:
    present = {node.text: node for node in new}
    for node in old:
        match = present.get(node.text)
        if match is not None:
            if node.children:
                _removals(node.children, match.children, same_setting,
                          [*parents, node.text], plan)
            continue
        if any(same_setting(node.text, other.text) for other in new):
            continue  # the new value replaces it: no `no` needed (IOS sets it in place)
        plan.extend(Command(depth, text) for depth, text in enumerate(parents)
                    if not _entered(plan, depth, text))
        negated = node.text[3:] if node.text.startswith("no ") else f"no {node.text}"
        plan.append(Command(len(parents), negated))


def _entered(plan: list[Command], depth: int, text: str) -> bool:
    """Whether the plan's last command at ``depth`` already entered ``text``'s sub-mode."""
    for command in reversed(plan):
        if command.depth == depth:
            return command.text == text
        if command.depth < depth:
            return False
    return False


def _exact(text: str) -> str:
    return text


def _folded(text: str) -> str:
    return text.lower()


def _only_in(these: list[Node], others: list[Node], sign: str, *, key: Callable[[str], str],
             depth: int = 0, context: list[str] | None = None) -> Iterator[str]:
    """The lines of ``these`` that ``others`` lacks, each marked with ``sign`` and preceded by
    its parent lines (once per group, unmarked)."""
    context = context if context is not None else []
    present = {key(node.text): node for node in others}
    for node in these:
        match = present.get(key(node.text))
        if match is None:
            while context:  # the parents, once, before the first change under them
                yield context.pop(0)
            yield from _whole(node, sign, depth)
        elif node.children:
            inner = [*context, " " * depth + node.text]
            yield from _only_in(node.children, match.children, sign, key=key,
                                depth=depth + 1, context=inner)
            if len(inner) <= len(context):  # something under it was shown: its parents too
                context.clear()


def _whole(node: Node, sign: str, depth: int) -> Iterator[str]:
    yield " " * depth + sign + node.text
    for child in node.children:
        yield from _whole(child, sign, depth + 1)
