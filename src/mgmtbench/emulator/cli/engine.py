"""The command engine: one CLI session on a device, whatever transport carries it.

A session has a mode (user exec ``host>``, privileged ``host#``, configuration ``host(config)#`` and
its sub-modes) and terminal settings. :meth:`Session.execute` takes one typed line and returns a
:class:`Reply` with exactly the text the device prints, so SSH exec, the SSH shell and HTTPS all
carry the same bytes for the same command.

A session's commands are the built-in ones here, the platform's transcripts and the platform's
own commands (a :class:`Dialect`: its file commands, Junos's configuration ...). Those build on
this module, so it does not know them: :func:`build_trees` takes them as an argument, and a
session gets its trees from :meth:`Session.trees`, which
:class:`~mgmtbench.emulator.cli.session.CliSession` (what transports run) answers with the
platform's (:mod:`mgmtbench.emulator.cli.dialects`).
"""

from __future__ import annotations

import asyncio
import re
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Self

from mgmtbench.emulator import structured
from mgmtbench.emulator.cli import confighelp, filters, helptext
from mgmtbench.emulator.cli.banner import PendingText
from mgmtbench.emulator.cli.configgrammar import (
    ConfigGrammar,
    ConfigState,
    Frame,
    config_grammar,
    configure,
    finish_text,
)
from mgmtbench.emulator.cli.fscommands import dir_output, verify_md5_output
from mgmtbench.emulator.cli.grammar import CommandTree, Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.config import ConfigFull, ConfigLine, RunningConfig
from mgmtbench.emulator.device.device import Device, Heard
from mgmtbench.emulator.device.transcripts import Platform

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
class Question:
    """A question a command asks before it goes on (``Destination filename [x]?``,
    ``[confirm]``): the shell prints ``prompt``, reads one line and carries on with
    ``answer(line)``; transports without a terminal (SSH exec, HTTPS) take the default answer
    (an empty line), as a client that only presses Enter."""

    prompt: str
    answer: Callable[[str], Reply]


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
    #: False: ``more_size`` is only an upper bound (streamed output through a filter), so a
    #: transport cannot announce the length before sending.
    exact_size: bool = True
    #: After ``output``, a question whose answer decides the rest (:class:`Question`).
    ask: Question | None = None
    #: False: the shell does not page this output (Junos's ``| no-more``).
    paged: bool = True

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

    async def stream(self) -> AsyncIterator[str]:
        """:meth:`chunks` for a transport on the event loop: the output's pieces (none empty),
        letting other tasks run after each one, so that a long output, or a filter that keeps
        little of it (``show bulk-output 268435456 | section ZZZZ``), holds the loop for one
        chunk's work at a time, not for the whole output."""
        for chunk in self.chunks():
            if chunk:
                yield chunk
            if self.more is not None:
                await asyncio.sleep(0)

    def text(self) -> str:
        """The whole output (for short replies and tests: long ones are meant to be streamed)."""
        return "".join(self.chunks())


Action = Callable[["Session", Match["Action"]], Reply]


@dataclass(frozen=True)
class Dialect:
    """A platform's own commands (patterns as :class:`~mgmtbench.emulator.cli.grammar.CommandTree`
    takes them) by mode."""

    exec: Mapping[str, Action] = field(default_factory=dict)
    config: Mapping[str, Action] = field(default_factory=dict)
    free_config: bool = True
    #: Privileged exec only, in place of a built-in of the same words (the file commands).
    privileged: Mapping[str, Action] = field(default_factory=dict)


