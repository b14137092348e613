"""NETCONF's message framing over SSH (RFC 6242), without I/O.

Until both hellos are exchanged, and for good when either side offers only ``base:1.0``,
messages end with ``]]>]]>`` (end-of-message framing). After hellos that both offer
``base:1.1``, a message is chunks ``\\n#<size>\\n<data>`` ended by ``\\n##\\n`` (chunked
framing). :class:`Framer` takes bytes as they arrive and gives whole messages; it refuses a
message larger than its limit and any framing it cannot read (a hostile or broken client):
RFC 6242 says the session then ends, and :class:`FramingError` says why.
"""

from __future__ import annotations

import re

EOM = b"]]>]]>"
MAX_CHUNK = 4294967295
_CHUNK_HEAD = re.compile(rb"\n#([1-9][0-9]{0,9})\n")


class FramingError(ValueError):
    """Bytes that are not a NETCONF message in the session's framing, or a message over the
    size limit: the session must end."""


class Framer:
    """Messages out of a stream of bytes (see the module docstring)."""

    def __init__(self, max_message: int) -> None:
        self.max_message = max_message
        self.chunked = False
        self._buffer = bytearray()
        self._message = bytearray()  # chunked: the chunks of the message so far

    def feed(self, data: bytes) -> list[bytes]:
        """The whole messages that ``data`` completes (in order)."""
        self._buffer += data
        return self._chunked() if self.chunked else self._end_of_message()

    def _end_of_message(self) -> list[bytes]:
        found: list[bytes] = []
        while True:
            end = self._buffer.find(EOM)
            if end < 0:
                if len(self._buffer) > self.max_message + len(EOM):
                    raise FramingError(f"message over {self.max_message} bytes")
                return found
            if end > self.max_message:
                raise FramingError(f"message over {self.max_message} bytes")
            found.append(bytes(self._buffer[:end]))
            del self._buffer[:end + len(EOM)]
            if self.chunked:  # the hello switched framing: the rest is chunked
                return found + self._chunked()

    def _chunked(self) -> list[bytes]:
        found: list[bytes] = []
        buffer = self._buffer
        while buffer:
            if buffer[:4] == b"\n##\n":
                if not self._message:
                    raise FramingError("end of chunks before any chunk")
                found.append(bytes(self._message))
                self._message = bytearray()
                del buffer[:4]
                continue
            head = _CHUNK_HEAD.match(buffer)
            if head is None:
                if len(buffer) >= 14 or not _could_start(bytes(buffer)):
                    raise FramingError(f"bad chunk header {bytes(buffer[:14])!r}")
                return found  # a header still arriving
            size = int(head.group(1))
            if size > MAX_CHUNK:
                raise FramingError(f"chunk of {size} bytes (the most is {MAX_CHUNK})")
            if len(self._message) + size > self.max_message:
                raise FramingError(f"message over {self.max_message} bytes")
            start = head.end()
            if len(buffer) < start + size:
                return found  # the chunk's data still arriving
            self._message += buffer[start:start + size]
            del buffer[:start + size]
        return found

    def frame(self, message: bytes) -> bytes:
        """``message`` framed for sending."""
        if self.chunked:
            return b"\n#%d\n%s\n##\n" % (len(message), message)
        return message + EOM

    def piece(self, data: bytes) -> bytes:
        """A piece of a message sent as it is made (a chunk, or the bytes as they are: the
        message's end marker comes from :meth:`end`)."""
        if self.chunked:
            return b"\n#%d\n%s" % (len(data), data) if data else b""
        return data

    def end(self) -> bytes:
        """The end of a message sent in pieces."""
        return b"\n##\n" if self.chunked else EOM


def _could_start(prefix: bytes) -> bool:
    """Whether ``prefix`` can still become a chunk header or an end of chunks."""
    if b"\n##\n".startswith(prefix):
        return True
    return re.fullmatch(rb"\n(#([1-9][0-9]{0,9}\n?)?)?", prefix) is not None
