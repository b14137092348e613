"""paramiko: exec channels, an interactive shell, and pipelined channels on one transport."""

from __future__ import annotations

from typing import Any

from mgmtbench.clients.base import REUSING_MODES, SSH_MODES, Client, ClientError, Transport
from mgmtbench.clients.pty import SyncPty

try:
    import paramiko
except ImportError:  # reported by Client.missing()
    paramiko = None


class ParamikoClient(Client):
    name = "paramiko"
    transport = Transport.SSH
    modes = SSH_MODES
    extra = "paramiko"
    needs = ("paramiko",)

    _conn: Any = None
    _pty: SyncPty | None = None
    _shell: Any = None

    def _connect(self) -> Any:
        t = self.target
        client = paramiko.SSHClient()
        if t.known_hosts is not None:
            client.load_host_keys(str(t.known_hosts))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        else:
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect(t.host, port=t.ssh_port, username=t.username, password=t.password,
                       look_for_keys=False, allow_agent=False, timeout=30)
        return client

    def _exec(self, conn: Any, command: str) -> str:
        channel = conn.get_transport().open_session()
        try:
            channel.exec_command(command)
            return _read_all(channel)
        finally:
            channel.close()

    def _open_shell(self, conn: Any) -> tuple[Any, SyncPty]:
        shell = conn.invoke_shell(term="vt100", width=511, height=24)
        pty = SyncPty(shell.sendall, lambda: shell.recv(65536))
        pty.prepare(self.target)
        return shell, pty

    def setup(self) -> None:
        if self.mode in REUSING_MODES:
            self._conn = self._guard(self._connect)
            if self.mode == "pty-reuse":
                self._shell, self._pty = self._guard(lambda: self._open_shell(self._conn))

    def run(self, commands: list[str]) -> str:
        return str(self._guard(lambda: self._run(commands)))

    def _run(self, commands: list[str]) -> str:
        mode = self.mode
        if mode == "reuse-conn":
            return "".join(self._exec(self._conn, c) for c in commands)
        if mode == "pty-reuse":
            assert self._pty is not None
            return "".join(self._pty.command(c) for c in commands)
        if mode == "pipelined":
            return self._pipelined(commands)
        conn = self._connect()
        try:
            if mode == "fresh-conn":
                return "".join(self._exec(conn, c) for c in commands)
            if mode == "batch-exec":
                return self._exec(conn, "\n".join(commands))
            shell, pty = self._open_shell(conn)  # pty-fresh
            try:
                return "".join(pty.command(c) for c in commands)
            finally:
                shell.close()
        finally:
            conn.close()

    def _pipelined(self, commands: list[str]) -> str:
        transport = self._conn.get_transport()
        channels = [transport.open_session() for _ in commands]
        try:
            for channel, command in zip(channels, commands, strict=True):
                channel.exec_command(command)
            return "".join(_read_all(channel) for channel in channels)
        finally:
            for channel in channels:
                channel.close()

    def teardown(self) -> None:
        if self._shell is not None:
            self._shell.close()
        if self._conn is not None:
            self._conn.close()
        self._conn = self._shell = self._pty = None

    def _guard(self, call: Any) -> Any:
        try:
            return call()
        except (paramiko.SSHException, OSError, EOFError) as exc:
            raise ClientError(f"paramiko: {exc or type(exc).__name__}") from exc


def _read_all(channel: Any) -> str:
    chunks = []
    while data := channel.recv(65536):
        chunks.append(data)
    channel.recv_exit_status()
    return b"".join(chunks).decode("ascii", "replace")
