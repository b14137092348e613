"""Client key pairs for public-key login, made fresh per test session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import asyncssh

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