class Session(ABC):
    """One session's view of a device: mode, sub-mode and terminal settings. Its commands come
    from :meth:`trees` (:class:`~mgmtbench.emulator.cli.session.CliSession`: the platform's)."""

    def __init__(
        self,
        device: Device,
        *,
        mode: Mode = Mode.USER,
        max_line: int = DEFAULT_MAX_LINE,
        max_output: int = MAX_BULK_OUTPUT,
        user: str = "",
        peer: str = "",
    ) -> None:
        self.device = device
        #: Who logged in and from where (``show users``).
        self.user = user
        self.peer = peer
        self.mode = mode
        self.max_line = max_line
        self.max_output = max_output
        style = device.platform.style
        self.term_length = style.default_term_length
        self.term_width = style.default_term_width
        self.block: ConfigLine | None = None  # the config sub-mode's block, if any
        self.block_prompt: str | None = None
        self.config_mode: str | None = None  # the sub-mode's name in the config grammar
        #: The sub-modes the current one is nested in, outermost first (``router bgp``).
        self.config_outer: list[Frame] = []
        #: Whether a terminal answers questions (:class:`Question`): the SSH shell sets it.
        self.interactive = False
        #: Delimited text being typed (``banner motd ^C`` ...): it takes the next lines.
        self.pending_text: PendingText | None = None
        #: The configuration that configuration lines change when it is not the running one
        #: (EOS's ``configure session``: :mod:`.dialects.eos`), and the name its prompt shows
        #: for the top of configuration mode (``config-s-NAME``).
        self.candidate: RunningConfig | None = None
        self.candidate_mode: str | None = None
        self._nested = False  # a line runs: the lines its command runs are not the client's

    @abstractmethod
    def trees(self) -> Trees:
        """The commands of this session's platform, by mode."""

    def new_session(self, mode: Mode) -> Self:
        """Another session of the same kind on the same device, in ``mode`` (what the lines of a
        configuration file are typed in): the device types in it, so its lines are nobody's
        :class:`Heard`."""
        session = type(self)(self.device, mode=mode)
        session._nested = True
        return session

    @property
    def prompt(self) -> str:
        """The prompt the device prints in the current mode, e.g. ``host>`` or ``host(config-if)#``."""
        if self.pending_text is not None:  # no prompt between the lines of a banner
            return ""
        style = self.device.platform.style
        template = (style.prompt_user if self.mode is Mode.USER else
                    style.prompt_priv if self.mode is Mode.PRIV else style.prompt_config)
        mode = self.block_prompt or self.candidate_mode or style.config_mode
        return template.format(host=self.device.hostname, user=self.user,
                               mode=mode) + style.prompt_suffix

    def execute(self, line: str) -> Reply:
        """Run one typed line and return what the device prints for it (a refusal instead of
        output longer than ``max_output``). The lines a client typed (not those a command runs
        itself) go to :attr:`Device.heard <mgmtbench.emulator.device.device.Device.heard>`
        when someone listens."""
        heard = self.device.heard
        if heard is None or self._nested:
            return self._execute_line(line)
        mode = self.mode
        self._nested = True
        try:
            reply = self._execute_line(line)
        finally:
            self._nested = False
        heard.append(Heard(mode.value, line, reply.ok, reply.output if reply.more is None
                           else reply.output[:CHUNK]))
        return reply

    def _execute_line(self, line: str) -> Reply:
        if self.device.saved.revert is not None:  # a revert timer that ran out reverts first
            self.device.saved.expire(self.device.clock.elapsed())
        reply = self._execute(line)
        if self.device.watchers:
            self.device.lines_ran()
        if reply.ask is not None and not self.interactive:
            reply = _default_answers(reply)
        if reply.size > self.max_output:
            return self.too_long(reply.size, self.max_output, "per command")
        return reply

    def too_long(self, size: int, limit: int, what: str) -> Reply:
        """The device's refusal of ``size`` characters of output over ``limit``."""
        return Reply(f"% Output of {size} bytes exceeds the limit of {limit} bytes {what}\n",
                     ok=False)

    def _execute(self, line: str) -> Reply:
        if self.pending_text is not None:
            return self._text_line(line)
        if len(line) > self.max_line:
            return self._error(ParseError(ParseErrorKind.INVALID, self.max_line), line)
        if not line.strip():
            return Reply()
        trees = self.trees()
        tree = trees.user if self.mode is Mode.USER else trees.priv
        if self.mode is Mode.CONFIG:
            try:
                found = trees.config.match(line)
            except ParseError as exc:
                if not trees.free_config:  # the platform's own config commands only (Junos)
                    return self._error(exc, line)
                return self._configure(line, exc)
            return found.action(self, found)
        return self.run(tree, line)

    def run(self, tree: CommandTree[Action], line: str, typed: str = "") -> Reply:
        """Run an exec ``line`` of ``tree``, through its output filter if it has one; errors
        are placed in ``typed`` (the whole line, ``do show ...``), of which ``line`` is the
        end."""
        typed = typed or line
        try:
            found = tree.match(line)
        except ParseError as exc:
            return self._error(_shifted(exc, len(typed) - len(line)), typed)
        if found.pipe is None:
            return found.action(self, found)
        if found.pipe.action in filters.FORMATS:
            return self._structured(found)
        try:
            line_filter = filters.make_filter(found.pipe)
        except filters.BadExpression:
            position = len(typed.rstrip()) - len(found.pipe.args[0] if found.pipe.args else "")
            return self._error(ParseError(ParseErrorKind.INVALID, position), typed)
        reply = found.action(self, found)
        paged = reply.paged and line_filter.paged
        if reply.more is None and len(reply.output) <= CHUNK:
            return replace(reply, output=filters.filter_text(line_filter, reply.output),
                           paged=paged)
        # Long output is filtered as it is sent, a chunk at a time (:meth:`Reply.stream`).
        return replace(reply, output="", more=lambda: filters.filter_chunks(
            line_filter, reply.chunks()), more_size=reply.size, exact_size=False, paged=paged)

    def command_words(self, line: str) -> tuple[str, ...]:
        """The whole words of the command ``line`` names in the current mode, without running
        it (``sh ver`` -> ``("show", "version")``); ``()`` when it names none."""
        try:
            return self._tree().match(line).words
        except ParseError:
            return ()

    def _structured(self, found: Match[Action]) -> Reply:
        """``show ... | json`` (Junos: ``| display xml`` ...): the command's output as the
        platform's JSON (XML) (:mod:`~mgmtbench.emulator.structured`), made from its text, then
        through the pipes that follow, if any; the platform's refusal for a command it has no
        such form of, and an error as the command prints it."""
        reply = found.action(self, found)
        if not reply.ok:
            return reply
        assert found.pipe is not None
        text = None if reply.more is not None else structured.render(
            self.device, found.pipe.action, found.words, found.args, reply.output)
        if text is None:
            return Reply(self.device.platform.style.unconverted, ok=False)
        if found.pipe.pipe is None:  # Junos's `| display xml | no-more`: the pipes after it
            return Reply(text, paged=reply.paged)
        line_filter = filters.make_filter(found.pipe.pipe)
        return Reply(filters.filter_text(line_filter, text),
                     paged=reply.paged and line_filter.paged)

    def _tree(self) -> CommandTree[Action]:
        """The commands of the current mode."""
        trees = self.trees()
        if self.mode is Mode.CONFIG:
            return trees.config
        return trees.user if self.mode is Mode.USER else trees.priv

    def help(self, line: str) -> str:
        """What ``?`` typed at the end of ``line`` prints (before the prompt is reprinted)."""
        style = self.device.platform.style
        config = self._config_help()
        try:
            options = (confighelp.options(*config, line, self._tree(), self._exec_tree())
                       if config else
                       self._tree().help(line))
        except ParseError as exc:
            if exc.kind is ParseErrorKind.AMBIGUOUS:
                return self._error(exc, line).output
            return style.unrecognized
        if options.partial and not options.keywords and options.arg is None:
            return style.unrecognized
        exec_list = not line.strip() and self.mode is not Mode.CONFIG
        if config:
            return helptext.render(options, self.term_width, "", confighelp.describe,
                                   confighelp.ARGUMENTS)
        return helptext.render(options, self.term_width,
                               style.exec_help_header if exec_list else "")

    def _exec_tree(self) -> CommandTree[Action]:
        """The privileged exec commands (``do ...`` in configuration mode)."""
        return self.trees().priv

    def _config_help(self) -> tuple[ConfigGrammar, str | None] | None:
        """In configuration mode (IOS-style, with a grammar), the grammar and the sub-mode
        whose words ``?`` and Tab offer (:mod:`.confighelp`)."""
        if self.mode is not Mode.CONFIG or not self.trees().free_config:
            return None
        return config_grammar(self.device.platform), self.config_mode if self.block else None

    def complete(self, line: str) -> str | None:
        """The line with its last word completed by Tab, or None when no single word fits."""
        config = self._config_help()
        word = (confighelp.complete(*config, line, self._tree(), self._exec_tree()) if config else
                self._tree().complete(line))
        if word is None:
            return None
        return line[: len(line) - len(line.split()[-1])] + word + " "

    def enable(self, secret: str) -> Reply:
        """Answer the `enable` password prompt."""
        if secret == self.device.enable_secret:
            self.mode = Mode.PRIV
            return Reply()
        return Reply(self.device.platform.style.bad_secret, ok=False)

    def end_config(self) -> None:
        """Leave configuration mode (and any sub-mode) for privileged exec, as ``end`` does."""
        if self.mode is Mode.CONFIG:
            # The device logs the end of a configuration session (IOS's %SYS-5-CONFIG_I).
            self.device.activity.config_ended(self, self.user, self.peer)
            self.mode, self.block, self.block_prompt = Mode.PRIV, None, None
            self.config_outer = []
            self.candidate, self.candidate_mode = None, None
            self.pending_text = None  # Ctrl-C in a banner's text drops it, as on IOS

    def _error(self, exc: ParseError, line: str) -> Reply:
        style = self.device.platform.style
        # The caret goes under the word at fault (past the end for an incomplete command),
        # counted from the prompt's last line (Junos prints [edit] above it).
        position = (len(line.rstrip()) + 1 if exc.kind is ParseErrorKind.INCOMPLETE
                    else exc.position)
        caret = " " * (len(self.prompt.rsplit("\n", 1)[-1]) + position) + "^"
        token, word = _word_at(line, exc.position)
        where = {"caret": caret, "word": word, "token": token}
        if exc.kind is ParseErrorKind.INVALID:
            first = token == 0
            template = style.unknown_command if first and style.unknown_command else style.invalid
            return Reply(template.format(command=line, **where), ok=False)
        if exc.kind is ParseErrorKind.AMBIGUOUS:
            return Reply(style.ambiguous.format(command=line.strip(), **where), ok=False)
        if len(exc.words) == 1 and exc.words[0] in style.incomplete_hint_commands:
            return Reply(style.incomplete_hint.format(command=exc.words[0]), ok=False)
        return Reply(style.incomplete.format(command=line.strip(), **where), ok=False)

    @property
    def config_target(self) -> RunningConfig | None:
        """What configuration lines change: the session's :attr:`candidate`, else the running
        configuration."""
        return self.candidate if self.candidate is not None else self.device.config

    def _configure(self, line: str, builtin: ParseError) -> Reply:
        """A configuration line that is no session command (``builtin``: why not) through the
        platform's grammar (:mod:`.configgrammar`): refused like the device refuses it (the
        error that got further into the line), or applied to the running configuration (or the
        session's :attr:`candidate`, where ``hostname`` renames nothing yet)."""
        config = self.config_target
        if config is None:
            return Reply()
        state = ConfigState(self.block, self.block_prompt, self.config_mode,
                            outer=list(self.config_outer))
        rename = self.device.set_hostname if self.candidate is None else None
        try:
            output = configure(self.device.platform, config, state, line, rename)
        except ParseError as exc:
            further = builtin.position > exc.position and builtin.kind is ParseErrorKind.INVALID
            return self._error(builtin if further else exc, line)
        except ConfigFull as exc:
            return Reply(f"{exc}\n", ok=False)
        self.block, self.block_prompt, self.config_mode = state.block, state.prompt, state.mode
        self.config_outer = state.outer
        self.pending_text = state.pending
        return Reply(output)

    def _text_line(self, line: str) -> Reply:
        """One more line of a banner's text (:attr:`pending_text`): kept when it closes it."""
        assert self.pending_text is not None
        config = self.config_target
        if config is not None:
            try:  # the text so far and this line: refused whole past the capacity
                config.check_room(self.pending_text.size + len(line) + 1)
            except ConfigFull as exc:
                self.pending_text = None
                return Reply(f"{exc}\n", ok=False)
        done = self.pending_text.add(line[:self.max_line])
        if done is not None:
            self.pending_text = None
            if config is not None:
                finish_text(config, done)
        return Reply()


