"""A device's SSH session channels: CLI exec requests answered in the loop turn they arrive in.

A CLI exec (``show version``, or commands joined by newlines) is answered straight onto the
channel when nothing has to wait: the output of each command goes out as it is made, then the
exit status, EOF and close. Only what must wait goes on in a task: a processing delay before a
command, output longer than one chunk (it goes out a chunk at a time, each when the client's
window has taken the one before, so a client that stops reading stops the output), or a client
window that has not taken what was written. Everything else a session can be (a shell, the
bulk sink and source, SCP, SFTP) is handed to an asyncssh process, as before.

The request's success is written before the command runs, so the client takes it while the
device works out the output. With the channel of :mod:`.channel`, an exec on a kept
connection went from 0.30 to 0.22 ms of the emulator's CPU time (no process task, no stream
objects, no open task) and from 1.21-1.25x to 1.09-1.11x the time of the study's Go emulator
with the same client (``benchmarks/test_emulator_baseline.py``; README, "What the emulator adds
to a benchmark's time").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any

import asyncssh

from mgmtbench.emulator.cli.session import CHUNK, CliSession, Mode, Reply
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.guard import source_of
from mgmtbench.emulator.options import Limits
from mgmtbench.emulator.ssh.channel import DeviceChannel

log = logging.getLogger("mgmtbench.emulator")

#: Subsystems served by sessions of their own, by name (``netconf``): each makes a new session.
Subsystems = Mapping[str, Callable[[], "asyncssh.SSHServerSession[bytes]"]]

#: What a client that went away raises at a write.
PEER_GONE = (BrokenPipeError, ConnectionError, asyncssh.Error)
#: The one subsystem an asyncssh process serves (on the device's file system); the server's own
#: (``netconf``) come in ``subsystems``.
SFTP_SUBSYSTEM = "sftp"

#: An exec's steps: a pause (seconds) before a command, or a command's reply; the exit status
#: is the generator's return value.
Steps = Generator["float | Reply", None, int]


def exec_steps(command: str, session: CliSession, delay: float, limits: Limits) -> Steps:
    """Newline-separated commands, run in order as the steps are taken; exit status 0 if every
    one succeeded.

    At most ``limits.max_commands`` commands (more: refused, none run) and
    ``limits.max_request_output`` bytes of output (the command that would go over is refused
    and the rest not run)."""
    lines = command.replace("\r\n", "\n").split("\n")
    commands = sum(1 for line in lines if line.strip())
    if commands > limits.max_commands:
        yield Reply(f"% Too many commands in one request: {commands} "
                    f"(limit {limits.max_commands})\n")
        return 1
    failed = False
    sent = 0
    for line in lines:
        if line.strip() and delay:
            yield float(delay)
        reply = session.execute(line)
        if sent + reply.size > limits.max_request_output:
            yield session.too_long(sent + reply.size, limits.max_request_output, "per request")
            return 1
        sent += reply.size
        failed |= not reply.ok
        yield reply
        if reply.close:
            break
    return 1 if failed else 0


@dataclass(frozen=True)
class CliExec:
    """What a device's CLI exec requests need, and how a session channel finds out whether an
    exec request is one (``is_cli``: not the bulk sink or source, not SCP)."""

    device: Device
    limits: Limits
    on_exec: Callable[[], None]
    is_cli: Callable[[str], bool]

    def steps(self, chan: DeviceChannel, command: str) -> Steps:
        """The steps of ``command`` on a new privileged session of the device."""
        session = CliSession(self.device, mode=Mode.PRIV, max_line=self.limits.max_line,
                             max_output=self.limits.max_output,
                             user=str(chan.get_extra_info("username") or ""),
                             peer=source_of(chan.get_extra_info("peername")))
        return _registered(session, exec_steps(command, session, self.device.processing_delay,
                                                self.limits))


def _registered(session: CliSession, steps: Steps) -> Steps:
    """``steps`` with ``session`` holding a line of its device while they run (``show
    users``): from the first step to the last (or until the exec is dropped)."""
    activity = session.device.activity
    line = activity.open_session(session, "exec", session.user, session.peer)
    try:
        return (yield from steps)
    finally:
        activity.close_session(line)


class DeviceSession(asyncssh.SSHServerSession[bytes]):
    """One session channel of a device: CLI exec requests answered here (see the module
    docstring), anything else handed to the asyncssh process ``make_process()`` returns;
    ``send_now()`` writes the packets gathered so far
    (:func:`~mgmtbench.emulator.ssh.lean.lean_connection`)."""

    def __init__(self, cli: CliExec, make_process: Callable[[], Any],
                 send_now: Callable[[], None], subsystems: Subsystems | None = None,
                 cli_allowed: bool = True) -> None:
        self._cli = cli
        self._send_now = send_now
        self._make_process = make_process
        self._subsystems = subsystems or {}
        self._cli_allowed = cli_allowed
        self._chan: DeviceChannel | None = None
        self._command = ""
        self._writable = asyncio.Event()
        self._writable.set()

    # --- what is not a CLI exec: an asyncssh process takes the channel ---------------------

    def _hand_over(self) -> Any:
        assert self._chan is not None
        process = self._make_process()
        process.connection_made(self._chan)
        self._chan.hand_over(process)
        return process

    def shell_requested(self) -> bool:
        """A shell: an asyncssh process runs it."""
        return self._cli_allowed and bool(self._hand_over().shell_requested())

    def subsystem_requested(self, subsystem: str) -> bool:
        """A subsystem the server was given (``netconf``) takes the channel; ``sftp`` runs in
        an asyncssh process; any other is refused at once, as OpenSSH refuses a subsystem it
        has no ``Subsystem`` line for (a client asking a device without NETCONF for
        ``netconf`` fails now, instead of waiting for a hello that never comes)."""
        make = self._subsystems.get(subsystem)
        if make is not None:
            assert self._chan is not None
            session = make()
            session.connection_made(self._chan)
            self._chan.hand_over(session)
            return True
        if subsystem != SFTP_SUBSYSTEM:
            log.info("subsystem request for %s refused: subsystem not found", subsystem[:64])
            return False
        return self._cli_allowed and bool(self._hand_over().subsystem_requested(subsystem))

    def exec_requested(self, command: str) -> bool:
        """A CLI exec is answered here; any other exec runs in an asyncssh process."""
        if not self._cli_allowed:
            return False
        if not self._cli.is_cli(command):
            return bool(self._hand_over().exec_requested(command))
        self._command = command
        return True

    # --- a CLI exec ------------------------------------------------------------------------

    def connection_made(self, chan: Any) -> None:
        """The channel is open."""
        self._chan = chan

    def session_started(self) -> None:
        """Answer the CLI exec: at once as far as nothing must wait, the rest in a task."""
        chan = self._chan
        assert chan is not None
        self._cli.on_exec()
        # The request's success goes out before the command runs: the client takes it while
        # the device works out the output (sent together, it would take both only after). With
        # asyncssh as the client this is 10-15 % of an exec's time on a kept connection.
        self._send_now()
        steps = self._cli.steps(chan, self._command)
        try:
            while True:
                step = next(steps)
                if isinstance(step, float) or not _one_chunk(step):
                    break  # it must wait: a task takes it from here
                chan.write(step.output.encode("ascii", "replace"))
        except StopIteration as done:
            if self._writable.is_set():  # the client's window took the output: exit now
                _exit(chan, done.value, self._cli.device)
                return
            step = done.value
        except PEER_GONE as exc:
            client_gone(self._cli.device, exc)
            return
        chan.get_connection().create_task(self._finish(chan, step, steps))

    async def _finish(self, chan: DeviceChannel, step: float | Reply | int,
                      steps: Steps) -> None:
        """The rest of an exec, from ``step`` (an int: the exit status, all steps taken)."""
        try:
            while not isinstance(step, int):
                if isinstance(step, float):
                    await asyncio.sleep(step)
                else:
                    await self._write(chan, step)
                try:
                    step = next(steps)
                except StopIteration as done:
                    step = done.value
            await self._writable.wait()
        except PEER_GONE as exc:
            client_gone(self._cli.device, exc)
            return
        _exit(chan, step, self._cli.device)

    async def _write(self, chan: DeviceChannel, reply: Reply) -> None:
        """A reply's output, waiting for the channel to take each chunk before the next (the
        last goes out with whatever follows it); :meth:`Reply.stream` lets other clients in
        between chunks however little a filter keeps of them."""
        async for chunk in reply.stream():
            await self._writable.wait()
            chan.write(chunk.encode("ascii", "replace"))

    def pause_writing(self) -> None:
        """The client's window is full: writes wait."""
        self._writable.clear()

    def resume_writing(self) -> None:
        """The client's window has room again."""
        self._writable.set()

    def eof_received(self) -> bool:
        """The client's EOF on stdin ends nothing: the output goes on."""
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        """The channel closed: a task waiting to write finds it closed."""
        self._writable.set()


def _one_chunk(reply: Reply) -> bool:
    """Whether ``reply`` is written in one piece (the channel then takes it as it is)."""
    return reply.more is None and len(reply.output) <= CHUNK


def _exit(chan: DeviceChannel, status: int, device: Device) -> None:
    try:
        chan.exit(status)
    except PEER_GONE as exc:  # the client may have closed first
        client_gone(device, exc)


def client_gone(device: Device, exc: BaseException) -> None:
    """Log (at info) that a client went away while its session was being answered."""
    log.info("%s ssh: client went away mid-output (%s)", device.hostname, type(exc).__name__)
