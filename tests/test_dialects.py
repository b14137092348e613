"""One mechanism for a platform's own commands (:func:`mgmtbench.emulator.cli.dialects.
platform_commands`): its ``dialect`` (Junos's configuration) and its ``file_commands`` (IOS's and
the ASA's copy, more, delete ...) end up in one :class:`Dialect`, from which the session builds its
command trees, with the same commands as when the session looked up each key itself.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from mgmtbench.emulator import load_platform
from mgmtbench.emulator.cli.dialects import dialect_commands, file_commands, platform_commands
from mgmtbench.emulator.cli.grammar import ParseError
from mgmtbench.emulator.cli.session import platform_trees
from mgmtbench.emulator.device.transcripts import available_platforms


@pytest.mark.parametrize("platform", available_platforms())
def test_platform_commands_are_the_dialect_and_the_file_commands(platform: str) -> None:
    style = load_platform(platform).style
    own = platform_commands(style)
    alone = dialect_commands(style.dialect)
    assert own.exec == alone.exec
    assert own.config == alone.config
    assert own.free_config == alone.free_config
    assert own.privileged == {**alone.privileged, **file_commands(style.file_commands)}
    trees = platform_trees(load_platform(platform))
    for pattern, action in {**own.privileged, **own.exec}.items():  # they win over built-ins
        assert trees.priv.match(typed(pattern)).action is action, pattern


def typed(pattern: str) -> str:
    """A line that ``pattern`` matches (each argument as its smallest value or ``x``)."""
    return re.sub(r"<(\d+)-\d+>", r"\1", pattern.replace("<word>", "x").replace("<line>", "x"))


def test_ios_file_commands_take_the_place_of_the_builtin_write_memory() -> None:
    ios = load_platform("cisco_ios")
    trees = platform_trees(ios)
    assert trees.priv.match("write memory").action is file_commands("ios")["write memory"]
    with pytest.raises(ParseError):
        trees.user.match("copy running-config startup-config")  # privileged only


def test_a_dialect_and_file_commands_combine() -> None:
    style = replace(load_platform("juniper_junos").style, file_commands="ios")
    both = platform_commands(style)
    assert "set <line>" in both.config
    assert not both.free_config
    assert "copy <word> <word>" in both.privileged
    with pytest.raises(ValueError, match="file_commands 'bogus'"):
        platform_commands(replace(style, file_commands="bogus"))
    with pytest.raises(ValueError, match="unknown dialect 'bogus'"):
        platform_commands(replace(style, dialect="bogus"))
