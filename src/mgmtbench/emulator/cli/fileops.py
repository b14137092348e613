"""File commands over the device file system and the configurations: ``copy``, ``more``,
``delete``, ``show startup-config``, ``write memory``, the configuration archive (``archive`` /
``path``, ``show archive``, ``show archive config differences`` / ``incremental-diffs``) and,
through :mod:`.revert`, ``configure replace`` and its revert timer — what NAPALM's ios driver
runs to merge, replace, compare, commit and roll back a configuration (files go to ``flash:``
by SCP, :mod:`.sftp`).

Worded as IOS-XE words them; a platform picks its set with ``file_commands`` in
``platform.toml`` (:data:`IOS_COMMANDS` with :mod:`.revert`'s: ``ios``, or :data:`ASA_COMMANDS`
with :mod:`.asafileops`': ``asa``; :data:`mgmtbench.emulator.cli.dialects.FILE_COMMANDS`), which
:func:`mgmtbench.emulator.cli.dialects.platform_commands` makes part of the platform's own
commands. The questions IOS asks (``Destination filename [x]?``, ``Delete flash:/x? [confirm]``)
are :class:`~.engine.Question` replies: the SSH shell asks them, other transports take the default
answer, and ``file prompt quiet`` in the running configuration (or ``delete /force``,
``configure replace ... force``) leaves them out, as on the device.

Locations a command names: ``running-config`` (``system:running-config``), ``startup-config``
(``nvram:startup-config``), ``null:``, and files of the device file system (``flash:x``, or a
bare ``x`` in it). ``running-config`` and ``startup-config`` may be abbreviated (``copy run
start``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from mgmtbench.emulator.cli.configdiff import (
    Command,
    contextual_diff,
    incremental_diff,
    parse,
)
from mgmtbench.emulator.cli.configgrammar import GLOBAL, config_grammar
from mgmtbench.emulator.cli.engine import Action, Mode, Question, Reply, Session
from mgmtbench.emulator.cli.grammar import Match, ParseError, ParseErrorKind
from mgmtbench.emulator.device.banner import group_lines
from mgmtbench.emulator.device.config import RunningConfig, body, line_key
from mgmtbench.emulator.device.configstore import NVRAM_SIZE
from mgmtbench.emulator.device.device import RUNNING_CONFIG, Device
from mgmtbench.emulator.device.filesystem import DeviceFileSystem, Parts

# A flash write rate and a fixed cost per copy, for the "N bytes copied in S secs" line (the
# copy itself is in memory and takes no measurable time).
_COPY_RATE = 4_000_000
_COPY_SETUP = 0.020
_ARCHIVE_MAXIMUM = 10  # `maximum` when the archive block does not set it
_NOT_ENABLED = " Archive feature not enabled\n"


class Kind(Enum):
    """What a location names."""
    RUNNING = "running-config"
    STARTUP = "startup-config"
    NULL = "null:"
    FILE = "file"


@dataclass(frozen=True)
class Location:
    """A place a command reads or writes: a configuration, ``null:``, or a file (``parts`` in
    the device file system, shown as ``shown``)."""

    kind: Kind
    parts: Parts = ()
    shown: str = ""

    @property
    def name(self) -> str:
        """The name IOS offers in ``Destination filename [name]?``."""
        return self.parts[-1] if self.kind is Kind.FILE and self.parts else self.kind.value


_KEYWORDS = {"running-config": Kind.RUNNING, "startup-config": Kind.STARTUP}
_ALIASES = {"system:running-config": Kind.RUNNING, "system:/running-config": Kind.RUNNING,
            "nvram:startup-config": Kind.STARTUP, "nvram:/startup-config": Kind.STARTUP,
            "null:": Kind.NULL}


def locate(files: DeviceFileSystem, word: str) -> Location:
    """The location ``word`` names (OSError for a path the file system refuses)."""
    lowered = word.lower()
    if lowered in _ALIASES:
        return Location(_ALIASES[lowered])
    if ":" not in word:
        keywords = [kind for key, kind in _KEYWORDS.items() if key.startswith(lowered)]
        if len(keywords) == 1:
            return Location(keywords[0])
    parts = files.resolve(word)
    return Location(Kind.FILE, parts, files.display(parts))


# --- reading and writing locations ----------------------------------------------------------


def running_text(device: Device) -> str:
    """The running configuration as a file holds it (no ``Building configuration...``)."""
    return body(device.transcript(RUNNING_CONFIG))


def read(device: Device, where: Location) -> str:
    """The text at ``where`` (OSError if it is a file that cannot be read)."""
    if where.kind is Kind.RUNNING:
        return running_text(device)
    if where.kind is Kind.STARTUP:
        return device.saved.startup
    if where.kind is Kind.NULL:
        return ""
    handle = device.files.open(where.parts)
    return handle.read(0, handle.size).decode("ascii", "replace")


def write_file(files: DeviceFileSystem, parts: Parts, text: str) -> None:
    """Make ``parts`` hold ``text`` (OSError: no space, a folder in the way ...)."""
    files.open(parts, write=True, create=True, truncate=True).write(0, text.encode("ascii",
                                                                                  "replace"))


def prompts_quiet(device: Device) -> bool:
    """Whether file commands ask nothing: the platform never asks (EOS), or ``file prompt
    quiet`` is in the running configuration."""
    return (not device.platform.style.file_prompts
            or "\nfile prompt quiet\n" in "\n" + running_text(device))


def copied(size: int) -> str:
    """IOS's line after a copy: ``N bytes copied in S secs (R bytes/sec)``."""
    secs = _COPY_SETUP + size / _COPY_RATE
    return f"{size} bytes copied in {secs:.3f} secs ({int(size / secs)} bytes/sec)\n"


