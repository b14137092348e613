"""parallel-ssh single-host clients: ``pssh-ssh2`` (libssh2 via ssh2-python) and ``pssh-ssh``
(libssh via ssh-python), both non-blocking under gevent.

Each ``run_command`` opens a channel and sends the exec request (one round trip each, awaited in
turn: libssh2 and libssh keep one open/request state per session, so channels cannot be opened
concurrently) and starts two reader greenlets (stdout and stderr) that fill the output's buffers.

Output: the library's ``HostOutput.stdout`` yields *decoded lines without their line endings*
(``\\n`` and ``\\r\\n`` both end a line, and whether the last line had one is lost) and decodes
strictly. The adapter instead reads the same buffer the line iterator reads
(``HostOutput.buffers.stdout.rw_buffer``, filled by the same reader greenlet), so it gets the exact
bytes and decodes them as ascii-replace like every other adapter; the comparison with the
transcripts stays exact. The PTY modes need the raw buffer anyway: a prompt has no line ending,
so the line iterator would hold it back until the channel closes.

PTY modes use the library's :class:`~pssh.clients.base.single.InteractiveShell` on a channel
that has been given a PTY first (``open_shell()`` requests no PTY), writing with
``eagain_write`` and reading the raw stdout buffer.

Modes: every SSH mode. ``pipelined`` issues every ``run_command`` on one connection, then reads every
output: the reader greenlets collect the outputs concurrently.

Login follows ``target.auth``: the password, or the private key file (``pkey=target.key_file``);
the library reads an agent only from ``SSH_AUTH_SOCK`` and has no algorithm options, so
``Auth.AGENT`` and algorithm choices are refused (:class:`~mgmtbench.errors.UsageError`). The
options are :func:`.connect.login_options`, shared with the fleet runner.

Timing notes: connections are made with ``num_retries=1`` (no retry, no 5 s retry delay),
``allow_agent=False``, ``identity_auth=False`` (no probing of ~/.ssh keys) and, for
pssh-ssh2, ``keepalive_seconds=0`` (no keepalive greenlet). pssh-ssh2 runs the SSH handshake in
gevent's thread pool (a real thread). While waiting, the library polls the socket with a 1 ms
timeout in a loop (``poll(timeout=1)`` then retry, in every reader greenlet), so it burns CPU
while it waits for the device (measured: ~12% of a core with one idle shell channel): harmless
for latency on its own, but it competes with an in-process emulator for the GIL and skews
concurrency runs. Importing the library sets ``gevent.hub.Hub.NOT_ERROR = (Exception,)``
process-wide (gevent stops reporting greenlet errors).

Like paramiko, neither client sets ``TCP_NODELAY``: consecutive channels on one connection wait
for the device's delayed ACK (~40 ms on Linux) before each new channel open. Neither has an
option for it; the ``tcp-nodelay`` knob (:mod:`.knobs`, clients ``pssh-ssh2+tuned`` and
``pssh-ssh+tuned``) sets it on the client's public ``sock`` once the constructor has connected
and logged in (:func:`.connect.no_delay`); the ``tcp-nodelay-handshake`` knob sets it as soon as
the socket is connected, which only an override of the private ``_connect_socket`` can do
(:func:`.connect.no_delay_from_connect`).

Host keys are not verified: neither client has a known-hosts option.

pssh-ssh2 leaks its socket's file descriptor on disconnect (``_disconnect`` shuts the socket down
and ``detach()``es it without closing it); the adapter closes that descriptor itself after
leaving the client, or fresh-connection runs would run out of descriptors.
"""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from mgmtbench.clients.channels import ChannelClient
from mgmtbench.clients.pssh.connect import check as check_target
from mgmtbench.clients.pssh.connect import (
    closer_of_leaked,
    error_map,
    login_options,
    message,
    no_delay,
    no_delay_from_connect,
)
from mgmtbench.clients.pssh.knobs import KNOBS, TCP_NODELAY, TCP_NODELAY_HANDSHAKE
from mgmtbench.clients.pty import SyncPty
from mgmtbench.clients.translate import ErrorMap
from mgmtbench.clients.tuning import tuned
from mgmtbench.targets import Target

try:
    import gevent
    from pssh.clients.base.single import InteractiveShell
except ImportError:  # reported by Client.missing()
    gevent = InteractiveShell = None

_TIMEOUT = 30


