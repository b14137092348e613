"""paramiko: exec channels, an interactive shell, and pipelined channels on one transport."""

from __future__ import annotations

import contextlib
from typing import Any

from mgmtbench.clients.channels import ChannelClient
from mgmtbench.clients.pty import SyncPty

try:
    import paramiko
except ImportError:  # reported by Client.missing()
    paramiko = None


class ParamikoClient(ChannelClient):
    name = "paramiko"
    extra = "paramiko"
    needs = ("paramiko",)

    def _connect(self, stack: contextlib.ExitStack) -> Any:
        t = self.target
        client = paramiko.SSHClient()
        stack.callback(client.close)
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

    def _shell(self, conn: Any, stack: contextlib.ExitStack) -> SyncPty:
        shell = conn.invoke_shell(term="vt100", width=511, height=24)
        stack.callback(shell.close)
        pty = SyncPty(shell.sendall, lambda: shell.recv(65536))
        pty.prepare(self.target)
        return pty

    def _pipelined(self, conn: Any, commands: list[str]) -> str:
        transport = conn.get_transport()
        channels = [transport.open_session() for _ in commands]
        try:
            for channel, command in zip(channels, commands, strict=True):
                channel.exec_command(command)
            return "".join(_read_all(channel) for channel in channels)
        finally:
            for channel in channels:
                channel.close()

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (paramiko.SSHException, OSError, EOFError)


def _read_all(channel: Any) -> str:
    chunks = []
    while data := channel.recv(65536):
        chunks.append(data)
    channel.recv_exit_status()
    return b"".join(chunks).decode("ascii", "replace")
