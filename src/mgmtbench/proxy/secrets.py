"""Passwords for ``mgmtbench proxy`` and ``headend`` kept out of ``argv`` and stdout.

A flag's value is in ``/proc/PID/cmdline`` (mode 0444: every local user reads it, and ``ps``
shows it), so each password can come instead from a file (``--password-file``: its first line,
as ``mysql --defaults-file`` or ``sshpass -f`` read one) or from an environment variable (read
once, as :mod:`mgmtbench.targets.credentials` reads ``MGMTBENCH_PASSWORD``). The flag still
works, with a one-line warning on stderr; nothing prints a password.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from mgmtbench.errors import UsageError

#: Bytes read from a password file at most (a password is one short line).
MAX_FILE = 4096


def secret(*, flag: str, given: str | None, file: Path | None, env: str,
           environ: Mapping[str, str], default: str | None) -> str | None:
    """The password of ``flag``: from ``file``, else the flag's value (warned about), else
    ``environ[env]``, else ``default``: what the command line says first, as for every other
    option."""
    if file is not None:
        if given is not None:
            raise UsageError(f"give {flag} or {flag}-file, not both")
        return read_secret_file(file, f"{flag}-file")
    if given is not None:
        print(f"mgmtbench: warning: {flag} is visible to every local user (ps, "
              f"/proc/PID/cmdline): use {flag}-file FILE or {env}", file=sys.stderr)
        return given
    return environ.get(env, default)


def read_secret_file(path: Path, flag: str) -> str:
    """The first line of ``path`` (without its line end); a one-line UsageError if it cannot
    be read, is empty or is not a small text file."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE + 1)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE:
        raise UsageError(f"{flag} {path}: over {MAX_FILE} bytes: not a password file")
    try:
        line = data.decode("utf-8").splitlines()[0] if data.strip() else ""
    except UnicodeDecodeError:
        raise UsageError(f"{flag} {path}: not UTF-8 text") from None
    if not line:
        raise UsageError(f"{flag} {path}: empty")
    return line
