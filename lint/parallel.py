"""Parallel indexing: parse, before the walk, the files a scan is about to need, on ``--jobs`` processes.

The walk stays demand-driven and single-process (its memo tables make the analysis order-sensitive, so it is
not split); what is split is the part that does not depend on anything else: turning a file into a
``ModuleSummary``.  ``prefetch()``

1. takes the region candidates (the files the region finder will open first, see ``engine.scan``) and the
   modules they import, transitively up to ``depth`` levels (a byte-level scan of ``import`` lines: no parse),
   restricted to what the locator maps to a file (never the standard library or torch: those stay external);
2. keeps the files whose summary is not in the cache (content hash, as ``SummaryCache.key``) -- on a warm run
   that is none, and no worker is started;
3. indexes them in chunks on a ``ProcessPoolExecutor`` (``fork`` on Linux, see ``_mp_context``); each
   worker writes its summaries into the cache (atomic renames, so concurrent runs are safe) and sends the
   same pickled bytes back, so the main process does not read them again, and unpickles one only when the
   walk asks for that module.

The summaries are handed to ``SummaryLoader`` (``preloaded``), which uses one only if the file's content key
still matches.  The same files are prefetched whatever the number of jobs (``jobs=1`` indexes them in this
process), so the counts in ``stats`` and the report do not depend on ``--jobs``.
"""
from __future__ import annotations

import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Callable, Iterable, Optional

from .cache import SummaryCache, dumps
from .index import decode_source, index_source

# `import a.b, c as d` / `from .x.y import (p, q as r)`; multi-line parenthesised name lists are followed.
_IMPORT_RE = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)"
    rb"|import[ \t]+([^\n#;]+))", re.M)
_NAME_RE = re.compile(rb"[A-Za-z_][\w.]*")

CHUNK_BYTES = 1_500_000  # a chunk of files for one worker task (keeps the pool busy, results streaming)
CHUNK_FILES = 64
MIN_PARALLEL_FILES = 16  # fewer files than this: index in this process (a worker costs ~0.2 s to start)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def imported_modules(data: bytes, module: str, is_package: bool) -> list:
    """Dotted names a file may import (``from x import y`` gives ``x`` and ``x.y``), relative ones resolved."""
    out = []
    pkg = module if is_package else module.rpartition(".")[0]
    for m in _IMPORT_RE.finditer(data):
        dots, base, names, plain = m.group(1), m.group(2), m.group(3), m.group(4)
        if plain is not None:
            for part in plain.split(b","):
                name = _NAME_RE.match(part.strip())
                if name:
                    out.append(name.group().decode("ascii", "replace"))
            continue
        base_s = base.decode("ascii", "replace") if base else ""
        if dots:
            parts = pkg.split(".") if pkg else []
            up = len(dots) - 1
            if up > len(parts):
                continue
            parts = parts[:len(parts) - up] if up else parts
            base_s = ".".join(parts + ([base_s] if base_s else []))
        if not base_s:
            continue
        out.append(base_s)
        for part in names.strip(b"()").split(b","):
            name = _NAME_RE.match(part.strip())
            if name and b"." not in name.group() and name.group() != b"import":
                out.append(f"{base_s}.{name.group().decode('ascii', 'replace')}")
    return out


def _chunks(items: list, sizes: dict) -> list:
    """Chunks of about CHUNK_BYTES / CHUNK_FILES, the largest files first (no straggler at the end)."""
    items = sorted(items, key=lambda it: (-sizes.get(str(it[1]), 0), str(it[1])))
    chunks, cur, cur_bytes = [], [], 0
    for it in items:
        cur.append(it)
        cur_bytes += sizes.get(str(it[1]), 0)
        if cur_bytes >= CHUNK_BYTES or len(cur) >= CHUNK_FILES:
            chunks.append(cur)
            cur, cur_bytes = [], 0
    if cur:
        chunks.append(cur)
    return chunks


