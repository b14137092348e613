"""The OpenSSH client binary (``ssh``) in subprocesses: one process per exec, ControlMaster
multiplexing for connection reuse, ``ssh -tt`` for a PTY shell.

Every ``ssh`` runs with an empty configuration (``-F /dev/null``), never asks (``BatchMode``) and
checks the host key strictly against ``target.known_hosts`` (with no known_hosts file the host key
is not checked). Login: with ``Auth.PASSWORD`` (the default) and ``Auth.KEY`` it logs in with
``target.key_file`` only (``-i``, ``IdentitiesOnly``: ``BatchMode`` cannot type a password, so the
password is never used, and a target without a key file is refused); with ``Auth.AGENT`` with the
keys of the agent at ``target.agent_socket`` (``IdentityAgent``, no ``-i``).
``target.algorithms`` become ``-o KexAlgorithms=``, ``Ciphers=``, ``MACs=`` and
``HostKeyAlgorithms=`` (comma-separated, in order; ``ssh`` refuses names it does not know).
``LogLevel=ERROR`` keeps informational lines ("Connection to ... closed.") out of stderr.

Modes:

- ``fresh-conn``: per iteration one connection, as for the libraries: a ControlMaster started
  (``ssh -M -S <socket> -fN``, TCP, key exchange, login), one ``ssh -S <socket>`` process per
  command (a channel each), and the master stopped (``-O exit``), all inside the iteration.
- ``batch-exec``: one process, the commands joined with newlines as its command.
- ``reuse-conn``: a real ControlMaster started in ``setup`` (``ssh -M -S <socket> -o
  ControlPersist=yes -fN``); each command is an ``ssh -S <socket>`` process, a multiplexing
  client that asks the master for a new channel on its connection. ``teardown`` stops the master
  (``-O exit``).
- ``pipelined``: every command's ``ssh -S <socket>`` process started at once, then collected in
  order: the master multiplexes their channels on its one connection.
- ``pty-fresh``, ``pty-reuse``, ``pty-kept``: ``ssh -tt -e none host`` (a shell with a remote PTY,
  ``TERM=vt100``, no escape character) over stdin/stdout pipes, driven by the shared PTY steps.
  ``pty-fresh``: a new process (and connection) per iteration; ``pty-reuse``: per iteration an
  ``ssh -tt -S <socket>`` process, so a new shell channel on the ControlMaster's connection
  (started in ``setup``); ``pty-kept``: one process started in ``setup``, its shell kept. The
  PTY's size is 0x0: ``ssh`` takes it from a local terminal and there is none (``terminal width
  511`` in the session prep sets the device's width).

Exit status 255 is ``ssh``'s own failure and becomes a :class:`ClientError` with ssh's last
stderr line (:func:`failure` picks the subclass from that line: ``Permission denied`` is
:class:`AuthenticationFailed`, ...); any other status is the remote command's and, as with the
library clients, is ignored.

Timing notes: every command costs a fork/exec of ``ssh`` (and, without the master, a full
connection: key exchange and a public-key signature); with the master, a Unix-socket round trip
to it and a channel open; ``fresh-conn`` adds the master's own start (a fork/exec, the
connection) and stop per iteration. ``ssh`` sets ``TCP_NODELAY`` on every connection, the
ControlMaster's included (``ssh_packet_set_interactive``; see :mod:`.knobs`).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import IO

from mgmtbench.clients.base import REUSING_MODES, SSH_MODES, TranslatedClient, Transport
from mgmtbench.clients.openssh.knobs import AES128_GCM, IPQOS, KNOBS
from mgmtbench.clients.pty import SyncPty
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    UsageError,
)
from mgmtbench.targets import Auth, Target

_TIMEOUT = 30  # seconds: connect, and one command
_CHUNK = 65536

ERRORS = {subprocess.TimeoutExpired: ClientTimeout, OSError: ClientError}

#: What ssh's last stderr line says -> the error it is (first match wins).
_FAILURES: tuple[tuple[str, type[ClientError]], ...] = (
    ("permission denied", AuthenticationFailed),
    ("too many authentication failures", AuthenticationFailed),
    ("timed out", ClientTimeout),
    ("connection refused", ConnectionFailed),
    ("no route to host", ConnectionFailed),
    ("could not resolve", ConnectionFailed),
    ("connection closed", ConnectionFailed),
    ("connection reset", ConnectionFailed),
    ("network is unreachable", ConnectionFailed),
    ("host key verification failed", ClientError),
)


def failure(line: str) -> ClientError:
    """The error for ssh's own failure, from the last line it printed."""
    lowered = line.lower()
    for words, error in _FAILURES:
        if words in lowered:
            return error(f"openssh: {line}")
    return ClientError(f"openssh: {line}")


