"""paramiko: one ``SSHClient`` connected the adapter's way, a session channel per transfer.

Connecting (login, host key check, algorithm choices as the transport's security options) is
:func:`mgmtbench.clients.paramiko.connect.connect`. ``send`` writes the bytes with
``Channel.sendall`` and ``shutdown_write()`` (EOF); ``receive`` reads ``Channel.recv`` to the end.
Lists: paramiko's tables of what it can negotiate (``Transport._kex_info``, ``_cipher_info``,
``_mac_info``; AEAD: ``is_aead``); default preference: ``Transport._preferred_kex`` ... Negotiated:
the transport's ``local_cipher`` and ``local_mac`` (paramiko negotiates a MAC even for an AEAD
cipher and does not use it: reported as none); the key exchange from paramiko's debug log of the
handshake (``Kex: ...``, read during :meth:`ParamikoTransfer.open`), the one place it names it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import paramiko

from mgmtbench.clients.algorithms import AlgorithmLists
from mgmtbench.clients.paramiko.connect import ERRORS, check, connect
from mgmtbench.clients.transfer.base import (
    CHUNK,
    SINK_COMMAND,
    TRIVIAL_COMMAND,
    Negotiated,
    TransferClient,
    check_transfer,
    logged,
    source_command,
    zero_chunks,
)
from mgmtbench.clients.translate import translate_errors
from mgmtbench.errors import ClientError, UsageError
from mgmtbench.targets import Target

_TIMEOUT = 120.0
_TRANSPORT = paramiko.Transport


class ParamikoTransfer(TransferClient):
    """paramiko's ``SSHClient`` and its transport's channels."""

    name: ClassVar[str] = "paramiko"
    needs: ClassVar[tuple[str, ...]] = ("paramiko",)
    extra: ClassVar[str] = "paramiko"

    _client: paramiko.SSHClient | None = None
    _kex: str | None = None

    def __init__(self, target: Target) -> None:
        check(target)
        super().__init__(target)

    @classmethod
    def supported(cls) -> AlgorithmLists:
        """paramiko's ``_kex_info``, ``_cipher_info`` and ``_mac_info``."""
        return AlgorithmLists.of(_TRANSPORT._kex_info, _TRANSPORT._cipher_info,
                                 _TRANSPORT._mac_info,
                                 [c for c, info in _TRANSPORT._cipher_info.items()
                                  if info.get("is_aead")])

    @classmethod
    def preferred(cls) -> AlgorithmLists:
        """paramiko's ``_preferred_kex``, ``_preferred_ciphers``, ``_preferred_macs``."""
        return AlgorithmLists.of(_TRANSPORT._preferred_kex, _TRANSPORT._preferred_ciphers,
                                 _TRANSPORT._preferred_macs, cls.supported().aead)

    def _session(self, client: paramiko.SSHClient, command: str) -> Any:
        transport = client.get_transport()
        assert transport is not None
        channel = transport.open_session(timeout=_TIMEOUT)
        channel.settimeout(_TIMEOUT)
        channel.exec_command(command)
        return channel

    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """Connect, run ``command``, close."""
        with translate_errors(self.name, ERRORS):
            client = connect(self.target, _TIMEOUT)
            try:
                channel = self._session(client, command)
                got = len(_read_all(channel))
                status = channel.recv_exit_status()
            finally:
                client.close()
        check_transfer(self.name, repr(command), status, got, 0)

    def open(self) -> None:
        """Connect and log in."""
        with translate_errors(self.name, ERRORS), logged("paramiko.transport",
                                                         r"^Kex: (\S+)") as kex:
            self._client = connect(self.target, _TIMEOUT)
        self._kex = kex[0] if kex else None

    def _require(self) -> paramiko.SSHClient:
        if self._client is None:
            raise UsageError("paramiko: open() the connection before transferring")
        return self._client

    def negotiated(self) -> Negotiated:
        """The transport's agreed cipher and MAC, and its key exchange engine."""
        transport = self._require().get_transport()
        assert transport is not None
        if self._kex is None:
            raise ClientError("paramiko: its debug log did not name the key exchange")
        cipher = transport.local_cipher
        aead = _TRANSPORT._cipher_info[cipher].get("is_aead")
        return Negotiated(self._kex, cipher, "" if aead else transport.local_mac)

    def send(self, size: int) -> None:
        """``sendall`` to the sink, EOF, its exit status."""
        with translate_errors(self.name, ERRORS):
            channel = self._session(self._require(), SINK_COMMAND)
            try:
                for chunk in zero_chunks(size):
                    channel.sendall(chunk)
                channel.shutdown_write()
                status = channel.recv_exit_status()
            finally:
                channel.close()
        check_transfer(self.name, "the sink", status, 0, 0)

    def receive(self, size: int) -> None:
        """``recv`` from the source to its end."""
        with translate_errors(self.name, ERRORS):
            channel = self._session(self._require(), source_command(size))
            try:
                got = len(_read_all(channel))
                status = channel.recv_exit_status()
            finally:
                channel.close()
        check_transfer(self.name, "the source", status, got, size)

    def close(self) -> None:
        """Close the client."""
        client, self._client = self._client, None
        if client is not None:
            with translate_errors(self.name, ERRORS):
                client.close()


def _read_all(channel: Any) -> bytes:
    chunks = []
    while data := channel.recv(CHUNK):
        chunks.append(data)
    return b"".join(chunks)
