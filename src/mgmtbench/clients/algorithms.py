"""The SSH algorithm matrix: what a client and a server both support, what one of them lacks, and
which (kex, cipher, MAC) cells an experiment measures.

No algorithm name is written down here. The lists are derived:

- a client's from its library (:meth:`~mgmtbench.clients.transfer.base.TransferClient.supported`:
  asyncssh's ``get_kex_algs()`` ..., paramiko's ``Transport._kex_info`` ..., libssh2's
  ``Session.supported_algs()``, OpenSSH's ``ssh -Q kex|cipher|mac``, libssh's ``options_set``
  probed name by name);
- a server's from the server (:func:`server_lists`): the emulator's
  :func:`~mgmtbench.emulator.ssh.server.supported_algorithms`; OpenSSH ``sshd``'s, the ``ssh -Q``
  names of the same installation that ``sshd -T`` accepts in its configuration.

:func:`compare` intersects a client's lists with a server's (:class:`Support`: the common names
in the client's preference order) and keeps every name only one side has as a :class:`Missing`
("not supported by sshd"), for the results and the report. AEAD ciphers (authenticated
encryption: chacha20-poly1305, AES-GCM, as either side's library marks them) negotiate no MAC:
their cells have the MAC :data:`IMPLICIT`, never one cell per MAC. :func:`cells` lays out the
matrix, sampled (the default) or full.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from mgmtbench.errors import UsageError
from mgmtbench.targets import SshAlgorithms

__all__ = ["IMPLICIT", "LISTS", "OPERATIONS", "SAMPLES", "SERVERS", "AlgorithmLists", "Cell",
           "Missing", "Support", "cells", "compare", "server_lists", "server_preferred"]

#: The lists the matrix spans (the :class:`AlgorithmLists` fields).
LISTS = ("kex", "ciphers", "macs")
#: The MAC of an AEAD cipher's cell.
IMPLICIT = "implicit"
#: What is timed per cell.
OPERATIONS = ("connect", "send", "receive")
#: The matrix sizes.
SAMPLES = ("sampled", "full")
#: The servers, by the name results give them.
SERVERS = ("emulator", "sshd")
#: Names in key exchange lists that are protocol signals, not key exchanges (RFC 8308's
#: ext-info, OpenSSH's strict kex): libssh2 lists them among its methods.
_SIGNALS = ("ext-info-", "kex-strict-")


@dataclass(frozen=True)
class AlgorithmLists:
    """Key exchanges, ciphers and MACs, in order; ``aead``: those of the ciphers that are AEAD."""

    kex: tuple[str, ...]
    ciphers: tuple[str, ...]
    macs: tuple[str, ...]
    aead: frozenset[str] = field(default_factory=frozenset)

    def names(self, which: str) -> tuple[str, ...]:
        """The names of one of :data:`LISTS`."""
        found: tuple[str, ...] = getattr(self, which)
        return found

    @classmethod
    def of(cls, kex: Iterable[str], ciphers: Iterable[str], macs: Iterable[str],
           aead: Iterable[str] = ()) -> AlgorithmLists:
        """Lists from any iterables of names (duplicates and key exchange signals dropped)."""
        return cls(tuple(n for n in dict.fromkeys(kex) if not n.startswith(_SIGNALS)),
                   tuple(dict.fromkeys(ciphers)), tuple(dict.fromkeys(macs)), frozenset(aead))


@dataclass(frozen=True)
class Missing:
    """A name one side supports and the other does not."""

    list: str  # one of LISTS
    name: str
    missing_at: str  # the side that lacks it: a client or server name

    def __str__(self) -> str:
        return f"{self.name}: not supported by {self.missing_at}"


@dataclass(frozen=True)
class Support:
    """A client against a server: the names both support (in the client's order of preference),
    what only one of them has, and the reference names a sampled matrix keeps fixed."""

    client: str
    server: str
    common: AlgorithmLists
    missing: tuple[Missing, ...]
    reference: Cell | None  # None: nothing in common in some list

    def as_dict(self) -> dict[str, Any]:
        """For the results: the common lists and, per list, what each side lacks."""
        lacking: dict[str, dict[str, list[str]]] = {}
        for gap in self.missing:
            lacking.setdefault(gap.missing_at, {}).setdefault(gap.list, []).append(gap.name)
        return {"common": {which: list(self.common.names(which)) for which in LISTS},
                "aead": sorted(self.common.aead), "not_supported_by": lacking}


@dataclass(frozen=True)
class Cell:
    """One point of the matrix: a key exchange, a cipher and a MAC (:data:`IMPLICIT` for an AEAD
    cipher)."""

    kex: str
    cipher: str
    mac: str

    @property
    def algorithms(self) -> SshAlgorithms:
        """The client's algorithm choice for this cell: one name per list (an AEAD cipher's MAC
        list left to the library: it is not negotiated)."""
        return SshAlgorithms(kex=(self.kex,), ciphers=(self.cipher,),
                             macs=() if self.mac == IMPLICIT else (self.mac,))

    @property
    def id(self) -> str:
        """The cell in a test id."""
        return f"{self.kex}-{self.cipher}-{self.mac}"


def compare(client: str, client_lists: AlgorithmLists, client_preferred: AlgorithmLists,
            server: str, server_lists: AlgorithmLists) -> Support:
    """``client`` (its supported lists and default preference) against ``server``."""
    common: dict[str, tuple[str, ...]] = {}
    missing: list[Missing] = []
    for which in LISTS:
        ours, theirs = client_lists.names(which), server_lists.names(which)
        # The client's preference order first, then the rest of what it supports.
        order = dict.fromkeys((*client_preferred.names(which), *ours))
        common[which] = tuple(n for n in order if n in ours and n in theirs)
        missing += [Missing(which, n, server) for n in ours if n not in theirs]
        missing += [Missing(which, n, client) for n in theirs if n not in ours]
    aead = (client_lists.aead | server_lists.aead) & frozenset(common["ciphers"])
    lists = AlgorithmLists(common["kex"], common["ciphers"], common["macs"], aead)
    return Support(client, server, lists, tuple(missing), _reference(lists))


def _reference(common: AlgorithmLists) -> Cell | None:
    """The names a sampled matrix holds fixed: the client's most preferred common key exchange,
    non-AEAD cipher and MAC."""
    plain = [c for c in common.ciphers if c not in common.aead]
    if not (common.kex and plain and common.macs):
        return None
    return Cell(common.kex[0], plain[0], common.macs[0])


def cells(support: Support, operation: str, sample: str = "sampled") -> list[Cell]:
    """The cells of ``operation`` for a client against a server.

    ``full``: every common kex x cipher x MAC (an AEAD cipher once, MAC :data:`IMPLICIT`), for
    every operation. ``sampled``: ``connect`` over every key exchange with the reference cipher
    and MAC; ``send`` and ``receive`` over every cipher (with the reference MAC; AEAD:
    implicit) and every other MAC (with the reference cipher), all with the reference key
    exchange.
    """
    if operation not in OPERATIONS:
        raise UsageError(f"operation {operation!r}: choose one of {', '.join(OPERATIONS)}")
    if sample not in SAMPLES:
        raise UsageError(f"matrix {sample!r}: choose one of {', '.join(SAMPLES)}")
    common, ref = support.common, support.reference
    if ref is None:
        return []

    def mac_for(cipher: str, mac: str) -> str:
        return IMPLICIT if cipher in common.aead else mac

    if sample == "full":
        return list(dict.fromkeys(Cell(k, c, mac_for(c, m)) for k in common.kex
                                  for c in common.ciphers for m in common.macs))
    if operation == "connect":
        return [Cell(k, ref.cipher, ref.mac) for k in common.kex]
    found = [Cell(ref.kex, c, mac_for(c, ref.mac)) for c in common.ciphers]
    found += [Cell(ref.kex, ref.cipher, m) for m in common.macs if m != ref.mac]
    return found


# --- the servers' lists ---------------------------------------------------------------------------


def server_lists(server: str) -> AlgorithmLists:
    """Every key exchange, cipher and MAC ``server`` (one of :data:`SERVERS`) can offer."""
    if server == "emulator":
        return _emulator_lists()
    if server == "sshd":
        return _sshd_lists()
    raise UsageError(f"unknown server {server!r}: choose one of {', '.join(SERVERS)}")


def server_preferred(server: str, platform: str = "cisco_ios") -> AlgorithmLists:
    """What ``server`` offers when not told otherwise, in its order (the emulator: the
    ``platform``'s lists, as its real image offers them; asyncssh's where it has none)."""
    if server == "emulator":
        from asyncssh.encryption import get_default_encryption_algs
        from asyncssh.kex import get_default_kex_algs
        from asyncssh.mac import get_default_mac_algs

        from mgmtbench.emulator.device.transcripts import load_platform

        ssh = load_platform(platform).style.identity.ssh
        return AlgorithmLists.of(ssh.kex or _decoded(get_default_kex_algs()),
                                 ssh.ciphers or _decoded(get_default_encryption_algs()),
                                 ssh.macs or _decoded(get_default_mac_algs()),
                                 _emulator_lists().aead)
    if server == "sshd":
        config = _sshd_config([])
        return AlgorithmLists.of(config["kexalgorithms"], config["ciphers"], config["macs"],
                                 _sshd_lists().aead)
    raise UsageError(f"unknown server {server!r}: choose one of {', '.join(SERVERS)}")


def _decoded(names: Sequence[bytes]) -> list[str]:
    # The gss-* key exchanges need a Kerberos set-up that neither side has here.
    return [n.decode() for n in names if not n.startswith(b"gss-")]


@cache
def _emulator_lists() -> AlgorithmLists:
    from asyncssh.encryption import encryption_needs_mac

    from mgmtbench.emulator.ssh.server import supported_algorithms

    found = supported_algorithms()
    aead = [c for c in found["ciphers"] if not encryption_needs_mac(c.encode())]
    return AlgorithmLists.of(found["kex"], found["ciphers"], found["macs"], aead)


def openssh_query(what: str) -> list[str]:
    """``ssh -Q WHAT``: the names this machine's OpenSSH supports (``kex``, ``cipher``, ``mac``,
    ``cipher-auth``: the AEAD ciphers)."""
    if shutil.which("ssh") is None:
        raise UsageError("the ssh binary is not on PATH: install openssh-client")
    done = subprocess.run(["ssh", "-Q", what], capture_output=True, text=True, timeout=10,
                          check=False)
    if done.returncode:
        raise UsageError(f"ssh -Q {what} failed: {done.stderr.strip()}")
    return done.stdout.split()


@cache
def _sshd_lists() -> AlgorithmLists:
    offered = {"KexAlgorithms": openssh_query("kex"), "Ciphers": openssh_query("cipher"),
               "MACs": openssh_query("mac")}
    config = _sshd_config([f"{k}={','.join(v)}" for k, v in offered.items()])
    return AlgorithmLists.of(config["kexalgorithms"], config["ciphers"], config["macs"],
                             openssh_query("cipher-auth"))


def _sshd_config(options: list[str]) -> dict[str, list[str]]:
    """``sshd -T``'s algorithm lists with ``options`` (``Keyword=value``) set: sshd refuses a
    name it does not support."""
    from mgmtbench.testing.sshd import SSHD

    argv = [SSHD, "-T", "-f", "/dev/null"]
    for option in options:
        argv += ["-o", option]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except OSError as exc:
        raise UsageError(f"{SSHD} cannot run ({exc.strerror}): install openssh-server") from None
    if done.returncode:
        lines = done.stderr.strip().splitlines()
        raise UsageError(f"sshd -T failed: {lines[-1] if lines else done.returncode}")
    config = {}
    for line in done.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key in ("kexalgorithms", "ciphers", "macs"):
            config[key] = value.split(",")
    return config
