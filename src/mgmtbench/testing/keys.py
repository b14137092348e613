"""Client key pairs for public-key login, made fresh per test session."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from mgmtbench.errors import UsageError

#: Key types by the names the tests and the agent experiment use, as asyncssh names them.
KEY_ALGORITHMS = {
    "ed25519": ("ssh-ed25519", None),
    "ecdsa-p256": ("ecdsa-sha2-nistp256", None),
    "ecdsa-p384": ("ecdsa-sha2-nistp384", None),
    "ecdsa-p521": ("ecdsa-sha2-nistp521", None),
    "rsa-2048": ("ssh-rsa", 2048),
    "rsa-4096": ("ssh-rsa", 4096),
}


@dataclass(frozen=True)
class ClientKeys:
    """A private key, its public half and an authorized_keys file holding it."""

    private: Path
    public: Path
    authorized_keys: Path


def make_key(folder: Path, kind: str = "ed25519", comment: str = "mgmtbench-test") -> ClientKeys:
    """Generate a key pair of ``kind`` (a :data:`KEY_ALGORITHMS` name) in ``folder``."""
    algorithm, bits = KEY_ALGORITHMS[kind]
    options = {"key_size": bits} if bits else {}
    key = asyncssh.generate_private_key(algorithm, comment=comment, **options)
    private, public = folder / f"id_{kind}", folder / f"id_{kind}.pub"
    key.write_private_key(str(private))
    key.write_public_key(str(public))
    private.chmod(0o600)
    authorized = folder / f"authorized_keys_{kind}"
    authorized.write_bytes(public.read_bytes())
    return ClientKeys(private, public, authorized)


@dataclass(frozen=True)
class KeySet:
    """Key pairs of several kinds and one authorized_keys file that holds them all."""

    keys: dict[str, ClientKeys]
    authorized_keys: Path


def make_keys(folder: Path, kinds: Iterable[str] = KEY_ALGORITHMS) -> KeySet:
    """A key pair of each of ``kinds`` in ``folder``, and ``folder/authorized_keys`` listing
    every public half (a device given that file accepts each of them)."""
    made: dict[str, ClientKeys] = {}
    for kind in kinds:
        if kind not in KEY_ALGORITHMS:
            raise UsageError(f"unknown key kind {kind!r}: choose from {', '.join(KEY_ALGORITHMS)}")
        made[kind] = make_key(folder, kind)
    authorized = folder / "authorized_keys"
    authorized.write_bytes(b"".join(k.public.read_bytes() for k in made.values()))
    return KeySet(made, authorized)
