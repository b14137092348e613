"""scrapli (the libscrapli generation): its own PTY logic, in Zig behind an FFI, on each of its SSH
transports.

One adapter per SSH transport scrapli offers, sharing :class:`_ScrapliClient`, with libscrapli's
default session options (the operation time-out raised to 30 s, a bound only); the knobs
(:mod:`.knobs`) change those in ``<client>+<knob>`` and ``<client>+tuned``:

- ``scrapli-bin``: the system OpenSSH client (``ssh`` on PATH) in a PTY that libscrapli drives;
  strict host-key checking against ``target.known_hosts`` and an empty ssh_config
  (``os.devnull``), so the user's ``~/.ssh/config`` stays out.
- ``scrapli-ssh2``: libssh2, built into libscrapli; host key checked against
  ``target.known_hosts``.

The definition is the platform's ``[clients] scrapli_platform`` in
``transcripts/<platform>/platform.toml`` (``cisco_iosxe`` for IOS, ``cisco_asa``). On open the
definition logs in, enables when the prompt is not privileged already (answering ``Password:``
with the ``enable`` lookup = ``target.enable_secret``) and turns paging off.

Login follows ``target.auth``: the password, or the private key file (``AuthOptions(
private_key_path=...)``). Neither transport can be pointed at an agent socket or given algorithm
lists through scrapli's options, so ``Auth.AGENT`` and algorithm choices are refused
(:class:`~mgmtbench.errors.UsageError`).

Modes:

- ``pty-fresh``: per iteration a new ``Cli`` (options, definition), ``open``, the commands,
  ``close``.
- ``pty-kept``: ``Cli`` and ``open`` in ``setup``; per iteration the commands.

No ``pty-reuse`` (the study's: a new shell channel per iteration on a kept connection): libscrapli
owns its connection and its one channel, and its ``Cli`` can only open and close both together.

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

from mgmtbench.clients.scrapli.knobs import KNOBS, session_options
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
    import scrapli
    import scrapli.exceptions
except ImportError:  # reported by Client.missing()
    scrapli = None  # type: ignore[assignment]

#: Seconds libscrapli waits for one operation (open, the command list, close).
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
    # libscrapli's ssh2 transport words a refused TCP connection as "unable to resolve host".
    ("failed initializing socket", ConnectionFailed),
)


def _classify(exc: BaseException) -> type[ClientError] | None:
    text = str(exc).lower()
    for words, error in _MESSAGES:
        if words in text:
            return error
    return None


class _ScrapliClient(SessionClient):
    extra = "scrapli"
    needs = ("scrapli",)
    library = "scrapli"
    driver_field = "scrapli_platform"
    driver_kind = "definition"
    #: scrapli's name for the SSH transport.
    kind: ClassVar[str]
    no_algorithms = " (scrapli has no option for them)"
    all_knobs = KNOBS

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
            definition_file_or_name=self.driver(t.platform),
            auth_options=scrapli.AuthOptions(
                username=t.username, **login,
                lookups=[scrapli.LookupKeyValue(key="enable", value=t.enable_secret)]),
            session_options=scrapli.SessionOptions(operation_timeout_s=OPERATION_TIMEOUT,
                                                   **session_options(self.tuned_with)),
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

    def _close(self, session: Any) -> None:
        session.close()

    def _commands(self, session: Any, commands: list[str]) -> str:
        if not commands:
            return ""
        result = session.send_inputs(commands, retain_input=True, retain_trailing_prompt=True,
                                     stop_on_indicated_failure=False)
        if len(result.results) != len(commands):
            raise WrongOutput(f"scrapli: {len(result.results)} results for {len(commands)} "
                              "commands")
        ends = "#" if self.target.enable_mode else ">#"  # Junos: no enable, ">" is privileged
        return "".join(output_of(c, r, ends, self.target.prompt_gap)
                       for c, r in zip(commands, result.results, strict=True))


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


#: scrapli on each transport with every knob that matters.
ScrapliBinClientTuned = tuned(ScrapliBinClient, KNOBS)
ScrapliSsh2ClientTuned = tuned(ScrapliSsh2Client, KNOBS)


def output_of(command: str, retained: str, privileged: str = "#", gap: str = "") -> str:
    """The output in ``<prompt><command>\\n<output><prompt>``; the prompt must be privileged
    (end in one of ``privileged``); ``gap``: what the device prints before its prompt's line
    (Junos: an empty line), not part of the output."""
    echo_end = retained.find("\n")
    if echo_end < 0 or not retained[:echo_end].rstrip().endswith(command):
        raise WrongOutput(f"scrapli: no echo of {command!r} in {retained[:80]!r}")
    body = retained[echo_end + 1:]
    cut = body.rfind("\n") + 1
    prompt = body[cut:].rstrip()
    if not prompt.endswith(tuple(privileged)):
        # A refused enable leaves the session in user exec without an error from open.
        raise WrongOutput(f"scrapli: not at a privileged prompt after {command!r} (got "
                          f"{prompt[-40:]!r}; wrong enable secret?)")
    output = body[:cut]
    return output[:len(output) - len(gap)] if gap and output.endswith(gap) else output
