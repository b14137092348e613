"""asyncssh-netconf: NETCONF by hand on asyncssh, the floor under the NETCONF libraries.

What a NETCONF client must do and nothing more: connect (:mod:`mgmtbench.clients.asyncssh.connect`,
the asyncssh adapter's options, on ``target.netconf_port``, or the SSH port when it is 0), open
the ``netconf`` subsystem (``conn.open_session(subsystem="netconf", encoding=None)``), send its
``<hello>`` (base:1.0 and base:1.1) at once and read the device's, switch to chunked framing when
both offer base:1.1 (RFC 6242), then send ``<rpc message-id="n">`` (n counting from 1 per
session) around :mod:`mgmtbench.clients.netconf.rpcs`'s operations and read replies in order,
checking their ``message-id``. Messages are framed and parsed by the emulator's own
:class:`~mgmtbench.emulator.netconf.framing.Framer`; replies go through
:func:`~mgmtbench.clients.netconf.rpcs.output`.

Modes (the study's, clibench v0.8):

- ``fresh-session``: per iteration a new connection and session, one RPC per command (each reply
  read before the next RPC), then ``<close-session/>`` written and the connection closed without
  waiting for its reply, as the study does.
- ``reuse-session``: the session from ``setup``; one RPC per command.
- ``batch-rpc``: the session from ``setup``; every command's RPC written, then every reply read.
- ``edit-commit``: the session from ``setup``; one ``<edit-config>`` of the candidate describing
  :func:`~mgmtbench.clients.netconf.rpcs.edit_interface`'s interface, its reply, then
  ``<commit/>`` and its reply.

``teardown`` writes ``<close-session/>`` and closes the kept connection (no wait for the reply).

Knobs (:mod:`.knobs`; none matters, so no ``asyncssh-netconf+tuned``), each a client by name:
``asyncssh-netconf+base-1-0`` offers base:1.0 only in its ``<hello>`` (end-of-message framing),
``asyncssh-netconf+window-size`` opens the channel with a 16 MiB window and 256 KiB packets.

Application round trips are counted (every mode) through asyncssh's ``tunnel=``
(:class:`~mgmtbench.clients.asyncssh.connect.CountingTunnel`), as in the asyncssh adapter.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from lxml import etree

from mgmtbench.clients.asyncssh_netconf.knobs import BASE_1_0_ONLY, KNOBS, WINDOW_SIZE
from mgmtbench.clients.base import (
    NETCONF_MODES,
    PAYLOADS,
    REUSING_MODES,
    AsyncClient,
    Transport,
)
from mgmtbench.clients.netconf import rpcs
from mgmtbench.clients.translate import Translator, translate_errors
from mgmtbench.emulator.netconf.framing import Framer, FramingError
from mgmtbench.errors import ClientError, ConnectionFailed, WrongOutput
from mgmtbench.targets import Auth, Target

try:
    import asyncssh

    from mgmtbench.clients.asyncssh import connect
except ImportError:  # reported by AsyncClient.missing()
    asyncssh = None  # type: ignore[assignment]
    connect = None  # type: ignore[assignment]

_TIMEOUT = 30
_CHUNK = 65536
#: The largest message read (a device's whole configuration fits many times over).
MAX_MESSAGE = 256 * 1024 * 1024
BASE_1_0 = "urn:ietf:params:netconf:base:1.0"
BASE_1_1 = "urn:ietf:params:netconf:base:1.1"
HELLO = (f'<?xml version="1.0" encoding="UTF-8"?><hello xmlns="{rpcs.BASE}"><capabilities>'
         f"<capability>{BASE_1_0}</capability><capability>{BASE_1_1}</capability>"
         "</capabilities></hello>").encode()
#: The ``base-1-0`` knob's hello: base:1.0 only, so the session keeps end-of-message framing.
HELLO_1_0 = (f'<?xml version="1.0" encoding="UTF-8"?><hello xmlns="{rpcs.BASE}"><capabilities>'
             f"<capability>{BASE_1_0}</capability></capabilities></hello>").encode()
#: The ``window-size`` knob's channel: window and largest packet (asyncssh's: 2 MiB, 32 KiB).
TUNED_WINDOW = {"window": 16 * 2**20, "max_pktsize": 2**18}
_MESSAGE_ID = re.compile(rb"""<(?:[\w.-]+:)?rpc-reply\b[^>]*?\smessage-id=["']([^"']*)["']""")


def _capabilities(hello: bytes) -> list[str]:
    """The capabilities a device's ``<hello>`` offers."""
    try:
        root = etree.fromstring(hello)
    except etree.XMLSyntaxError as exc:
        raise WrongOutput(f"asyncssh-netconf: the device's hello is not XML: {exc}") from exc
    if root.tag != f"{{{rpcs.BASE}}}hello":
        raise WrongOutput(f"asyncssh-netconf: expected the device's hello, got {hello[:120]!r}")
    return [(c.text or "").strip() for c in root.iter(f"{{{rpcs.BASE}}}capability")]


