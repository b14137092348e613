"""scrapli (the libscrapli generation): its own PTY logic, in Zig behind an FFI, on each of its SSH
transports.

One adapter per SSH transport scrapli offers, sharing :class:`_ScrapliClient`:

- ``scrapli-bin``: the system OpenSSH client (``ssh`` on PATH) in a PTY that libscrapli drives;
  strict host-key checking against ``target.known_hosts`` and an empty ssh_config
  (``os.devnull``), so the user's ``~/.ssh/config`` stays out.
- ``scrapli-ssh2``: libssh2, built into libscrapli; host key checked against
  ``target.known_hosts``.

The definition is the platform's ``[clients] scrapli_platform`` in
``transcripts/<platform>/platform.toml`` (``cisco_iosxe`` for IOS, ``cisco_asa``). On open the
definition logs in, enables (answering ``Password:`` with the ``enable`` lookup =
``target.enable_secret``) and turns paging off.

Login follows ``target.auth``: the password, or the private key file (``AuthOptions(
private_key_path=...)``). Neither transport can be pointed at an agent socket or given algorithm
lists through scrapli's options, so ``Auth.AGENT`` and algorithm choices are refused
(:class:`~mgmtbench.errors.UsageError`).

Modes:

- ``pty-fresh``: per iteration a new ``Cli`` (options, definition), ``open``, the commands,
  ``close``.
- ``pty-reuse``: ``Cli`` and ``open`` in ``setup``; per iteration the commands.

The commands go in one ``send_inputs`` call (scrapli's own way to send a list: libscrapli writes
each input and reads to the prompt before the next, as one ``send_input`` per command would, in
one FFI operation), with ``stop_on_indicated_failure=False`` so every command is answered, as with
the other adapters.

Output: scrapli's cleaned ``result`` trims the blank space around an output, so a leading blank
line (IOS ``show ip ospf neighbor``, ASA ``show version``) and the final newline would be lost.
The adapter asks for ``retain_input=True`` and ``retain_trailing_prompt=True``: each result is then
``<prompt><command>\\n<output><prompt>``, still cleaned by scrapli (line endings ``\\n``, escape
sequences removed), and the adapter cuts the first line (prompt and echo) and the last (the
prompt). That gives the device's output exactly, leading blank lines, final newline and empty
outputs included, with no other normalisation. The trailing prompt must be privileged (``#``):
when the enable secret is refused scrapli's ``open`` still succeeds, in user exec, and the adapter
raises :class:`ClientError` instead of returning user-exec answers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from typing import Any, ClassVar

from mgmtbench.clients.base import REUSING_MODES, Client, Transport
from mgmtbench.clients.translate import ErrorMap, Translator, translate_errors
from mgmtbench.emulator.transcripts import load_platform
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
    UsageError,
    WrongOutput,
)
from mgmtbench.targets import Auth, Target

try:
    import scrapli
    import scrapli.exceptions
except ImportError:  # reported by Client.missing()
    scrapli = None  # type: ignore[assignment]

#: Seconds libscrapli waits for one operation (open, the command list, close).
OPERATION_TIMEOUT = 30

ERRORS: ErrorMap = {OSError: ConnectionFailed, TimeoutError: ClientTimeout}
if scrapli is not None:
    ERRORS = {
        **ERRORS,
        scrapli.exceptions.ScrapliException: ClientError,
        scrapli.exceptions.TimeoutException: ClientTimeout,
        scrapli.exceptions.EOFException: ConnectionFailed,
    }

#: libscrapli's messages say more than its exception types: words -> error (first match wins).
_MESSAGES: tuple[tuple[str, type[ClientError]], ...] = (
    ("authentication", AuthenticationFailed),
    ("permission denied", AuthenticationFailed),
    ("connection refused", ConnectionFailed),
    # libscrapli's ssh2 transport words a refused TCP connection as "unable to resolve host".
    ("failed initializing socket", ConnectionFailed),
)


def _classify(exc: BaseException) -> type[ClientError] | None:
    text = str(exc).lower()
    for words, error in _MESSAGES:
        if words in text:
            return error
    return None


def definition(platform: str) -> str:
    """scrapli's definition (platform) name for ``platform``, from its ``platform.toml``."""
    found = load_platform(platform).style.clients.scrapli_platform
    if found is None:
        raise UsageError(f"scrapli has no definition for platform {platform!r}: add "
                         f"[clients] scrapli_platform to its platform.toml")
    return found