def _error(verb: str, shown: str, exc: OSError) -> Reply:
    return Reply(f"%Error {verb} {shown} ({exc.strerror or exc})\n", ok=False)


def _shown(files: DeviceFileSystem, word: str) -> str:
    """How an error message names ``word``: ``flash:/x`` for a file of the file system."""
    try:
        return files.display(files.resolve(word))
    except OSError:
        return word


# --- configuration mode from a file ---------------------------------------------------------


def apply_config(typist: Session, lines: Iterable[Command],
                 target: RunningConfig | None = None) -> list[str]:
    """Type ``lines`` in configuration mode, in a new session like ``typist`` on its device,
    each at its depth: a line at a depth no deeper than an open sub-mode's line leaves that
    sub-mode first (``exit``, or the line itself when it is the sub-mode's closing line such as
    ``exit-address-family``), as the file's indentation says, so each line lands under its own
    parent however deep the blocks nest; the error messages of the lines the device refused.
    The lines change ``target`` when given (a configuration session's), else the running
    configuration."""
    session = typist.new_session(Mode.CONFIG)
    session.candidate = target
    opened: list[int] = []  # depths of the lines whose sub-modes are open, outermost first
    errors: list[str] = []
    for line in lines:
        if line.text == "end":
            break
        if opened and line.depth == opened[-1] and line.text.lower().startswith("exit-"):
            reply = session.execute(line.text)  # `exit-address-family`: leaves the block
            if reply.ok:
                del opened[_level(session):]
                continue
        while opened and line.depth <= opened[-1]:
            session.execute("exit")
            del opened[_level(session):]
        level = _level(session)
        if "\n" in line.text:  # a banner's lines: typed one by one, as from a terminal
            *text, last = line.text.split("\n")
            for part in text:
                session.execute(part)
            reply = session.execute(last)
        else:
            reply = session.execute(line.text)
        if not reply.ok:
            errors.append(reply.output)
        if session.mode is not Mode.CONFIG:
            break
        now = _level(session)
        del opened[now:]  # the line left sub-modes (a global command in a block)
        if now > level:
            opened.append(line.depth)
    return errors


def _level(session: Session) -> int:
    """How many sub-modes deep ``session`` is (0: global configuration)."""
    return 0 if session.block is None else len(session.config_outer) + 1


def config_commands(text: str, delimited: Iterable[str] = ()) -> list[Command]:
    """A configuration file's lines as commands (comments and blank lines left out); the lines
    of a banner (the ``delimited`` commands', or one as the device prints it) are one command."""
    commands: list[Command] = []
    heads = tuple(delimited)
    lines = text.splitlines()
    for raw in group_lines(group_lines(lines), heads) if heads else group_lines(lines):
        stripped = raw.strip()
        if stripped and stripped[0] != "!":
            commands.append(Command(len(raw) - len(raw.lstrip(" ")), stripped))
    return commands


def merge(session: Session, text: str) -> str:
    """``copy <file> running-config`` in ``session``: the file's lines typed in configuration
    mode; the refused lines' errors, then the copy line."""
    delimited = config_grammar(session.device.platform).modes[GLOBAL].delimited
    errors = apply_config(session, config_commands(text, delimited))
    return "".join(errors) + copied(len(text))


def same_setting(a: str, b: str) -> bool:
    """Whether two configuration lines set the same single-valued setting."""
    return line_key(a) == line_key(b)