class NetconfSession:
    """One NETCONF session on an asyncssh subsystem channel (see the module)."""

    def __init__(self, conn: Any, writer: Any, reader: Any) -> None:
        self.conn, self._writer, self._reader = conn, writer, reader
        self._framer = Framer(MAX_MESSAGE)
        self._ready: list[bytes] = []
        self._sent = 0
        self._received = 0

    @classmethod
    async def open(cls, conn: Any, hello: bytes = HELLO, **channel: int) -> NetconfSession:
        """Open the subsystem on ``conn`` (``channel``: asyncssh's ``window``/``max_pktsize``)
        and exchange hellos, ours being ``hello``."""
        writer, reader, _ = await conn.open_session(subsystem="netconf", encoding=None,
                                                    **channel)
        session = cls(conn, writer, reader)
        writer.write(session._framer.frame(hello))
        device = _capabilities(await session._message())
        if BASE_1_1 in device and BASE_1_1.encode() in hello:  # both offer base:1.1
            session._framer.chunked = True
        return session

    def send(self, operation: str) -> None:
        """Write one ``<rpc>`` around ``operation`` (its reply is read by :meth:`receive`)."""
        self._sent += 1
        rpc = (f'<rpc message-id="{self._sent}" xmlns="{rpcs.BASE}">{operation}</rpc>').encode()
        self._writer.write(self._framer.frame(rpc))

    async def receive(self) -> bytes:
        """The next reply, which must answer the oldest RPC not yet answered."""
        reply = await self._message()
        self._received += 1
        found = _MESSAGE_ID.search(reply[:512])
        if found is None or found.group(1) != str(self._received).encode():
            raise WrongOutput(f"asyncssh-netconf: expected the reply to message-id "
                              f"{self._received}, got {reply[:120]!r}")
        return reply

    async def call(self, operation: str) -> bytes:
        """One RPC and its reply."""
        self.send(operation)
        return await self.receive()

    async def _message(self) -> bytes:
        while not self._ready:
            async with asyncio.timeout(_TIMEOUT):
                data = await self._reader.read(_CHUNK)
            if not data:
                raise ConnectionFailed("asyncssh-netconf: the device closed the session")
            try:
                self._ready += self._framer.feed(bytes(data))
            except FramingError as exc:
                raise WrongOutput(f"asyncssh-netconf: {exc}") from exc
        return self._ready.pop(0)

    async def close(self) -> None:
        """Write ``<close-session/>`` and close the connection, not waiting for the reply."""
        try:
            if not self._writer.channel.is_closing():
                self.send("<close-session/>")
        finally:
            self.conn.close()
            await self.conn.wait_closed()


class AsyncsshNetconfClient(AsyncClient):
    """NETCONF by hand on asyncssh, every NETCONF mode, both payloads."""
    name = "asyncssh-netconf"
    transport = Transport.NETCONF
    modes = NETCONF_MODES
    payloads = PAYLOADS
    extra = "all"  # asyncssh is a core dependency
    needs = ("asyncssh",)
    counts_round_trips = True
    all_knobs = KNOBS

    _session: NetconfSession | None = None

    @classmethod
    def check(cls, target: Target) -> None:
        """Refuse (:class:`~mgmtbench.errors.UsageError`) what asyncssh cannot honour."""
        if connect is not None:
            connect.check(target)

    def _translating(self) -> Translator:
        return translate_errors(self.name, connect.ERRORS)

    async def _open(self) -> NetconfSession:
        t = self.target
        known = str(t.known_hosts) if t.known_hosts is not None else None
        options = connect.connect_options(t, known)
        options["port"] = t.netconf_port or t.ssh_port
        if t.auth is Auth.PASSWORD:
            # As the study's Go client: straight to the password (asyncssh otherwise prefers
            # keyboard-interactive where the device offers it: a round trip more).
            options["preferred_auth"] = "password"
        if self.round_trips is not None:
            options["tunnel"] = connect.CountingTunnel(self.round_trips)
        conn = await asyncssh.connect(**options, connect_timeout=_TIMEOUT)
        hello = HELLO_1_0 if self.tuned_with(BASE_1_0_ONLY.name) else HELLO
        channel = TUNED_WINDOW if self.tuned_with(WINDOW_SIZE.name) else {}
        try:
            return await NetconfSession.open(conn, hello, **channel)
        except BaseException:
            conn.close()
            raise

    async def setup(self) -> None:
        """Untimed: open the session for the modes that keep one."""
        if self.mode in REUSING_MODES:
            async with self._translating():
                self._session = await self._open()

    async def run(self, commands: list[str]) -> str:
        """One iteration: the commands' outputs, concatenated in order."""
        async with self._translating():
            return await self._run(commands)

    async def _run(self, commands: list[str]) -> str:
        if self.mode != "edit-commit":  # an edit reads nothing: only the count matters
            rpcs.check_commands(commands, self.payload)
        payload, session = self.payload, self._session
        if self.mode == "fresh-session":
            session = await self._open()
            try:
                return "".join([self._output(await session.call(rpcs.read_rpc(c, payload)))
                                for c in commands])
            finally:
                await session.close()
        assert session is not None
        if self.mode == "reuse-session":
            return "".join([self._output(await session.call(rpcs.read_rpc(c, payload)))
                            for c in commands])
        if self.mode == "batch-rpc":
            for command in commands:
                session.send(rpcs.read_rpc(command, payload))
            return "".join([self._output(await session.receive()) for _ in commands])
        interface = rpcs.edit_interface(self.target.platform)  # edit-commit
        edited = await session.call(rpcs.edit_rpc(interface, len(commands), payload))
        return self._output(edited) + self._output(await session.call(rpcs.COMMIT))

    def _output(self, reply: bytes) -> str:
        try:
            return rpcs.output(reply, self.payload)
        except ValueError as exc:
            raise ClientError(f"{self.name}: rpc-error: {exc}") from exc

    async def teardown(self) -> None:
        """Close the kept session."""
        session, self._session = self._session, None
        if session is not None:
            async with self._translating():
                await session.close()
