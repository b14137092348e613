"""Signers for the ssh-agent experiment: the same SSH signature made four ways.

Three clients of the agent protocol and the in-process signature it replaces, one small interface
(:class:`Signer`: ``sign(data) -> SSH signature``, ``close()``), picked by name from
:data:`SIGNERS`:

- ``raw``: :class:`~mgmtbench.testing.agent_protocol.RawAgentClient`, the protocol over the UNIX
  socket with the standard library only: the floor, what the agent itself costs;
- ``asyncssh``: ``asyncssh.connect_agent`` and the agent key's ``sign_async``, on an event loop
  of the signer's own (``run_until_complete`` per signature, as a blocking caller would);
- ``paramiko``: ``paramiko.Agent`` (it reads ``SSH_AUTH_SOCK``, set while it connects) and the
  agent key's ``sign_ssh_data``;
- ``in-process``: the private key file loaded once with ``cryptography`` and the signature made
  in this process: what skipping the agent saves.

Every signer connects (and loads or finds its key) in its constructor, outside any timed part.
RSA keys sign ``rsa-sha2-512`` everywhere (the algorithm logins use). Signatures come back in SSH
wire format (``string algorithm, string blob``); :func:`verify` checks one against the public key
with ``cryptography``.
"""

from __future__ import annotations

import asyncio
import os
import struct
import threading
from abc import ABC, abstractmethod
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, ClassVar

from mgmtbench.errors import ClientError, UsageError
from mgmtbench.testing.agent_protocol import (
    SIGNATURE_ALGORITHMS,
    Identity,
    RawAgentClient,
    public_blob,
    read_string,
    string,
)
from mgmtbench.testing.keys import ClientKeys

_ENVIRONMENT = threading.Lock()  # held while SSH_AUTH_SOCK is changed for paramiko.Agent
#: ECDSA curves' hash, by SSH key algorithm (RFC 5656).
_ECDSA_HASHES = {"ecdsa-sha2-nistp256": "SHA256", "ecdsa-sha2-nistp384": "SHA384",
                 "ecdsa-sha2-nistp521": "SHA512"}


class Signer(ABC):
    """Makes SSH signatures with one key; connected (or loaded) when made."""

    name: ClassVar[str]
    #: How it signs, for the results (one line).
    how: ClassVar[str]
    #: The distributions whose versions the results record.
    libraries: ClassVar[tuple[str, ...]] = ()

    def __init__(self, agent_socket: Path, keys: ClientKeys) -> None:
        self.agent_socket = agent_socket
        self.keys = keys
        self.blob = public_blob(keys.public.read_text())
        self.algorithm = Identity(self.blob, "").algorithm

    @abstractmethod
    def sign(self, data: bytes) -> bytes:
        """The SSH signature of ``data``."""

    def close(self) -> None:  # noqa: B027 - a signer may hold nothing
        """Release the agent connection (or the key)."""

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Distribution name -> version of each library this signer drives."""
        found = {}
        for name in cls.libraries:
            try:
                found[name] = version(name)
            except PackageNotFoundError:
                continue
        return found

    def __enter__(self) -> Signer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RawSigner(Signer):
    """The agent protocol with the standard library: one request, one answer."""

    name = "raw"
    how = "SSH_AGENTC_SIGN_REQUEST over the UNIX socket, standard library only"

    def __init__(self, agent_socket: Path, keys: ClientKeys) -> None:
        super().__init__(agent_socket, keys)
        self._client = RawAgentClient(agent_socket)
        held = [i for i in self._client.identities() if i.blob == self.blob]
        if not held:
            self._client.close()
            raise UsageError(f"the agent at {agent_socket} does not hold {keys.public.name}")
        self._flags = held[0].flags

    def sign(self, data: bytes) -> bytes:
        """The agent's signature of ``data``."""
        return self._client.sign(self.blob, data, self._flags)

    def close(self) -> None:
        """Close the agent connection."""
        self._client.close()


class AsyncsshSigner(Signer):
    """asyncssh's agent client on an event loop of its own."""

    name = "asyncssh"
    how = "asyncssh.connect_agent, SSHAgentKeyPair.sign_async, run_until_complete per signature"
    libraries = ("asyncssh",)

    def __init__(self, agent_socket: Path, keys: ClientKeys) -> None:
        import asyncssh

        super().__init__(agent_socket, keys)
        self._loop = asyncio.new_event_loop()
        try:
            self._agent = self._loop.run_until_complete(asyncssh.connect_agent(str(agent_socket)))
            held = [k for k in self._loop.run_until_complete(self._agent.get_keys())
                    if k.public_data == self.blob]
        except (OSError, asyncssh.Error) as exc:
            self._loop.close()
            raise ClientError(f"asyncssh agent client: {exc}") from exc
        if not held:
            self.close()
            raise UsageError(f"the agent at {agent_socket} does not hold {keys.public.name}")
        self._key: Any = held[0]  # an SSHAgentKeyPair
        if self.algorithm in SIGNATURE_ALGORITHMS:
            self._key.set_sig_algorithm(SIGNATURE_ALGORITHMS[self.algorithm].encode())

    def sign(self, data: bytes) -> bytes:
        """The agent's signature of ``data``."""
        return bytes(self._loop.run_until_complete(self._key.sign_async(data)))

    def close(self) -> None:
        """Close the agent connection and the loop."""
        if self._loop.is_closed():
            return
        self._agent.close()
        self._loop.run_until_complete(self._agent.wait_closed())
        self._loop.close()


