"""The on-disk summary cache: one pickle per (file content, module name, analyzer version).

Safe under concurrent runs: entries are written to a temporary file and renamed into place, so a reader
sees a whole entry or none.  A corrupt entry is deleted and rebuilt, never trusted.

The key is the file's content hash plus its module name; the directory is per analyzer version, summary format
and a fingerprint of the indexer's own source (``index*.py``, ``summary.py``), so a changed indexer never reads
an old summary.  Summaries are syntax only: they do not depend on torch or its trace rules (those are applied
at walk time and cached on their own, keyed by interpreter and torch version: ``dynamo/trace_rules.py``).
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle
import tempfile
from pathlib import Path
from typing import Optional

from . import __version__
from .summary import SUMMARY_FORMAT, ModuleSummary


def file_stat(path: str):
    """(size, mtime_ns) of a file, None if it cannot be stat'ed: how the caches tell a file changed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _indexer_fingerprint() -> str:
    h = hashlib.blake2b(digest_size=6)
    for name in ("index.py", "index_expr.py", "index_func.py", "summary.py"):
        try:
            h.update((Path(__file__).parent / name).read_bytes())
        except OSError:  # a zipped install: the version and format still key the cache
            pass
    return h.hexdigest()


CACHE_TAG = f"v{__version__}-f{SUMMARY_FORMAT}-{_indexer_fingerprint()}"