class _ScrapliClient(Client):
    transport = Transport.SSH
    modes = ("pty-fresh", "pty-reuse")
    extra = "scrapli"
    needs = ("scrapli",)
    #: scrapli's name for the SSH transport.
    kind: ClassVar[str]

    _cli: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        if target.auth is Auth.AGENT:
            raise UsageError(f"{cls.name} cannot use the agent at a given socket: use auth "
                             "'password' or 'key'")
        if target.auth is Auth.KEY and target.key_file is None:
            raise UsageError(f"{cls.name}: auth 'key' needs a target key_file")
        if not target.algorithms.is_default():
            raise UsageError(f"{cls.name} cannot choose SSH algorithms (scrapli has no option "
                             "for them): leave the target's algorithms empty")
        definition(target.platform)

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS, classify=_classify)

    def _transport_options(self) -> Any:
        raise NotImplementedError

    def _open(self) -> Any:
        t = self.target
        if t.auth is Auth.KEY:
            login: dict[str, Any] = {"private_key_path": str(t.key_file)}
        else:
            login = {"password": t.password}
        cli = scrapli.Cli(
            t.host,
            port=t.ssh_port,
            definition_file_or_name=definition(t.platform),
            auth_options=scrapli.AuthOptions(
                username=t.username, **login,
                lookups=[scrapli.LookupKeyValue(key="enable", value=t.enable_secret)]),
            session_options=scrapli.SessionOptions(operation_timeout_s=OPERATION_TIMEOUT),
            transport_options=self._transport_options(),
        )
        try:
            cli.open()
        except BaseException:
            # A failed open leaves libscrapli's driver allocated: free it.
            with contextlib.suppress(scrapli.exceptions.ScrapliException):
                cli.close(force=True)
            raise
        return cli

    def setup(self) -> None:
        if self.mode in REUSING_MODES:
            with self._translating():
                self._cli = self._open()

    def run(self, commands: list[str]) -> str:
        with self._translating():
            return self._run(commands)

    def _run(self, commands: list[str]) -> str:
        if self.mode == "pty-reuse":
            return _send(self._cli, commands)
        cli = self._open()  # pty-fresh
        try:
            return _send(cli, commands)
        finally:
            cli.close()

    def teardown(self) -> None:
        if self._cli is not None:
            cli, self._cli = self._cli, None
            with self._translating():
                cli.close()


class ScrapliBinClient(_ScrapliClient):
    """scrapli on the OpenSSH binary transport."""
    name = "scrapli-bin"
    kind = "bin"

    def _transport_options(self) -> Any:
        ssh = shutil.which("ssh")
        if ssh is None:
            raise ClientError("scrapli-bin needs the OpenSSH client (ssh) on PATH")
        known = self.target.known_hosts
        return scrapli.TransportBinOptions(
            bin=ssh, ssh_config_path=os.devnull,
            known_hosts_path=str(known) if known is not None else None,
            enable_strict_key=known is not None)


class ScrapliSsh2Client(_ScrapliClient):
    """scrapli on the libssh2 transport."""
    name = "scrapli-ssh2"
    kind = "ssh2"

    def _transport_options(self) -> Any:
        known = self.target.known_hosts
        return scrapli.TransportSsh2Options(
            known_hosts_path=str(known) if known is not None else None)


def _send(cli: Any, commands: list[str]) -> str:
    if not commands:
        return ""
    result = cli.send_inputs(commands, retain_input=True, retain_trailing_prompt=True,
                             stop_on_indicated_failure=False)
    if len(result.results) != len(commands):
        raise WrongOutput(f"scrapli: {len(result.results)} results for {len(commands)} commands")
    return "".join(output_of(c, r) for c, r in zip(commands, result.results, strict=True))


def output_of(command: str, retained: str) -> str:
    """The output in ``<prompt><command>\\n<output><prompt>``; the prompt must be privileged."""
    echo_end = retained.find("\n")
    if echo_end < 0 or not retained[:echo_end].rstrip().endswith(command):
        raise WrongOutput(f"scrapli: no echo of {command!r} in {retained[:80]!r}")
    body = retained[echo_end + 1:]
    cut = body.rfind("\n") + 1
    prompt = body[cut:].rstrip()
    if not prompt.endswith("#"):
        # A refused enable leaves the session in user exec without an error from open.
        raise WrongOutput(f"scrapli: not at a privileged prompt after {command!r} (got "
                          f"{prompt[-40:]!r}; wrong enable secret?)")
    return body[:cut]
