"""The interactive shell: a device's terminal line discipline over an SSH channel.

Echoes what is typed, ends lines on CR, LF or CR LF, handles backspace, Ctrl-U, Ctrl-C and Ctrl-Z,
ignores escape sequences and bytes a device's CLI would not accept, pages long output with the
platform's ``--More--`` prompt, and prints the prompt. Output newlines go out as CR LF, as a
terminal's ONLCR does: the bytes between the echo and the prompt are the engine's output with that
one translation.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

import asyncssh

from mgmtbench.emulator.cli.session import CliSession, Mode, Reply

log = logging.getLogger("mgmtbench.emulator")

#: Bytes of echo and help the terminal queues while it works through keys already read; past it
#: the rest waits until the channel has taken them, as a device's terminal line blocks on its
#: output. Typing ``?`` 400,000 times to a client that reads nothing held 240 MiB in the server.
MAX_QUEUED = 64 * 1024
#: Seconds a shell works through keys already typed before it lets the event loop run: while
#: keys wait and the channel takes the output, reading them never suspends, and a client that
#: typed 400,000 ``?`` (a help list each) held every client of the server 4.7-5.9 s in the soak.
SLICE = 0.02

CTRL_C, CTRL_U, CTRL_Z, BS, DEL, ESC = 0x03, 0x15, 0x1A, 0x08, 0x7F, 0x1B
TAB, QUESTION = 0x09, 0x3F


class _Interrupted(Exception):
    """Ctrl-C or Ctrl-Z on the line being typed."""

    def __init__(self, key: int) -> None:
        super().__init__(key)
        self.key = key


class Terminal:
    """Byte-level input and output of one shell session."""

    def __init__(self, process: asyncssh.SSHServerProcess[bytes], max_line: int) -> None:
        self._process = process
        self._max_line = max_line
        self._pending = bytearray()
        self._out: list[bytes] = []  # echo and output not yet handed to the channel
        self._queued = 0  # bytes in _out
        self._skip_lf = False
        self._escape = 0  # 0: none, 1: after ESC, 2: inside a CSI sequence
        self._turn = time.monotonic()  # when this shell last let the loop run

    def write(self, text: str) -> None:
        """Queue output, newlines as CR LF; it goes out on the next flush."""
        data = text.replace("\n", "\r\n").encode("ascii", "replace")
        self._out.append(data)
        self._queued += len(data)

    def flush(self) -> None:
        """Hand what was written to the channel in one piece (one echo per chunk typed)."""
        if self._out:
            self._process.stdout.write(b"".join(self._out))
            self._out.clear()
            self._queued = 0

    async def drain(self) -> None:
        """Flush, then wait until the channel has taken the output."""
        self.flush()
        await self._process.stdout.drain()

    async def _byte(self) -> int | None:
        if time.monotonic() - self._turn > SLICE:
            await asyncio.sleep(0)
            self._turn = time.monotonic()
        if self._queued > MAX_QUEUED:  # ``?`` typed many times: its help lists go out first
            await self.drain()
        while not self._pending:
            await self.drain()  # what the last keys printed has left before more are read
            try:
                chunk = await self._process.stdin.read(4096)
            except (asyncssh.TerminalSizeChanged, asyncssh.BreakReceived, asyncssh.SignalReceived):
                continue
            if not chunk:
                return None
            self._pending += chunk
        byte = self._pending[0]
        del self._pending[0]
        return byte

    async def read_key(self) -> int | None:
        """One key press (for the --More-- prompt)."""
        byte = await self._byte()
        if byte == 0x0D:
            self._skip_lf = True
        return byte

    async def read_line(self, *, echo: bool = True,
                        assist: CliSession | None = None) -> str | None:
        """One line as typed (None at end of input); with ``assist``, ``?`` lists what may come
        next and Tab completes the word, as the device's CLI does."""
        buf: list[str] = []
        while True:
            byte = await self._byte()
            if byte is None:
                return None
            if byte == 0x0A and self._skip_lf:
                self._skip_lf = False
                continue
            self._skip_lf = byte == 0x0D
            if self._escape:
                self._escape = self._next_escape_state(self._escape, byte)
                continue
            if byte in (0x0D, 0x0A):
                self.write("\n")
                return "".join(buf)
            if byte in (CTRL_C, CTRL_Z):
                self.write("^C\n" if byte == CTRL_C else "^Z\n")
                raise _Interrupted(byte)
            if byte in (BS, DEL):
                if buf:
                    buf.pop()
                    if echo:
                        self.write("\b \b")
            elif byte == CTRL_U:
                if echo:
                    self.write("\b \b" * len(buf))
                buf.clear()
            elif byte == ESC:
                self._escape = 1
            elif byte in (QUESTION, TAB) and assist is not None:
                self._assist(assist, buf, byte)
            elif 0x20 <= byte < 0x7F and len(buf) <= self._max_line:
                buf.append(chr(byte))
                if echo:
                    self.write(chr(byte))
            # Other control bytes and non-ASCII bytes are ignored, as a device's CLI does.

    def _assist(self, session: CliSession, buf: list[str], key: int) -> None:
        """``?``: echo it, print the help, then the prompt and the line again; Tab: complete
        the word in place, or print the prompt and the line again on a new line."""
        line = "".join(buf)
        if key == QUESTION:
            self.write("?\n" + session.help(line) + session.prompt + line)
            return
        completed = session.complete(line)
        if completed is None or len(completed) > self._max_line:
            self.write("\n" + session.prompt + line)
            return
        self.write(completed[len(line):])
        buf[:] = completed

    @staticmethod
    def _next_escape_state(state: int, byte: int) -> int:
        """Skip ``ESC x`` and ``ESC [ params final`` (arrow keys and the like)."""
        if state == 1:
            return 2 if byte == ord("[") else 0
        return 2 if 0x20 <= byte < 0x40 else 0


