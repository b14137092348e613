"""A raw NETCONF session for tests: paramiko's ``netconf`` subsystem channel, bytes as written,
framing done here (so tests can send what no library would: bad framing, no hello, ...)."""

from __future__ import annotations

import time
from typing import Any

import paramiko
from lxml import etree

BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"
NS = {"nc": BASE}
EOM = b"]]>]]>"
CLIENT_HELLO_11 = (f'<hello xmlns="{BASE}"><capabilities><capability>'
                   "urn:ietf:params:netconf:base:1.1</capability></capabilities></hello>")
CLIENT_HELLO_10 = (f'<hello xmlns="{BASE}"><capabilities><capability>'
                   "urn:ietf:params:netconf:base:1.0</capability></capabilities></hello>")


class RawNetconf:
    """One NETCONF session on ``port``, with the hello read (``server_hello``)."""

    def __init__(self, port: int, *, hello: str | None = CLIENT_HELLO_11,
                 host: str = "127.0.0.1", password: str = "admin") -> None:
        self.client = paramiko.SSHClient()
        self.client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        self.client.connect(host, port, username="admin", password=password,
                            look_for_keys=False, allow_agent=False, timeout=10)
        transport = self.client.get_transport()
        assert transport is not None
        self.chan: Any = transport.open_session()
        self.chan.settimeout(10)
        self.chan.invoke_subsystem("netconf")
        self.buffer = b""
        self.chunked = False
        self.server_hello = etree.fromstring(self._read_eom())
        self.message_id = 0
        if hello is not None:
            self.send_raw(hello.encode() + EOM)
            self.chunked = "base:1.1" in hello

    def close(self) -> None:
        """Close the SSH connection."""
        self.client.close()

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are."""
        self.chan.sendall(data)

    def send(self, message: str) -> None:
        """One message in the session's framing."""
        data = message.encode()
        self.send_raw(b"\n#%d\n%s\n##\n" % (len(data), data) if self.chunked else data + EOM)

    def rpc(self, operation: str, **attributes: str) -> etree._Element:
        """Send ``<rpc>`` around ``operation`` and return the ``<rpc-reply>``."""
        self.message_id += 1
        attrs = {"message-id": str(self.message_id), **attributes}
        text = " ".join(f'{k}="{v}"' for k, v in attrs.items())
        self.send(f'<rpc xmlns="{BASE}" {text}>{operation}</rpc>')
        return self.reply()

    def reply(self) -> etree._Element:
        """The next message."""
        return etree.fromstring(self._read_chunked() if self.chunked else self._read_eom())

    def closed(self, within: float = 5.0) -> bool:
        """Whether the server closes the channel within ``within`` seconds."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            try:
                if not self.chan.recv(65536):
                    return True
            except TimeoutError:
                return False
            if self.chan.exit_status_ready() or self.chan.closed:
                return True
        return False

    def _fill(self) -> None:
        data = self.chan.recv(65536)
        if not data:
            raise EOFError("the server closed the session")
        self.buffer += data

    def _read_eom(self) -> bytes:
        while EOM not in self.buffer:
            self._fill()
        message, _, self.buffer = self.buffer.partition(EOM)
        return message

    def _read_chunked(self) -> bytes:
        while b"\n##\n" not in self.buffer:
            self._fill()
        message = b""
        rest = self.buffer
        while not rest.startswith(b"\n##\n"):
            head, _, rest = rest[2:].partition(b"\n")
            size = int(head)
            message += rest[:size]
            rest = rest[size:]
        self.buffer = rest[4:]
        return message


def error_tag(reply: etree._Element) -> str | None:
    """The reply's first ``error-tag``, None if it has no rpc-error."""
    return reply.findtext("nc:rpc-error/nc:error-tag", namespaces=NS)


def data_of(reply: etree._Element) -> etree._Element:
    """The reply's ``<data>``."""
    found = reply.find("nc:data", NS)
    assert found is not None, etree.tostring(reply)
    return found
