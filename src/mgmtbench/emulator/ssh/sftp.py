"""SFTP and SCP on a device: asyncssh's server-side SFTP over the device's in-memory file system.

asyncssh runs both protocols through one :class:`asyncssh.SFTPServer` (its SCP server calls the
same ``open``/``read``/``write``/``stat`` methods), so :class:`DeviceSFTPServer` overrides every
method that would touch the host's file system with one on :class:`DeviceFileSystem`; nothing
reaches :mod:`os`. The client sees the file system as ``/`` (``realpath(".")`` is ``/``), and
may write paths the device way (``flash:/image.bin``).
"""

from __future__ import annotations

import asyncio
import errno
from collections.abc import AsyncIterator
from typing import Any

import asyncssh
from asyncssh import SFTPAttrs, SFTPName

from mgmtbench.emulator.device.filesystem import DeviceFileSystem, Entry, FileHandle, Parts

#: Bytes one SFTP read answers at most, whatever the client asks for: OpenSSH's sftp-server
#: (``SFTP_MAX_READ_LENGTH``, 256 KiB less 1 KiB). Clients read on at the next offset after a
#: short read; a client asking 40 reads of a GiB each no longer has 40 GiB copied for it.
MAX_READ = 256 * 1024 - 1024

#: Bytes of answers waiting in the channel (its window spent, or its socket full) past which
#: the next read waits: asyncssh answers SFTP requests in turn and writes each answer without
#: waiting, so 400 pipelined reads the client does not take held 400 answers (100 MiB) in the
#: server. Checked every :data:`DRAIN_POLL` seconds while over it.
MAX_BUFFERED = MAX_READ
DRAIN_POLL = 0.01

_FXF_READ, _FXF_WRITE, _FXF_APPEND = 0x01, 0x02, 0x04
_FXF_CREAT, _FXF_TRUNC, _FXF_EXCL = 0x08, 0x10, 0x20
_FILE, _FOLDER = 1, 2  # SFTP file types


def sftp_factory(files: DeviceFileSystem) -> Any:
    """asyncssh's ``sftp_factory`` for a device: an SFTP (and SCP) server per channel on
    ``files``."""
    def make(chan: asyncssh.SSHServerChannel[bytes]) -> DeviceSFTPServer:
        return DeviceSFTPServer(chan, files)

    return make


def attributes(entry: Entry) -> SFTPAttrs:
    """An entry as SFTP attributes."""
    mtime = int(entry.mtime)
    return SFTPAttrs(type=_FOLDER if entry.is_dir else _FILE, size=entry.size, uid=0, gid=0,
                     owner="admin", group="admin", permissions=entry.mode, atime=mtime,
                     mtime=mtime, nlink=1)


