"""Write a file so that readers see the old bytes or the new ones, never a mix: a temp file in the same
directory, flushed and fsynced, its mode copied from the old file, then renamed over it."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path, data: bytes) -> None:
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
