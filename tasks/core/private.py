"""Folders and files only their owner can reach, safe where another local account may have been first.

Standard library only: the warm host's caller (stages/warm.py) loads this before anything else. A folder is
used only after `lstat` shows it is a real folder (not a symbolic link), owned by this user and closed to
group and others; files are created with O_EXCL | O_NOFOLLOW, so a name planted in advance (a symlink to a
file of ours, say) is refused rather than followed.
"""
from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

FOLDER_MODE = 0o700
FILE_MODE = 0o600
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A folder or file another account could read or change; str(error) says which and why."""


def current_umask() -> int:
    mask = os.umask(0)  # the only way to read it: set it and put it back at once
    os.umask(mask)
    return mask


def check_private(path: Path, kind: str = "folder") -> os.stat_result:
    """`path` as this user's own: a real folder (or file), owned by us, no access for group or others."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePath(f"{path} is a symbolic link (refused: another account may have planted it)")
    return check_owned(path, info, kind)


def check_owned(path: Path, info: os.stat_result, kind: str) -> os.stat_result:
    """`info` (of `path`) as a folder or file of this user's that group and others cannot reach."""
    if kind == "folder" and not stat.S_ISDIR(info.st_mode) or kind == "file" and not stat.S_ISREG(info.st_mode):
        raise UnsafePath(f"{path} is not a {kind}")
    if info.st_uid != os.geteuid():
        raise UnsafePath(f"{path} belongs to uid {info.st_uid}, not to this user (uid {os.geteuid()})")
    if info.st_mode & 0o077:
        raise UnsafePath(f"{path} has mode {stat.S_IMODE(info.st_mode):04o}: group or others can reach it "
                         f"(expected {FOLDER_MODE if kind == 'folder' else FILE_MODE:04o})")
    return info


def check_parent(path: Path) -> None:
    """A parent that others may write in must be sticky (as /tmp is), or they could rename our folder away."""
    info = os.stat(path.parent)
    if info.st_mode & stat.S_IWOTH and not info.st_mode & stat.S_ISVTX:
        raise UnsafePath(f"{path.parent} is writable by every user and not sticky: {path.name} in it is not safe")


def private_folder(path: Path, tighten: bool = False) -> Path:
    """Create `path` with mode 0700 unless it exists, then check it (see check_private). `tighten`: a folder of
    ours that is merely too open (an older checkout's) is closed to 0700 instead of refused."""
    path = Path(path)
    check_parent(path)
    try:
        os.mkdir(path, FOLDER_MODE)
    except FileExistsError:
        pass
    if tighten:
        info = os.lstat(path)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and info.st_mode & 0o077:
            os.chmod(path, FOLDER_MODE, follow_symlinks=False)
    check_private(path)
    return path


def create_file(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write `data` to a new file at `path` (refused if anything, a symlink included, is there already)."""
    fd = os.open(path, CREATE, mode)
    try:
        with os.fdopen(fd, "wb", closefd=False) as handle:
            handle.write(data)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, mode: int = FILE_MODE) -> None:
    """Write `data` to `path` through a new file beside it, renamed over it: a symlink at `path` is replaced,
    never followed."""
    staged = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    create_file(staged, data, mode)
    os.replace(staged, path)


def read_private(path: Path, max_bytes: int = 1 << 20) -> bytes:
    """The contents of a file of ours that only we can read (opened without following a symlink)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        check_owned(path, os.fstat(fd), "file")  # the file opened, not a name another account could swap
        return os.read(fd, max_bytes)
    finally:
        os.close(fd)


def secret(path: Path) -> str:
    """The secret kept in `path` (0600), generated on first use: a credential for a local server."""
    staged = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    create_file(staged, secrets.token_urlsafe(32).encode())
    try:
        os.link(staged, path)  # whole or not at all: a second process starting now reads the finished file
    except FileExistsError:
        pass
    finally:
        os.unlink(staged)
    return read_private(path).decode().strip()
