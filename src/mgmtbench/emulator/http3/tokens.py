"""Address tokens (RFC 9000 section 8.1.3): how a returning client's 0-RTT answer leaves whole.

Until a server has validated a client's address it may send at most three times what it has
received from it (RFC 9000 section 8.1): a resumed client's first datagram is 1,200 bytes, the
server's handshake flight takes about half the allowance, so a 0-RTT answer over ~2 kB waits a
round trip for the client's Finished anyway — and four of the five default show commands answer
more. Tokens are RFC 9000's answer, and what quic-go's servers do: after each handshake the
device sends a NEW_TOKEN frame; a client that presents that token in its next Initial, from the
same IP address, is validated at once, and the whole early answer leaves with the handshake.

A token is ``v1 || issued (8 bytes, seconds) || nonce (8 random bytes) || HMAC-SHA256(device key,
client IP || issued || nonce)`` truncated to 16 bytes: the device keeps no per-token state to
check one, and two tokens issued in one second differ. It is accepted
:data:`LIFETIME` seconds, from the IP it was issued to (any port: a new connection has a new
one), ONCE: a replayed token would let whoever recorded it aim the device's answers at that
address (RFC 9000 section 8.1.4 asks servers to prevent or limit replay), so used tokens are
remembered until they expire. aioquic 1.7.2 neither sends NEW_TOKEN frames nor reads tokens on a
server, so :mod:`.server` writes the frame after HANDSHAKE_DONE and marks the path validated
before the first datagram is processed; a NEW_TOKEN frame that is lost is not sent again (the
client then resumes as without one).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
import time
from collections import OrderedDict

__all__ = ["LIFETIME", "AddressTokens"]

#: Seconds a token is accepted after it was issued.
LIFETIME = 3600.0
#: Used tokens remembered (each until it expires; the oldest go first past this).
REMEMBERED = 100_000
_VERSION = b"\x01"
_MAC_BYTES = 16
_NONCE_BYTES = 8
_SIZE = len(_VERSION) + 8 + _NONCE_BYTES + _MAC_BYTES


class AddressTokens:
    """One device's tokens: :meth:`issue` for a client's IP, :meth:`redeem` once."""

    def __init__(self, lifetime: float = LIFETIME, remembered: int = REMEMBERED) -> None:
        self._key = os.urandom(32)
        self._lifetime = lifetime
        self._remembered = remembered
        self._used: OrderedDict[bytes, float] = OrderedDict()

    def issue(self, host: str, now: float | None = None) -> bytes:
        """A new token for a client at ``host``."""
        issued = struct.pack("!Q", int(time.time() if now is None else now))
        signed = issued + os.urandom(_NONCE_BYTES)
        return _VERSION + signed + self._mac(host, signed)

    def redeem(self, token: bytes, host: str, now: float | None = None) -> bool:
        """True, once, for a token this device issued to ``host`` less than its lifetime ago."""
        if len(token) != _SIZE or not token.startswith(_VERSION):
            return False
        signed = token[1:-_MAC_BYTES]
        if not hmac.compare_digest(token[-_MAC_BYTES:], self._mac(host, signed)):
            return False
        clock = time.time() if now is None else now
        age = clock - struct.unpack("!Q", signed[:8])[0]
        if not 0 <= age <= self._lifetime:
            return False
        self._forget_expired(clock)
        if token in self._used:
            return False
        self._used[token] = clock + self._lifetime
        while len(self._used) > self._remembered:
            self._used.popitem(last=False)
        return True

    def _mac(self, host: str, signed: bytes) -> bytes:
        return hmac.new(self._key, host.encode() + signed, hashlib.sha256).digest()[:_MAC_BYTES]

    def _forget_expired(self, now: float) -> None:
        while self._used:
            token, expires = next(iter(self._used.items()))
            if expires > now:
                return
            del self._used[token]