# --- the configuration archive ---------------------------------------------------------------


@dataclass(frozen=True)
class ArchiveSettings:
    """The running configuration's ``archive`` block."""

    path: str
    maximum: int
    write_memory: bool


def archive_settings(device: Device) -> ArchiveSettings | None:
    """The ``archive`` block's settings, None without one that sets a ``path``."""
    for node in parse(running_text(device)):
        if node.text != "archive":
            continue
        path, maximum, write_memory = "", _ARCHIVE_MAXIMUM, False
        for child in node.children:
            words = child.text.split()
            if words[0] == "path" and len(words) == 2:
                path = words[1]
            elif words[0] == "maximum" and len(words) == 2 and words[1].isdigit():
                maximum = int(words[1])
            elif words == ["write-memory"]:
                write_memory = True
        return ArchiveSettings(path.replace("$h", device.hostname), maximum, write_memory) \
            if path else None
    return None


def save_archive(device: Device, settings: ArchiveSettings) -> None:
    """Write the running configuration to the next archive file (the oldest goes beyond
    ``maximum``), named as IOS-XE names them: ``<path>-<Mon-DD-HH-MM-SS.mmm-UTC>-<n>``, at the
    device clock's time."""
    now = device.clock.now()
    stamp = f"{now:%b-%d-%H-%M-%S}.{now.microsecond // 1000:03d}"
    name = f"{settings.path.replace('$t', '')}-{stamp}-UTC-{device.saved.archived}"
    files = device.files
    try:
        write_file(files, files.resolve(name), running_text(device))
    except OSError:
        return
    saved = device.saved
    saved.archived += 1
    saved.archive.append(name)
    while len(saved.archive) > settings.maximum:
        oldest = saved.archive.pop(0)
        with contextlib.suppress(OSError):
            files.remove(files.resolve(oldest))


def save_startup(device: Device) -> None:
    """``write memory``: the running configuration becomes the startup one (and is archived
    when the archive block says ``write-memory``)."""
    device.saved.startup = running_text(device)
    settings = archive_settings(device)
    if settings is not None and settings.write_memory:
        save_archive(device, settings)


# --- command actions ---------------------------------------------------------------------------


def _incomplete(session: Session) -> Reply:
    return session._error(ParseError(ParseErrorKind.INCOMPLETE), "")


def _operands(found: Match[Action]) -> list[str]:
    """The words after the command's own: keywords the tree matched, then arguments."""
    return [*found.words[1:], *found.args]


def _write_memory(session: Session, found: Match[Action]) -> Reply:
    save_startup(session.device)
    return Reply(session.device.platform.style.save_reply)