class ParamikoSigner(Signer):
    """``paramiko.Agent`` (the agent at ``SSH_AUTH_SOCK``) and its key's ``sign_ssh_data``."""

    name = "paramiko"
    how = "paramiko.Agent (SSH_AUTH_SOCK), AgentKey.sign_ssh_data"
    libraries = ("paramiko",)

    def __init__(self, agent_socket: Path, keys: ClientKeys) -> None:
        import paramiko

        super().__init__(agent_socket, keys)
        with _ENVIRONMENT:  # signers made in threads at once must not see each other's
            before = os.environ.get("SSH_AUTH_SOCK")
            os.environ["SSH_AUTH_SOCK"] = str(agent_socket)  # the only place paramiko.Agent looks
            try:
                self._agent = paramiko.Agent()
            finally:
                if before is None:
                    os.environ.pop("SSH_AUTH_SOCK", None)
                else:
                    os.environ["SSH_AUTH_SOCK"] = before
        held = [k for k in self._agent.get_keys() if k.asbytes() == self.blob]
        if not held:
            self._agent.close()
            raise UsageError(f"the agent at {agent_socket} does not hold {keys.public.name}")
        self._key: Any = held[0]
        self._algorithm = SIGNATURE_ALGORITHMS.get(self.algorithm)

    def sign(self, data: bytes) -> bytes:
        """The agent's signature of ``data``."""
        return bytes(self._key.sign_ssh_data(data, self._algorithm))

    def close(self) -> None:
        """Close the agent connection."""
        self._agent.close()


class InProcessSigner(Signer):
    """The private key file, loaded once with ``cryptography``; no agent."""

    name = "in-process"
    how = "the key file loaded with cryptography, signed in this process"
    libraries = ("cryptography",)

    def __init__(self, agent_socket: Path, keys: ClientKeys) -> None:
        from cryptography.hazmat.primitives.serialization import load_ssh_private_key

        super().__init__(agent_socket, keys)
        self._key: Any = load_ssh_private_key(keys.private.read_bytes(), password=None)

    def sign(self, data: bytes) -> bytes:
        """The signature of ``data``, made here."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec, padding
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

        algorithm = self.algorithm
        if algorithm == "ssh-ed25519":
            return string(algorithm.encode()) + string(self._key.sign(data))
        if algorithm in _ECDSA_HASHES:
            r, s = decode_dss_signature(self._key.sign(
                data, ec.ECDSA(getattr(hashes, _ECDSA_HASHES[algorithm])())))
            return string(algorithm.encode()) + string(_mpint(r) + _mpint(s))
        if algorithm == "ssh-rsa":
            signed = self._key.sign(data, padding.PKCS1v15(), hashes.SHA512())
            return string(SIGNATURE_ALGORITHMS[algorithm].encode()) + string(signed)
        raise UsageError(f"in-process signer: key algorithm {algorithm} is not supported")


#: Signers by name, in the order results show them.
SIGNERS: dict[str, type[Signer]] = {cls.name: cls for cls in (
    RawSigner, AsyncsshSigner, ParamikoSigner, InProcessSigner)}
#: The ones that go through the agent.
AGENT_SIGNERS = ("raw", "asyncssh", "paramiko")


def signer(name: str, agent_socket: Path, keys: ClientKeys) -> Signer:
    """A connected signer ``name`` (:data:`SIGNERS`) for ``keys``."""
    if name not in SIGNERS:
        raise UsageError(f"unknown signer {name!r}: choose one of {', '.join(SIGNERS)}")
    return SIGNERS[name](agent_socket, keys)


def _mpint(value: int) -> bytes:
    """SSH ``mpint`` of a non-negative integer (a leading zero byte when the top bit is set)."""
    data = value.to_bytes((value.bit_length() + 8) // 8, "big") if value else b""
    return struct.pack(">I", len(data)) + data


def verify(public_key: Path, data: bytes, signature: bytes) -> bool:
    """True if ``signature`` (SSH wire format) is a valid signature of ``data`` by the key in
    the OpenSSH public key file ``public_key``."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    from cryptography.hazmat.primitives.serialization import load_ssh_public_key

    key: Any = load_ssh_public_key(public_key.read_bytes())
    name, offset = read_string(signature, 0)
    blob = read_string(signature, offset)[0]
    algorithm = name.decode()
    try:
        if algorithm == "ssh-ed25519":
            key.verify(blob, data)
        elif algorithm in _ECDSA_HASHES:
            r, at = read_string(blob, 0)
            s = read_string(blob, at)[0]
            key.verify(encode_dss_signature(int.from_bytes(r, "big"), int.from_bytes(s, "big")),
                       data, ec.ECDSA(getattr(hashes, _ECDSA_HASHES[algorithm])()))
        elif algorithm in ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"):
            digest: hashes.HashAlgorithm = {"rsa-sha2-512": hashes.SHA512(),
                                             "rsa-sha2-256": hashes.SHA256(),
                                             "ssh-rsa": hashes.SHA1()}[algorithm]
            key.verify(blob, data, padding.PKCS1v15(), digest)
        else:
            return False
    except (InvalidSignature, TypeError, ValueError):
        return False
    return True
