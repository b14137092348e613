"""ncclient: ``manager.connect`` (its paramiko SSH transport and the ``netconf`` subsystem),
every NETCONF mode, both payloads.

Connecting: ``manager.connect(host, port=target.netconf_port or target.ssh_port, username,
password or key_filename, look_for_keys=False, allow_agent=False, timeout=30,
device_params=...)``. The device handler follows the platform (:data:`DEVICE_HANDLERS`):
``iosxe`` for cisco_ios, ``junos`` for juniper_junos, ``default`` otherwise (a benchmark's
``device_params`` is recorded by name in :meth:`NcclientClient.device_name`). ncclient takes no
known_hosts file of our choosing (only ``~/.ssh/known_hosts`` or an ssh_config's
``UserKnownHostsFile``), and its ``hostkey_b64`` option breaks with RSA host keys on the paramiko here (5.1:
it asks for the ``ssh-rsa`` host key type, which paramiko no longer verifies: ``KeyError``). So
with ``target.known_hosts`` the adapter passes ``hostkey_verify=True`` and ncclient's documented
``unknown_host_cb``: it accepts the server's key only if its fingerprint is one that known_hosts
lists for ``[host]:port`` (keys in ``~/.ssh/known_hosts``, which ncclient also reads, are
accepted too). ncclient's ``iosxe`` handler replaces that callback with one that
accepts every key, so the adapter then uses a subclass of that handler that keeps ours (through
ncclient's ``device_params={"handler": ...}``). Without ``target.known_hosts``
the key is not checked (``hostkey_verify=False``).

Every RPC is the operation element of :mod:`mgmtbench.clients.netconf.rpcs` (parsed in the
base namespace) given to ``Manager.dispatch``, which wraps it in ``<rpc message-id=...>``;
the reply's XML goes through :func:`~mgmtbench.clients.netconf.rpcs.output`. ncclient raises
an ``RPCError`` for an ``<rpc-error>`` (its default ``raise_mode``), a :class:`ClientError` here.

Modes (the study's, clibench v0.8):

- ``fresh-session``: per iteration ``manager.connect``, one synchronous ``dispatch`` per command,
  then ``close_session()``. ncclient's ``close_session`` waits for the ``<ok/>`` before it closes
  the transport (the study does not wait): in ``async_mode`` it would close the transport right
  after queueing the RPC, before its transport thread has written it, so that is not offered.
- ``reuse-session``: the manager from ``setup``; one synchronous ``dispatch`` per command.
- ``edit-commit``: the manager from ``setup``; per iteration one ``<edit-config>`` of the
  candidate describing :func:`~mgmtbench.clients.netconf.rpcs.edit_interface`'s interface,
  then ``<commit/>`` (both synchronous).

No ``batch-rpc``: ncclient cannot pipeline. Its ``async_mode`` hands every RPC over before any
reply is read, but its transport thread writes one queued message per pass of its loop and then
blocks in ``select`` until bytes arrive (or its 0.1 s tick passes), so on the wire RPC n+1
follows reply n: about one round trip per command (measured on loopback: 6 commands, 5 round
trips, ~107 ms, ~100 ms of it the first RPC waiting for the tick), not the study's one round
trip per batch. Under the study's name that would be a different thing.

Application round trips are counted (every mode): the TCP connection is made here and given to
ncclient as ``sock=`` inside a :class:`~mgmtbench.clients.roundtrips.CountingSocket`.

Timing note: ncclient's transport thread (``ncclient.transport.session.Session.run``) looks at its
send queue only between ``select`` calls whose timeout is ``TICK`` (0.1 s): an RPC queued while the
thread waits in ``select`` for an idle channel is written when that ``select`` times out. A
synchronous request right after the previous reply therefore waits most of 0.1 s before it is
sent: on loopback a kept session runs at ~102 ms per RPC (the emulator answers in ~0.5 ms), and
ncclient's libssh transport (``use_libssh=True``) shares the loop and the wait. ncclient has no
option for the tick (a module constant); with it at 1 ms the same loop takes ~2 ms per RPC.

Knobs (:mod:`.knobs`): ``tick`` assigns ``ncclient.transport.session.TICK = 0.001``, as a user
can; a module constant is the process's, so every connect here sets it to the value of the
client making it (ncclient's own 0.1 s as shipped); every session's thread reads the value on
every pass, so clients with different ticks must not run at once (the benchmarks run one at a
time). ``tcp-nodelay`` makes the socket
(``sock=``) with ``TCP_NODELAY`` set. ``ncclient+tuned`` has both.
"""

