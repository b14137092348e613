"""Hussh's blocking ``hussh.Connection``: exec channels, one per command, or one batch.

``Connection(host, port, username, password | private_key, timeout)`` connects, shakes hands and
logs in in its constructor (the Rust ssh2 crate over libssh2, on a ``std::net::TcpStream`` it opens
itself); ``execute(command)`` opens a channel, sends the exec request, reads stdout then stderr to
EOF, waits for the close and takes the exit status; ``close()`` disconnects. Login: the password,
or the private key file (``private_key=``). Not the ssh-agent at a given socket (hussh asks the
agent only when given neither, through ``SSH_AUTH_SOCK``, then tries ``~/.ssh`` keys), and no
algorithm choice (the constructor takes none): both refused. The host key is not checked (hussh
has no known-hosts option).

Modes: ``fresh-conn``, ``reuse-conn`` and ``batch-exec`` (the commands newline-joined in one
``execute``). Left out, and why:

- the PTY modes: ``Connection.shell(pty=True)`` gives an ``InteractiveShell`` whose ``send``
  writes and whose only read, ``read()``, first sends EOF and then reads the channel to its close
  (hussh's ``connection.rs``): no way to read to a prompt, so no echo check or prompt detection per
  command, which is what ``pty-fresh`` means;
- ``pipelined``: ``execute`` is the only way to run a command, and it reads its channel to the
  close before returning; one ``Connection`` cannot have two channels in flight.

Timing notes, from hussh's source (``connection.rs``, version 0.3.3):

- its ``TcpStream`` keeps Nagle's algorithm on (Rust's default, like ssh2-python's plain socket),
  and ``Connection`` takes no socket: each channel after the first on a connection waits for the
  device's delayed ACK, as ssh2-python and paramiko as shipped do. Measured side by side in one
  run (5 commands, ``reuse-conn``): local 240 ms (ssh2 233, paramiko 235, paramiko+tcp-nodelay
  25), regional 690 ms (ssh2 689, paramiko 723, paramiko+tcp-nodelay 362). The one way around
  it is ``proxy_command``: the ``proxy-nodelay`` knob (:mod:`.knobs`, ``hussh+tuned``) gives
  the SSH stream to ``socat`` with ``TCP_NODELAY`` (socat must be on PATH, or ``missing()``
  says so); ``timeout``, hussh's other setting, only bounds the waits;
- every blocking call holds the GIL for its whole network wait (no ``allow_threads`` in the
  bindings): other Python threads of the process stop meanwhile. Threads of ``Connection`` run one
  at a time (:mod:`.fleet`), and an SSH server running in the same process (the tests' in-process
  emulator) cannot answer it at all: this client is tested against ``mgmtbench serve`` in a process
  of its own (``tests/test_hussh.py``).

No round-trip counting: hussh opens its TCP connection itself (``proxy_command`` would put a
process in the path, changing what is timed).

Errors: hussh raises ``hussh.AuthenticationError`` for a refused login and Python's
``TimeoutError`` for everything else at connect time, a refused connection included (``Connection
refused (os error 111)``): that one is classified by its text as :class:`ConnectionFailed`.
Through ``proxy_command`` (``proxy-nodelay``), a refused connection makes socat exit, which hussh
reports as a ``RuntimeError`` ("Failed to start proxy command ..."): a :class:`ConnectionFailed`
too.
"""

from __future__ import annotations

import shutil
from typing import Any

from mgmtbench.clients.base import (
    REUSING_MODES,
    TranslatedClient,
    Transport,
    password_or_key_only,
)
from mgmtbench.clients.hussh.knobs import KNOBS, PROXY_NODELAY
from mgmtbench.clients.translate import ErrorMap, Translator, optional_errors, translate_errors
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
)
from mgmtbench.targets import Auth, Target

try:
    import hussh
except ImportError:  # reported by Client.missing()
    hussh = None

#: hussh's session time-out, in milliseconds (libssh2's ``set_timeout``): 0 would wait forever.
TIMEOUT_MS = 30_000

#: The ``proxy-nodelay`` knob's command (hussh puts the host and port for ``%h`` and ``%p``).
PROXY_COMMAND = "socat - TCP:%h:%p,nodelay"

#: How hussh's ``RuntimeError`` starts when the proxy command exited before the SSH handshake.
_PROXY_FAILED = "Failed to start proxy command"

