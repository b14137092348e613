"""The credentials every test device is served with (not the emulator's defaults, so a client
that silently falls back to admin/admin fails)."""

from __future__ import annotations

from pathlib import Path

from mgmtbench.emulator.options import Credentials

USERNAME, PASSWORD, SECRET = "admin", "s3cret-pw", "en-s3cret"


def credentials(authorized_keys: Path | None = None) -> Credentials:
    """The test credentials, with ``authorized_keys`` for public-key login."""
    return Credentials(username=USERNAME, password=PASSWORD, enable_secret=SECRET,
                       authorized_keys=authorized_keys)