from __future__ import annotations

import functools
import socket
from collections.abc import Mapping
from typing import Any

from lxml import etree

from mgmtbench.clients.base import (
    PAYLOADS,
    REUSING_MODES,
    TranslatedClient,
    Transport,
    password_or_key_only,
)
from mgmtbench.clients.ncclient.knobs import KNOBS, TCP_NODELAY, TICK
from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.roundtrips import CountingSocket
from mgmtbench.clients.translate import Translator, optional_errors, translate_errors
from mgmtbench.clients.tuning import tuned
from mgmtbench.errors import (
    AuthenticationFailed,
    ClientError,
    ClientTimeout,
    ConnectionFailed,
)
from mgmtbench.targets import Auth, Target

try:
    import ncclient
    import ncclient.operations
    import ncclient.transport
    import ncclient.transport.session
    import paramiko
    from ncclient import manager
    from ncclient.devices.iosxe import IosxeDeviceHandler
except ImportError:  # reported by Client.missing()
    ncclient = None

_TIMEOUT = 30
#: ncclient's own ``TICK`` (0.1 s), and the ``tick`` knob's.
_SHIPPED_TICK = ncclient.transport.session.TICK if ncclient is not None else 0.1
_TUNED_TICK = 0.001

#: The ncclient device handler (``device_params={"name": ...}``) per platform; ``default`` for
#: the others.
DEVICE_HANDLERS: Mapping[str, str] = {"cisco_ios": "iosxe", "juniper_junos": "junos"}

ERRORS = optional_errors(
    {OSError: ConnectionFailed, EOFError: ConnectionFailed, TimeoutError: ClientTimeout},
    ncclient, lambda: {
        ncclient.NCClientError: ClientError,
        ncclient.transport.AuthenticationError: AuthenticationFailed,
        ncclient.transport.SSHError: ConnectionFailed,
        ncclient.transport.SessionCloseError: ConnectionFailed,
        ncclient.transport.SSHUnknownHostError: ConnectionFailed,
        ncclient.operations.TimeoutExpiredError: ClientTimeout,
        paramiko.SSHException: ClientError,
        paramiko.AuthenticationException: AuthenticationFailed,
    })

_WRAP = f'<wrap xmlns="{rpcs.BASE}">{{}}</wrap>'


def _element(operation: str) -> Any:
    """The operation element of ``operation`` (text from :mod:`.rpcs`), in the base namespace."""
    return etree.fromstring(_WRAP.format(operation))[0]


@functools.cache
def _checked_iosxe() -> type[Any]:
    """ncclient's iosxe handler, without its accept-every-host-key callback."""

    class CheckedIosxeDeviceHandler(IosxeDeviceHandler):  # type: ignore[misc]
        def add_additional_ssh_connect_params(self, kwargs: dict[str, Any]) -> None:
            """Leave ``unknown_host_cb`` as the caller gave it."""

    return CheckedIosxeDeviceHandler