def _copy(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    words = _operands(found)
    if len(words) != 2:
        return _incomplete(session)
    try:
        source = locate(device.files, words[0])
    except OSError as exc:
        return _error("opening", _shown(device.files, words[0]), exc)
    try:
        target = locate(device.files, words[1])
    except OSError as exc:
        return _error("opening", _shown(device.files, words[1]), exc)
    try:
        text = read(device, source)
    except OSError as exc:
        return _error("opening", source.shown, exc)
    if prompts_quiet(device):
        return _copy_to(session, source, text, target)

    def named(answer: str) -> Reply:
        where = target
        if answer.strip() and target.kind is Kind.FILE:
            try:
                where = locate(device.files, f"{device.files.display(target.parts[:-1])}/"
                               f"{answer.strip()}")
            except OSError as exc:
                return _error("opening", answer.strip(), exc)
        if where.kind is Kind.FILE and device.files.exists(where.parts):
            return Reply("%Warning:There is a file already existing with this name \n",
                         ask=Question("Do you want to over write? [confirm]",
                                      lambda yes: _copy_to(session, source, text, where)
                                      if _confirmed(yes) else Reply()))
        return _copy_to(session, source, text, where)

    return Reply(ask=Question(f"Destination filename [{target.name}]? ", named))


def _copy_to(session: Session, source: Location, text: str, target: Location) -> Reply:
    device = session.device
    if target.kind is Kind.RUNNING:
        return Reply(merge(session, text))
    if target.kind is Kind.STARTUP:
        if source.kind is Kind.RUNNING:  # copy running-config startup-config
            save_startup(device)
            return Reply(device.platform.style.save_reply)
        device.saved.startup = text
        return Reply(copied(len(text)))
    if target.kind is Kind.FILE:
        try:
            write_file(device.files, target.parts, text)
        except OSError as exc:
            return _error("copying", target.shown, exc)
    return Reply(copied(len(text)))


def _confirmed(answer: str) -> bool:
    return answer.strip().lower() in ("", "y", "yes")


def _more(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    word = found.args[-1]
    try:
        return Reply(read(device, locate(device.files, word)))
    except OSError as exc:
        return _error("opening", _shown(device.files, word), exc)


def _delete(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    files = device.files
    words = found.args[0].split()
    switches = {w.lower() for w in words if w.startswith("/")}
    paths = [w for w in words if not w.startswith("/")]
    if len(paths) != 1 or not switches <= {"/force", "/recursive"}:
        return _incomplete(session)
    word = paths[0]

    def remove(where: str) -> Reply:
        try:
            parts = files.resolve(where)
            files.remove(parts)
        except OSError as exc:
            return _error("deleting", _shown(files, where), exc)
        return Reply()

    if "/force" in switches or prompts_quiet(device):
        return remove(word)

    def named(answer: str) -> Reply:
        where = answer.strip() or word
        try:
            shown = files.display(files.resolve(where))
        except OSError as exc:
            return _error("deleting", _shown(files, where), exc)
        return Reply(ask=Question(f"Delete {shown}? [confirm]",
                                  lambda yes: remove(where) if _confirmed(yes) else Reply()))

    default = word.split(":", 1)[-1].lstrip("/")
    return Reply(ask=Question(f"Delete filename [{default}]? ", named))


def _show_startup(session: Session, found: Match[Action]) -> Reply:
    text = session.device.saved.startup
    header = session.device.platform.style.startup_header
    return Reply(header.format(size=len(text), nvram=NVRAM_SIZE) + text)


def _show_archive(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    settings = archive_settings(device)
    if settings is None:
        return Reply(_NOT_ENABLED)
    saved = device.saved.archive
    lines = [f"The maximum archive configurations allowed is {settings.maximum}.",
             f"There are currently {len(saved)} archive configurations saved.",
             f"The next archive file will be named {settings.path}-<timestamp>-"
             f"{device.saved.archived}",
             " Archive #  Name"]
    lines += [f"{number:>4}        {name}" + (" <- Most Recent" if number == len(saved) else "")
              for number, name in enumerate(saved, 1)]
    return Reply("\n".join(lines) + "\n")


def _archive_config(session: Session, found: Match[Action]) -> Reply:
    settings = archive_settings(session.device)
    if settings is None:
        return Reply(_NOT_ENABLED + "% Error caught by command handler\n", ok=False)
    save_archive(session.device, settings)
    return Reply()


def _differences(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    words = found.args[0].split() if found.args else []
    if len(words) > 2:
        return _incomplete(session)
    names = {0: ["nvram:startup-config", "system:running-config"],
             1: [words[0] if words else "", "system:running-config"], 2: words}[len(words)]
    texts: list[str] = []
    for name in names:
        try:
            texts.append(read(device, locate(device.files, name)))
        except OSError as exc:
            return _error("opening", _shown(device.files, name), exc)
    return Reply(contextual_diff(parse(texts[0]), parse(texts[1])))


def _incremental(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    words = found.args[0].split()
    ignorecase = len(words) == 2 and "ignorecase".startswith(words[1].lower())
    if len(words) != 1 and not ignorecase:
        return _incomplete(session)
    try:
        text = read(device, locate(device.files, words[0]))
    except OSError as exc:
        return _error("opening", _shown(device.files, words[0]), exc)
    return Reply(incremental_diff(parse(running_text(device)), parse(text),
                                  ignorecase=ignorecase))


# --- the command sets (mgmtbench.emulator.cli.dialects.FILE_COMMANDS) ------------------------

#: IOS's file commands (with ``configure replace`` and its revert timer: :mod:`.revert`).
IOS_COMMANDS: dict[str, Action] = {
    "copy <word> <word>": _copy,
    "copy running-config <word>": _copy,
    "copy startup-config <word>": _copy,
    "copy running-config startup-config": _copy,
    "more <word>": _more,
    "delete <line>": _delete,
    "write memory": _write_memory,
    "show startup-config": _show_startup,
    "show archive": _show_archive,
    "show archive config differences": _differences,
    "show archive config differences <line>": _differences,
    "show archive config incremental-diffs <line>": _incremental,
    "archive config": _archive_config,
}
#: An ASA's ``more`` prints the file as IOS's does; its ``copy`` and ``delete`` word their
#: questions and switches (``/noconfirm``) otherwise: :mod:`.asafileops`.
ASA_COMMANDS: dict[str, Action] = {
    "more <word>": _more,
}