class _SummaryUnpickler(pickle.Unpickler):
    """Loads summaries and nothing else: a cache directory may come with a scanned checkout (the default
    ``.compile_lint_cache`` is relative to the working directory), and a planted pickle must not run code.
    Any other global is refused; the entry is then treated as corrupt and rebuilt."""

    SAFE_BUILTINS = frozenset({"complex", "frozenset", "set", "slice", "range", "bytearray", "Ellipsis",
                               "NotImplemented"})

    def find_class(self, module, name):
        if (module == "compile_lint.summary" and name[:1].isupper()) or (
                module == "builtins" and name in self.SAFE_BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


@contextlib.contextmanager
def _no_gc():
    """Unpickling a summary creates tens of thousands of containers; with the cyclic GC on, the collections
    they trigger walk every summary loaded so far: loading 2,500 summaries took 31 s instead of 4.5 s.
    A summary holds no reference cycle, so nothing is lost by not collecting while one loads."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def dumps(summary: ModuleSummary) -> bytes:
    return pickle.dumps(summary, protocol=pickle.HIGHEST_PROTOCOL)


def loads(blob: bytes) -> ModuleSummary:
    """A summary pickled by ``dumps`` (by a parallel indexer's worker), through the same restricted unpickler."""
    with _no_gc():
        obj = _SummaryUnpickler(io.BytesIO(blob)).load()
    if not isinstance(obj, ModuleSummary):
        raise pickle.UnpicklingError(f"not a summary: {type(obj).__name__}")
    return obj


# A warm process (lint/daemon.py) keeps the summaries its last answer read from the cache, by content key and
# path: an edit's answer reads the same few hundred again (the modules its regions walked again load, CL301's
# notes, the stand-ins' summaries), and unpickling them was 0.3 s of each answer on the bench site.  Only the
# last answer's are kept, and none from an answer that read more than KEEP_LOADED_MAX (a full scan's would pin
# them all) -- but for those of the modules the state it answered from had loaded, read while nobody waits
# after a hit (warm_loaded_summaries): which of them an edit's units read again depends on the edit (the
# bench site's first leaf edit after a hit read 250 more than the files on the findings' paths, 0.4 s of its
# answer: the modules that construct the edited method's class).  The analysis reads a summary and never
# changes it (the loader sets its path, part of the key).
KEEP_LOADED_MAX = 3000
KEEP_WARMED_MAX = 20000
_LOADED: Optional[dict] = None  # (content key, path) -> summary: the last answer's
_LOADED_NOW: dict = {}  # those the answer running read
_WARMED: dict = {}  # those of the last state a hit primed (warm_loaded_summaries)


def keep_loaded_summaries() -> None:
    global _LOADED
    if _LOADED is None:
        _LOADED = {}


def loaded_summary(key: str, path: str) -> Optional[ModuleSummary]:
    """A summary the last answer (or this one) read from the cache, if this process keeps them."""
    if _LOADED is None:
        return None
    got = _LOADED_NOW.get((key, path))
    if got is None:
        got = _LOADED.get((key, path))
        if got is None:
            got = _WARMED.get((key, path))
        if got is not None:
            _LOADED_NOW[(key, path)] = got
    return got


def note_loaded_summary(key: str, path: str, summary: ModuleSummary) -> None:
    if _LOADED is not None:
        _LOADED_NOW[(key, path)] = summary


def end_of_answer() -> None:
    """Keep what this answer read for the next one (the daemon, after each answer)."""
    global _LOADED, _LOADED_NOW
    if _LOADED is not None:
        _LOADED = _LOADED_NOW if len(_LOADED_NOW) <= KEEP_LOADED_MAX else {}
        _LOADED_NOW = {}


def warm_loaded_summaries(cache: "SummaryCache", records: list) -> None:
    """A warm process, after answering from a result (a hit), before the next request: the summaries of
    ``records`` ((path, resultcache.FileRecord): the files on the findings' paths, what the next edit's answer
    reads whatever the edit, then those of the modules the state had loaded) read from the cache and kept
    until the next hit primes another state, up to KEEP_WARMED_MAX."""
    global _WARMED
    if _LOADED is None:
        return
    warmed: dict = {}
    for path, rec in records:
        if len(warmed) >= KEEP_WARMED_MAX:
            break
        k = (rec.key, path)
        if k in warmed:
            continue
        summary = _WARMED.get(k)
        if summary is None:
            summary = _LOADED.get(k)
        if summary is None:
            summary = cache.get(rec.key)
            if summary is None:
                continue
            summary.path = path
        warmed[k] = summary
    _WARMED = warmed


class SummaryCache:
    """Summaries by content key.  ``shared``: a second directory (the user cache, lint/cachedirs.py) for the
    summaries of files outside ``project_roots`` (the scanned paths): those depend only on the environment,
    and every project that imports the same library reads them.  Lookups try both directories."""

    def __init__(self, directory: Optional[Path], shared: Optional[Path] = None, project_roots=()):
        self.root = Path(directory) if directory else None  # what --cache-dir named (workers reopen it)
        self.dir = Path(directory) / "summaries" / CACHE_TAG if directory else None
        self.shared_root = Path(shared) if shared and directory else None
        self.shared_dir = self.shared_root / "summaries" / CACHE_TAG if self.shared_root is not None else None
        if self.shared_dir == self.dir:
            self.shared_root = self.shared_dir = None
        self.project_roots = tuple(os.path.abspath(r) for r in project_roots)
        self.hits = 0
        self.misses = 0
        self.problems: list = []

    @property
    def spec(self):
        """What a worker process needs to open the same cache (``from_spec``)."""
        return (str(self.root) if self.root else None, str(self.shared_root) if self.shared_root else None,
                self.project_roots)

    @classmethod
    def from_spec(cls, spec) -> "SummaryCache":
        if spec is None or isinstance(spec, str):
            return cls(Path(spec) if spec else None)
        root, shared, roots = spec
        return cls(Path(root) if root else None, Path(shared) if shared else None, roots)

    def _dir_for(self, path) -> Optional[Path]:
        if self.shared_dir is None or path is None:
            return self.dir
        p = os.path.abspath(path)
        if any(p == r or p.startswith(r.rstrip(os.sep) + os.sep) for r in self.project_roots):
            return self.dir
        return self.shared_dir

    def key(self, data: bytes, module: str, is_package: bool) -> str:
        h = hashlib.blake2b(data, digest_size=20)
        h.update(f"\0{module}\0{int(is_package)}".encode())
        return h.hexdigest()

    def _path(self, key: str, directory: Optional[Path] = None) -> Path:
        return (directory or self.dir) / key[:2] / f"{key}.pkl"

    def _candidates(self, key: str) -> list:
        return [self._path(key, d) for d in (self.dir, self.shared_dir) if d is not None]

    def has(self, key: str) -> bool:
        """An entry exists (not checked for corruption: ``get`` does that, and rebuilds)."""
        return self.dir is not None and any(os.path.isfile(p) for p in self._candidates(key))

    def get(self, key: str) -> Optional[ModuleSummary]:
        if self.dir is None:
            return None
        for p in self._candidates(key):
            try:
                with open(p, "rb") as fh, _no_gc():
                    obj = _SummaryUnpickler(fh).load()
            except FileNotFoundError:
                continue
            except Exception as e:  # corrupt or truncated: rebuild
                self.problems.append((str(p), f"corrupt cache entry, rebuilt ({type(e).__name__})"))
                try:
                    p.unlink()
                except OSError:
                    pass
                continue
            if not isinstance(obj, ModuleSummary):
                continue
            self.hits += 1
            return obj
        self.misses += 1
        return None

    def put(self, key: str, summary: ModuleSummary, path=None) -> None:
        """``path``: the summarised file, which decides the directory (the project's or the shared one)."""
        if self.dir is None:
            return
        try:
            blob = dumps(summary)
        except Exception as e:  # RecursionError from a very deep summary
            self.problems.append((str(self._path(key)), f"cannot write cache entry: {e}"))
            return
        self.put_blob(key, blob, path)

    def put_blob(self, key: str, blob: bytes, path=None) -> None:
        """Store an entry already pickled (``dumps``): what the parallel indexer's workers do."""
        if self.dir is None:
            return
        p = self._path(key, self._dir_for(path))
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, p)
        except Exception as e:  # OSError (read-only, disk full); RecursionError from a very deep summary
            self.problems.append((str(p), f"cannot write cache entry: {getattr(e, 'strerror', None) or e}"))
            try:
                os.unlink(tmp)  # noqa: F821 - only bound when mkstemp succeeded
            except (OSError, NameError):
                pass
