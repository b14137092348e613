"""A device's file system (``flash:`` on IOS, ``disk0:`` on an ASA): files and folders in memory,
bounded in size, shared by every session of the device.

SCP and SFTP (:mod:`mgmtbench.emulator.ssh.sftp`) and the CLI's ``dir`` and ``verify /md5``
(:mod:`mgmtbench.emulator.cli.fscommands`) all work on it. It lives in memory, not in a folder on
the host, so no path, link or race can reach a host file: a path is a tuple of names inside the
root, ``..`` above the root is refused, there are no links. Errors are :class:`OSError` with the
usual ``errno`` (``ENOENT``, ``EEXIST``, ``ENOSPC``, ``EACCES`` ...), which asyncssh's SFTP and
SCP servers turn into the protocol's own status codes and messages.

Paths are POSIX-style relative to the root (``/image.bin``, ``image.bin``, ``dir/x``), optionally
prefixed with the file system's name as device CLIs and SCP clients of devices write them
(``flash:/image.bin``, ``flash:image.bin``, and ``/flash:/image.bin``, which is what OpenSSH's
sftp makes of ``flash:/image.bin``).

File and folder times are the device clock's (``now``: :meth:`~.clock.DeviceClock.epoch`), so
``dir`` and SFTP agree with ``show clock``.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: The default size of a device's file system: 64 MiB, enough for a few config files and a
#: 1-50 MB test image per device without letting a fleet of 1,000 devices fill the host's memory
#: unasked (memory is used only by what is stored).
DEFAULT_SIZE = 64 * 1024 * 1024
#: Files and folders one file system holds at most (every entry costs memory even when empty).
MAX_ENTRIES = 4096
MAX_NAME = 255
MAX_PATH = 1024

Parts = tuple[str, ...]


@dataclass
class _File:
    data: bytearray = field(default_factory=bytearray)
    mtime: float = field(default_factory=time.time)
    number: int = 0  # what ``dir`` shows in its first column (an inode number on a device)
    linked: bool = True  # False once removed: writes through an open handle then fail


@dataclass
class _Folder:
    mtime: float = field(default_factory=time.time)
    number: int = 0


@dataclass(frozen=True)
class Entry:
    """One name in a folder listing or a ``stat``: a file (``size`` bytes) or a folder."""

    name: str
    is_dir: bool
    size: int
    mtime: float
    number: int

    @property
    def mode(self) -> int:
        """POSIX mode bits, as SFTP clients expect them (type and permissions)."""
        return (stat.S_IFDIR | 0o755) if self.is_dir else (stat.S_IFREG | 0o644)


class DeviceFileSystem:
    """The files of one device: ``name`` (``flash:``) holds at most ``capacity`` bytes; ``now``
    is the device's time in seconds since 1970 (the host's by default), which files are
    stamped with."""

    def __init__(self, name: str = "flash:", capacity: int = DEFAULT_SIZE,
                 now: Callable[[], float] = time.time) -> None:
        if capacity < 0:
            raise ValueError(f"file system size {capacity}: cannot be negative")
        self.name = name
        self.capacity = capacity
        self.now = now
        self._entries: dict[Parts, _File | _Folder] = {(): _Folder(now(), number=1)}
        self._used = 0
        self._numbers = 1

    @property
    def used(self) -> int:
        """Bytes stored in files."""
        return self._used

    @property
    def free(self) -> int:
        """Bytes that can still be stored."""
        return self.capacity - self._used

    # --- paths ------------------------------------------------------------------------------

    def resolve(self, path: str) -> Parts:
        """The names from the root to ``path``; PermissionError if it leaves the root,
        FileNotFoundError for another file system's name (``bootflash:x`` on ``flash:``)."""
        if len(path) > MAX_PATH:
            raise OSError(errno.ENAMETOOLONG, "File name too long", path)
        rest = path
        # "flash:/x", "flash:x", and "/flash:/x" (OpenSSH's sftp puts a relative path under "/")
        head, colon, tail = path.lstrip("/").partition(":")
        if colon and "/" not in head:
            if f"{head}:" != self.name:
                raise FileNotFoundError(errno.ENOENT, f"No such file system: {head}:", path)
            rest = tail
        parts: list[str] = []
        for name in rest.split("/"):
            if name in ("", "."):
                continue
            if name == "..":
                if not parts:
                    raise PermissionError(errno.EACCES, f"Permission denied: outside {self.name}",
                                          path)
                parts.pop()
                continue
            if len(name) > MAX_NAME or "\0" in name:
                raise OSError(errno.EINVAL, "Invalid file name", path)
            parts.append(name)
        return tuple(parts)

    def display(self, parts: Parts) -> str:
        """How the device writes a path: ``flash:/dir/file``."""
        return f"{self.name}/{'/'.join(parts)}"

    # --- queries ----------------------------------------------------------------------------

    def stat(self, parts: Parts) -> Entry:
        """What ``parts`` is; FileNotFoundError if nothing."""
        return self._entry(parts, self._get(parts))

    def exists(self, parts: Parts) -> bool:
        """Whether a file or folder is at ``parts``."""
        return parts in self._entries

    def listdir(self, parts: Parts) -> list[Entry]:
        """The entries of the folder ``parts``, in name order."""
        if not isinstance(self._get(parts), _Folder):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", self.display(parts))
        depth = len(parts)
        return sorted((self._entry(key, value) for key, value in self._entries.items()
                       if len(key) == depth + 1 and key[:depth] == parts),
                      key=lambda e: e.name)

    def md5(self, parts: Parts) -> str:
        """The MD5 digest (hex) of the file ``parts``."""
        return hashlib.md5(self._file(parts).data, usedforsecurity=False).hexdigest()

    # --- changes ----------------------------------------------------------------------------

    def open(self, parts: Parts, *, write: bool = False, create: bool = False,
             truncate: bool = False, exclusive: bool = False, append: bool = False) -> FileHandle:
        """Open the file ``parts``: for reading, or for writing (``create`` makes it if missing,
        ``exclusive`` fails if it exists, ``truncate`` empties it, ``append`` writes at its end)."""
        found = self._entries.get(parts)
        if found is None:
            if not (write and create):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory",
                                        self.display(parts))
            found = self._add(parts, _File(mtime=self.now()))
        elif exclusive and create:
            raise FileExistsError(errno.EEXIST, "File exists", self.display(parts))
        if isinstance(found, _Folder):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", self.display(parts))
        if truncate and write:
            self._resize(found, 0)
        return FileHandle(self, found, writable=write, append=append)

    def mkdir(self, parts: Parts) -> None:
        """Make the folder ``parts``."""
        if parts in self._entries:
            raise FileExistsError(errno.EEXIST, "File exists", self.display(parts))
        self._add(parts, _Folder(self.now()))

    def remove(self, parts: Parts) -> None:
        """Delete the file ``parts``."""
        found = self._file(parts)
        self._resize(found, 0)
        found.linked = False
        del self._entries[parts]

    def rmdir(self, parts: Parts) -> None:
        """Delete the empty folder ``parts`` (never the root)."""
        if not parts:
            raise PermissionError(errno.EACCES, "Permission denied", self.name)
        if self.listdir(parts):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", self.display(parts))
        del self._entries[parts]

    def rename(self, old: Parts, new: Parts, *, replace: bool = False) -> None:
        """Move ``old`` (and all below it) to ``new``; an existing file at ``new`` is replaced
        only with ``replace``."""
        moved = self._get(old)
        if not old or not new or new[: len(old)] == old:
            raise PermissionError(errno.EACCES, "Permission denied", self.display(new))
        self._parent(new)
        target = self._entries.get(new)
        if target is not None:
            if not replace or isinstance(target, _Folder) or isinstance(moved, _Folder):
                raise FileExistsError(errno.EEXIST, "File exists", self.display(new))
            self.remove(new)
        for key in [k for k in self._entries if k[: len(old)] == old]:
            self._entries[new + key[len(old):]] = self._entries.pop(key)

    def truncate(self, parts: Parts, size: int) -> None:
        """Set the file ``parts``'s size (zeros added when it grows)."""
        self._resize(self._file(parts), size)

    def touch(self, parts: Parts, mtime: float) -> None:
        """Set the modification time of ``parts``."""
        self._get(parts).mtime = mtime

    # --- inside -----------------------------------------------------------------------------

    def _get(self, parts: Parts) -> _File | _Folder:
        found = self._entries.get(parts)
        if found is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory",
                                    self.display(parts))
        return found

    def _file(self, parts: Parts) -> _File:
        found = self._get(parts)
        if isinstance(found, _Folder):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", self.display(parts))
        return found

    def _parent(self, parts: Parts) -> None:
        if not parts:
            raise PermissionError(errno.EACCES, "Permission denied", self.name)
        parent = self._entries.get(parts[:-1])
        if parent is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory",
                                    self.display(parts[:-1]))
        if not isinstance(parent, _Folder):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", self.display(parts[:-1]))

    def _add(self, parts: Parts, entry: _File | _Folder) -> _File | _Folder:
        self._parent(parts)
        if len(self._entries) >= MAX_ENTRIES:
            raise OSError(errno.ENOSPC, f"No space left on device: {self.name} holds at most "
                          f"{MAX_ENTRIES} files and folders", self.display(parts))
        self._numbers += 1
        entry.number = self._numbers
        self._entries[parts] = entry
        return entry

    def _resize(self, file: _File, size: int) -> None:
        grow = size - len(file.data)
        self._reserve(file, grow)
        if grow < 0:
            del file.data[size:]
        else:
            file.data.extend(bytes(grow))
        file.mtime = self.now()

    def _reserve(self, file: _File, grow: int) -> None:
        if not file.linked:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory (deleted)")
        if grow > self.free:
            raise OSError(errno.ENOSPC, f"No space left on device: {self.name} holds at most "
                          f"{self.capacity} bytes, {self.free} free")
        self._used += grow

    @staticmethod
    def _entry(parts: Parts, found: _File | _Folder) -> Entry:
        name = parts[-1] if parts else "/"
        if isinstance(found, _Folder):
            return Entry(name, True, 0, found.mtime, found.number)
        return Entry(name, False, len(found.data), found.mtime, found.number)


