"""The CLI's view of the device file system: ``dir`` and ``verify /md5``, worded as IOS words them
(what Netmiko's ``file_transfer`` parses: the free space, whether a file exists, its size, its
MD5)."""

from __future__ import annotations

import time

from mgmtbench.emulator.device.filesystem import DeviceFileSystem, Entry

_MIB = 1024 * 1024


def dir_output(files: DeviceFileSystem, path: str | None) -> tuple[str, bool]:
    """What ``dir [path]`` prints (a folder's entries, or one file's), and whether it worked."""
    shown = path or files.name
    try:
        parts = files.resolve(shown)
        entry = files.stat(parts)
        entries = files.listdir(parts) if entry.is_dir else [entry]
    except OSError as exc:
        return _error_opening(files, shown, exc), False
    header = files.display(parts) + ("/" if entry.is_dir and parts else "")
    lines = [f"Directory of {header}", ""]
    lines += [_line(e) for e in entries] if entries else ["No files in directory"]
    lines += ["", f"{files.capacity} bytes total ({files.free} bytes free)"]
    return "\n".join(lines) + "\n", True


def verify_md5_output(files: DeviceFileSystem, path: str) -> tuple[str, bool]:
    """What ``verify /md5 path`` prints: a dot per MiB read, ``Done!`` and the digest."""
    try:
        parts = files.resolve(path)
        digest = files.md5(parts)
        size = files.stat(parts).size
    except OSError as exc:
        return _error_opening(files, path, exc), False
    dots = "." * max(1, -(-size // _MIB))
    return f"{dots}Done!\nverify /md5 ({files.display(parts)}) = {digest}\n", True


def _line(entry: Entry) -> str:
    kind = "drwx" if entry.is_dir else "-rw-"
    stamp = time.strftime("%b %d %Y %H:%M:%S +00:00", time.gmtime(entry.mtime))
    return f"{entry.number:>6}  {kind}  {entry.size:>15}  {stamp}  {entry.name}"


def _error_opening(files: DeviceFileSystem, path: str, exc: OSError) -> str:
    shown = path if ":" in path else f"{files.name}/{path.lstrip('/')}"
    return f"%Error opening {shown} ({exc.strerror or exc})\n"
