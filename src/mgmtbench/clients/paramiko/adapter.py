"""paramiko: exec channels, an interactive shell, and pipelined channels on one transport.

Connecting (auth method, algorithm choices, host key) is :mod:`.connect`, shared with the fleet
runner. Application round trips are counted (every mode) on a counting socket given to paramiko as
``sock=`` (:mod:`.connect`).
"""

from __future__ import annotations

import contextlib
from typing import Any

from mgmtbench.clients.channels import ChannelClient
from mgmtbench.clients.paramiko.knobs import KNOBS, TCP_NODELAY, WINDOW_SIZE
from mgmtbench.clients.pty import SyncPty
from mgmtbench.clients.translate import ErrorMap
from mgmtbench.clients.tuning import tuned
from mgmtbench.targets import Target

try:
    from mgmtbench.clients.paramiko import connect
except ImportError:  # paramiko is missing: reported by Client.missing()
    connect = None  # type: ignore[assignment]


class ParamikoClient(ChannelClient):
    """paramiko, every SSH mode."""
    name = "paramiko"
    extra = "paramiko"
    needs = ("paramiko",)
    counts_round_trips = True
    all_knobs = KNOBS

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) an auth method or algorithm choice this
        library cannot honour."""
        if connect is not None:
            connect.check(target)

    def _connect(self, stack: contextlib.ExitStack) -> Any:
        client = connect.connect(self.target, timeout=30, counter=self.round_trips,
                                 nodelay=self.tuned_with(TCP_NODELAY.name))
        stack.callback(client.close)
        if self.tuned_with(WINDOW_SIZE.name):
            transport = client.get_transport()
            transport.default_window_size = 16 * 2**20
            transport.default_max_packet_size = 2**18
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

    def _error_map(self) -> ErrorMap:
        return connect.ERRORS


#: paramiko with every knob that matters.
ParamikoClientTuned = tuned(ParamikoClient, KNOBS)


def _read_all(channel: Any) -> str:
    chunks = []
    while data := channel.recv(65536):
        chunks.append(data)
    channel.recv_exit_status()
    return b"".join(chunks).decode("ascii", "replace")
