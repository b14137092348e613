"""An ASA's ``copy`` and ``delete``: the same locations and file system as IOS's
(:mod:`.fileops`), worded and asked as the ASA does.

- ``copy [/noconfirm] SOURCE DESTINATION`` asks ``Source filename [SOURCE]?`` and then
  ``Destination filename [NAME]?`` (an answer replaces the name), and before writing over a file
  ``Do you want to over write? [confirm]``; a copy of the running configuration prints its
  ``Cryptochecksum:`` (four groups of eight hex digits); then ``N bytes copied in S secs``.
  A copy to ``running-config`` merges the file as typed configuration (refused lines print
  their errors); to ``startup-config`` it saves.
- ``write memory`` prints the same checksum and ``bytes copied`` line between ``Building
  configuration...`` and ``[OK]``.
- ``delete [/noconfirm] [/recursive] PATH`` asks ``Delete filename [NAME]?`` and then
  ``Delete disk0:/PATH? [confirm]``.

``/noconfirm`` leaves the questions out; transports without a terminal (SSH exec, HTTPS) take
the default answers (:class:`~.engine.Question`). ``flash:`` names ``disk0:``, as on the ASA
5500-X. Each question is printed after an empty line, as the ASA prints it.

Worded from memory of ASA 9.x sessions, no capture at hand to check against: the questions'
wording, the blank lines, the checksum's grouping and the ``bytes copied`` line (no rate, as
``write memory`` prints it) may differ in detail from a given image.
"""

from __future__ import annotations

import hashlib

from mgmtbench.emulator.cli.engine import Action, Question, Reply, Session
from mgmtbench.emulator.cli.fileops import (
    Kind,
    Location,
    _confirmed,
    _error,
    _incomplete,
    _shown,
    apply_config,
    config_commands,
    locate,
    read,
    save_startup,
    write_file,
)
from mgmtbench.emulator.cli.grammar import Match

_COPY_RATE = 4_000_000  # as fileops's: the copy itself takes no measurable time
_COPY_SETUP = 0.030
# Lines of a saved configuration that configure nothing: comments, its checksum, its version.
_NOT_CONFIG = (":", "Cryptochecksum:", "ASA Version ")
_OVERWRITE = ("%Warning:There is a file already existing with this name\n"
              "Do you want to over write? [confirm]")


def copied(size: int) -> str:
    """The ASA's line after a copy: ``N bytes copied in S secs``."""
    return f"{size} bytes copied in {_COPY_SETUP + size / _COPY_RATE:.3f} secs\n"


def checksum(text: str) -> str:
    """``Cryptochecksum: 8a1f3c9e 2b7d40e6 f15a9c3d 7e0b2a64`` of a configuration."""
    digest = hashlib.md5(text.encode("ascii", "replace"), usedforsecurity=False).hexdigest()
    return "Cryptochecksum: " + " ".join(digest[i:i + 8] for i in range(0, 32, 8)) + " \n\n"


def _word(word: str) -> str:
    """``flash:`` is another name of ``disk0:``."""
    return "disk0:" + word[6:] if word.lower().startswith("flash:") else word


def _split(found: Match[Action], allowed: set[str]) -> tuple[set[str], list[str]] | None:
    """The command's switches (``/noconfirm``) and its other words; None for a switch it does
    not take."""
    words = found.args[0].split() if found.args else []
    switches = {w.lower() for w in words if w.startswith("/")}
    if not switches <= allowed:
        return None
    return switches, [_word(w) for w in words if not w.startswith("/")]


def _copy(session: Session, found: Match[Action]) -> Reply:
    device = session.device
    split = _split(found, {"/noconfirm"})
    if split is None or len(split[1]) != 2:
        return _incomplete(session)
    switches, (source_word, target_word) = split
    try:
        target = locate(device.files, target_word)
    except OSError as exc:
        return _error("opening", _shown(device.files, target_word), exc)
    if "/noconfirm" in switches:
        return _copy_from(session, source_word, target, ask=False)

    def from_source(answer: str) -> Reply:
        chosen = _word(answer.strip()) or source_word

        def to_target(answer: str) -> Reply:
            where = target
            if answer.strip():
                try:
                    where = locate(device.files, _word(answer.strip()))
                except OSError as exc:
                    return _error("opening", answer.strip(), exc)
            return _copy_from(session, chosen, where, ask=True)

        return Reply(ask=Question(f"\nDestination filename [{target.name}]? ", to_target))

    source_name = source_word.rsplit("/", 1)[-1] if ":" in source_word else source_word
    return Reply(ask=Question(f"\nSource filename [{source_name}]? ", from_source))


def _copy_from(session: Session, source_word: str, target: Location, *, ask: bool) -> Reply:
    device = session.device
    try:
        source = locate(device.files, source_word)
        text = read(device, source)
    except OSError as exc:
        return _error("opening", _shown(device.files, source_word), exc)
    if ask and target.kind is Kind.FILE and device.files.exists(target.parts):
        return Reply(ask=Question(_OVERWRITE, lambda yes: _write(session, source, text, target)
                                  if _confirmed(yes) else Reply()))
    return _write(session, source, text, target)


def _write(session: Session, source: Location, text: str, target: Location) -> Reply:
    device = session.device
    head = checksum(text) if source.kind is Kind.RUNNING else ""
    if target.kind is Kind.RUNNING:
        errors = apply_config(session, [c for c in config_commands(text)
                                        if not c.text.startswith(_NOT_CONFIG)])
        return Reply("".join(errors) + copied(len(text)))
    if target.kind is Kind.STARTUP:
        if source.kind is Kind.RUNNING:
            save_startup(device)
        else:
            device.saved.startup = text
    elif target.kind is Kind.FILE:
        try:
            write_file(device.files, target.parts, text)
        except OSError as exc:
            return _error("copying", target.shown, exc)
    return Reply(head + copied(len(text)))


def _delete(session: Session, found: Match[Action]) -> Reply:
    files = session.device.files
    split = _split(found, {"/noconfirm", "/recursive"})
    if split is None or len(split[1]) != 1:
        return _incomplete(session)
    switches, (word,) = split

    def remove(where: str) -> Reply:
        try:
            files.remove(files.resolve(where))
        except OSError as exc:
            return _error("deleting", _shown(files, where), exc)
        return Reply()

    if "/noconfirm" in switches:
        return remove(word)

    def named(answer: str) -> Reply:
        where = _word(answer.strip()) or word
        try:
            shown = files.display(files.resolve(where))
        except OSError as exc:
            return _error("deleting", _shown(files, where), exc)
        return Reply(ask=Question(f"\nDelete {shown}? [confirm]",
                                  lambda yes: remove(where) if _confirmed(yes) else Reply()))

    default = word.split(":", 1)[-1].lstrip("/")
    return Reply(ask=Question(f"\nDelete filename [{default}]? ", named))


def _write_memory(session: Session, found: Match[Action]) -> Reply:
    """``write memory`` as the ASA prints it: the configuration's checksum and size around the
    IOS-style ``Building configuration...`` / ``[OK]``."""
    save_startup(session.device)
    text = session.device.saved.startup  # the running configuration, saved
    return Reply("Building configuration...\n" + checksum(text) + copied(len(text)) + "[OK]\n")


COMMANDS: dict[str, Action] = {
    "copy <line>": _copy,
    "delete <line>": _delete,
    "write memory": _write_memory,
}