def _word_at(line: str, position: int) -> tuple[int, str]:
    """The index (from 0) and text of the word of ``line`` at character ``position``."""
    token, word = 0, ""
    for index, found in enumerate(_WORDS.finditer(line)):
        if found.start() > position:
            break
        token, word = index, found.group()
    return token, word


_WORDS = re.compile(r"\S+")


def _default_answers(reply: Reply) -> Reply:
    """A reply's questions answered with an empty line (no terminal to ask): the prompts
    printed, each followed by a newline, then the rest of the output."""
    asked: list[str] = []
    while reply.ask is not None:
        asked.append(f"{reply.output}{reply.ask.prompt}\n")
        reply = reply.ask.answer("")
    return replace(reply, output="".join(asked) + reply.output)


# --- command actions ---------------------------------------------------------------------------


def _transcript(session: Session, found: Match[Action]) -> Reply:
    return Reply(session.device.transcript(found.words))


def _enable(session: Session, found: Match[Action]) -> Reply:
    if session.mode is Mode.USER:
        return Reply(ask_secret=True)
    return Reply()


def _disable(session: Session, found: Match[Action]) -> Reply:
    session.mode = Mode.USER
    return Reply()


def _close(session: Session, found: Match[Action]) -> Reply:
    return Reply(close=True)