async def run_shell(
    process: asyncssh.SSHServerProcess[bytes], session: CliSession, delay: float
) -> None:
    """Serve an interactive session until exit, logout or end of input."""
    term = Terminal(process, session.max_line)
    session.interactive = True  # questions (Destination filename [x]?) are asked
    # The session holds a line of the device while it is open (``show users``).
    activity = session.device.activity
    line = activity.open_session(session, "shell", session.user, session.peer)
    try:
        await _serve(term, session, delay, lambda: activity.lines.touch(line))
    finally:
        activity.close_session(line)


async def _serve(term: Terminal, session: CliSession, delay: float,
                 touch: Callable[[], None]) -> None:
    """:func:`run_shell`'s loop: prompt, read a line, run it; ``touch()`` after each line."""
    term.write("\n")
    while True:
        term.write(session.prompt)
        await term.drain()
        try:
            line = await term.read_line(assist=session)
        except _Interrupted as exc:
            if exc.key == CTRL_Z or session.mode is Mode.CONFIG:
                session.end_config()
            continue
        if line is None:
            return
        await term.drain()  # the echo goes out before the command runs, as on a device
        if line.strip() and delay:
            await asyncio.sleep(delay)
        reply = session.execute(line)
        touch()
        if reply.ask is not None:
            reply = await _ask(term, reply)
        if reply.ask_secret:
            reply = await _read_secret(term, session)
        await _page(term, session, reply)
        if reply.close:
            await term.drain()
            return


async def _ask(term: Terminal, reply: Reply) -> Reply:
    """Ask a reply's questions (``Destination filename [x]?``), each after the output before
    it, and carry on with the answers typed; Ctrl-C or Ctrl-Z gives up, as on a device."""
    while reply.ask is not None:
        term.write(reply.output + reply.ask.prompt)
        await term.drain()
        try:
            answer = await term.read_line()
        except _Interrupted:
            return Reply()
        if answer is None:
            return Reply()
        reply = reply.ask.answer(answer)
    return reply


async def _read_secret(term: Terminal, session: CliSession) -> Reply:
    term.write(session.device.platform.style.password_prompt)
    await term.drain()
    try:
        secret = await term.read_line(echo=False)
    except _Interrupted:
        return Reply()
    return session.enable(secret or "")


async def _page(term: Terminal, session: CliSession, reply: Reply) -> None:
    """Write a reply's output, stopping at each screenful for a key when paging is on."""
    page = max(1, session.term_length - 1)
    if reply.more is not None:
        await _page_stream(term, session, reply, page)
        return
    text = reply.output
    if session.term_length == 0 or not reply.paged or text.count("\n") <= page:
        term.write(text)
        return
    more = session.device.platform.style.more_prompt
    lines = text.splitlines(keepends=True)
    shown = 0
    step = page
    while shown < len(lines):
        term.write("".join(lines[shown : shown + step]))
        shown += step
        if shown >= len(lines):
            return
        term.write(more)
        await term.drain()
        key = await term.read_key()
        term.write(_more_erase(session))
        if key == 0x20:
            step = page
        elif key in (0x0D, 0x0A):
            step = 1
        else:  # q, Ctrl-C or anything else stops the output, as on a device
            return


async def _page_stream(term: Terminal, session: CliSession, reply: Reply, page: int) -> None:
    """:func:`_page` for output made while it is sent (``show bulk-output``): a chunk at a time,
    each when the channel has taken the one before, so a client that stops reading stops the
    output; paged lazily, a screenful at a time, when paging is on."""
    if session.term_length == 0 or not reply.paged:
        async for chunk in reply.stream():
            term.write(chunk)
            await term.drain()
        return
    more = session.device.platform.style.more_prompt
    lines = _lines(reply.stream())
    batch = await _take(lines, page)
    while batch:
        term.write("".join(batch))
        batch = await _take(lines, 1)  # is there more?
        if not batch:
            return
        term.write(more)
        await term.drain()
        key = await term.read_key()
        term.write(_more_erase(session))
        if key == 0x20:
            batch += await _take(lines, page - 1)
        elif key not in (0x0D, 0x0A):  # q, Ctrl-C or anything else stops the output
            return


def _more_erase(session: CliSession) -> str:
    """What erases the --More-- prompt after a key: the platform's bytes (IOS: backspaces,
    spaces, backspaces), else CR, spaces over the prompt, CR."""
    style = session.device.platform.style
    return style.more_erase or "\r" + " " * len(style.more_prompt) + "\r"


async def _take(lines: AsyncIterator[str], count: int) -> list[str]:
    """The next ``count`` lines (fewer at the end of the output)."""
    batch: list[str] = []
    while len(batch) < count:
        line = await anext(lines, None)
        if line is None:
            break
        batch.append(line)
    return batch


async def _lines(chunks: AsyncIterator[str]) -> AsyncIterator[str]:
    """The lines (with their newlines) of text that comes in chunks."""
    rest = ""
    async for chunk in chunks:
        parts = (rest + chunk).split("\n")
        rest = parts.pop()
        for part in parts:
            yield part + "\n"
    if rest:
        yield rest
