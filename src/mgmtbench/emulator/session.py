"""The command engine: one CLI session on a device, whatever transport carries it.

A session has a mode (user exec ``host>``, privileged ``host#``, configuration ``host(config)#`` and
its sub-modes) and terminal settings. :meth:`CliSession.execute` takes one typed line and returns a
:class:`Reply` with exactly the text the device prints, so SSH exec, the SSH shell and HTTPS all
carry the same bytes for the same command.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache

from mgmtbench.emulator.config import ConfigLine, block_mode, expand
from mgmtbench.emulator.device import HOSTNAME, Device
from mgmtbench.emulator.fscommands import dir_output, verify_md5_output
from mgmtbench.emulator.grammar import CommandTree, Match, ParseError, ParseErrorKind
from mgmtbench.emulator.transcripts import Platform

MAX_BULK_OUTPUT = 256 * 1024 * 1024
DEFAULT_MAX_LINE = 4096
#: Characters of output a transport takes from a reply at a time (:meth:`Reply.chunks`).
CHUNK = 1 << 16


class Mode(Enum):
    """The CLI mode a session is in, which sets its prompt and the commands it accepts."""
    USER = "user"
    PRIV = "privileged"
    CONFIG = "config"


@dataclass(frozen=True)
class Reply:
    """What the device prints for one line, and what the transport must do next."""

    output: str = ""
    ok: bool = True
    ask_secret: bool = False  # the shell must read a password (no echo) for `enable`
    close: bool = False  # the session ends (exit/logout)
    # Output too long to hold (``show bulk-output``): ``more_size`` more characters after
    # ``output``, made by ``more`` while they are sent, at the pace the client reads them.
    more: Callable[[], Iterator[str]] | None = None
    more_size: int = 0

    @property
    def size(self) -> int:
        """Characters of output (bytes on the wire: output is ASCII)."""
        return len(self.output) + self.more_size

    def chunks(self) -> Iterator[str]:
        """The output in pieces of at most :data:`CHUNK` characters."""
        for start in range(0, len(self.output), CHUNK):
            yield self.output[start:start + CHUNK]
        if self.more is not None:
            yield from self.more()

    def text(self) -> str:
        """The whole output (for short replies and tests: long ones are meant to be streamed)."""
        return "".join(self.chunks())


Action = Callable[["CliSession", Match["Action"]], Reply]


class CliSession:
    """One session's view of a device: mode, sub-mode and terminal settings."""

    def __init__(
        self,
        device: Device,
        *,
        mode: Mode = Mode.USER,
        max_line: int = DEFAULT_MAX_LINE,
        max_output: int = MAX_BULK_OUTPUT,
    ) -> None:
        self.device = device
        self.mode = mode
        self.max_line = max_line
        self.max_output = max_output
        style = device.platform.style
        self.term_length = style.default_term_length
        self.term_width = style.default_term_width
        self.block: ConfigLine | None = None  # the config sub-mode's block, if any
        self.block_prompt: str | None = None

    @property
    def prompt(self) -> str:
        """The prompt the device prints in the current mode, e.g. ``host>`` or ``host(config-if)#``."""
        suffix = self.device.platform.style.prompt_suffix
        host = self.device.hostname
        if self.mode is Mode.USER:
            return f"{host}>{suffix}"
        if self.mode is Mode.PRIV:
            return f"{host}#{suffix}"
        return f"{host}({self.block_prompt or 'config'})#{suffix}"

    def execute(self, line: str) -> Reply:
        """Run one typed line and return what the device prints for it (a refusal instead of
        output longer than ``max_output``)."""
        reply = self._execute(line)
        if reply.size > self.max_output:
            return self.too_long(reply.size, self.max_output, "per command")
        return reply

    def too_long(self, size: int, limit: int, what: str) -> Reply:
        """The device's refusal of ``size`` characters of output over ``limit``."""
        return Reply(f"% Output of {size} bytes exceeds the limit of {limit} bytes {what}\n",
                     ok=False)

    def _execute(self, line: str) -> Reply:
        if len(line) > self.max_line:
            return self._error(ParseError(ParseErrorKind.INVALID, self.max_line), line)
        if not line.strip():
            return Reply()
        trees = _trees(self.device.platform)
        tree = trees.user if self.mode is Mode.USER else trees.priv
        if self.mode is Mode.CONFIG:
            try:
                found = trees.config.match(line)
            except ParseError as exc:
                if exc.kind is ParseErrorKind.INVALID and exc.position == _first_word(line):
                    return self._configure(line.strip())
                return self._error(exc, line)
            return found.action(self, found)
        try:
            found = tree.match(line)
        except ParseError as exc:
            return self._error(exc, line)
        return found.action(self, found)

    def enable(self, secret: str) -> Reply:
        """Answer the `enable` password prompt."""
        if secret == self.device.enable_secret:
            self.mode = Mode.PRIV
            return Reply()
        return Reply(self.device.platform.style.bad_secret, ok=False)

    def end_config(self) -> None:
        """Leave configuration mode (and any sub-mode) for privileged exec, as ``end`` does."""
        if self.mode is Mode.CONFIG:
            self.mode, self.block, self.block_prompt = Mode.PRIV, None, None

    def _error(self, exc: ParseError, line: str) -> Reply:
        style = self.device.platform.style
        if exc.kind is ParseErrorKind.INVALID:
            caret = " " * (len(self.prompt) + exc.position) + "^"
            return Reply(style.invalid.format(caret=caret, command=line), ok=False)
        if exc.kind is ParseErrorKind.AMBIGUOUS:
            return Reply(style.ambiguous.format(command=line.strip()), ok=False)
        return Reply(style.incomplete.format(command=line.strip()), ok=False)

    def _configure(self, line: str) -> Reply:
        config = self.device.config
        if config is None:
            return Reply()
        negate = line.lower().startswith("no ")
        body = expand(line[3:].strip() if negate else line)
        mode = block_mode(body)
        if mode is not None:
            if negate:
                config.remove(body)
                self.block, self.block_prompt = None, None
                return Reply()
            self.block, self.block_prompt = config.open_block(body), mode
        elif negate:
            config.remove(body, self.block)
        else:
            config.set(body, self.block)
        return Reply()


