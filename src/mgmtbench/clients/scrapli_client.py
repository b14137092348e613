"""scrapli (the libscrapli generation): its own PTY logic, in Zig behind an FFI, on each of its SSH
transports.

One adapter per SSH transport scrapli offers, sharing :class:`_ScrapliClient`:

- ``scrapli-bin``: the system OpenSSH client (``ssh`` on PATH) in a PTY that libscrapli drives;
  strict host-key checking against ``target.known_hosts`` and an empty ssh_config
  (``os.devnull``), so the user's ``~/.ssh/config`` stays out.
- ``scrapli-ssh2``: libssh2, built into libscrapli; host key checked against
  ``target.known_hosts``.

The definition is ``cisco_iosxe`` (``cisco_asa`` for an ASA target). On open the definition logs
in, enables (answering ``Password:`` with the ``enable`` lookup = ``target.enable_secret``) and
turns paging off.

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
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from mgmtbench.clients.base import REUSING_MODES, Client, ClientError, Transport

try:
    import scrapli
    import scrapli.exceptions
except ImportError:  # reported by Client.missing()
    scrapli = None  # type: ignore[assignment]

T = TypeVar("T")
#: Seconds libscrapli waits for one operation (open, the command list, close).
OPERATION_TIMEOUT = 30
DEFINITIONS = {"cisco_asa": "cisco_asa"}
DEFAULT_DEFINITION = "cisco_iosxe"


class _ScrapliClient(Client):
    transport = Transport.SSH
    modes = ("pty-fresh", "pty-reuse")
    extra = "scrapli"
    needs = ("scrapli",)
    #: scrapli's name for the SSH transport.
    kind: ClassVar[str]

    _cli: Any = None

    def _transport_options(self) -> Any:
        raise NotImplementedError

    def _open(self) -> Any:
        t = self.target
        cli = scrapli.Cli(
            t.host,
            port=t.ssh_port,
            definition_file_or_name=DEFINITIONS.get(t.platform, DEFAULT_DEFINITION),
            auth_options=scrapli.AuthOptions(
                username=t.username, password=t.password,
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
            self._cli = self._guard(self._open)

    def run(self, commands: list[str]) -> str:
        return self._guard(lambda: self._run(commands))

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
            self._guard(cli.close)

    def _guard(self, call: Callable[[], T]) -> T:
        try:
            return call()
        except (scrapli.exceptions.ScrapliException, OSError) as exc:
            raise ClientError(f"{self.name}: {exc or type(exc).__name__}") from exc


class ScrapliBinClient(_ScrapliClient):
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
        raise ClientError(f"scrapli: {len(result.results)} results for {len(commands)} commands")
    return "".join(output_of(c, r) for c, r in zip(commands, result.results, strict=True))


def output_of(command: str, retained: str) -> str:
    """The output in ``<prompt><command>\\n<output><prompt>``; the prompt must be privileged."""
    echo_end = retained.find("\n")
    if echo_end < 0 or not retained[:echo_end].rstrip().endswith(command):
        raise ClientError(f"scrapli: no echo of {command!r} in {retained[:80]!r}")
    body = retained[echo_end + 1:]
    cut = body.rfind("\n") + 1
    prompt = body[cut:].rstrip()
    if not prompt.endswith("#"):
        # A refused enable leaves the session in user exec without an error from open.
        raise ClientError(f"scrapli: not at a privileged prompt after {command!r} (got "
                          f"{prompt[-40:]!r}; wrong enable secret?)")
    return body[:cut]
