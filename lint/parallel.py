"""Parallel indexing: parse the files a scan is about to need on ``--jobs`` processes, while it runs.

The walk stays demand-driven and single-process (its memo tables make the analysis order-sensitive, so it is
not split); what is split is the part that does not depend on anything else: turning a file into a
``ModuleSummary``.  ``prefetch()``

1. takes the region candidates (the files the region finder opens, in its order, see ``engine.scan``), each
   followed -- if it likely holds a region -- by the modules it imports, transitively up to ``depth`` levels
   (a byte-level scan of ``import`` lines: no parse), restricted to what the locator maps to a file (never the
   standard library or torch: those stay external);
2. keeps the files whose summary is not in the cache (content hash, as ``SummaryCache.key``) -- on a warm run
   that is none, and no worker is started;
3. hands them, in that order (the order the scan will want them), to a ``BackgroundIndexer``: small chunks on
   a ``ProcessPoolExecutor`` (``fork`` on Linux, see ``_mp_context``) whose workers run at a lower priority.
   The pool starts on the first files while the rest are still being ordered.  Each worker writes its
   summaries into the cache (atomic renames, so concurrent runs are safe) and sends the same pickled bytes
   back; the main process unpickles one only when the scan asks for that module.

Meanwhile the main process finds the regions and walks them (``engine._find_and_walk``).  ``SummaryLoader``
asks ``take(path)``: the pool's summary (used only if the file's content key still matches), a wait for a
chunk in flight, or ``YOURS`` -- a file the pool has not reached yet, which the loader indexes itself.
``finish()`` then indexes whatever is left, so the same files are indexed, and counted, whatever the timing
and the number of jobs (``jobs=1`` indexes them all first, in this process: ``Indexed``).
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
IMPORT_RE = re.compile(
    rb"^[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*)"
    rb"|import[ \t]+([^\n#;]+))", re.M)
_NAME_RE = re.compile(rb"[A-Za-z_][\w.]*")

# A chunk of files is one worker task: about a tenth of a second of work, so that the walk, waiting for a file
# of a chunk in flight, does not wait long.
CHUNK_BYTES = 300_000
CHUNK_FILES = 16
MIN_PARALLEL_FILES = 16  # fewer files than this: index in this process (a worker costs ~0.2 s to start)
FIRST_BATCH = 64  # files ordered before the pool starts (prefetch); the rest go to it in batches of this size


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def imported_modules(data: bytes, module: str, is_package: bool) -> list:
    """Dotted names a file may import (``from x import y`` gives ``x`` and ``x.y``), relative ones resolved."""
    out = []
    pkg = module if is_package else module.rpartition(".")[0]
    for m in IMPORT_RE.finditer(data):
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
    """Consecutive runs of about CHUNK_BYTES / CHUNK_FILES, in the order given (the order of need)."""
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


def index_files(cache_dir, items: list, pickled: bool = False) -> tuple:
    """Index ``items`` [(module, path, is_package)], write each into the cache (if any).

    Returns ([(path, key, summary)], cache problems); in a worker (``pickled``) each summary comes back as
    the bytes of its cache entry, unpickled by the loader only if the walk needs the module (and with the
    cyclic GC off, see ``cache._no_gc``).  ``index_source`` never raises; an unreadable file, or a summary
    too deep to pickle, is left to the main process (which reports it when, and only if, the walk needs it).
    """
    cache = SummaryCache.from_spec(cache_dir)  # a directory, or SummaryCache.spec (project + shared)
    out = []
    for module, path, is_package in items:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        key = cache.key(data, module, is_package)
        summary = index_source(decode_source(data), module, str(path), is_package)
        if not pickled:
            cache.put(key, summary, path)
            out.append((str(path), key, summary))
            continue
        try:
            blob = dumps(summary)
        except Exception:  # RecursionError: the main process indexes it again, and says why it can't cache it
            continue
        cache.put_blob(key, blob, path)
        out.append((str(path), key, blob))
    return out, cache.problems


def _index_pickled(cache_dir, items: list) -> tuple:
    return index_files(cache_dir, items, pickled=True)


def prefetch(candidates: Iterable, locator, cache: SummaryCache, jobs: int, depth: int = 3,
             progress: Optional[Callable] = None, follow: Optional[Callable[[str, bytes], bool]] = None):
    """Index the candidates and the imports of the likely region files (see the module docstring).

    ``candidates``: [(module, path, is_package)], in the order the scan visits them.  ``follow(module,
    data)``: is this candidate (its text: ``data``) likely to hold a region (it spells ``torch.compile``,
    say, not just ``re.compile``; the scan gives its own answer: engine._likely_region_file)?  Only those have their
    imports added, up to ``depth`` levels, right after the candidate itself: that is the
    order the walk asks for them, as it walks a file's regions as soon as they are found.  (All candidates
    first, then every candidate's imports, made the walk index half of what it needed itself: the pool was
    still on candidates; and two thirds of the imports of the other candidates were never needed.)
    Returns what indexes them (``Indexed`` or ``BackgroundIndexer``: ``take(path)``, ``finish()``,
    ``close()``); cache problems of the workers are appended to ``cache.problems``.  The pool starts on the
    first batch while the rest is still being ordered.
    """
    progress = progress or (lambda *a, **k: None)
    follow = follow or (lambda module, data: True)
    wanted: set = set()  # str(path) of every file of the set
    seen_modules: set = set()
    sizes: dict = {}
    batch: list = []  # not in the cache, not handed on yet
    to_index: list = []
    background = None

    def want(module: str, path: Path, is_package: bool) -> Optional[bytes]:
        key_path = str(path)
        if key_path in wanted:
            return None
        wanted.add(key_path)
        seen_modules.add(module)
        try:
            data = path.read_bytes()
        except OSError:
            return None  # reported by the loader if the walk needs the file
        sizes[key_path] = len(data)
        if not cache.has(cache.key(data, module, is_package)):
            batch.append((module, key_path, is_package))
        return data

    def hand_on(final: bool = False) -> None:
        nonlocal background, batch
        if background is not None:
            background.add(_chunks(batch, sizes))
        else:
            to_index.extend(batch)
            if len(to_index) >= FIRST_BATCH or final:
                background = _background(to_index, cache, jobs, sizes)
        batch = []

    for module, path, is_package in candidates:
        data = want(module, Path(path), is_package)
        if data is not None and depth and follow(module, data):
            frontier = [(module, data, is_package)]
            for level in range(depth):
                nxt = []
                for mod, mod_data, mod_pkg in frontier:
                    for name in imported_modules(mod_data, mod, mod_pkg):
                        if name in seen_modules:
                            continue
                        seen_modules.add(name)
                        loc = locator.find(name)
                        if loc is None or loc[0] is None:
                            continue
                        got = want(name, Path(loc[0]), loc[1])
                        if got is not None and level + 1 < depth:
                            nxt.append((name, got, loc[1]))
                frontier = nxt
        if len(batch) + (len(to_index) if background is None else 0) >= FIRST_BATCH:
            hand_on()
    hand_on(final=True)
    if background is not None:
        background.seal()
        return background
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
                      progress: Optional[Callable] = None):
    """Index ``items`` ahead of the walk: on a pool in the background (``BackgroundIndexer``) when ``jobs`` > 1
    and there is enough to do, else here and now (``Indexed``).  ``items`` come in the order they will be
    needed."""
    progress = progress or (lambda *a, **k: None)
    if not items:
        return Indexed({})
    background = _background(items, cache, jobs, sizes or {})
    if background is not None:
        return background
    cache_dir = cache.spec
    out: dict = {}
    total = len(items)
    progress("index", done=0, total=total)
    for chunk in _chunks(items, sizes or {}):
        summaries, problems = index_files(cache_dir, chunk)
        for path, key, summary in summaries:
            out[path] = (key, summary)
        cache.problems.extend(problems)
        progress("index", done=len(out), total=total)
    return Indexed(out)


def _background(items: list, cache: SummaryCache, jobs: int, sizes: dict) -> Optional["BackgroundIndexer"]:
    """A pool indexing ``items`` in the background, if there are jobs and work enough for one (a worker costs
    ~0.2 s to start); else None."""
    if jobs < 2 or len(items) < MIN_PARALLEL_FILES:
        return None
    chunks = _chunks(items, sizes)
    return BackgroundIndexer(chunks, cache, jobs) if len(chunks) > 1 else None


YOURS = "yours"  # BackgroundIndexer.take: a file of the set for the caller to index (already counted)


class Indexed:
    """Summaries indexed ahead, all at hand: ``{str(path): (content key, summary or its pickled bytes)}``."""

    def __init__(self, summaries: dict):
        self.summaries = summaries
        self.indexed = len(summaries)  # files parsed ahead (each counted once, used or not)

    def take(self, path: str):
        """The (key, summary) indexed ahead for ``path``, or None: then the caller reads it itself."""
        return self.summaries.pop(path, None)

    def finish(self) -> int:
        return self.indexed

    def close(self) -> None:
        pass


def _init_worker() -> None:
    """Workers yield the CPU to the main process: its region search and walk are the scan's critical path, and
    they use what the walk leaves idle (waits for a file) or a spare core.  They ignore Ctrl-C, which reaches
    the whole process group: the main process stops them (``close``) and says "interrupted" once, where each
    worker would print a traceback."""
    import signal

    try:
        os.nice(10)
    except (AttributeError, OSError):
        pass
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (AttributeError, ValueError, OSError):
        pass
    # A worker whose main process died without stopping it (SIGKILL, SIGTERM, the OOM killer) would wait on
    # its task queue forever: it holds that queue's write end itself, so no end of file ever comes.
    import threading

    parent = os.getppid()

    def watch_parent() -> None:
        import time

        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch_parent, name="compile-lint-parent-watch", daemon=True).start()


class BackgroundIndexer:
    """Indexes files on a process pool while the main process finds regions and walks them.

    Chunks go to the pool in the order the files will be needed, a few at a time (``jobs`` + 1 in flight, fed
    by a thread as chunks complete), so that:

    * a file the walk asks for that is already indexed is taken at once (``take``);
    * one in a chunk the pool is working on is waited for (a chunk is small: a tenth of a second at most);
    * one whose chunk has not been sent yet is taken out of it, and the caller indexes it itself -- quicker
      than waiting behind the chunks in flight, and still indexed exactly once.  (Indexing the files of
      chunks in flight too, instead of waiting, made the walk index a third of the whole set itself: it
      follows the pool's front closely.)

    More chunks can be added (``add``) until ``seal``; ``finish`` indexes what is left.  Every file of the set
    is counted once whoever indexed it, whatever the timing: the counts in ``stats`` and the cache's contents
    do not depend on how fast the walk went.
    """

    def __init__(self, chunks: list, cache: SummaryCache, jobs: int):
        import threading
        from collections import deque

        self.cache = cache
        self.cache_dir = cache.spec
        self.indexed = 0
        self._jobs = jobs
        self._cond = threading.Condition()
        self._queue = deque(chunks)  # not sent yet; a chunk's list loses the files taken out by `take`
        self._queued: dict = {}  # str(path) -> (chunk, item) for the files of `_queue`
        for chunk in chunks:
            for item in chunk:
                self._queued[str(item[1])] = (chunk, item)
        self._inflight: dict = {}  # future -> its chunk
        self._in_chunk: dict = {}  # str(path) -> future, for the files of chunks in flight
        self._ready: dict = {}  # str(path) -> (key, pickled summary)
        self._broken = False
        self._closed = False
        self._sealed = False  # no more chunks will be added
        self._pool = ProcessPoolExecutor(min(jobs, len(chunks)), mp_context=_mp_context(),
                                         initializer=_init_worker)
        with self._cond:
            self._send()  # from this thread: `fork` starts every worker at the first submit, before any thread
        self._feeder = threading.Thread(target=self._feed, name="compile-lint-indexer", daemon=True)
        self._feeder.start()

    # called with self._cond held
    def _send(self) -> None:
        while self._queue and len(self._inflight) < self._jobs + 1 and not self._broken:
            chunk = self._queue.popleft()
            if not chunk:
                continue  # every file of it was taken out
            for item in chunk:
                del self._queued[str(item[1])]
            try:
                fut = self._pool.submit(_index_pickled, self.cache_dir, chunk)
            except Exception:  # the pool is broken (a worker died): `finish` indexes the rest here
                self._queue.appendleft(chunk)
                for item in chunk:
                    self._queued[str(item[1])] = (chunk, item)
                self._broken = True
                return
            self._inflight[fut] = chunk
            for item in chunk:
                self._in_chunk[str(item[1])] = fut

    def _absorb(self, fut) -> None:
        chunk = self._inflight.pop(fut)
        for item in chunk:
            self._in_chunk.pop(str(item[1]), None)
        try:
            summaries, problems = fut.result()
        except Exception:  # a worker died (memory, a signal): its chunk is indexed by whoever needs it
            self._broken = True
            self._queue.append(chunk)
            for item in chunk:
                self._queued[str(item[1])] = (chunk, item)
            return
        for path, key, blob in summaries:
            self._ready[path] = (key, blob)
        self.indexed += len(summaries)
        self.cache.problems.extend(problems)

    def add(self, chunks: list) -> None:
        with self._cond:
            for chunk in chunks:
                self._queue.append(chunk)
                for item in chunk:
                    self._queued[str(item[1])] = (chunk, item)
            self._send()
            self._cond.notify_all()

    def seal(self) -> None:
        with self._cond:
            self._sealed = True
            self._cond.notify_all()

    def _feed(self) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait

        while True:
            with self._cond:
                self._send()
                while not self._inflight and not self._sealed and not self._closed:
                    self._cond.wait()  # for more chunks (add) or the end (seal)
                    self._send()
                if not self._inflight or self._closed:
                    self._cond.notify_all()
                    return
                pending = list(self._inflight)
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            with self._cond:
                for fut in done:
                    if fut in self._inflight:
                        self._absorb(fut)
                self._cond.notify_all()

    def take(self, path: str):
        """The (key, pickled summary) of ``path`` once the pool has indexed it; ``YOURS`` if its chunk was not
        sent yet: the caller indexes it (counted here, as one of the set); None if it is not in this set."""
        with self._cond:
            while True:
                hit = self._ready.pop(path, None)
                if hit is not None:
                    return hit
                queued = self._queued.pop(path, None)
                if queued is not None:
                    queued[0].remove(queued[1])
                    self.indexed += 1
                    return YOURS
                if path not in self._in_chunk or self._closed:
                    return None
                self._cond.wait()

    def finish(self) -> int:
        """Wait for the pool, index here what it could not; the number of files it indexed."""
        self.seal()
        self._feeder.join()
        self._pool.shutdown(wait=True)
        with self._cond:
            rest = [item for chunk in self._queue for item in chunk]
            self._queue.clear()
            self._queued.clear()
        if rest:
            summaries, problems = index_files(self.cache_dir, rest)
            for path, key, summary in summaries:
                self._ready[path] = (key, summary)
            self.indexed += len(summaries)
            self.cache.problems.extend(problems)
        return self.indexed

    def close(self) -> None:
        """Stop now (an error or an interrupt in the main process): no more chunks, and the workers are gone
        when this returns -- after the chunks they are on, a tenth of a second.  (Not waiting left them behind:
        the CLI leaves with ``os._exit``, before the pool's thread had told them to stop.)"""
        with self._cond:
            self._closed = True
            self._queue.clear()
            self._queued.clear()
            self._in_chunk.clear()
            self._cond.notify_all()
        self._pool.shutdown(wait=True, cancel_futures=True)