class FileHandle:
    """An open file: positional reads and writes, as SFTP and SCP make them."""

    def __init__(self, fs: DeviceFileSystem, file: _File, *, writable: bool,
                 append: bool) -> None:
        self._fs = fs
        self._file = file
        self.writable = writable
        self._append = append

    @property
    def size(self) -> int:
        """The file's size now."""
        return len(self._file.data)

    def read(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (fewer at the end, none past it)."""
        return bytes(memoryview(self._file.data)[offset:offset + size])

    def write(self, offset: int, data: bytes) -> int:
        """Write ``data`` at ``offset`` (at the end if opened to append); ENOSPC when the file
        system would hold more than its capacity."""
        if not self.writable:
            raise OSError(errno.EBADF, "File not open for writing")
        buf = self._file.data
        if self._append:
            offset = len(buf)
        end = offset + len(data)
        if end > len(buf):
            self._fs._reserve(self._file, end - len(buf))
            if offset > len(buf):
                buf.extend(bytes(offset - len(buf)))
        buf[offset:end] = data
        self._file.mtime = self._fs.now()
        return len(data)

    def truncate(self, size: int) -> None:
        """Set the file's size."""
        self._fs._resize(self._file, size)

    def stat(self) -> Entry:
        """The open file's entry (its name as ``""``: it may have been renamed)."""
        return Entry("", False, len(self._file.data), self._file.mtime, self._file.number)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        """Only what asyncssh's sparse-range query (``ranges@asyncssh.com``) asks of a file:
        SEEK_DATA (data from ``offset`` to the end: there are no holes) and SEEK_HOLE (the
        end)."""
        size = len(self._file.data)
        if whence == os.SEEK_DATA:
            if offset >= size:
                raise OSError(errno.ENXIO, "No data at or after this offset")
            return offset
        if whence == os.SEEK_HOLE:
            return size
        raise OSError(errno.EINVAL, "Only SEEK_DATA and SEEK_HOLE are supported")