def _configure_terminal(session: Session, found: Match[Action]) -> Reply:
    session.mode = Mode.CONFIG
    return Reply(session.device.platform.style.config_banner)


def _term_length(session: Session, found: Match[Action]) -> Reply:
    session.term_length = int(found.args[-1])
    return Reply(session.device.platform.style.paging_reply.format(value=found.args[-1]))


def _no_paging(session: Session, found: Match[Action]) -> Reply:
    session.term_length = 0
    return Reply()


def _term_width(session: Session, found: Match[Action]) -> Reply:
    session.term_width = int(found.args[-1])
    return Reply(session.device.platform.style.width_reply.format(value=found.args[-1]))


def _fixed_reply(text: str) -> Action:
    """A command that only prints ``text`` (``replies`` in platform.toml)."""
    def reply(session: Session, found: Match[Action]) -> Reply:
        return Reply(text)
    return reply


def _noop(session: Session, found: Match[Action]) -> Reply:
    return Reply()


def _write_memory(session: Session, found: Match[Action]) -> Reply:
    return Reply(session.device.platform.style.save_reply)


def _show_privilege(session: Session, found: Match[Action]) -> Reply:
    level = 1 if session.mode is Mode.USER else 15
    return Reply(f"Current privilege level is {level}\n")


def _show_curpriv(session: Session, found: Match[Action]) -> Reply:
    level, name = (1, "P_UNPR") if session.mode is Mode.USER else (15, "P_PRIV")
    if session.mode is Mode.CONFIG:
        name = "P_CONF"
    return Reply(f"Username : enable_{level}\nCurrent privilege level : {level}\n"
                 f"Current Mode/s : {name}\n")