# --- command actions ---------------------------------------------------------------------------


def _transcript(session: CliSession, found: Match[Action]) -> Reply:
    return Reply(session.device.transcript(found.words))


def _enable(session: CliSession, found: Match[Action]) -> Reply:
    if session.mode is Mode.USER:
        return Reply(ask_secret=True)
    return Reply()


def _disable(session: CliSession, found: Match[Action]) -> Reply:
    session.mode = Mode.USER
    return Reply()


def _close(session: CliSession, found: Match[Action]) -> Reply:
    return Reply(close=True)


def _configure_terminal(session: CliSession, found: Match[Action]) -> Reply:
    session.mode = Mode.CONFIG
    return Reply(session.device.platform.style.config_banner)


def _term_length(session: CliSession, found: Match[Action]) -> Reply:
    session.term_length = int(found.args[-1])
    return Reply()


def _term_width(session: CliSession, found: Match[Action]) -> Reply:
    session.term_width = int(found.args[-1])
    return Reply()


def _noop(session: CliSession, found: Match[Action]) -> Reply:
    return Reply()


def _write_memory(session: CliSession, found: Match[Action]) -> Reply:
    return Reply("Building configuration...\n[OK]\n")


def _show_privilege(session: CliSession, found: Match[Action]) -> Reply:
    level = 1 if session.mode is Mode.USER else 15
    return Reply(f"Current privilege level is {level}\n")


def _show_curpriv(session: CliSession, found: Match[Action]) -> Reply:
    level, name = (1, "P_UNPR") if session.mode is Mode.USER else (15, "P_PRIV")
    if session.mode is Mode.CONFIG:
        name = "P_CONF"
    return Reply(f"Username : enable_{level}\nCurrent privilege level : {level}\n"
                 f"Current Mode/s : {name}\n")


def _show_bulk(session: CliSession, found: Match[Action]) -> Reply:
    size = int(found.args[0])
    if size > session.max_output:  # refused before a byte of it is made
        return session.too_long(size, session.max_output, "per command")
    return Reply(more=lambda: bulk_chunks(size), more_size=size)


def _dir(session: CliSession, found: Match[Action]) -> Reply:
    text, ok = dir_output(session.device.files, found.args[0] if found.args else None)
    return Reply(text, ok=ok)


def _verify_md5(session: CliSession, found: Match[Action]) -> Reply:
    text, ok = verify_md5_output(session.device.files, found.args[0])
    return Reply(text, ok=ok)


def _end(session: CliSession, found: Match[Action]) -> Reply:
    session.end_config()
    return Reply()


def _config_exit(session: CliSession, found: Match[Action]) -> Reply:
    if session.block is not None:
        session.block, session.block_prompt = None, None
    else:
        session.end_config()
    return Reply()


