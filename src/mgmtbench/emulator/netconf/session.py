"""One NETCONF session on a device, without I/O: bytes in, bytes out.

The session starts by sending its hello (capabilities, session id) in end-of-message framing,
reads the client's, and from then on answers each ``<rpc>`` with one ``<rpc-reply>`` carrying
the request's attributes (``message-id`` first among them), in the framing both hellos agreed on
(:mod:`.framing`). Each operation is a function of :mod:`.operations`; what the device's sessions
share (candidate, locks, other sessions) is its :class:`~.datastores.DeviceDatastores`.

Refusals, as RFC 6241 and 6242 say: a message that is not well-formed XML gets a
``malformed-message`` error (or ends the session before the hellos); a hello without a base
capability, or with a ``session-id`` from the client, ends it; an ``<rpc>`` without a
``message-id`` is answered ``missing-attribute``; an unknown operation ``operation-not-supported``;
framing that cannot be read, or a message over the size limit, ends the session (with a log line).
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from lxml import etree

from mgmtbench.emulator.cli.session import CliSession, Mode
from mgmtbench.emulator.device.device import Device
from mgmtbench.emulator.netconf.datastores import datastores
from mgmtbench.emulator.netconf.errors import RpcError
from mgmtbench.emulator.netconf.framing import Framer, FramingError
from mgmtbench.emulator.netconf.hello import server_hello
from mgmtbench.emulator.netconf.operations import (
    OPERATIONS,
    Call,
    StreamedData,
    platform_rpcs,
    run_cli,
)

log = logging.getLogger("mgmtbench.emulator")

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
BASE_10 = "urn:ietf:params:netconf:base:1.0"
BASE_11 = "urn:ietf:params:netconf:base:1.1"
#: The study's CLI ``get`` exactly as its client writes it (the message-id and command without
#: markup or entities): answered without building an XML tree, 40 % of a request's server time.
#: Anything else takes the parser.
_CLI_GET = re.compile(
    rb'\s*<rpc message-id="([^"<&]*)" xmlns="urn:ietf:params:xml:ns:netconf:base:1\.0">'
    rb'<get><filter type="cli">([^<&]*)</filter></get></rpc>\s*')
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False,
                          remove_blank_text=True, load_dtd=False)


@dataclass(frozen=True)
class SessionOptions:
    """What a session needs from the server: the largest message it takes, whether the
    device offers a candidate datastore, who logged in from where, and a timer."""

    max_message: int
    candidate: bool
    user: str
    peer: str
    schedule: Callable[[float, Callable[[], None]], Callable[[], None]]


#: How a session hands the transport a reply too long to hold: its framed pieces, to send in
#: turn as the client takes them, and what to call once the last is sent.
Streamer = Callable[[AsyncGenerator[bytes, None], Callable[[], None]], None]


class NetconfSession:
    """One session (see the module docstring). ``send`` writes bytes to the client;
    ``close`` ends the transport (after what was sent); ``stream`` sends a long reply (the CLI
    output of ``show bulk-output``) piece by piece, and the session answers no other request
    until it is sent (replies keep their requests' order)."""

    def __init__(self, device: Device, options: SessionOptions, send: Callable[[bytes], None],
                 close: Callable[[], None], stream: Streamer) -> None:
        self.device = device
        self.options = options
        self._send = send
        self._close = close
        self._stream = stream
        #: Requests that came while a long reply is being sent, answered after it.
        self._held: deque[bytes] = deque()
        self.streaming = False
        self.stores = datastores(device)
        self.session_id = 0
        self.stores.join(self._joined)
        self.framer = Framer(options.max_message)
        self.hello_done = False
        self.closed = False
        self.cli = CliSession(device, mode=Mode.PRIV, user=options.user, peer=options.peer)
        self.requests = 0
        #: The platform's own RPCs (Junos's ``get-software-information`` ...).
        self.platform_rpcs = platform_rpcs(device)

    def _joined(self, session_id: int) -> NetconfSession:
        self.session_id = session_id
        return self

    def start(self) -> None:
        """Send the server's hello."""
        hello = server_hello(self.device, self.session_id, self.options.candidate,
                             self.platform_rpcs.capabilities)
        self._send(self.framer.frame(hello))

    def data_received(self, data: bytes) -> None:
        """Bytes from the client: answer every message they complete."""
        if self.closed:
            return
        try:
            messages = self.framer.feed(data)
        except FramingError as exc:
            self._end(f"framing: {exc}")
            return
        self._held.extend(messages)
        self._answer_held()

    def _answer_held(self) -> None:
        while self._held and not self.closed and not self.streaming:
            message = self._held.popleft()
            if not self.hello_done:
                self._hello(message)
            else:
                self._rpc(message)

    def _streamed(self) -> None:
        """The long reply is sent: the requests that came meanwhile are answered."""
        self.streaming = False
        self._answer_held()

    def connection_lost(self) -> None:
        """The transport is gone: the session's locks and its unconfirmed commit go."""
        if not self.closed:
            self.closed = True
        self.stores.leave(self.session_id)

    def kill(self) -> None:
        """Another session's ``kill-session``: end now."""
        self._end("killed by kill-session", quiet=True)

    # --- the hello --------------------------------------------------------------------------

    def _hello(self, message: bytes) -> None:
        try:
            root = etree.fromstring(message, _PARSER)
        except etree.XMLSyntaxError as exc:
            self._end(f"the client's hello is not XML: {exc}")
            return
        if root.tag != f"{{{BASE}}}hello":
            self._end(f"expected the client's hello, got <{etree.QName(root).localname}>")
            return
        if root.find(f"{{{BASE}}}session-id") is not None:
            self._end("the client's hello has a session-id")
            return
        offered = {(c.text or "").strip() for c in root.iter(f"{{{BASE}}}capability")}
        if not offered & {BASE_10, BASE_11}:
            self._end("the client's hello offers no base capability")
            return
        self.hello_done = True
        if BASE_11 in offered:
            self.framer.chunked = True

    # --- rpcs -------------------------------------------------------------------------------

    def _rpc(self, message: bytes) -> None:
        self.requests += 1
        quick = _CLI_GET.fullmatch(message)
        if quick is not None:
            self.stores.counts["get"] += 1
            self._reply({"message-id": quick.group(1).decode()},
                        run_cli(self.cli, quick.group(2).decode()))
            return
        try:
            root = etree.fromstring(message, _PARSER)
        except etree.XMLSyntaxError as exc:
            self._reply({}, RpcError("malformed-message", f"not well-formed XML: {exc}",
                                     type="rpc").xml())
            return
        if root.tag != f"{{{BASE}}}rpc":
            self._reply({}, RpcError("unknown-element", f"expected <rpc>, got "
                                     f"<{etree.QName(root).localname}>", type="protocol",
                                     info={"bad-element": etree.QName(root).localname}).xml())
            return
        attributes = {str(k): str(v) for k, v in root.attrib.items()
                      if not str(k).startswith("{")}
        if "message-id" not in attributes:
            self._reply({}, RpcError("missing-attribute", "an <rpc> needs a message-id",
                                     type="rpc", info={"bad-attribute": "message-id",
                                                       "bad-element": "rpc"}).xml())
            return
        operation = next((c for c in root if isinstance(c.tag, str)), None)
        body: str | StreamedData
        if operation is None:
            body = RpcError("missing-element", "the <rpc> names no operation", type="protocol",
                            info={"bad-element": "rpc"}).xml()
        else:
            body = self._operation(operation)
        self._reply(attributes, body)
        if self.closing:
            self._end("close-session", quiet=True)

    closing = False

    def _operation(self, element: etree._Element) -> str | StreamedData:
        handler = OPERATIONS.get(element.tag)
        qname = etree.QName(element)
        name = qname.localname
        if handler is None and qname.namespace in (None, BASE):
            handler = self.platform_rpcs.operations.get(name)
        self.stores.counts[name] += 1
        if handler is None:
            return RpcError("operation-not-supported", f"operation <{name}> is not supported",
                            type="protocol", info={"bad-element": name}).xml()
        call = Call(self.stores, self.session_id, element, self.cli, self.options.schedule,
                    self.options.candidate, self._close_after_reply)
        try:
            return handler(call)
        except RpcError as exc:
            return exc.xml()

    def _close_after_reply(self) -> None:
        self.closing = True

    def _reply(self, attributes: dict[str, str], body: str | StreamedData) -> None:
        attrs = "".join(f" {k}={quoteattr(v)}" for k, v in attributes.items())
        head = f'<rpc-reply xmlns="{BASE}"{attrs}>'
        if isinstance(body, StreamedData):
            self.streaming = True
            self._stream(self._pieces(head, body), self._streamed)
            return
        text = f"{head}{body}</rpc-reply>"
        self._send(self.framer.frame(text.encode("utf-8")))

    async def _pieces(self, head: str, body: StreamedData) -> AsyncGenerator[bytes, None]:
        yield self.framer.piece(head.encode("utf-8"))
        async for piece in body.pieces():
            yield self.framer.piece(piece.encode("utf-8"))
        yield self.framer.piece(b"</rpc-reply>") + self.framer.end()

    def _end(self, why: str, quiet: bool = False) -> None:
        if self.closed:
            return
        self.closed = True
        if not quiet:
            log.warning("%s netconf session %d ended: %s", self.device.hostname,
                        self.session_id, escape(why))
        self.stores.leave(self.session_id)
        self._close()