def index_files(cache_dir: Optional[str], items: list, pickled: bool = False) -> tuple:
    """Index ``items`` [(module, path, is_package)], write each into the cache (if any).

    Returns ([(path, key, summary)], cache problems); in a worker (``pickled``) each summary comes back as
    the bytes of its cache entry, unpickled by the loader only if the walk needs the module (and with the
    cyclic GC off, see ``cache._no_gc``).  ``index_source`` never raises; an unreadable file, or a summary
    too deep to pickle, is left to the main process (which reports it when, and only if, the walk needs it).
    """
    cache = SummaryCache(Path(cache_dir) if cache_dir else None)
    out = []
    for module, path, is_package in items:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        key = cache.key(data, module, is_package)
        summary = index_source(decode_source(data), module, str(path), is_package)
        if not pickled:
            cache.put(key, summary)
            out.append((str(path), key, summary))
            continue
        try:
            blob = dumps(summary)
        except Exception:  # RecursionError: the main process indexes it again, and says why it can't cache it
            continue
        cache.put_blob(key, blob)
        out.append((str(path), key, blob))
    return out, cache.problems


def _index_pickled(cache_dir: Optional[str], items: list) -> tuple:
    return index_files(cache_dir, items, pickled=True)


def prefetch(candidates: Iterable, locator, cache: SummaryCache, jobs: int, depth: int = 2,
             progress: Optional[Callable] = None) -> dict:
    """Index the candidates and their imports (see the module docstring).

    ``candidates``: [(module, path, is_package)].  Returns {str(path): (key, summary)} of what was indexed;
    cache problems of the workers are appended to ``cache.problems``.
    """
    progress = progress or (lambda *a, **k: None)
    wanted: dict = {}  # str(path) -> (module, path, is_package), in a deterministic order
    frontier = [(m, Path(p), pkg) for m, p, pkg in candidates]
    seen_modules = {m for m, _, _ in frontier}
    sizes: dict = {}
    to_index: list = []
    for level in range(depth + 1):
        nxt = []
        for module, path, is_package in frontier:
            key_path = str(path)
            if key_path in wanted:
                continue
            wanted[key_path] = (module, path, is_package)
            try:
                data = path.read_bytes()
            except OSError:
                continue  # reported by the loader if the walk needs the file
            sizes[key_path] = len(data)
            if not cache.has(cache.key(data, module, is_package)):
                to_index.append((module, key_path, is_package))
            if level == depth:
                continue
            for name in imported_modules(data, module, is_package):
                if name in seen_modules:
                    continue
                seen_modules.add(name)
                loc = locator.find(name)
                if loc is not None and loc[0] is not None:
                    nxt.append((name, Path(loc[0]), loc[1]))
        frontier = nxt
    return index_in_parallel(to_index, cache, jobs, sizes, progress)


def _mp_context():
    """``fork`` where there is one: ``spawn`` and ``forkserver`` re-import the caller's ``__main__`` in every
    worker, and a script that calls ``scan()`` without an ``if __name__ == "__main__"`` guard would then run
    its whole scan again in each worker.  The workers only parse and pickle, so the usual hazard of forking
    a threaded process (a lock held by another thread) does not reach them."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods and sys.platform != "darwin" else None)


def index_in_parallel(items: list, cache: SummaryCache, jobs: int, sizes: Optional[dict] = None,
                      progress: Optional[Callable] = None) -> dict:
    progress = progress or (lambda *a, **k: None)
    sizes = sizes or {}
    out: dict = {}
    if not items:
        return out
    cache_dir = str(cache.root) if cache.root is not None else None
    total = len(items)
    progress("index", done=0, total=total)
    chunks = _chunks(items, sizes)
    done = 0
    results: list = []
    if jobs > 1 and total >= MIN_PARALLEL_FILES and len(chunks) > 1:
        try:
            with ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=_mp_context()) as pool:
                for part in pool.map(_index_pickled, [cache_dir] * len(chunks), chunks):
                    results.append(part)
                    done += len(part[0])
                    progress("index", done=done, total=total)
        except Exception:  # a worker died (memory, a signal): index the rest here, same results
            results = results[:]
            chunks = chunks[len(results):]
        else:
            chunks = []
    for chunk in chunks:
        part = index_files(cache_dir, chunk)
        results.append(part)
        done += len(part[0])
        progress("index", done=done, total=total)
    for summaries, problems in results:
        for path, key, summary in summaries:
            out[path] = (key, summary)
        cache.problems.extend(problems)
    progress("index", done=total, total=total)
    return out
