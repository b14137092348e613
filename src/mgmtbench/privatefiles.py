"""Files of a run's state (keys, certificates, known_hosts, process output that may show
credentials): readable by their owner only, and never written over a file someone else made.

- :func:`private_folder`: a folder made 0700 (an existing folder is left as it is);
- :func:`open_private`: a file of our own folder opened for writing, 0600 whatever it was;
- :func:`replace_private`: a file's new content, written 0600 beside it and renamed over it (a
  reader never sees half of it, a symlink planted in its place is replaced, not followed);
- :func:`create_new`: a file that must not exist yet (``FileExistsError`` if it does).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

FOLDER_MODE = 0o700
FILE_MODE = 0o600


def private_folder(folder: Path) -> Path:
    """``folder``, made with mode 0700 (and its missing parents) if it does not exist."""
    folder.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    return folder


def open_private(path: Path) -> BinaryIO:
    """``path`` opened for writing from its start, mode 0600 (also if it was there before); not
    through a symlink."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        raise


def replace_private(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically, mode 0600."""
    content = data.encode() if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # 0600
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def create_new(path: Path, data: bytes | str) -> None:
    """Create ``path`` with ``data``, mode 0600; ``FileExistsError`` if anything is there."""
    content = data.encode() if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
    with os.fdopen(fd, "wb") as file:
        file.write(content)