def _do(session: CliSession, found: Match[Action]) -> Reply:
    """``do <exec command>`` (and ASA-style ``show ...``) from configuration mode."""
    line = found.args[0] if found.words == ("do",) else " ".join((*found.words, *found.args))
    try:
        inner = _trees(session.device.platform).priv.match(line)
    except ParseError as exc:
        return session._error(exc, line)
    if inner.action in (_configure_terminal, _enable, _disable, _close):
        return Reply()
    return inner.action(session, inner)


def _hostname(session: CliSession, found: Match[Action]) -> Reply:
    name = found.args[0]
    if not HOSTNAME.match(name):
        return session._error(ParseError(ParseErrorKind.INVALID, len("hostname ")), found.args[0])
    session.device.set_hostname(name)
    return Reply()


_EXEC_BUILTINS: dict[str, Action] = {
    "enable": _enable,
    "exit": _close,
    "logout": _close,
    "quit": _close,
    "terminal width <0-512>": _term_width,
    "terminal no monitor": _noop,
    "show privilege": _show_privilege,
    "show curpriv": _show_curpriv,
    "show bulk-output <0-268435456>": _show_bulk,
}
_PRIV_BUILTINS: dict[str, Action] = {
    "disable": _disable,
    "configure terminal": _configure_terminal,
    "write memory": _write_memory,
    "copy running-config startup-config": _write_memory,
}
# The device file system (SCP/SFTP's), at privileged level: what Netmiko's file_transfer runs.
_FILE_COMMANDS: dict[str, Action] = {
    "dir": _dir,
    "dir <word>": _dir,
    "verify /md5 <word>": _verify_md5,
}
_CONFIG_BUILTINS: dict[str, Action] = {
    "end": _end,
    "exit": _config_exit,
    "do <line>": _do,
    "show <line>": _do,
    "hostname <word>": _hostname,
    "terminal width <0-512>": _term_width,
    "terminal pager <0-2147483647>": _term_length,
    "pager lines <0-2147483647>": _term_length,
}


@dataclass(frozen=True)
class _Trees:
    user: CommandTree[Action]
    priv: CommandTree[Action]
    config: CommandTree[Action]


@cache
def _trees(platform: Platform) -> _Trees:
    user: CommandTree[Action] = CommandTree()
    priv: CommandTree[Action] = CommandTree()
    config: CommandTree[Action] = CommandTree()
    privileged = platform.style.privileged
    for words in platform.transcripts:
        if words not in privileged:
            user.add(" ".join(words), _transcript)
        priv.add(" ".join(words), _transcript)
    user.add_all(_EXEC_BUILTINS)
    priv.add_all(_EXEC_BUILTINS)
    for pattern in platform.style.paging:  # `terminal length 0` on IOS, `terminal pager 0` on ASA
        user.add(pattern, _term_length)
        priv.add(pattern, _term_length)
    for pattern, action in _PRIV_BUILTINS.items():
        priv.add(pattern, action)
        if tuple(pattern.split()) not in privileged:
            user.add(pattern, action)
    priv.add_all(_FILE_COMMANDS)
    config.add_all(_CONFIG_BUILTINS)
    return _Trees(user, priv, config)


def _first_word(line: str) -> int:
    return len(line) - len(line.lstrip())


_BULK_LINE = 64
_BULK_FILLER = " mgmtbench bulk output 0123456789abcdefghijklmnopqrstuvwxyz"
# Line n is its 8-digit number and a fixed tail. A chunk is 1,000 lines, n = 1000 k + j: the
# 5 digits of k joined to the 1,000 precomputed "jjj<tail>" strings, one join per chunk.
_BULK_GROUP = 1000
_BULK_TAILS = [f"{j:03d}{_BULK_FILLER[: _BULK_LINE - 9]}\n" for j in range(_BULK_GROUP)]


def bulk_chunks(size: int) -> Iterator[str]:
    """``show bulk-output``'s ``size`` bytes of printable lines (64 bytes each, ending in a
    newline), made 64,000 characters at a time."""
    size = max(0, min(size, MAX_BULK_OUTPUT))
    lines, rest = divmod(size, _BULK_LINE)
    groups, partial = divmod(lines, _BULK_GROUP)
    for k in range(groups + (partial > 0)):
        prefix = f"{k:05d}"
        tails = _BULK_TAILS if k < groups else _BULK_TAILS[:partial]
        yield prefix + prefix.join(tails)
    if rest:
        yield f"{lines:08d}{_BULK_FILLER}"[: rest - 1] + "\n"


def bulk_output(size: int) -> str:
    """Exactly ``size`` bytes of printable lines (64 bytes each), ending in a newline."""
    return "".join(bulk_chunks(size))