class DeviceSFTPServer(asyncssh.SFTPServer):
    """One SFTP or SCP session on a device's :class:`DeviceFileSystem`."""

    def __init__(self, chan: asyncssh.SSHServerChannel[bytes], files: DeviceFileSystem) -> None:
        super().__init__(chan)
        self._files = files

    def _parts(self, path: bytes) -> Parts:
        try:
            text = path.decode("utf-8")
        except UnicodeDecodeError:
            raise OSError(errno.EILSEQ, "File names are UTF-8") from None
        return self._files.resolve(text)

    def format_user(self, uid: int | None) -> str:
        """Every file belongs to the device's user."""
        return "admin"

    def format_group(self, gid: int | None) -> str:
        """Every file belongs to the device's group."""
        return "admin"

    def open(self, path: bytes, pflags: int, attrs: SFTPAttrs) -> FileHandle:
        """Open a file (SFTP v3 flags)."""
        write = bool(pflags & (_FXF_WRITE | _FXF_APPEND))
        return self._files.open(self._parts(path), write=write,
                                create=bool(pflags & _FXF_CREAT),
                                truncate=bool(pflags & _FXF_TRUNC),
                                exclusive=bool(pflags & _FXF_EXCL),
                                append=bool(pflags & _FXF_APPEND))

    def close(self, file_obj: object) -> None:
        """Nothing to release: the data is already in the file system."""

    async def read(self, file_obj: object, offset: int, size: int) -> bytes:
        """Read from an open file, once the answers before have left (:data:`MAX_BUFFERED`)."""
        assert isinstance(file_obj, FileHandle)
        chan = self.channel
        while chan.get_write_buffer_size() > MAX_BUFFERED and not chan.is_closing():
            await asyncio.sleep(DRAIN_POLL)
        return file_obj.read(offset, min(size, MAX_READ))

    def write(self, file_obj: object, offset: int, data: bytes) -> int:
        """Write to an open file."""
        assert isinstance(file_obj, FileHandle)
        return file_obj.write(offset, data)

    def stat(self, path: bytes) -> SFTPAttrs:
        """Attributes of a file or folder (there are no links to follow)."""
        return attributes(self._files.stat(self._parts(path)))

    def lstat(self, path: bytes) -> SFTPAttrs:
        """Attributes of a file or folder."""
        return self.stat(path)

    def fstat(self, file_obj: object) -> SFTPAttrs:
        """Attributes of an open file."""
        assert isinstance(file_obj, FileHandle)
        return attributes(file_obj.stat())

    def setstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        """Size and modification time are kept; owners and permissions are the device's."""
        parts = self._parts(path)
        if attrs.size is not None:
            self._files.truncate(parts, attrs.size)
        if attrs.mtime is not None:
            self._files.touch(parts, attrs.mtime)

    def lsetstat(self, path: bytes, attrs: SFTPAttrs) -> None:
        """As :meth:`setstat`."""
        self.setstat(path, attrs)

    def fsetstat(self, file_obj: object, attrs: SFTPAttrs) -> None:
        """Size of an open file; the rest as :meth:`setstat`."""
        assert isinstance(file_obj, FileHandle)
        if attrs.size is not None:
            file_obj.truncate(attrs.size)

    async def scandir(self, path: bytes) -> AsyncIterator[SFTPName]:
        """``.``, ``..`` and the folder's entries."""
        parts = self._parts(path)
        entries = self._files.listdir(parts)
        here = attributes(self._files.stat(parts))
        yield SFTPName(b".", attrs=here)
        yield SFTPName(b"..", attrs=attributes(self._files.stat(parts[:-1])) if parts else here)
        for entry in entries:
            yield SFTPName(entry.name.encode("utf-8"), attrs=attributes(entry))

    def remove(self, path: bytes) -> None:
        """Delete a file."""
        self._files.remove(self._parts(path))

    def mkdir(self, path: bytes, attrs: SFTPAttrs) -> None:
        """Make a folder."""
        self._files.mkdir(self._parts(path))

    def rmdir(self, path: bytes) -> None:
        """Delete an empty folder."""
        self._files.rmdir(self._parts(path))

    def realpath(self, path: bytes) -> bytes:
        """The canonical path, ``/`` being the file system's root."""
        return ("/" + "/".join(self._parts(path))).encode("utf-8")

    def rename(self, oldpath: bytes, newpath: bytes) -> None:
        """Rename; an existing target is an error (SFTP's rename)."""
        self._files.rename(self._parts(oldpath), self._parts(newpath))

    def posix_rename(self, oldpath: bytes, newpath: bytes) -> None:
        """Rename, replacing an existing file (OpenSSH's posix-rename)."""
        self._files.rename(self._parts(oldpath), self._parts(newpath), replace=True)

    def readlink(self, path: bytes) -> bytes:
        """There are no links."""
        raise asyncssh.SFTPOpUnsupported(f"{self._files.name} has no symbolic links")

    def symlink(self, oldpath: bytes, newpath: bytes) -> None:
        """Links are refused (a link could never lead out, but devices have none)."""
        raise asyncssh.SFTPOpUnsupported(f"{self._files.name} has no symbolic links")

    def link(self, oldpath: bytes, newpath: bytes) -> None:
        """Links are refused."""
        raise asyncssh.SFTPOpUnsupported(f"{self._files.name} has no hard links")

    def statvfs(self, path: bytes) -> asyncssh.SFTPVFSAttrs:
        """The file system's size and free space (OpenSSH sftp's ``df``), in 1 KiB blocks."""
        self._files.stat(self._parts(path))
        return self._vfs()

    def fstatvfs(self, file_obj: object) -> asyncssh.SFTPVFSAttrs:
        """As :meth:`statvfs`."""
        return self._vfs()

    def _vfs(self) -> asyncssh.SFTPVFSAttrs:
        files = self._files
        free = files.free // 1024
        return asyncssh.SFTPVFSAttrs(bsize=1024, frsize=1024, blocks=files.capacity // 1024,
                                     bfree=free, bavail=free, namemax=255)

    def fsync(self, file_obj: object) -> None:
        """Nothing to flush: every write is already stored."""

    def exit(self) -> None:
        """End an SFTP session with exit status 0, as OpenSSH's sftp-server does: asyncssh would
        close the channel without one, and OpenSSH's scp (SFTP mode) reports that as a failure.
        (Its SCP server sends its own.)"""
        channel = self.channel
        if channel.get_subsystem() == "sftp":
            channel.exit(0)
