"""The report's folder, written atomically: built in a new folder next to it, renamed at the end.

A report that fails half-way (a full disk, a bad run, Ctrl-C) leaves nothing behind: neither an
empty or partial folder nor a damaged earlier report. The folder given may be new, empty, or hold
an earlier report (``report.md`` and ``*.png`` only), which is replaced whole; a folder with
anything else in it is the user's and is refused, as is a file. Problems are one-line
:class:`~mgmtbench.errors.UsageError`\\ s naming ``--out``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from mgmtbench.errors import UsageError

REPORT_FILES = ("report.md",)
REPORT_SUFFIXES = (".png",)


def _foreign(folder: Path) -> list[str]:
    """What in ``folder`` a report does not write (its names, sorted)."""
    return sorted(entry.name for entry in os.scandir(folder)
                  if not entry.is_file(follow_symlinks=False)
                  or not (entry.name in REPORT_FILES or entry.name.endswith(REPORT_SUFFIXES)))


def _umask() -> int:
    """This process's umask, read without changing it (0o022 where /proc does not say)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _error(out: Path, exc: OSError) -> UsageError:
    """``exc`` (raised while making ``out``) as one line."""
    if exc.errno == errno.ENOTDIR:
        blocker = next((p for p in (out, *out.parents) if p.exists() and not p.is_dir()), out)
        return UsageError(f"--out {out}: {blocker} is a file, not a folder; nothing was written")
    reason = {errno.ENOSPC: "no space left on the file system",
              errno.EDQUOT: "disk quota exceeded",
              errno.EROFS: "a read-only file system",
              errno.EACCES: "permission denied", errno.EPERM: "permission denied"}.get(
        exc.errno or 0, exc.strerror or str(exc))
    return UsageError(f"--out {out}: cannot write the report there ({reason}); nothing was "
                      "written")


def _check(out: Path) -> None:
    """Refuse ``out`` if it is a file or a folder with anything but an earlier report in it."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: a file, not a folder; give a new folder for the report")
    if out.is_dir():
        foreign = _foreign(out)
        if foreign:
            shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more"
                                              if len(foreign) > 3 else "")
            raise UsageError(f"--out {out}: the folder holds files a report does not write "
                             f"({shown}); give a new folder, or one with only an earlier report "
                             "in it (which is replaced)")


def _make_parents(folder: Path, created: list[Path]) -> None:
    """Create ``folder`` and its missing parents, each added to ``created`` (deepest first)."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    for path in reversed(missing):
        path.mkdir()
        created.insert(0, path)


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


@contextlib.contextmanager
def staged_folder(out: Path) -> Iterator[Path]:
    """Yield a new, empty folder next to ``out`` to write the report into. On success it becomes
    ``out`` (an earlier report there is replaced); on any failure it is removed, with the parent
    folders this call made, and an ``OSError`` becomes a one-line :class:`UsageError`."""
    if out.is_symlink():
        out = out.resolve()
    _check(out)
    created: list[Path] = []
    stage: Path | None = None
    try:
        _make_parents(out.parent, created)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        stage.chmod(0o777 & ~_umask())  # as a folder made by mkdir: readable like the rest
        yield stage
        _replace(stage, out)
    except OSError as exc:
        raise _error(out, exc) from None
    finally:
        if stage is not None and stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
        if not out.exists():
            _remove_empty(created)


def _replace(stage: Path, out: Path) -> None:
    """Rename ``stage`` to ``out``; an earlier report at ``out`` is moved aside first and
    removed after (put back if the rename fails)."""
    if not out.is_dir():
        stage.rename(out)
        return
    _check(out)  # again: files may have appeared while the report was made
    old = stage.with_name(stage.name.replace(".partial", ".old"))
    out.rename(old)
    try:
        stage.rename(out)
    except OSError:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
