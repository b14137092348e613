"""The client interface: one management session against one device, in one usage mode.

Every adapter (one module per library under :mod:`mgmtbench.clients`) subclasses :class:`Client`
(blocking libraries) or :class:`AsyncClient` (asyncio libraries) and declares the modes it supports.
A benchmark calls ``setup()`` outside the timed part, ``run(commands)`` inside it (once per
iteration) and ``teardown()`` at the end. What ``setup`` does depends on the mode: the modes in
:data:`REUSING_MODES` (``reuse-conn``, ``pty-reuse``, ``keep-alive``, ``batch-post`` ...) connect
there, ``fresh-conn`` and ``pty-fresh`` connect inside ``run``. ``pty-reuse`` keeps the connection
only: every iteration opens a new channel, PTY and shell on it; ``pty-kept`` keeps the shell too.

``run`` returns the devices' outputs concatenated in command order, so a benchmark checks the
answer, not only the time: a fast wrong answer fails. A blocking adapter whose calls into its
library all go through one error translator subclasses :class:`TranslatedClient` and writes
``_run``; ``run`` is ``_run`` under the translator.

Library errors never leave an adapter: they become :class:`ClientError` (or one of its
subclasses, through :func:`~mgmtbench.clients.translate.translate_errors`).

An adapter whose library lets it wrap its connections can count the published study's
application round trips (a read after a write, :mod:`~mgmtbench.clients.roundtrips`): it sets
``counts_round_trips`` and reads ``self.round_trips`` (a
:class:`~mgmtbench.clients.roundtrips.RoundTripCounter`, or None) wherever it connects. A benchmark
installs the counter with :meth:`_Common.count_round_trips` before ``setup``, so a connection kept
from ``setup`` is counted too, and takes the counter's total around its timed rounds. An adapter
that cannot count records nothing (never a zero).

``target.auth`` and ``target.algorithms`` are honoured where the library can; an adapter refuses
(:class:`~mgmtbench.errors.UsageError`, in its constructor) what it cannot do, never ignoring it:
:meth:`_Common.check` is called with the target and by default accepts only password login and the
library's default algorithms. The checks adapters have in common are functions here:
:func:`require_credentials`, :func:`password_or_key_only` and :func:`check_algorithm_names`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from enum import StrEnum
from typing import ClassVar

from mgmtbench.clients.roundtrips import RoundTripCounter
from mgmtbench.clients.translate import Translator
from mgmtbench.clients.tuning import Knob
from mgmtbench.errors import ClientError, MissingLibrary, UsageError
from mgmtbench.targets import Auth, Service, SshAlgorithms, Target

__all__ = [
    "ALGORITHM_FIELDS",
    "GNMI_MODES",
    "GNMI_STUDY_MODES",
    "HTTP3_MODES",
    "HTTP3_STUDY_MODES",
    "HTTPS_MODES",
    "KEPT_SHELL",
    "KEPT_VARIANTS",
    "NETCONF_MODES",
    "PAYLOADS",
    "PLATFORM_API_MODES",
    "PTY_MODES",
    "RESTCONF_MODES",
    "REUSING_MODES",
    "SSH_MODES",
    "STUDY_MODES",
    "UNREAD_MODES",
    "AnyClient",
    "AsyncClient",
    "Client",
    "ClientError",
    "MissingLibrary",
    "Target",
    "TranslatedClient",
    "Transport",
    "check_algorithm_names",
    "password_or_key_only",
    "require_credentials",
    "unserved",
]


class Transport(StrEnum):
    """How a client reaches the device."""
    SSH = "ssh"
    HTTPS = "https"
    NETCONF = "netconf"
    RESTCONF = "restconf"
    GNMI = "gnmi"
    HTTP3 = "http3"


# Mode names as they appear in test ids and in the JSON results. The names the published study
# (clibench v0.7.0) uses mean what they mean there; the README's mode table says what each one
# times, what it reuses and its protocol minimum in round trips.
SSH_MODES = ("fresh-conn", "reuse-conn", "batch-exec", "pty-fresh", "pty-reuse", "pipelined",
             "pty-kept")
HTTPS_MODES = ("fresh-conn", "keep-alive", "batch-post", "multi-cmd", "tls-resume", "h2-multiplex",
               "conn-per-iteration", "batch-post-fresh", "multi-cmd-fresh", "eapi-batch",
               "nxapi-batch")
#: Our HTTPS modes that speak a platform's own HTTP API instead of the HTTPS management API, and
#: the API each needs (a name in the platform's ``apis``, :mod:`mgmtbench.emulator.platformapi`):
#: every command in ONE JSON-RPC request on a connection kept from ``setup`` (Arista eAPI's
#: ``runCmds``, format text; NX-API's list of ``cli_ascii`` calls). A target whose platform does
#: not serve the API is refused (:meth:`_Common.check_mode`). Not in ``--modes study``: picked by
#: ``all`` or by name, and run on a lab of ``--platforms arista_eos,cisco_nxos``.
PLATFORM_API_MODES: dict[str, str] = {"eapi-batch": "eapi", "nxapi-batch": "nxapi"}
#: NETCONF's modes, as the study (clibench v0.8) names them: a new SSH connection and NETCONF
#: session per iteration; a kept session, one RPC per command; every command's RPC sent before
#: any reply is read, on a kept session; one edit-config, then a commit, on a kept session.
NETCONF_MODES = ("fresh-session", "reuse-session", "batch-rpc", "edit-commit")
#: RESTCONF's modes: the study's four (clibench v0.8: a new TCP+TLS connection per request; one
#: kept connection, one GET per command; one YANG Patch carrying every command on a kept
#: connection; keep-alive asking for XML), then ours: every command's GET in flight at once on
#: one HTTP/2 connection, and one new connection per iteration kept for its commands.
RESTCONF_MODES = ("fresh-conn", "keep-alive", "batch-patch", "json-vs-xml", "h2-multiplex",
                  "conn-per-iteration")
#: gNMI's modes. The study's (clibench v0.7.0, :data:`GNMI_STUDY_MODES`): a new channel per
#: iteration and ONE Get of every command's path; one unary Get per command on a kept channel;
#: every command's update in one Set on a kept channel; one ONCE subscription of every path in
#: one streaming RPC on a kept channel. Ours: a new channel per iteration with one Get per
#: command (like-for-like with per-command SSH execs), and one Get of every path on a kept
#: channel.
GNMI_STUDY_MODES = ("fresh-conn", "reuse-stream", "batch-set", "subscribe-once")
GNMI_MODES = (*GNMI_STUDY_MODES, "fresh-get-per-cmd", "batch-get")
#: HTTP/3's modes. The study's four (clibench v0.7.0, ``internal/bench/http3.go``): a new QUIC
#: connection per ITERATION, its commands' GETs one after another on it (unlike HTTPS
#: ``fresh-conn``, a connection per command: this is HTTPS ``conn-per-iteration``); one GET per
#: command on a connection kept from ``setup``; one ``POST /admin/config`` of every command on a
#: kept connection; a new connection per iteration resuming the session ticket of the connection
#: before it (the first from an untimed warm-up), its GETs sent after the handshake: a 1-RTT
#: resumption, no early data, whatever its name says. Ours: ``0rtt``, a new connection per
#: iteration resuming the previous connection's (single-use) ticket with the first GET sent as
#: 0-RTT early data, the rest after the handshake; the device must accept the early data.
HTTP3_STUDY_MODES = ("fresh-conn", "keep-alive", "batch-post", "0rtt-resumption")
HTTP3_MODES = (*HTTP3_STUDY_MODES, "0rtt")
#: What a NETCONF RPC, a RESTCONF request or a gNMI path carries: the study's CLI envelope, or
#: modelled (YANG) data (:mod:`mgmtbench.clients.netconf.rpcs`,
#: :mod:`mgmtbench.clients.restconf.requests`, :mod:`mgmtbench.clients.gnmi.requests`). Other
#: transports carry CLI text only.
PAYLOADS = ("cli", "yang")
#: The study's mode names (SSH, HTTPS, NETCONF, RESTCONF, gNMI and HTTP/3).
STUDY_MODES = frozenset({"fresh-conn", "reuse-conn", "batch-exec", "pty-fresh", "pty-reuse",
                         "keep-alive", "batch-post", "multi-cmd", *NETCONF_MODES,
                         "batch-patch", "json-vs-xml", *GNMI_STUDY_MODES, *HTTP3_STUDY_MODES})
#: Our variants that keep what a study name meant here before (issue 12): a shell kept across
#: iterations, and an HTTPS connection made per iteration. Benchmarked with ``--modes all``.
KEPT_VARIANTS = frozenset({"pty-kept", "conn-per-iteration", "batch-post-fresh",
                           "multi-cmd-fresh"})
#: SSH modes that open a PTY and the device's interactive shell (the others send exec requests).
PTY_MODES = frozenset({"pty-fresh", "pty-reuse", "pty-kept"})
#: Modes whose iteration does not bring the commands' outputs back: it changes the configuration
#: (NETCONF ``edit-commit``; ``batch-patch`` and ``batch-set`` with modelled data) or, with the
#: study's CLI envelope, runs the commands and answers a status only (the study's RESTCONF
#: ``batch-patch`` and gNMI ``batch-set``). Timed like the rest, but not the same work as a read.
UNREAD_MODES = frozenset({"edit-commit", "batch-patch", "batch-set"})
#: The mode that keeps one prepared shell across iterations (what fleet runners use).
KEPT_SHELL = "pty-kept"
#: Modes whose connection is made in ``setup`` (outside the timed part).
REUSING_MODES = frozenset({"reuse-conn", "pty-reuse", "pty-kept", "keep-alive", "batch-post",
                           "multi-cmd", "pipelined", "h2-multiplex", "reuse-session",
                           "batch-rpc", "edit-commit", "batch-patch", "json-vs-xml",
                           "reuse-stream", "batch-set", "subscribe-once", "batch-get",
                           *PLATFORM_API_MODES})


class _Common:
    name: ClassVar[str]
    transport: ClassVar[Transport]
    modes: ClassVar[tuple[str, ...]]
    #: What its requests can carry (:data:`PAYLOADS`): CLI text, and for NETCONF modelled data.
    payloads: ClassVar[tuple[str, ...]] = ("cli",)
    #: The pip extra that installs the library (``pip install mgmtbench[<extra>]``).
    extra: ClassVar[str]
    #: Importable modules the adapter needs.
    needs: ClassVar[tuple[str, ...]] = ()
    #: Whether the adapter counts the study's application round trips on every connection it
    #: opens once given a counter (:meth:`count_round_trips`), in every mode it supports.
    counts_round_trips: ClassVar[bool] = False
    #: The installed counter (None: nothing is counted, and the connections are not wrapped).
    round_trips: RoundTripCounter | None = None
    #: Whether its calls hold Python's GIL while they wait on the network (hussh): then no other
    #: thread of the process runs meanwhile, and a server in the same process cannot answer it.
    blocks_other_threads: ClassVar[bool] = False
    #: Every setting a user of the library can change (:mod:`~mgmtbench.clients.tuning`), declared
    #: on the as-shipped client; ``knobs`` are those this client runs with (none as shipped).
    all_knobs: ClassVar[tuple[Knob, ...]] = ()
    knobs: ClassVar[tuple[Knob, ...]] = ()
    #: The as-shipped client this one tunes (None: this is the library as shipped).
    shipped: ClassVar[str | None] = None

    @classmethod
    def tuned_with(cls, knob: str) -> bool:
        """Whether this client runs with the knob named ``knob`` (one its library declares)."""
        if knob not in {each.name for each in cls.all_knobs}:
            raise ValueError(f"{cls.name} declares no knob {knob!r}")
        return any(each.name == knob for each in cls.knobs)

    def __init__(self, target: Target, mode: str, payload: str = "cli") -> None:
        if mode not in self.modes:
            raise ValueError(f"{self.name} does not support mode {mode!r}")
        if payload not in self.payloads:
            raise ValueError(f"{self.name} does not carry payload {payload!r}")
        self.check(target)
        self.check_mode(target, mode)
        self.target = target
        self.mode = mode
        self.payload = payload

    @classmethod
    def service(cls, mode: str) -> Service:
        """What ``mode`` asks of the device: HTTPS (RESTCONF too), HTTP/3, NETCONF, gNMI, an SSH shell
        (the PTY modes) or SSH exec."""
        if cls.transport in (Transport.HTTPS, Transport.RESTCONF):
            return Service.HTTPS
        if cls.transport is Transport.HTTP3:
            return Service.HTTP3
        if cls.transport is Transport.NETCONF:
            return Service.NETCONF
        if cls.transport is Transport.GNMI:
            return Service.GNMI
        return Service.SSH_SHELL if mode in PTY_MODES else Service.SSH_EXEC

    @classmethod
    def check(cls, target: Target) -> None:
        """:class:`UsageError` for an auth method or algorithm choice this library cannot honour
        (the default: password login, the library's own algorithms)."""
        if target.auth is not Auth.PASSWORD:
            raise UsageError(f"client {cls.name} can only log in with a password, not with "
                             f"auth {target.auth.value!r}")
        if not target.algorithms.is_default():
            raise UsageError(f"client {cls.name} cannot choose SSH algorithms: leave the "
                             "target's algorithms empty")

    @classmethod
    def check_mode(cls, target: Target, mode: str) -> None:
        """:class:`UsageError` if the target's platform does not serve ``mode`` (the modes of
        :data:`PLATFORM_API_MODES` need their API); one sentence, a benchmark's skip reason."""
        reason = unserved(mode, target.platform)
        if reason is not None:
            raise UsageError(f"client {cls.name}: {reason}")

    def count_round_trips(self, counter: RoundTripCounter) -> None:
        """Count the application round trips of every connection this adapter opens from now on
        into ``counter`` (call before ``setup``); :class:`UsageError` if the adapter cannot."""
        if not self.counts_round_trips:
            raise UsageError(f"client {self.name} cannot count application round trips: its "
                             "library gives no way to wrap its connection")
        self.round_trips = counter

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the library is not importable, else None."""
        return install_hint(cls.name, cls.needs, cls.extra)

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of the libraries this adapter drives (for the results)."""
        return module_versions(cls.needs)


_DISTRIBUTIONS = {"ssh2": "ssh2-python", "ssh": "ssh-python", "pssh": "parallel-ssh"}


def install_hint(name: str, needs: tuple[str, ...], extra: str) -> str | None:
    """How to install what client ``name`` needs (the first of ``needs`` that cannot be
    imported, with its pip extra), None if every module imports."""
    for module in needs:
        try:
            importlib.import_module(module)
        except ImportError:
            return f"client {name} needs the {module!r} module: pip install 'mgmtbench[{extra}]'"
    return None


def module_versions(needs: tuple[str, ...]) -> dict[str, str]:
    """Distribution name -> installed version of each module in ``needs`` (those installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for module in needs:
        dist = _DISTRIBUTIONS.get(module, module)
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return out


#: The platform APIs' names, as messages give them.
_API_NAMES = {"eapi": "Arista eAPI", "nxapi": "Cisco NX-API"}


def unserved(mode: str, platform: str) -> str | None:
    """Why a device of ``platform`` cannot serve ``mode`` (a platform API it lacks), else None."""
    api = PLATFORM_API_MODES.get(mode)
    if api is None:
        return None
    from mgmtbench.emulator.device.transcripts import available_platforms, load_platform

    if api in load_platform(platform).style.apis:
        return None
    serving = [name for name in available_platforms() if api in load_platform(name).style.apis]
    return (f"mode {mode} speaks {_API_NAMES.get(api, api)}, which platform {platform} does not "
            f"serve (it runs on {', '.join(serving) or 'no bundled platform'})")


class Client(_Common, ABC):
    """A blocking client."""

    def setup(self) -> None:
        """Untimed preparation (connect, for the modes that reuse a connection)."""

    @abstractmethod
    def run(self, commands: list[str]) -> str:
        """One iteration: send ``commands``, return their outputs concatenated."""

    def teardown(self) -> None:
        """Close whatever ``setup`` or ``run`` left open."""


class TranslatedClient(Client):
    """A blocking client whose iteration runs under its library's error translator."""

    @abstractmethod
    def _translating(self) -> Translator:
        """The library's error translation (:func:`~mgmtbench.clients.translate.translate_errors`)."""

    @abstractmethod
    def _run(self, commands: list[str]) -> str:
        """The iteration itself, in the adapter's mode."""

    def run(self, commands: list[str]) -> str:
        """One iteration: the commands' outputs, concatenated in order."""
        with self._translating():
            return self._run(commands)

    @contextlib.contextmanager
    def _torn_down_on_failure(self) -> Iterator[None]:
        """For ``setup``: if the block fails, ``teardown()`` closes what it opened, then the error
        goes on."""
        try:
            yield
        except BaseException:
            self.teardown()
            raise


class AsyncClient(_Common, ABC):
    """An asyncio client; the benchmark runs it on one persistent event loop."""

    async def setup(self) -> None:
        """Untimed preparation."""

    @abstractmethod
    async def run(self, commands: list[str]) -> str:
        """One iteration."""

    async def teardown(self) -> None:
        """Close what is open."""


AnyClient = Client | AsyncClient


def require_credentials(client: str, target: Target) -> None:
    """:class:`UsageError` if the target lacks what its auth method needs: a ``key_file`` for
    ``Auth.KEY``, an ``agent_socket`` for ``Auth.AGENT``."""
    if target.auth is Auth.KEY and target.key_file is None:
        raise UsageError(f"{client}: auth 'key' needs a target key_file")
    if target.auth is Auth.AGENT and target.agent_socket is None:
        raise UsageError(f"{client}: auth 'agent' needs a target agent_socket")


def password_or_key_only(client: str, target: Target, *, agent: str = "",
                         algorithms: str = "") -> None:
    """:class:`UsageError` for what a library that logs in with a password or a key file, and
    negotiates its own algorithms, cannot do: ``Auth.AGENT``, a key login without a key file, an
    algorithm choice. ``agent`` and ``algorithms`` say why, in the message (`` (...)``)."""
    if target.auth is Auth.AGENT:
        raise UsageError(f"{client} cannot use the agent at a given socket{agent}: use auth "
                         "'password' or 'key'")
    require_credentials(client, target)
    if not target.algorithms.is_default():
        raise UsageError(f"{client} cannot choose SSH algorithms{algorithms}: leave the target's "
                         "algorithms empty")


#: The :class:`SshAlgorithms` fields, in order: ``kex``, ``ciphers``, ``macs``, ``host_key``.
ALGORITHM_FIELDS = tuple(field.name for field in dataclasses.fields(SshAlgorithms))


def check_algorithm_names(client: str, target: Target,
                          supported: Callable[[str], Sequence[str]]) -> None:
    """:class:`UsageError` for a chosen algorithm name the library does not know;
    ``supported(field)`` lists the names it knows for an :data:`ALGORITHM_FIELDS` field."""
    for field in ALGORITHM_FIELDS:
        known = supported(field)
        unknown = [name for name in getattr(target.algorithms, field) if name not in known]
        if unknown:
            raise UsageError(f"{client} does not support the {field} algorithm(s) "
                             f"{', '.join(unknown)}: choose from {', '.join(known)}")
