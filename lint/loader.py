"""Reading a module's summary: from the files indexed ahead (lint/parallel.py), a warm process's last answer,
the summary cache, or indexed here (lint/index.py); and reading again one the scan put aside
(``Program.evict``)."""
from __future__ import annotations

from pathlib import Path

from . import memtrim
from .cache import SummaryCache, loaded_summary, note_loaded_summary
from .index import decode_source, index_source
from .parallel import YOURS
from .summary import ModuleSummary


class SummaryLoader:
    """Reads and indexes files on demand; each file at most once per run, cached across runs."""

    def __init__(self, cache: SummaryCache):
        self.cache = cache
        self.parsed = 0
        self.problems: list = []
        self.ahead = None  # files indexed ahead (lint/parallel.py): .take(str(path)) -> (content key, summary)

    def __call__(self, module: str, path: Path, is_package: bool) -> ModuleSummary:
        memtrim.maybe()  # (a load is where most of what the scan frees was made: the workers' pickled bytes)
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            self.problems.append((str(path), f"cannot read: {e.strerror or e}"))
            return _unreadable(module, path, is_package, e)
        key = self.cache.key(data, module, is_package)
        ahead = self.ahead.take(str(path)) if self.ahead is not None else None
        counted = ahead == YOURS  # a file of the set indexed ahead, left to us: counted there already
        if ahead is not None and not counted and ahead[0] == key:  # indexed (and counted) by the parallel pass
            summary = ahead[1]
            if isinstance(summary, bytes):  # pickled by a worker
                from .cache import loads

                summary = loads(summary)
            summary.path = str(path)
            return summary
        cached = loaded_summary(key, str(path))  # (a warm process: read by its last answer)
        if cached is not None:
            self.cache.hits += 1
            return cached
        cached = self.cache.get(key)
        if cached is not None:
            cached.path = str(path)
            note_loaded_summary(key, cached.path, cached)
            return cached
        summary = index_source(decode_source(data), module, str(path), is_package)
        self.parsed += 0 if counted else 1
        self.cache.put(key, summary, path)
        return summary

    def reload(self, module: str, path, is_package: bool) -> ModuleSummary:
        """A summary put aside (Program.evict) read again: from the cache, else indexed again; not counted (a
        scan's counts do not depend on what it put aside), and not asked of the files indexed ahead, which
        gave it already."""
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            return _unreadable(module, path, is_package, e)
        key = self.cache.key(data, module, is_package)
        hits, misses = self.cache.hits, self.cache.misses
        cached = loaded_summary(key, str(path)) or self.cache.get(key)
        self.cache.hits, self.cache.misses = hits, misses
        if cached is not None:
            cached.path = str(path)
            return cached
        return index_source(decode_source(data), module, str(path), is_package)


def _unreadable(module: str, path, is_package: bool, e: OSError) -> ModuleSummary:
    m = ModuleSummary(name=module, path=str(path), is_package=is_package)
    m.error = f"cannot read: {e.strerror or e}"
    return m