def _show_bulk(session: Session, found: Match[Action]) -> Reply:
    size = int(found.args[0])
    if size > session.max_output:  # refused before a byte of it is made
        return session.too_long(size, session.max_output, "per command")
    return Reply(more=lambda: bulk_chunks(size), more_size=size)


def _dir(session: Session, found: Match[Action]) -> Reply:
    text, ok = dir_output(session.device.files, found.args[0] if found.args else None)
    return Reply(text, ok=ok)


def _verify_md5(session: Session, found: Match[Action]) -> Reply:
    text, ok = verify_md5_output(session.device.files, found.args[0])
    return Reply(text, ok=ok)


def _show_users(session: Session, found: Match[Action]) -> Reply:
    """IOS's ``show users``: the session's own vty line (marked ``*``)."""
    line = f"*  2 vty 0     {session.user:<10} idle                 00:00:00 {session.peer}"
    return Reply("    Line       User       Host(s)              Idle       Location\n"
                 f"{line.rstrip()}\n\n"
                 "  Interface    User               Mode         Idle     Peer Address\n\n")


def _one_interface(session: Session, found: Match[Action]) -> Reply:
    """``show interfaces X``, ``show running-config interface X`` ...: one interface's part of
    an output that follows the configuration (:mod:`.derived`); invalid input at the name when
    there is no such interface."""
    derived = session.device.derived
    text = derived.one_interface(found.words, found.args[0]) if derived is not None else None
    if text is None:
        line = " ".join((*found.words, *found.args))
        return session._error(ParseError(ParseErrorKind.INVALID, line.rindex(found.args[0])),
                              line)
    return Reply(text)


