"""SSH exec requests to a device's CLI: the commands of one request run in order
(:class:`ExecRun`), their output written straight to the session channel (:func:`answer_exec`).

A short answer (no processing delay, every command's output one chunk) is written in the
event-loop turn that brought the request: no task, no stdio streams, so the request's success,
its output, the exit status and the close leave in one socket write. That is most of what an
exec costs the emulator besides asyncssh's packet layer, and the Go emulator the study compares
with has no such costs. Anything else (a processing delay, output that is streamed or longer
than a chunk) goes on in a task that waits on the channel's flow control between chunks.
Either way the client gets the same packets: one data packet per command's output (none for
an empty one), then the exit status and the close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

import asyncssh

from mgmtbench.emulator.device import Device
from mgmtbench.emulator.guard import source_of
from mgmtbench.emulator.options import Limits
from mgmtbench.emulator.session import CHUNK, CliSession, Mode, Reply

log = logging.getLogger("mgmtbench.emulator")

#: A session channel's handler: its channel, and a wait for the channel's flow control.
Session = asyncssh.SSHServerProcess[bytes]

#: What a client that went away raises on a write or exit.
PEER_GONE = (BrokenPipeError, ConnectionError, asyncssh.Error)


class ExecRun:
    """The commands of one exec request (newline-separated), run one at a time under the
    request's limits: at most ``limits.max_commands`` commands (more: refused, none run) and
    ``limits.max_request_output`` bytes of output (the command that would go over is refused
    and the rest not run); ``exit`` ends the request. ``status`` is 0 while every command has
    succeeded, 1 after one failed."""

    def __init__(self, command: str, session: CliSession, limits: Limits) -> None:
        self._session = session
        self._max_output = limits.max_request_output
        lines = command.replace("\r\n", "\n").split("\n")
        commands = sum(1 for line in lines if line.strip())
        self._lines = deque(lines)
        self._sent = 0
        self.status = 0
        #: A reply made and not yet written: the request's refusal (then nothing is run).
        self.pending: Reply | None = None
        if commands > limits.max_commands:
            self._lines.clear()
            self.pending = Reply(f"% Too many commands in one request: {commands} "
                                 f"(limit {limits.max_commands})\n")
            self.status = 1

    def next_line(self) -> str | None:
        """The next line to run; None when the request is done."""
        return self._lines.popleft() if self._lines else None

    def reply(self, line: str) -> Reply:
        """Run ``line``: what the device prints for it, or the refusal of output over the
        request's limit (which, as ``exit``, ends the request)."""
        reply = self._session.execute(line)
        if self._sent + reply.size > self._max_output:
            self._lines.clear()
            self.status = 1
            return self._session.too_long(self._sent + reply.size, self._max_output,
                                          "per request")
        self._sent += reply.size
        if not reply.ok:
            self.status = 1
        if reply.close:
            self._lines.clear()
        return reply


def cli_session(channel: asyncssh.SSHServerChannel[bytes], device: Device,
                limits: Limits) -> CliSession:
    """A privileged CLI session for an exec request on ``channel``, with its user and peer
    address (``show users``)."""
    return CliSession(device, mode=Mode.PRIV, max_line=limits.max_line,
                      max_output=limits.max_output,
                      user=str(channel.get_extra_info("username") or ""),
                      peer=source_of(channel.get_extra_info("peername")))


def answer_exec(session: Session, run: ExecRun, delay: float, hostname: str) -> None:
    """Answer an exec request on ``session``'s channel: at once when there is no ``delay``
    and each command's output is one chunk, else in a task (see the module's docstring)."""
    channel = session.channel
    if delay:
        _finish_later(session, run, delay, hostname)
        return
    try:
        if run.pending is not None:
            _write_short(channel, run.pending)
            run.pending = None
        while (line := run.next_line()) is not None:
            reply = run.reply(line)
            if reply.more is not None or len(reply.output) > CHUNK:
                run.pending = reply
                _finish_later(session, run, delay, hostname)
                return
            _write_short(channel, reply)
    except PEER_GONE as exc:
        _gone(hostname, exc)
        return
    if channel.get_write_buffer_size():  # the client's window is full: wait as a writer does
        _finish_later(session, run, delay, hostname)
        return
    _exit(channel, run.status)


def _write_short(channel: asyncssh.SSHServerChannel[bytes], reply: Reply) -> None:
    if reply.output:  # nothing at all for no output, as a stream writer sends nothing
        channel.write(reply.output.encode("ascii", "replace"))


def _finish_later(session: Session, run: ExecRun, delay: float, hostname: str) -> None:
    connection = session.channel.get_connection()
    connection.create_task(_finish(session, run, delay, hostname))


async def _finish(session: Session, run: ExecRun, delay: float, hostname: str) -> None:
    """The rest of an answer: the reply already made (``run.pending``), then the remaining
    lines, each after ``delay``, the output a chunk at a time as the client's window takes
    it."""
    channel = session.channel
    try:
        if run.pending is not None:
            pending, run.pending = run.pending, None
            await write_reply(session, pending)
        while (line := run.next_line()) is not None:
            if line.strip() and delay:
                await asyncio.sleep(delay)
            await write_reply(session, run.reply(line))
        await session.drain(None)
    except PEER_GONE as exc:
        _gone(hostname, exc)
        return
    _exit(channel, run.status)


async def write_reply(session: Session, reply: Reply) -> None:
    """Write a reply's output, waiting for the channel to take each chunk but the last (a short
    reply is one write: it goes out with whatever follows it)."""
    chunks = reply.chunks()
    chunk = next(chunks, None)
    while chunk is not None:
        session.channel.write(chunk.encode("ascii", "replace"))
        chunk = next(chunks, None)
        if chunk is not None:
            await session.drain(None)


def _exit(channel: asyncssh.SSHServerChannel[bytes], status: int) -> None:
    with contextlib.suppress(*PEER_GONE):  # the client may have closed first
        channel.exit(status)


def _gone(hostname: str, exc: BaseException) -> None:
    log.info("%s ssh: client went away mid-output (%s)", hostname, type(exc).__name__)
