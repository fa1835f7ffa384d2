"""Write a file so that readers see the old bytes or the new ones, never a mix: a temp file in the same
directory, flushed and (``durable``) fsynced, its mode copied from the old file, then renamed over it."""
from __future__ import annotations

import os
import tempfile


def write_atomic(path, data, durable: bool = True) -> None:
    """``data``: bytes, or an iterable of bytes written one after the other.  ``durable=False``: no fsync --
    for what the next run writes again (a report: fsyncing the benchmark site's 67 MB JSON report took up to
    0.4 s of an edit's answer).  A crash may then leave the old file or an empty one, never a mix of the two."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as fh:
            if isinstance(data, (bytes, bytearray, memoryview)):
                fh.write(data)
            else:
                fh.writelines(data)
            fh.flush()
            if durable:
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
