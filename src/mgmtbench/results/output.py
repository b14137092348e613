"""The report's folder, written atomically: built in a new folder next to it, renamed at the end.

A report that fails half-way (a full disk, a bad run, Ctrl-C) leaves nothing behind: neither an
empty or partial folder nor a damaged earlier report. The folder given may be new, empty, or hold
an earlier report (``report.md``, ``report.html`` and ``*.png`` only), which is replaced whole; a folder with
anything else in it is the user's and is refused, as is a file. Problems are one-line
:class:`~mgmtbench.errors.UsageError`\\ s naming ``--out``.

Only a SIGKILL (or a crash of the machine) can leave the staging folder behind: a hidden
``.OUT.PID-START.XXXX.partial`` next to ``OUT`` (or ``.old``, the earlier report moved aside for
the instant of the swap), its name holding the writer's pid and its start time (clock ticks since
boot, ``/proc/PID/stat``). The next report to the same ``OUT`` removes such folders whose writer
is gone (no such pid, or another process under it), puts a stranded earlier report (``.old``
while ``OUT`` is missing) back, and says so in one line (``notice``).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from mgmtbench.errors import UsageError

REPORT_FILES = ("report.md", "report.html")
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


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), None if there is no such process."""
    from mgmtbench.lab.procfs import start_time

    try:
        return start_time(pid)
    except (OSError, ValueError, IndexError):
        return None


def _writer() -> str:
    """This process as a staging folder's name records it: ``PID-START``."""
    pid = os.getpid()
    return f"{pid}-{_start_time(pid) or 0}"


def clear_stale(out: Path) -> list[str]:
    """Remove the staging folders of ``out`` whose writer is gone (see the module docstring);
    a stranded earlier report goes back to ``out``. What was done, one phrase per folder."""
    if not out.parent.is_dir():
        return []
    ours = re.compile(rf"\.{re.escape(out.name)}\.(\d+)-(\d+)\.[^.]+\.(partial|old)")
    done = []
    for entry in os.scandir(out.parent):
        found = ours.fullmatch(entry.name)
        if not found or not entry.is_dir(follow_symlinks=False):
            continue
        pid, start, kind = int(found[1]), int(found[2]), found[3]
        if _start_time(pid) == start:
            continue  # its writer still runs (another report to the same folder)
        folder = Path(entry.path)
        if kind == "old" and not out.exists():
            with contextlib.suppress(OSError):
                folder.rename(out)
                done.append(f"put the earlier report back from {entry.name}")
                continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            done.append(f"removed {entry.name}")
    return done


@contextlib.contextmanager
def staged_folder(out: Path,
                  notice: Callable[[str], None] | None = None) -> Iterator[Path]:
    """Yield a new, empty folder next to ``out`` to write the report into. On success it becomes
    ``out`` (an earlier report there is replaced); on any failure it is removed, with the parent
    folders this call made, and an ``OSError`` becomes a one-line :class:`UsageError`. Staging
    folders of killed runs are cleared first (:func:`clear_stale`), told to ``notice``."""
    try:
        if out.is_symlink():  # raises for a name too long, as everything below would
            out = out.resolve()
        cleared = clear_stale(out)
    except OSError as exc:
        raise _error(out, exc) from None
    if cleared and notice is not None:
        notice(f"a report to {out} was killed before: {'; '.join(cleared)}")
    _check(out)
    created: list[Path] = []
    stage: Path | None = None
    try:
        _make_parents(out.parent, created)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.{_writer()}.", suffix=".partial",
                                      dir=out.parent))
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
