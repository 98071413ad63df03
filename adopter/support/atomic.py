"""Writing files without losing data: a reader sees the old file or the new one, never half
of one, and a replaced file keeps its mode and owner.

A regular file (new or existing) is written through a temporary file in its folder and a
rename. The temporary file's name marks it as Adopter's (`.<name>.<random>.adopter-tmp`);
one left by a killed run is removed by the next write to the same folder. A symlink is
written through: its target is replaced, the link stays. Anything else that exists at
the path (a device such as /dev/stdout, a pipe) is written in place, since it cannot be
renamed over.
"""

from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

TEMP_SUFFIX = ".adopter-tmp"
_STALE_SECONDS = 600  # a temporary file lives for the time of one write


class WriteRefused(OSError):
    """The file exists and must not be replaced (read-only, or another user's)."""


def atomic_write_text(path: Path | str, text: str, encoding: str = "utf-8", attributes_of: Path | None = None) -> None:
    """Write `text` to `path` atomically, keeping an existing file's mode and owner (or
    taking those of `attributes_of`). Raises OSError (with the path) when the write fails,
    UnicodeEncodeError when the text does not fit the encoding."""
    data = text.encode(encoding)
    path = Path(path)
    target = _through_links(path)
    info = _stat(target)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if info is not None and not stat.S_ISREG(info.st_mode):
        with open(target, "wb") as handle:  # a device or a pipe: cannot be renamed over
            handle.write(data)
        return
    if attributes_of is not None:
        info = _stat(_through_links(attributes_of))
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(target.parent)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _copy_attributes(info, tmp, path)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def refuse_read_only(path: Path) -> None:
    """Raise `WriteRefused` when the file exists and no one may write it (even where this
    process could, as root can): replacing it would override the owner's choice."""
    info = _stat(_through_links(path))
    if info is not None and stat.S_ISREG(info.st_mode) and not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise WriteRefused(13, "read-only file, not replaced", str(path))
    if info is not None and hasattr(os, "geteuid") and os.geteuid() != 0 and not os.access(_through_links(path), os.W_OK):
        raise WriteRefused(13, "no permission to write it", str(path))


def _through_links(path: Path) -> Path:
    """Where a write to `path` lands: a symlink's final target (the link itself stays)."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _copy_attributes(info: os.stat_result | None, tmp: str, path: Path) -> None:
    """The replaced file's mode and owner, or a new file's default mode (mkstemp makes 0600)."""
    if info is None:
        os.chmod(tmp, new_file_mode())
        return
    if hasattr(os, "chown") and (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.chown(tmp, info.st_uid, info.st_gid)
        except PermissionError:
            raise WriteRefused(1, "belongs to another user or group; replacing it would change its owner",
                               str(path)) from None
    os.chmod(tmp, stat.S_IMODE(info.st_mode))


def new_file_mode() -> int:
    """The mode `open` gives a new file: 0666 less the umask (mkstemp's files are 0600)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


_cleaned: set[Path] = set()  # folders already cleaned by this process


def remove_stale(folder: Path) -> None:
    """Remove Adopter's temporary files that a killed run left in `folder` (once per process)."""
    if folder in _cleaned:
        return
    _cleaned.add(folder)
    cutoff = time.time() - _STALE_SECONDS
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith(TEMP_SUFFIX) and entry.is_file(follow_symlinks=False) \
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
    except OSError:
        pass  # best effort: a leftover costs disk, not correctness
