"""The transfer interface: one connection with chosen SSH algorithms, timed three ways.

A :class:`TransferClient` wraps one library (or the OpenSSH binary) for the algorithm matrix
(:mod:`mgmtbench.clients.algorithms`) and raw channel throughput:

- :meth:`~TransferClient.connect_once`: a whole connection on its own (TCP, key exchange,
  login, one exec request of ``command``, its exit status, close): the study's ``ssh host 'echo
  -n'``;
- :meth:`~TransferClient.send` and :meth:`~TransferClient.receive`: ``size`` bytes to the
  device's sink (``cat > /dev/null``) or from its source (``head -c N /dev/zero``) on a new exec
  channel of the connection :meth:`~TransferClient.open` made (untimed), exit status checked;
- :meth:`~TransferClient.negotiated`: what that connection negotiated, as the library (or
  ``ssh -v``) reports it, so a benchmark can check it got the cell it asked for.

The algorithms come from ``target.algorithms`` (one name per list for a matrix cell; an empty
MAC list for an AEAD cipher). Each class derives the names its library supports
(:meth:`~TransferClient.supported`) and its default preference (:meth:`~TransferClient.preferred`)
from the library itself. Library errors become :class:`~mgmtbench.errors.ClientError` (or a
subclass).
"""

from __future__ import annotations

import contextlib
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from mgmtbench.clients.algorithms import AlgorithmLists
from mgmtbench.clients.base import install_hint, module_versions
from mgmtbench.emulator.ssh.bulk import SINK_COMMAND, source_command
from mgmtbench.errors import ClientError
from mgmtbench.targets import Target

__all__ = ["SINK_COMMAND", "Negotiated", "TransferClient", "source_command"]

#: The exec request a connection runs: the source asked for nothing (prints nothing, exit 0).
TRIVIAL_COMMAND = source_command(0)


@dataclass(frozen=True)
class Negotiated:
    """What a connection negotiated (client to server): key exchange, cipher and MAC, with the
    MAC of an AEAD cipher as the library names it (``""`` when it names none)."""

    kex: str
    cipher: str
    mac: str


class TransferClient(ABC):
    """One library's connection for the algorithm matrix and bulk transfers (see the module)."""

    #: The client's name in results (``openssh``, ``asyncssh``, ``paramiko``, ``ssh2``,
    #: ``ssh-python``).
    name: ClassVar[str]
    #: Importable modules the client needs, and the pip extra that installs them.
    needs: ClassVar[tuple[str, ...]] = ()
    extra: ClassVar[str] = "all"

    def __init__(self, target: Target) -> None:
        self.target = target

    @classmethod
    def missing(cls) -> str | None:
        """An install hint if the client cannot run here, else None."""
        return install_hint(cls.name, cls.needs, cls.extra)

    @classmethod
    def versions(cls) -> dict[str, str]:
        """Versions of what this client drives (for the results)."""
        return module_versions(cls.needs)

    @classmethod
    @abstractmethod
    def supported(cls) -> AlgorithmLists:
        """Every key exchange, cipher and MAC the library can negotiate when asked (not only its
        defaults), and which of its ciphers are AEAD, as the library itself lists them."""

    @classmethod
    def preferred(cls) -> AlgorithmLists:
        """The library's default preference order (its supported order where it has none)."""
        return cls.supported()

    @abstractmethod
    def connect_once(self, command: str = TRIVIAL_COMMAND) -> None:
        """Connect, log in, run ``command`` (no output expected), check exit status 0, close."""

    @abstractmethod
    def open(self) -> None:
        """Connect and log in; the connection stays for :meth:`send` and :meth:`receive`."""

    @abstractmethod
    def negotiated(self) -> Negotiated:
        """What the connection :meth:`open` made negotiated."""

    @abstractmethod
    def send(self, size: int) -> None:
        """Send ``size`` bytes to the sink on a new channel; wait for its exit status 0."""

    @abstractmethod
    def receive(self, size: int) -> None:
        """Read ``size`` bytes from the source on a new channel (all of them, no more); exit
        status 0."""

    @abstractmethod
    def close(self) -> None:
        """Close the connection :meth:`open` made (nothing if there is none)."""


def check_transfer(client: str, what: str, status: int | None, got: int, expected: int) -> None:
    """:class:`ClientError` unless a transfer ended with exit status 0 having moved
    ``expected`` bytes."""
    if status != 0:
        raise ClientError(f"{client}: {what} ended with exit status {status}")
    if got != expected:
        raise ClientError(f"{client}: {what} moved {got} bytes, not {expected}")


class _Matches(logging.Handler):
    def __init__(self, pattern: re.Pattern[str]) -> None:
        super().__init__(logging.DEBUG)
        self.pattern = pattern
        self.found: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = self.pattern.search(record.getMessage())
        if found:
            self.found.append(found.group(1))


@contextlib.contextmanager
def logged(logger: str, pattern: str) -> Iterator[list[str]]:
    """Within the block, the first group of ``pattern`` in every message of ``logger`` (switched
    to DEBUG meanwhile), in order: how a library that names a negotiated algorithm only in its
    debug log tells it."""
    handler = _Matches(re.compile(pattern))
    log = logging.getLogger(logger)
    level = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield handler.found
    finally:
        log.setLevel(level)
        log.removeHandler(handler)


#: Bytes per write to the sink.
CHUNK = 1 << 18
ZEROS = bytes(CHUNK)


def zero_chunks(size: int) -> Iterator[bytes]:
    """``size`` zero bytes as CHUNK-sized pieces (the last one shorter): what a client sends into
    the sink, without allocating ``size`` bytes."""
    for start in range(0, size, CHUNK):
        yield ZEROS if size - start >= CHUNK else ZEROS[:size - start]