class OpensshClient(TranslatedClient):
    """The OpenSSH ``ssh`` binary, every SSH mode."""
    name = "openssh"
    transport = Transport.SSH
    modes = SSH_MODES
    extra = "all"  # not a Python library: the hint comes from missing()
    needs = ()
    all_knobs = KNOBS

    _dir: tempfile.TemporaryDirectory[str] | None = None
    _socket: Path | None = None
    _shell: subprocess.Popen[bytes] | None = None
    _pty: SyncPty | None = None

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the client cannot run here, else None."""
        if shutil.which("ssh") is None:
            return f"client {cls.name} needs the ssh binary on PATH: install openssh-client"
        return super().missing()

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of what this client drives (for the results)."""
        try:
            done = subprocess.run(["ssh", "-V"], capture_output=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return {}
        text = (done.stderr or done.stdout).decode("ascii", "replace").strip()
        return {"openssh": text.split(",")[0]} if text else {}

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) an auth method or algorithm choice this
        library cannot honour."""
        if target.auth is Auth.AGENT and target.agent_socket is None:
            raise UsageError("openssh: auth 'agent' needs a target agent_socket")
        if target.auth is not Auth.AGENT and target.key_file is None:
            raise UsageError("openssh: the OpenSSH client logs in with a key (BatchMode cannot "
                             "type a password): give the target a key file or use the agent")

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)

    def _base(self, *options: str) -> list[str]:
        """``ssh`` with the common options, then ``options``, up to the destination."""
        t = self.target
        if t.auth is Auth.AGENT:
            login = ["-o", f"IdentityAgent={t.agent_socket}"]
        elif t.key_file is None:
            raise ClientError("openssh: the OpenSSH client logs in with a key: the target has "
                              "no key_file")
        else:
            login = ["-o", "IdentitiesOnly=yes", "-i", str(t.key_file)]
        if t.known_hosts is not None:
            hosts = ["-o", f"UserKnownHostsFile={t.known_hosts}",
                     "-o", "StrictHostKeyChecking=yes"]
        else:
            hosts = ["-o", "UserKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=no"]
        return ["ssh", "-F", "/dev/null", "-o", "BatchMode=yes", *login, *hosts,
                "-o", "GlobalKnownHostsFile=/dev/null", *self._knob_options(),
                *_algorithm_options(t),
                "-o", f"ConnectTimeout={_TIMEOUT}", "-o", "LogLevel=ERROR",
                "-p", str(t.ssh_port), "-l", t.username, *options, t.host]

    def _knob_options(self) -> list[str]:
        """The ``-o`` options of the knobs this client runs with (:mod:`.knobs`), before the
        target's own algorithm choices: ssh takes an option's first value, so a knob wins."""
        options = []
        if self.tuned_with(AES128_GCM.name):
            options += ["-o", "Ciphers=aes128-gcm@openssh.com"]
        if self.tuned_with(IPQOS.name):
            options += ["-o", "IPQoS=none"]
        return options

    def _mux(self) -> list[str]:
        """``ssh`` as a client of the ControlMaster (never a connection of its own)."""
        if self._socket is None or not self._socket.exists():
            raise ClientError("openssh: the ControlMaster is gone")
        return self._base("-S", str(self._socket), "-o", "ControlMaster=no")

    def _exec(self, args: list[str], command: str) -> str:
        return _finish(_start([*args, command]))

    def _start_master(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="mgmtbench-ssh-")
        self._socket = Path(self._dir.name) / "master"
        log = Path(self._dir.name) / "master.log"
        # -f: ssh forks into the background once logged in; its stderr goes to a file, since a
        # pipe would stay open in the background master.
        with log.open("wb") as err:
            done = subprocess.run(
                self._base("-M", "-S", str(self._socket), "-o", "ControlPersist=yes", "-fN"),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                timeout=_TIMEOUT + 5, check=False)
        if done.returncode != 0 or not self._socket.exists():
            raise failure(f"ControlMaster failed: {_last_line(log.read_bytes())}")

    def _stop_master(self) -> None:
        if self._socket is not None and self._socket.exists():
            subprocess.run(self._base("-S", str(self._socket), "-O", "exit"),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=_TIMEOUT,
                           check=False)
        if self._dir is not None:
            self._dir.cleanup()
        self._dir = self._socket = None

    def _open_shell(self, args: list[str] | None = None) -> tuple[subprocess.Popen[bytes], SyncPty]:
        """A prepared shell in an ``ssh -tt`` process (``args``: ``ssh`` up to the destination,
        by default :meth:`_base`, a connection of its own)."""
        args = self._base() if args is None else args
        shell = subprocess.Popen([*args[:-1], "-tt", "-e", "none", args[-1]], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env={**os.environ, "TERM": "vt100"})
        assert shell.stdin is not None
        assert shell.stdout is not None
        stdin, stdout = shell.stdin.fileno(), shell.stdout.fileno()

        def send(data: bytes) -> None:
            while data:
                data = data[os.write(stdin, data):]

        def recv() -> bytes:
            if not select.select([stdout], [], [], _TIMEOUT)[0]:
                raise ClientTimeout("openssh: no output from the device")
            data = os.read(stdout, _CHUNK)
            if not data:  # ssh ended: say why
                err = _stderr_of(shell)
                _close_shell(shell)
                raise failure(f"ssh exited: {_last_line(err)}")
            return data

        pty = SyncPty(send, recv)
        try:
            pty.prepare(self.target)
        except BaseException:
            _close_shell(shell)
            raise
        return shell, pty

    def setup(self) -> None:
        """Untimed preparation: connect here for the modes that reuse a connection."""
        with self._torn_down_on_failure():
            if self.mode in ("reuse-conn", "pipelined", "pty-reuse"):
                with self._translating():
                    self._start_master()
            elif self.mode == "pty-kept":
                with self._translating():
                    self._shell, self._pty = self._open_shell()
            else:
                assert self.mode not in REUSING_MODES
                self._base()  # refuse a target without a key file before the timed part

    def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "fresh-conn":  # one connection (a master of its own) per iteration
            self._start_master()
            try:
                return "".join(self._exec(self._mux(), c) for c in commands)
            finally:
                self._stop_master()
        if mode == "batch-exec":
            return self._exec(self._base(), "\n".join(commands))
        if mode == "reuse-conn":
            return "".join(self._exec(self._mux(), c) for c in commands)
        if mode == "pipelined":
            args = self._mux()
            processes: list[subprocess.Popen[bytes]] = []
            try:
                for command in commands:
                    processes.append(_start([*args, command]))
                return "".join([_finish(p) for p in processes])
            finally:
                for process in processes:
                    _reap(process)
        if mode == "pty-kept":
            assert self._pty is not None
            return "".join(self._pty.command(c) for c in commands)
        # pty-fresh: a new connection; pty-reuse: a new channel on the master's connection
        shell, pty = self._open_shell(self._mux() if mode == "pty-reuse" else None)
        try:
            return "".join(pty.command(c) for c in commands)
        finally:
            _close_shell(shell)

    def teardown(self) -> None:
        """Close what ``setup`` or ``run`` left open."""
        shell, self._shell, self._pty = self._shell, None, None
        try:
            if shell is not None:
                _close_shell(shell)
        finally:
            with self._translating():
                self._stop_master()


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _finish(process: subprocess.Popen[bytes]) -> str:
    """Wait for an exec process; its stdout, or ClientError if ssh itself failed."""
    try:
        out, err = process.communicate(timeout=_TIMEOUT)
    finally:
        _reap(process)
    if process.returncode == 255:
        raise failure(_last_line(err))
    return out.decode("ascii", "replace")


def _algorithm_options(target: Target) -> list[str]:
    chosen = target.algorithms
    options = []
    for option, names in (("KexAlgorithms", chosen.kex), ("Ciphers", chosen.ciphers),
                          ("MACs", chosen.macs), ("HostKeyAlgorithms", chosen.host_key)):
        if names:
            options += ["-o", f"{option}={','.join(names)}"]
    return options


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Kill a process still running (after an error) and collect it."""
    if process.poll() is None:
        process.kill()
        process.wait()
    for stream in (process.stdout, process.stderr, process.stdin):
        if stream is not None:
            stream.close()


def _close_shell(shell: subprocess.Popen[bytes]) -> None:
    """End an ``ssh -tt`` session: EOF on its stdin (ssh then closes the channel), wait a
    moment, then kill it."""
    if shell.stdin is not None:
        with contextlib.suppress(OSError):
            shell.stdin.close()
    try:
        shell.wait(timeout=2)
    except subprocess.TimeoutExpired:
        shell.kill()
        shell.wait()
    _reap(shell)


def _stderr_of(process: subprocess.Popen[bytes]) -> bytes:
    stream: IO[bytes] | None = process.stderr
    if stream is None or stream.closed:
        return b""
    with contextlib.suppress(OSError, ValueError):
        return stream.read()
    return b""


def _last_line(err: bytes) -> str:
    lines = [line.strip() for line in err.decode("ascii", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else "ssh failed without a message"
