"""The on-disk summary cache: one pickle per (file content, module name, analyzer version).

Safe under concurrent runs: entries are written to a temporary file and renamed into place, so a reader
sees a whole entry or none.  A corrupt entry is deleted and rebuilt, never trusted.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Optional

from . import __version__
from .summary import SUMMARY_FORMAT, ModuleSummary

CACHE_TAG = f"v{__version__}-f{SUMMARY_FORMAT}"


class SummaryCache:
    def __init__(self, directory: Optional[Path]):
        self.dir = Path(directory) / "summaries" / CACHE_TAG if directory else None
        self.hits = 0
        self.misses = 0
        self.problems: list = []

    def key(self, data: bytes, module: str, is_package: bool) -> str:
        h = hashlib.blake2b(data, digest_size=20)
        h.update(f"\0{module}\0{int(is_package)}".encode())
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> Optional[ModuleSummary]:
        if self.dir is None:
            return None
        p = self._path(key)
        try:
            with open(p, "rb") as fh:
                obj = pickle.load(fh)
        except FileNotFoundError:
            self.misses += 1
            return None
        except Exception as e:  # corrupt or truncated: rebuild
            self.problems.append((str(p), f"corrupt cache entry, rebuilt ({type(e).__name__})"))
            try:
                p.unlink()
            except OSError:
                pass
            self.misses += 1
            return None
        if not isinstance(obj, ModuleSummary):
            self.misses += 1
            return None
        self.hits += 1
        return obj

    def put(self, key: str, summary: ModuleSummary) -> None:
        if self.dir is None:
            return
        p = self._path(key)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(summary, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, p)
        except OSError as e:
            self.problems.append((str(p), f"cannot write cache entry: {e.strerror or e}"))
            try:
                os.unlink(tmp)  # noqa: F821 - only bound when mkstemp succeeded
            except (OSError, NameError):
                pass
