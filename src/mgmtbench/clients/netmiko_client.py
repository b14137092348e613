"""Netmiko: its own PTY logic (prompt discovery, enable, paging off, command echo and prompt
matching), which is what is benchmarked; the shared :mod:`mgmtbench.clients.pty` steps are not used.

Modes:

- ``pty-fresh``: per iteration ``ConnectHandler`` (SSH connect, login, session preparation),
  ``enable``, one ``send_command`` per command, ``disconnect``.
- ``pty-reuse``: ``ConnectHandler`` and ``enable`` in ``setup``; one ``send_command`` per command.

The driver is ``cisco_asa`` for an ASA target, ``cisco_ios`` otherwise, with Netmiko's defaults
(``fast_cli=True``). The device's host key is checked against ``target.known_hosts`` when there is
one (``ssh_strict`` with that file as Netmiko's ``alt_key_file``, the system's known_hosts
ignored); no agent, no key files.

Output normalisation: ``send_command`` (default ``strip_command``/``strip_prompt``) returns a
command's output without the echo line and without the prompt line, and the prompt line takes the
newline that ended the output's last line with it. Everything else is kept exactly, leading blank
lines included (IOS ``show ip ospf neighbor`` and ASA ``show version`` start with one). So the
adapter appends that one ``"\\n"`` to every non-empty output, which gives back the device's bytes
exactly (device outputs always end their last line with a newline). An empty output stays empty.
The one case this cannot tell apart: an output made only of blank lines (``"\\n"`` comes back as
``""``); no transcript is like that.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from mgmtbench.clients.base import REUSING_MODES, Client, ClientError, Transport

try:
    import netmiko
    import netmiko.exceptions
    import paramiko
except ImportError:  # reported by Client.missing()
    netmiko = None  # type: ignore[assignment]
    paramiko = None

T = TypeVar("T")


class NetmikoClient(Client):
    name = "netmiko"
    transport = Transport.SSH
    modes = ("pty-fresh", "pty-reuse")
    extra = "netmiko"
    needs = ("netmiko",)

    _conn: Any = None

    def _device_type(self) -> str:
        return "cisco_asa" if self.target.platform == "cisco_asa" else "cisco_ios"

    def _connect(self) -> Any:
        t = self.target
        keys: dict[str, Any] = {"ssh_strict": False}
        if t.known_hosts is not None:
            keys = {"ssh_strict": True, "system_host_keys": False, "alt_host_keys": True,
                    "alt_key_file": str(t.known_hosts)}
        conn = netmiko.ConnectHandler(
            device_type=self._device_type(), host=t.host, port=t.ssh_port, username=t.username,
            password=t.password, secret=t.enable_secret, use_keys=False, allow_agent=False,
            conn_timeout=30, **keys)
        try:
            conn.enable()
        except BaseException:
            conn.disconnect()
            raise
        return conn

    def setup(self) -> None:
        if self.mode in REUSING_MODES:
            self._conn = self._guard(self._connect)

    def run(self, commands: list[str]) -> str:
        return self._guard(lambda: self._run(commands))

    def _run(self, commands: list[str]) -> str:
        if self.mode == "pty-reuse":
            return self._commands(self._conn, commands)
        conn = self._connect()  # pty-fresh
        try:
            return self._commands(conn, commands)
        finally:
            conn.disconnect()

    @staticmethod
    def _commands(conn: Any, commands: list[str]) -> str:
        outputs = []
        for command in commands:
            output = conn.send_command(command)
            if not isinstance(output, str):
                raise ClientError(f"netmiko: unexpected {type(output).__name__} for {command!r}")
            outputs.append(output + "\n" if output else "")
        return "".join(outputs)

    def teardown(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            self._guard(conn.disconnect)

    def _guard(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except (netmiko.exceptions.NetmikoBaseException, paramiko.SSHException, OSError,
                EOFError, ValueError) as exc:
            # NetmikoTimeoutException and NetmikoAuthenticationException are paramiko
            # SSHExceptions; Netmiko reports a refused enable (and other device answers it did
            # not expect) as ValueError.
            raise ClientError(f"netmiko: {exc or type(exc).__name__}") from exc