class _PsshClient(ChannelClient):
    """What the two parallel-ssh clients share; subclasses name the client class and the PTY
    request."""

    extra = "parallel-ssh"
    all_knobs = KNOBS
    #: The client detaches its socket on exit without closing the descriptor (pssh-ssh2).
    _leaks_socket: ClassVar[bool] = False

    def _client_class(self) -> Any:
        raise NotImplementedError

    def _client_options(self) -> dict[str, Any]:
        return {}

    def _request_pty(self, conn: Any, channel: Any) -> None:
        raise NotImplementedError

    @classmethod
    def check(cls, target: Target) -> None:
        check_target(cls.name, target)

    def _connect(self, stack: contextlib.ExitStack) -> Any:
        t = self.target
        client_class = self._client_class()
        if self.tuned_with(TCP_NODELAY_HANDSHAKE.name):
            client_class = no_delay_from_connect(client_class)
        conn = client_class(
            t.host, port=t.ssh_port, num_retries=1, timeout=_TIMEOUT, **login_options(t),
            **self._client_options())
        if self._leaks_socket and conn.sock is not None:
            stack.callback(closer_of_leaked(conn.sock.fileno()))  # after the client's own exit
        entered = stack.enter_context(conn)
        if self.tuned_with(TCP_NODELAY.name):
            no_delay(entered)
        return entered

    def _exec(self, conn: Any, command: str) -> str:
        return _collect(conn, conn.run_command(command))

    def _shell(self, conn: Any, stack: contextlib.ExitStack) -> SyncPty:
        channel = conn.open_session()
        stack.callback(conn.close_channel, channel)
        self._request_pty(conn, channel)
        shell = InteractiveShell(channel, conn)
        buffers = shell.output.buffers
        # The shell never ends by itself: stop its reader greenlets before the channel closes
        # (runs first: the stack unwinds last in, first out), or they poll a closed socket.
        stack.callback(gevent.killall, [buffers.stdout.reader, buffers.stderr.reader])
        chunks = iter(buffers.stdout.rw_buffer)

        def send(data: bytes) -> None:
            conn.eagain_write(channel.write, data)

        def recv() -> bytes:
            with gevent.Timeout(_TIMEOUT, TimeoutError("no output from the device")):
                return bytes(next(chunks, b""))

        pty = SyncPty(send, recv)
        pty.prepare(self.target)
        return pty

    def _pipelined(self, conn: Any, commands: list[str]) -> str:
        outputs = [conn.run_command(c) for c in commands]
        return "".join(_collect(conn, output) for output in outputs)

    def _error_map(self) -> ErrorMap:
        return error_map()

    def _message(self, exc: BaseException) -> str:
        return message(exc)


class PsshSsh2Client(_PsshClient):
    """``pssh.clients.native.single.SSHClient`` (libssh2)."""

    name = "pssh-ssh2"
    needs = ("pssh", "ssh2")
    _leaks_socket = True

    def _client_class(self) -> Any:
        from pssh.clients.native.single import SSHClient

        return SSHClient

    def _client_options(self) -> dict[str, Any]:
        return {"keepalive_seconds": 0}

    def _request_pty(self, conn: Any, channel: Any) -> None:
        conn.eagain(channel.pty, "vt100")  # libssh2 takes no size: 80x24


class PsshSshClient(_PsshClient):
    """``pssh.clients.ssh.single.SSHClient`` (libssh)."""

    name = "pssh-ssh"
    needs = ("pssh", "ssh")

    def _client_class(self) -> Any:
        from pssh.clients.ssh.single import SSHClient

        return SSHClient

    def _request_pty(self, conn: Any, channel: Any) -> None:
        conn.eagain(channel.request_pty_size, "vt100", 511, 24)


#: The two clients with every knob that matters.
PsshSsh2ClientTuned = tuned(PsshSsh2Client, KNOBS)
PsshSshClientTuned = tuned(PsshSshClient, KNOBS)


def _collect(conn: Any, output: Any) -> str:
    """All of a command's stdout, exactly as sent, then wait for the channel's end and close it."""
    with gevent.Timeout(_TIMEOUT, TimeoutError("timed out reading the command's output")):
        data = b"".join(output.buffers.stdout.rw_buffer)
        conn.wait_finished(output)
        gevent.joinall([output.buffers.stdout.reader, output.buffers.stderr.reader],
                       raise_error=True)
    return data.decode("ascii", "replace")
