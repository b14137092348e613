"""Blocks of a show command's text: a line at the margin and the indented lines under it (one
interface of ``show interfaces``), as the platforms' own commands and their structured forms
read them."""

from __future__ import annotations

from collections.abc import Iterator

__all__ = ["margin_blocks"]


def margin_blocks(text: str, *, continues: tuple[str, ...] = (),
                  drop_blank: bool = False) -> Iterator[list[str]]:
    """The blocks of ``text``, each a list of lines: a line at the margin starts one, unless it
    starts with one of ``continues`` (NX-OS's ``admin state is ...`` under an interface's first
    line); lines before the first block are left out, and blank lines too with ``drop_blank``."""
    block: list[str] = []
    for line in text.splitlines():
        if line and not line[0].isspace() and not (continues and line.startswith(continues)):
            if block:
                yield block
            block = [line]
        elif block and (line.strip() or not drop_blank):
            block.append(line)
    if block:
        yield block
