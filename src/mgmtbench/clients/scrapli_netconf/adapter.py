"""scrapli-netconf: scrapli's own NETCONF driver, ``scrapli.netconf.Netconf`` (libscrapli, the
2026 line: the separate ``scrapli_netconf`` package of PyPI is the older, pure-Python generation
and is not used).

Transport: the system OpenSSH client (``ssh`` on PATH, scrapli's ``TransportBinOptions``: an
empty ssh_config, ``os.devnull``, strict host-key checking against ``target.known_hosts`` when
given, none otherwise), which libscrapli runs with ``-s ... netconf``. Not the libssh2 transport
(``TransportSsh2Options``): against the emulator on loopback every RPC on it took ~44 ms (about a
Linux delayed ACK's 40 ms; the cause was not looked into), where the OpenSSH transport took
~1.4 ms, so it would time that stall rather than NETCONF.

Login follows ``target.auth``: the password, or the private key file (``AuthOptions(
private_key_path=...)``); ``Auth.AGENT`` and algorithm choices are refused
(:class:`~mgmtbench.errors.UsageError`), as for the scrapli CLI adapters.

Every RPC is ``Netconf.raw_rpc(operation)`` with the operation of
:mod:`mgmtbench.clients.netconf.rpcs` (libscrapli wraps it in ``<rpc message-id=...>``, chunked
framing after hellos that both offer base:1.1); the reply's text goes through
:func:`~mgmtbench.clients.netconf.rpcs.output`.

Modes (the study's, clibench v0.8):

- ``fresh-session``: per iteration a new ``Netconf`` and ``open()``, one ``raw_rpc`` per command,
  then ``close()``, which sends ``<close-session/>`` and waits for its reply before it closes (the
  study does not wait; scrapli's other choice, ``close(force=True)``, sends no close-session at
  all).
- ``reuse-session``: the ``Netconf`` opened in ``setup``; one ``raw_rpc`` per command.
- ``edit-commit``: the ``Netconf`` opened in ``setup``; one ``raw_rpc`` of an ``<edit-config>`` of
  the candidate describing :func:`~mgmtbench.clients.netconf.rpcs.edit_interface`'s interface,
  then one of ``<commit/>``.

No ``batch-rpc``: libscrapli runs one operation at a time on a session. Its asyncio API accepts
several ``raw_rpc_async`` calls at once (``asyncio.gather``), but it writes an operation's RPC
only after the previous operation's reply was read (seen with ``strace``: each ``<rpc>`` write
follows the previous ``<rpc-reply>`` read), so the RPCs are never all written before a reply is
read.

Knobs (:mod:`.knobs`; none matters, so no ``scrapli-netconf+tuned``), each a client by name
(``scrapli-netconf+<knob>``): the ``SessionOptions`` scrapli's CLI adapters tune
(``read_max_delay_ns``, ``read_size``), ``NetconfOptions(message_poll_interval_ns=...)`` and
``(preferred_version=...)``, and ``close(force=True)`` (in ``fresh-session`` and ``teardown``).

Round trips are not counted: libscrapli owns its connection (the ``ssh`` process's socket).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any

from mgmtbench.clients.base import (
    PAYLOADS,
    REUSING_MODES,
    TranslatedClient,
    Transport,
    password_or_key_only,
)
from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.scrapli.knobs import session_options
from mgmtbench.clients.scrapli_netconf.knobs import (
    BASE_1_0,
    CLOSE_FORCE,
    KNOBS,
    MESSAGE_POLL,
)
from mgmtbench.clients.translate import Translator, optional_errors, translate_errors
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
)
from mgmtbench.targets import Auth, Target

try:
    import scrapli
    import scrapli.exceptions
    from scrapli.netconf import Netconf, Version
except ImportError:  # reported by Client.missing()
    scrapli = None  # type: ignore[assignment]

#: Seconds libscrapli waits for one operation (open, an RPC, close).
OPERATION_TIMEOUT = 30

ERRORS = optional_errors(
    {OSError: ConnectionFailed, TimeoutError: ClientTimeout},
    scrapli, lambda: {
        scrapli.exceptions.ScrapliException: ClientError,
        scrapli.exceptions.TimeoutException: ClientTimeout,
        scrapli.exceptions.EOFException: ConnectionFailed,
    })

#: libscrapli's messages say more than its exception types: words -> error (first match wins).
_MESSAGES: tuple[tuple[str, type[ClientError]], ...] = (
    ("authentication", AuthenticationFailed),
    ("permission denied", AuthenticationFailed),
    ("connection refused", ConnectionFailed),
    ("host key verification failed", ConnectionFailed),
)


def _classify(exc: BaseException) -> type[ClientError] | None:
    text = str(exc).lower()
    for words, error in _MESSAGES:
        if words in text:
            return error
    return None


class ScrapliNetconfClient(TranslatedClient):
    """scrapli's NETCONF driver on the OpenSSH transport; no ``batch-rpc`` (see the module)."""
    name = "scrapli-netconf"
    transport = Transport.NETCONF
    modes = ("fresh-session", "reuse-session", "edit-commit")
    payloads = PAYLOADS
    extra = "scrapli"
    needs = ("scrapli",)
    all_knobs = KNOBS

    _netconf: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Password or key file login, scrapli's own algorithms."""
        password_or_key_only(cls.name, target, algorithms=" (scrapli has no option for them)")

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS, classify=_classify)

    def _netconf_options(self) -> dict[str, Any]:
        """The ``NetconfOptions`` the knobs this client runs with set."""
        options: dict[str, Any] = {}
        if self.tuned_with(MESSAGE_POLL.name):
            options["message_poll_interval_ns"] = 100_000
        if self.tuned_with(BASE_1_0.name):
            options["preferred_version"] = Version.VERSION_1_0
        return options

    def _open(self) -> Any:
        t = self.target
        ssh = shutil.which("ssh")
        if ssh is None:
            raise ClientError(f"{self.name} needs the OpenSSH client (ssh) on PATH")
        if t.auth is Auth.KEY:
            login: dict[str, Any] = {"private_key_path": str(t.key_file)}
        else:
            login = {"password": t.password}
        known = t.known_hosts
        netconf = Netconf(
            t.host,
            port=t.netconf_port or t.ssh_port,
            auth_options=scrapli.AuthOptions(username=t.username, **login),
            options=scrapli.NetconfOptions(**self._netconf_options()),
            session_options=scrapli.SessionOptions(operation_timeout_s=OPERATION_TIMEOUT,
                                                   **session_options(self.tuned_with)),
            transport_options=scrapli.TransportBinOptions(
                bin=ssh, ssh_config_path=os.devnull,
                known_hosts_path=str(known) if known is not None else None,
                enable_strict_key=known is not None),
        )
        try:
            netconf.open()
        except BaseException:
            # A failed open leaves libscrapli's driver allocated: free it.
            with contextlib.suppress(scrapli.exceptions.ScrapliException):
                netconf.close(force=True)
            raise
        return netconf

    def setup(self) -> None:
        """Untimed: open the session for the modes that keep one."""
        if self.mode in REUSING_MODES:
            with self._translating():
                self._netconf = self._open()

    def _run(self, commands: list[str]) -> str:
        if self.mode != "edit-commit":  # an edit reads nothing: only the count matters
            rpcs.check_commands(commands, self.payload)
        if self.mode == "reuse-session":
            return self._reads(self._netconf, commands)
        if self.mode == "edit-commit":
            interface = rpcs.edit_interface(self.target.platform)
            edit = rpcs.edit_rpc(interface, len(commands), self.payload)
            return self._call(self._netconf, edit) + self._call(self._netconf, rpcs.COMMIT)
        netconf = self._open()  # fresh-session
        try:
            return self._reads(netconf, commands)
        finally:
            netconf.close(force=self.tuned_with(CLOSE_FORCE.name))

    def _reads(self, netconf: Any, commands: list[str]) -> str:
        return "".join(self._call(netconf, rpcs.read_rpc(c, self.payload)) for c in commands)

    def _call(self, netconf: Any, operation: str) -> str:
        """One RPC; its output."""
        reply = netconf.raw_rpc(operation)
        try:
            return rpcs.output(reply.result, self.payload)
        except ValueError as exc:
            raise ClientError(f"{self.name}: rpc-error: {exc}") from exc

    def teardown(self) -> None:
        """Close the kept session (close-session, then the transport)."""
        netconf, self._netconf = self._netconf, None
        if netconf is not None:
            with self._translating():
                netconf.close(force=self.tuned_with(CLOSE_FORCE.name))