class NcclientClient(TranslatedClient):
    """ncclient, every NETCONF mode, both payloads."""
    name = "ncclient"
    transport = Transport.NETCONF
    modes = ("fresh-session", "reuse-session", "edit-commit")  # no batch-rpc: see above
    payloads = PAYLOADS
    extra = "ncclient"
    needs = ("ncclient",)
    counts_round_trips = True
    all_knobs = KNOBS

    _manager: Any = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Password or key file login, ncclient's own algorithms."""
        password_or_key_only(cls.name, target, agent=" (ncclient's agent is SSH_AUTH_SOCK's)",
                             algorithms=" (ncclient has no option for them)")

    @staticmethod
    def device_name(platform: str) -> str:
        """The ncclient device handler used for a device of ``platform``."""
        return DEVICE_HANDLERS.get(platform, "default")

    def _translating(self) -> Translator:
        return translate_errors(self.name, ERRORS)

    def _connect(self) -> Any:
        t = self.target
        port = t.netconf_port or t.ssh_port
        device: dict[str, Any] = {"name": self.device_name(t.platform)}
        options: dict[str, Any] = {
            "host": t.host, "port": port, "username": t.username, "timeout": _TIMEOUT,
            "look_for_keys": False, "allow_agent": False, "hostkey_verify": False,
            "manager_params": {"timeout": _TIMEOUT}}
        if t.auth is Auth.KEY:
            options["key_filename"] = str(t.key_file)
        else:
            options["password"] = t.password
        if t.known_hosts is not None:
            options.update(hostkey_verify=True, unknown_host_cb=_known_host_check(t, port))
            if device["name"] == "iosxe":
                device["handler"] = _checked_iosxe()
        options["device_params"] = device
        nodelay = self.tuned_with(TCP_NODELAY.name)
        if self.round_trips is not None or nodelay:
            raw = socket.create_connection((t.host, port), timeout=_TIMEOUT)
            if nodelay:
                raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            options["sock"] = (raw if self.round_trips is None
                               else CountingSocket(raw, self.round_trips.connection()))
        # A module constant, read by every session's thread on every pass: set for this
        # client (shipped or tuned) before each connect; clients run one after the other.
        ncclient.transport.session.TICK = (_TUNED_TICK if self.tuned_with(TICK.name)
                                           else _SHIPPED_TICK)
        return manager.connect(**options)

    def setup(self) -> None:
        """Untimed: open the session for the modes that keep one."""
        if self.mode in REUSING_MODES:
            with self._translating(), self._torn_down_on_failure():
                self._manager = self._connect()

    def _run(self, commands: list[str]) -> str:
        if self.mode != "edit-commit":  # an edit reads nothing: only the count matters
            rpcs.check_commands(commands, self.payload)
        mode = self.mode
        if mode == "reuse-session":
            return "".join(self._call(self._manager, rpcs.read_rpc(c, self.payload))
                           for c in commands)
        if mode == "edit-commit":
            interface = rpcs.edit_interface(self.target.platform)
            edit = rpcs.edit_rpc(interface, len(commands), self.payload)
            return self._call(self._manager, edit) + self._call(self._manager, rpcs.COMMIT)
        conn = self._connect()  # fresh-session
        try:
            return "".join(self._call(conn, rpcs.read_rpc(c, self.payload)) for c in commands)
        finally:
            conn.close_session()

    def _call(self, conn: Any, operation: str) -> str:
        """One synchronous RPC; its output."""
        return self._output(_reply_xml(conn.dispatch(_element(operation))))

    def _output(self, reply: str) -> str:
        try:
            return rpcs.output(reply, self.payload)
        except ValueError as exc:
            raise ClientError(f"{self.name}: rpc-error: {exc}") from exc

    def teardown(self) -> None:
        """Close the kept session (close-session, then the transport)."""
        conn, self._manager = self._manager, None
        if conn is not None:
            with self._translating():
                if conn.connected:
                    conn.async_mode = False
                    conn.close_session()


#: ncclient with every knob that matters.
NcclientClientTuned = tuned(NcclientClient, KNOBS)


def _reply_xml(reply: Any) -> str:
    """The reply's XML: an ``RPCReply``'s own, or (a handler that transforms replies, as junos')
    the transformed document."""
    xml = getattr(reply, "xml", None)
    return str(xml) if xml is not None else str(reply.data_xml)


def _known_host_check(target: Target, port: int) -> Any:
    """ncclient's ``unknown_host_cb``: accept the key only if its fingerprint is one that
    ``target.known_hosts`` lists for the device."""
    keys = paramiko.HostKeys(str(target.known_hosts))
    name = target.host if port == 22 else f"[{target.host}]:{port}"
    known = {_colon_hex(key.get_fingerprint()) for key in (keys.lookup(name) or {}).values()}

    def check(host: str, fingerprint: str) -> bool:
        return fingerprint in known

    return check


def _colon_hex(digest: bytes) -> str:
    """A fingerprint as ncclient gives it to ``unknown_host_cb`` (``4b:69:...``)."""
    return ":".join(f"{b:02x}" for b in digest)
