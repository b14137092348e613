"""IOS's delimited multi-line text: ``banner motd ^C`` (and ``banner login``, ``banner exec``),
the lines that follow, and the closing delimiter.

The first character after the keywords is the delimiter (``#``, ``%`` ...; the two characters
``^C``, as ``show running-config`` prints the delimiter, count as one, so that a configuration
the device printed can be pasted back). The text runs to the next delimiter: on the same line
(``banner motd #Authorized only#``) or on a later one, each line typed after it taken as text
(no prompt, no command: ``end`` is a line of text), what follows the closing delimiter on its
line left out. The device keeps the text between the delimiters, its line breaks included,
and shows it between ``^C`` and ``^C`` whatever the delimiter was::

    banner motd ^C
    Authorized access only.
    ^C

Which commands take such text is the platform's grammar's ``delimited`` list
(:mod:`mgmtbench.emulator.cli.configgrammar`); a configuration file's banner (what ``copy ...
running-config`` and ``configure replace`` read) is one command of several lines
(:func:`group_lines`). This is the text's form in a configuration; typing it at the CLI, a line
at a time, is :mod:`mgmtbench.emulator.cli.banner`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

SHOWN = "^C"  # the delimiter as the device shows it
ETX = "\x03"


def delimiter(text: str) -> str | None:
    """The delimiter ``text`` (what follows ``banner motd ``) starts with, None if empty."""
    if text.startswith(SHOWN):
        return SHOWN
    return text[0] if text else None


def closed(text: str) -> str | None:
    """The text between the delimiters if ``text`` closes it (``#hello#``: ``hello``), else
    None (more lines to come)."""
    mark = delimiter(text)
    if mark is None:
        return None
    end = text.find(mark, len(mark))
    return text[len(mark):end] if end >= 0 else None


def stored(head: str, body: str) -> str:
    """The configuration line the device keeps: ``banner motd ^C<text>^C``."""
    return f"{head} {SHOWN}{body}{SHOWN}"


def opens(line: str, heads: Iterable[str] | None) -> str | None:
    """The delimiter of the text a configuration file's ``line`` starts and does not close,
    else None. ``heads``: the commands that take delimited text (``banner motd`` ...); None:
    a configuration the device printed, where the delimiter of a banner is ``^C``."""
    words = line.strip().split(None, 2)
    if len(words) < 3:
        return None
    head, text = f"{words[0]} {words[1]}".lower(), words[2]
    if heads is None:
        if head.split()[0] != "banner" or not text.startswith(SHOWN):
            return None
    elif head not in heads:
        return None
    return delimiter(text) if closed(text) is None else None


def group_lines(lines: Iterable[str], heads: Iterable[str] | None = None) -> Iterator[str]:
    """A configuration file's lines, each delimited text (a banner) joined into one line (its
    line breaks kept): a banner is one command of the file. ``heads`` as :func:`opens`."""
    known = tuple(heads) if heads is not None else None
    pending: list[str] | None = None
    mark = ""
    for line in lines:
        if pending is not None:
            pending.append(line)
            if mark in line:
                yield "\n".join(pending)
                pending = None
            continue
        found = opens(line, known) if known is not None or SHOWN in line else None
        if found is not None:
            mark, pending = found, [line]
            continue
        yield line
    if pending is not None:
        yield from pending
