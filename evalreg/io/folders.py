"""Whole folders written beside their place and swapped in, so that readers see old or new.

`staging_folder` makes an empty folder beside a target (same file system, so a rename can move
it), with the permissions a folder made there would have; `swap_in` puts a finished folder in
the target's place. On Linux the two are exchanged in one step (`renameat2` with
`RENAME_EXCHANGE`), so that the target path never misses; elsewhere, or on file systems that
cannot exchange, the old folder is renamed away and the new one renamed in, one instant apart.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_CANNOT_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def staging_folder(target: Path) -> Path:
    """Make and return an empty hidden folder beside `target`, to build its next content in.

    It gets the permissions of `target` where that exists, else those of a new folder.

    Raises:
        OSError: the folder cannot be made.
    """
    parent = target.parent
    folder = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.new-"))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o777 & ~mask
    os.chmod(folder, mode)
    return folder


def _exchange(first: Path, second: Path) -> bool:
    """Exchange two paths in one step; return False where the system cannot.

    Raises:
        OSError: the exchange failed for another reason.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False  # a C library older than glibc 2.28
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    done = renameat2(
        _AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE
    )
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in _CANNOT_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(second))


def swap_in(folder: Path, target: Path) -> None:
    """Put `folder` in the place of `target` (a folder, or nothing), and remove the old one.

    Raises:
        OSError: the folders cannot be renamed; `target` is then as it was.
    """
    if not target.exists():
        os.rename(folder, target)
        return
    if _exchange(folder, target):
        shutil.rmtree(folder, ignore_errors=True)  # the old content, now at `folder`
        return
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
    os.rmdir(old)
    os.rename(target, old)
    try:
        os.rename(folder, target)
    except OSError:
        with contextlib.suppress(OSError):
            os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