def _end(session: Session, found: Match[Action]) -> Reply:
    session.end_config()
    return Reply()


def _config_exit(session: Session, found: Match[Action]) -> Reply:
    if session.block is not None:  # up one sub-mode (`address-family` to `router bgp`)
        state = ConfigState(session.block, session.block_prompt, session.config_mode,
                            outer=session.config_outer)
        state.leave()
        session.block, session.block_prompt, session.config_mode = (state.block, state.prompt,
                                                                    state.mode)
        return Reply()
    return _leave_config(session, found)


def _leave_config(session: Session, found: Match[Action]) -> Reply:
    """Leave configuration mode, saying so if the platform does (``exit configuration-mode``)."""
    session.end_config()
    return Reply(session.device.platform.style.config_exit_banner)


def _do(session: Session, found: Match[Action]) -> Reply:
    """``do <exec command>`` (and ASA-style ``show ...``) from configuration mode."""
    line = found.args[0] if found.words == ("do",) else " ".join((*found.words, *found.args))
    typed = f"do {line}" if found.words == ("do",) else line
    tree = session.trees().priv
    try:
        inner = tree.match(line)
    except ParseError as exc:
        return session._error(_shifted(exc, len(typed) - len(line)), typed)
    if inner.action in (_configure_terminal, _enable, _disable, _close):
        return Reply()
    return session.run(tree, line, typed)


def _shifted(exc: ParseError, offset: int) -> ParseError:
    """``exc`` with its caret ``offset`` characters further right."""
    if not offset or exc.kind is not ParseErrorKind.INVALID:
        return exc
    return ParseError(exc.kind, exc.position + offset, exc.words)


