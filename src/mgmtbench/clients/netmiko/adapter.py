"""Netmiko: its own PTY logic (prompt discovery, enable, paging off, command echo and prompt
matching), which is what is benchmarked; the shared :mod:`mgmtbench.clients.pty` steps are not used.

Modes:

- ``pty-fresh``: per iteration ``ConnectHandler`` (SSH connect, login, session preparation),
  ``enable``, one ``send_command`` per command, ``disconnect``.
- ``pty-reuse``: ``ConnectHandler`` in ``setup`` (its paramiko connection is kept); per iteration
  a new shell channel on that connection, as Netmiko's ``establish_connection`` opens one
  (``remote_conn_pre.invoke_shell(term="vt100", width=511, height=1000)``, wrapped in Netmiko's
  ``SSHChannel``), Netmiko's own session preparation (``_try_session_preparation``: a return,
  its 0.1 s wait, ``terminal width``, paging off, prompt discovery) and ``enable``, then one
  ``send_command`` per command, and the channel is closed.
- ``pty-kept``: ``ConnectHandler`` and ``enable`` in ``setup``; one ``send_command`` per command.

``enable`` is Netmiko's: it sends ``enable`` only when the prompt is not privileged already (a
device that logs in at privilege 15 lands at ``#``).

The driver (``device_type``) is the platform's ``[clients] netmiko_device_type`` in
``transcripts/<platform>/platform.toml``, with Netmiko's defaults (``fast_cli=True``; the
connect time-out raised to 30 s, a bound only); the knobs (:mod:`.knobs`) change those in
``netmiko+<knob>`` and ``netmiko+tuned``. The device's
host key is checked against ``target.known_hosts`` when there is one (``ssh_strict`` with that
file as Netmiko's ``alt_key_file``, the system's known_hosts ignored).

Login follows ``target.auth``: the password (no agent, no key files, as before) or the private key
file (``use_keys=True, key_file=...``). Netmiko's agent support reads only ``SSH_AUTH_SOCK`` and it
can only disable paramiko's algorithms, not choose them in order, so ``Auth.AGENT`` and algorithm
choices are refused (:class:`~mgmtbench.errors.UsageError`).

Application round trips are counted (every mode) on a counting socket handed to Netmiko as
``sock=``, which Netmiko passes on to paramiko (the TCP connection made here, with the same 30 s
time-out).

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

import re
import socket
from typing import Any

from mgmtbench.clients.base import KEPT_SHELL
from mgmtbench.clients.netmiko.knobs import (
    CMD_VERIFY_OFF,
    EXPECT_STRING,
    GLOBAL_DELAY_FACTOR,
    KNOBS,
    SHORT_TIMEOUTS,
    TCP_NODELAY,
)
from mgmtbench.clients.roundtrips import CountingSocket
from mgmtbench.clients.session import SessionClient
from mgmtbench.clients.translate import Translator, optional_errors, translate_errors
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    WrongOutput,
)
from mgmtbench.targets import Auth

try:
    import netmiko
    import netmiko.channel
    import netmiko.exceptions
    import paramiko
except ImportError:  # reported by Client.missing()
    netmiko = None  # type: ignore[assignment]
    paramiko = None

ERRORS = optional_errors(
    {OSError: ConnectionFailed, EOFError: ConnectionFailed, TimeoutError: ClientTimeout,
     # Netmiko reports a refused enable (and other device answers it did not expect) as
     # ValueError.
     ValueError: ClientError},
    netmiko, lambda: {
        netmiko.exceptions.NetmikoBaseException: ClientError,
        netmiko.exceptions.NetmikoAuthenticationException: AuthenticationFailed,
        netmiko.exceptions.NetmikoTimeoutException: ClientTimeout,
        paramiko.SSHException: ClientError,
        paramiko.AuthenticationException: AuthenticationFailed,
    })


_CONNECT_TIMEOUT = 30


def _classify(exc: BaseException) -> type[ClientError] | None:
    """Netmiko reports a refused TCP connection as a time-out: the cause says which it was."""
    cause = exc.__cause__ or exc.__context__
    if (netmiko is not None and isinstance(exc, netmiko.exceptions.NetmikoTimeoutException)
            and isinstance(cause, OSError) and not isinstance(cause, TimeoutError)):
        return ConnectionFailed
    return None


class NetmikoClient(SessionClient):
    """Netmiko's ConnectHandler, PTY modes."""
    name = "netmiko"
    extra = "netmiko"
    needs = ("netmiko",)
    library = "netmiko"
    driver_field = "netmiko_device_type"
    driver_kind = "device type"
    no_agent = " (it reads only SSH_AUTH_SOCK)"
    no_algorithms = " (it can only disable paramiko's)"
    modes = ("pty-fresh", "pty-reuse", KEPT_SHELL)
    counts_round_trips = True
    all_knobs = KNOBS
    #: With ``expect-string``: the privileged prompt (escaped), found once after ``enable``.
    _prompt: str | None = None

    def _settings(self) -> dict[str, Any]:
        """The ``ConnectHandler`` arguments the knobs this client runs with set."""
        settings: dict[str, Any] = {}
        if self.tuned_with(GLOBAL_DELAY_FACTOR.name):
            settings["global_delay_factor"] = 0.02
        if self.tuned_with(CMD_VERIFY_OFF.name):
            settings["global_cmd_verify"] = False
        if self.tuned_with(SHORT_TIMEOUTS.name):
            settings.update(conn_timeout=5, auth_timeout=5, banner_timeout=5,
                            read_timeout_override=5)
        return settings

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS, classify=_classify)

    def _open(self) -> Any:
        t = self.target
        keys: dict[str, Any] = {"ssh_strict": False}
        if t.known_hosts is not None:
            keys = {"ssh_strict": True, "system_host_keys": False, "alt_host_keys": True,
                    "alt_key_file": str(t.known_hosts)}
        if t.auth is Auth.KEY:
            login: dict[str, Any] = {"password": None, "use_keys": True,
                                     "key_file": str(t.key_file)}
        else:
            login = {"password": t.password, "use_keys": False}
        counted: dict[str, Any] = {}
        nodelay = self.tuned_with(TCP_NODELAY.name)
        if self.round_trips is not None or nodelay:
            raw = socket.create_connection((t.host, t.ssh_port), timeout=_CONNECT_TIMEOUT)
            if nodelay:
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            counted["sock"] = (raw if self.round_trips is None
                               else CountingSocket(raw, self.round_trips.connection()))
        settings = {"conn_timeout": _CONNECT_TIMEOUT, **self._settings()}
        try:
            conn = netmiko.ConnectHandler(
                device_type=self.driver(t.platform), host=t.host, port=t.ssh_port,
                username=t.username, secret=t.enable_secret, allow_agent=False,
                **settings, **login, **keys, **counted)
        except BaseException:
            if "sock" in counted:
                counted["sock"].close()
            raise
        try:
            conn.enable()
            if self.tuned_with(EXPECT_STRING.name):
                self._prompt = re.escape(conn.find_prompt())
        except BaseException:
            conn.disconnect()
            raise
        return conn

    def _close(self, session: Any) -> None:
        session.disconnect()

    def _in_new_channel(self, session: Any, commands: list[str]) -> str:
        shell = session.remote_conn_pre.invoke_shell(term="vt100", width=511, height=1000)
        try:
            shell.settimeout(session.blocking_timeout)
            session.remote_conn = shell
            session.channel = netmiko.channel.SSHChannel(conn=shell, encoding=session.encoding)
            session._try_session_preparation()
            session.enable()
            return self._commands(session, commands)
        finally:
            shell.close()

    def _commands(self, session: Any, commands: list[str]) -> str:
        outputs = []
        for command in commands:
            output = session.send_command(command, expect_string=self._prompt)
            if not isinstance(output, str):
                raise WrongOutput(f"netmiko: unexpected {type(output).__name__} for {command!r}")
            gap = self.target.prompt_gap  # Junos's empty line before its prompt
            if gap and output.endswith(gap):
                output = output[:-len(gap)]
            outputs.append(output + "\n" if output else "")
        return "".join(outputs)


#: Netmiko with every knob that matters.
NetmikoClientTuned = tuned(NetmikoClient, KNOBS)