#: What the text of hussh's ``TimeoutError`` says when the TCP connect itself failed (hussh
#: raises ``TimeoutError`` with the ``io::Error``'s text for every connect failure).
_CONNECT_FAILURES = ("Connection refused", "No route to host", "Network is unreachable",
                     "Connection reset", "failed to lookup address", "Name or service not known")


def check(target: Target) -> None:
    """:class:`~mgmtbench.errors.UsageError` for what hussh cannot do: the agent at a given socket,
    an algorithm choice."""
    password_or_key_only("hussh", target,
                         agent=" (hussh reads SSH_AUTH_SOCK only, and only without a password "
                               "or key)",
                         algorithms=" (hussh.Connection takes no algorithm options)")


def connect(target: Target, timeout_ms: int = TIMEOUT_MS, *, proxy_nodelay: bool = False) -> Any:
    """A connected, logged-in ``hussh.Connection`` to ``target``; with ``proxy_nodelay`` (the
    knob) through ``socat`` with ``TCP_NODELAY`` (:class:`ClientError` without socat)."""
    credential: dict[str, str] = ({"private_key": str(target.key_file)}
                                  if target.auth is Auth.KEY else {"password": target.password})
    if proxy_nodelay:
        if shutil.which("socat") is None:
            raise ClientError(f"hussh+{PROXY_NODELAY.name} needs socat on PATH")
        credential["proxy_command"] = PROXY_COMMAND
    return hussh.Connection(target.host, port=target.ssh_port, username=target.username,
                            timeout=timeout_ms, **credential)


def classify(exc: BaseException) -> type[ClientError] | None:
    """A ``TimeoutError`` whose text says the TCP connect failed is a :class:`ConnectionFailed`
    (hussh reports every connect failure as a ``TimeoutError``), and so is the ``RuntimeError``
    hussh raises when its proxy command exits at once (``proxy-nodelay``: socat could not
    connect); None: the mapping decides."""
    text = str(exc)
    if isinstance(exc, TimeoutError) and any(words in text for words in _CONNECT_FAILURES):
        return ConnectionFailed
    if isinstance(exc, RuntimeError) and text.startswith(_PROXY_FAILED):
        return ConnectionFailed
    return None


def translating(client: str) -> Translator:
    """hussh's errors as mgmtbench's, named after ``client``."""
    return translate_errors(client, ERRORS, classify=classify)


class HusshClient(TranslatedClient):
    """hussh's blocking ``Connection``: ``fresh-conn``, ``reuse-conn``, ``batch-exec``."""
    name = "hussh"
    transport = Transport.SSH
    modes = ("fresh-conn", "reuse-conn", "batch-exec")
    extra = "hussh"
    needs = ("hussh",)
    #: Its calls hold the GIL while they wait on the network: a server in the same process (the
    #: tests' in-process emulator) cannot answer it (see the module).
    blocks_other_threads = True
    all_knobs = KNOBS

    _conn: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) what hussh cannot do."""
        check(target)

    def _translating(self) -> Translator:
        return translating(self.name)

    def setup(self) -> None:
        """Untimed preparation: connect here for ``reuse-conn``."""
        if self.mode in REUSING_MODES:
            with self._torn_down_on_failure(), self._translating():
                self._conn = self._connect()

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the client cannot run here (with ``proxy-nodelay``: socat), else
        None."""
        if cls.tuned_with(PROXY_NODELAY.name) and shutil.which("socat") is None:
            return f"client {cls.name} needs socat on PATH: install socat"
        return super().missing()

    def _connect(self) -> Any:
        return connect(self.target, proxy_nodelay=self.tuned_with(PROXY_NODELAY.name))

    def _run(self, commands: list[str]) -> str:
        if self.mode == "reuse-conn":
            return "".join(_exec(self._conn, c) for c in commands)
        conn = self._connect()
        try:
            if self.mode == "batch-exec":
                return _exec(conn, "\n".join(commands))
            return "".join(_exec(conn, c) for c in commands)
        finally:
            conn.close()

    def teardown(self) -> None:
        """Close the connection ``setup`` made."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with self._translating():
                conn.close()


def _exec(conn: Any, command: str) -> str:
    """One exec channel: its stdout (hussh reads it as UTF-8 text)."""
    return str(conn.execute(command).stdout)


#: hussh with every knob that matters.
HusshClientTuned = tuned(HusshClient, KNOBS)

ERRORS: ErrorMap = optional_errors(
    {OSError: ConnectionFailed, TimeoutError: ClientTimeout},
    hussh, lambda: {hussh.AuthenticationError: AuthenticationFailed})