_EXEC_BUILTINS: dict[str, Action] = {
    "enable": _enable,
    "exit": _close,
    "logout": _close,
    "quit": _close,
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
# Commands a platform has if its platform.toml lists them under ``commands``.
_OPTIONAL_COMMANDS: dict[str, Action] = {
    "show users": _show_users,
    # Outputs that follow the configuration (:mod:`.derived`, ``[views]`` in config.toml).
    "show ip interface": _transcript,
    "show interfaces <word>": _one_interface,
    "show interface <word>": _one_interface,
    "show ip interface <word>": _one_interface,
    "show running-config interface <word>": _one_interface,
}
# Exec commands hidden from `?` and Tab (the emulator's own).
_HIDDEN = frozenset({"show bulk-output <0-268435456>", "show curpriv"})
# Commands whose output may go through a filter (`| include ...`): show, dir and more.
_FILTERED = ("show", "dir", "more")
_CONFIG_BUILTINS: dict[str, Action] = {
    "end": _end,
    "exit": _config_exit,
    "do <line>": _do,
    "show <line>": _do,
    "terminal width <0-512>": _term_width,
    "terminal pager <0-2147483647>": _term_length,
    "pager lines <0-2147483647>": _term_length,
}


@dataclass(frozen=True)
class Trees:
    """A platform's commands: user exec, privileged exec and configuration mode."""

    user: CommandTree[Action]
    priv: CommandTree[Action]
    config: CommandTree[Action]
    #: Whether configuration lines that are no command go to the IOS-style configuration.
    free_config: bool = True


def build_trees(platform: Platform, own: Dialect) -> Trees:
    """The command trees of ``platform`` with its ``own`` commands: the built-in ones, ``own``
    and the platform's transcripts."""
    style = platform.style
    pipe = filters.filter_tree(style.filters) if style.filters else None
    user: CommandTree[Action] = CommandTree(pipe)
    priv: CommandTree[Action] = CommandTree(pipe)
    config: CommandTree[Action] = CommandTree(pipe)
    privileged = style.privileged

    def add(pattern: str, action: Action, *, user_too: bool) -> None:
        options = {"pipe": pattern.startswith(_FILTERED), "hidden": pattern in _HIDDEN}
        priv.add(pattern, action, **options)
        if user_too and tuple(pattern.split()) not in privileged:
            user.add(pattern, action, **options)

    # Commands made by code first: a transcript of the same command is then not used.
    for pattern, action in _EXEC_BUILTINS.items():
        add(pattern, action, user_too=True)
    for pattern in style.paging:  # `terminal length 0` on IOS, `terminal pager 0` on ASA
        add(pattern, _term_length, user_too=True)
    for pattern in style.no_paging:  # the ASA's `no terminal pager`
        add(pattern, _no_paging, user_too=True)
    for pattern in style.width:  # `terminal width 511`, Junos's `set cli screen-width 511`
        add(pattern, _term_width, user_too=True)
    for pattern, text in style.replies.items():
        add(pattern, _fixed_reply(text), user_too=True)
    for pattern in style.config_commands:  # `configure` on Junos and EOS
        add(pattern, _configure_terminal, user_too=True)
    for pattern, action in own.exec.items():
        add(pattern, action, user_too=True)
    files = own.privileged  # copy, more, archive ... (may replace `write memory`)
    for pattern, action in _PRIV_BUILTINS.items():
        if pattern not in files:
            add(pattern, action, user_too=True)
    for pattern, action in {**_FILE_COMMANDS, **files}.items():
        add(pattern, action, user_too=False)
    for pattern in style.commands:
        add(pattern, _OPTIONAL_COMMANDS[pattern], user_too=True)
    for words in platform.transcripts:
        pattern = " ".join(words)
        if pattern not in priv:
            add(pattern, _transcript, user_too=True)
    for alias, target in style.aliases.items():  # `write` for `write memory` on IOS
        add(alias, _alias(priv.match(target)), user_too=True)
    leave = dict.fromkeys(style.config_exit_commands, _leave_config)
    config.add_all({**_CONFIG_BUILTINS, **leave, **own.config})
    return Trees(user, priv, config, free_config=own.free_config)


def _alias(target: Match[Action]) -> Action:
    """An action that runs ``target`` (another command's words and arguments)."""
    def run(session: Session, found: Match[Action]) -> Reply:
        return target.action(session, Match(target.action, target.words, target.args))
    return run


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
