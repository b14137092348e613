"""A minimal ssh-agent client: the agent protocol over its UNIX socket, standard library only.

This is the floor of the signing benchmark: one ``SSH_AGENTC_SIGN_REQUEST`` written, one
``SSH_AGENT_SIGN_RESPONSE`` read, nothing else (no event loop, no key objects), so what it
measures is the agent itself plus a socket round trip. The wire format is the one in
draft-ietf-sshm-ssh-agent (the protocol OpenSSH's ``ssh-agent`` speaks):

- every message is ``uint32 length || byte type || contents``;
- ``SSH_AGENTC_REQUEST_IDENTITIES`` (11) -> ``SSH_AGENT_IDENTITIES_ANSWER`` (12):
  ``uint32 nkeys`` then per key ``string key_blob, string comment``;
- ``SSH_AGENTC_SIGN_REQUEST`` (13): ``string key_blob, string data, uint32 flags`` ->
  ``SSH_AGENT_SIGN_RESPONSE`` (14): ``string signature`` (itself ``string algorithm, string
  blob``), or ``SSH_AGENT_FAILURE`` (5).

RSA keys are asked for ``rsa-sha2-512`` signatures (flag 4), what OpenSSH's ``ssh`` asks for
when it logs in; flags 0 would give SHA-1 ``ssh-rsa`` signatures, which servers refuse today.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from pathlib import Path

from mgmtbench.errors import ClientError, ConnectionFailed

SSH_AGENT_FAILURE = 5
SSH_AGENTC_REQUEST_IDENTITIES = 11
SSH_AGENT_IDENTITIES_ANSWER = 12
SSH_AGENTC_SIGN_REQUEST = 13
SSH_AGENT_SIGN_RESPONSE = 14
SSH_AGENT_RSA_SHA2_256 = 2
SSH_AGENT_RSA_SHA2_512 = 4

#: The signature algorithm every client of the benchmark asks for, by key algorithm.
SIGNATURE_ALGORITHMS = {"ssh-rsa": "rsa-sha2-512"}


@dataclass(frozen=True)
class Identity:
    """A key the agent holds: its public key blob (SSH wire format) and comment."""

    blob: bytes
    comment: str

    @property
    def algorithm(self) -> str:
        """The key's algorithm name (``ssh-ed25519``, ``ecdsa-sha2-nistp256``, ``ssh-rsa``)."""
        return read_string(self.blob, 0)[0].decode()

    @property
    def flags(self) -> int:
        """The sign-request flags this benchmark uses for the key (``rsa-sha2-512`` for RSA)."""
        return SSH_AGENT_RSA_SHA2_512 if self.algorithm == "ssh-rsa" else 0


def string(data: bytes) -> bytes:
    """SSH ``string``: a uint32 length, then the bytes."""
    return struct.pack(">I", len(data)) + data


def read_string(data: bytes, offset: int) -> tuple[bytes, int]:
    """The SSH ``string`` at ``offset`` of ``data``, and the offset after it."""
    if offset + 4 > len(data):
        raise ClientError("raw agent client: truncated agent message")
    (length,) = struct.unpack_from(">I", data, offset)
    end = offset + 4 + length
    if end > len(data):
        raise ClientError("raw agent client: truncated agent message")
    return data[offset + 4:end], end


def public_blob(public_key_line: str) -> bytes:
    """The key blob of an OpenSSH public key line (``ssh-ed25519 AAAA... comment``)."""
    import base64

    return base64.b64decode(public_key_line.split()[1])


class RawAgentClient:
    """One connection to an agent: blocking sends and receives on a UNIX stream socket."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._sock.connect(self.path)
        except OSError as exc:
            self._sock.close()
            raise ConnectionFailed(f"raw agent client: cannot connect to the agent at "
                                   f"{self.path}: {exc.strerror or exc}") from exc

    def request(self, kind: int, contents: bytes = b"") -> tuple[int, bytes]:
        """Send one message, return the answer's type and contents."""
        body = bytes([kind]) + contents
        self._sock.sendall(struct.pack(">I", len(body)) + body)
        (length,) = struct.unpack(">I", self._recv(4))
        answer = self._recv(length)
        if not answer:
            raise ClientError("raw agent client: empty answer from the agent")
        return answer[0], answer[1:]

    def identities(self) -> list[Identity]:
        """The keys the agent holds (``SSH_AGENTC_REQUEST_IDENTITIES``)."""
        kind, body = self.request(SSH_AGENTC_REQUEST_IDENTITIES)
        if kind != SSH_AGENT_IDENTITIES_ANSWER:
            raise ClientError(f"raw agent client: the agent answered {kind} to "
                              "REQUEST_IDENTITIES")
        (count,) = struct.unpack_from(">I", body, 0)
        offset, found = 4, []
        for _ in range(count):
            blob, offset = read_string(body, offset)
            comment, offset = read_string(body, offset)
            found.append(Identity(blob, comment.decode("utf-8", "replace")))
        return found

    def sign(self, key_blob: bytes, data: bytes, flags: int = 0) -> bytes:
        """The agent's signature of ``data`` with the key ``key_blob``: an SSH signature
        (``string algorithm, string blob``)."""
        kind, body = self.request(SSH_AGENTC_SIGN_REQUEST,
                                  string(key_blob) + string(data) + struct.pack(">I", flags))
        if kind != SSH_AGENT_SIGN_RESPONSE:
            raise ClientError("raw agent client: the agent refused to sign (SSH_AGENT_FAILURE)"
                              if kind == SSH_AGENT_FAILURE
                              else f"raw agent client: the agent answered {kind} to SIGN_REQUEST")
        return read_string(body, 0)[0]

    def close(self) -> None:
        """Close the connection."""
        self._sock.close()

    def __enter__(self) -> RawAgentClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _recv(self, size: int) -> bytes:
        chunks, left = [], size
        while left:
            chunk = self._sock.recv(left)
            if not chunk:
                raise ConnectionFailed("raw agent client: the agent closed the connection")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
