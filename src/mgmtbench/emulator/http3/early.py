"""Which requests a device answers from TLS early data (0-RTT), RFC 8470's way.

Early data can be replayed: whoever recorded a client's first flight can send it again (RFC 8446
section 8, RFC 9001 section 9.2). The HTTP/3 server takes each session ticket once (a replayed
ClientHello resumes nothing and gets no early data), and marks every request it received before
the handshake completed with ``Early-Data: 1``, as RFC 8470 section 5.1 says a front end does;
the application then answers only what is safe to run twice and answers the rest
``425 Too Early``, which tells the client to send it again once the handshake is done.

Safe here: ``GET`` or ``HEAD`` of ``/admin/exec/`` whose commands are all ``show`` commands
(read-only; their filters only select lines). A configuration (``POST /admin/config``), an exec
command that is not ``show`` (``copy``, ``write``, ``reload``, ``clear`` ...), RESTCONF and the
emulator's own diagnostics wait for the handshake.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import unquote_plus

#: The header that marks a request received in early data (RFC 8470 section 5.1).
EARLY_DATA = b"early-data"
#: The status that asks for the request again after the handshake (RFC 8470 section 5.2).
TOO_EARLY = 425
EXEC_PREFIX = b"/admin/exec/"


def is_early(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether a request's headers say it came in early data (here or on an earlier hop)."""
    return any(name == EARLY_DATA and value.strip() == b"1" for name, value in headers)


def replay_safe(method: str, raw_path: bytes) -> bool:
    """Whether a request may be answered from early data: ``GET``/``HEAD`` of exec commands
    that are all ``show`` commands (any abbreviation of at least ``sh``)."""
    if method not in ("GET", "HEAD"):
        return False
    path = raw_path.split(b"?", 1)[0]
    if not path.startswith(EXEC_PREFIX):
        return False
    try:
        lines = [unquote_plus(part, errors="strict")
                 for part in path[len(EXEC_PREFIX):].decode("ascii").split("/") if part]
    except UnicodeError:
        return False
    return bool(lines) and all(_is_show(line) for line in lines)


def _is_show(line: str) -> bool:
    words = line.split()
    return bool(words) and len(words[0]) >= 2 and "show".startswith(words[0].lower())
