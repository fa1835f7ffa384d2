"""The result cache: a scan whose inputs did not change is answered without indexing or walking anything.

The summary cache (``cache.py``) saves the parse; this one saves the walk.  One entry per set of scan options
(``options_key``): the scan's result plus a manifest of everything it read --

- every discovered file (the file *set* must match: a new or deleted file means a new scan), with its size,
  mtime and content key (the summary cache's key);
- every module the walk loaded from outside the scanned paths (the environment, ``--search-path``), likewise;
- the modification times of the directories that imports were resolved in (a module that appears there
  later could shadow or satisfy an import).

A file whose size and mtime are unchanged is taken as unchanged (as git and ruff do).  One whose stat changed
is hashed; one whose content changed is re-indexed, and the result is still valid if its summary is the
same as before (a comment or whitespace edit: everything the analysis reads of a file is in its summary).
Anything else -- a new file, a changed summary, changed options, another analyzer or torch -- is a miss, and
the caller scans.  Entries are written to a temporary file and renamed, so concurrent runs see a whole entry
or none; a corrupt entry is a miss, never trusted (the same restricted unpickler as summaries).
"""
from __future__ import annotations

import hashlib
import io
import os
import pickle
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import keptstates
from .cache import CACHE_TAG, SummaryCache, _no_gc, file_stat
from .incstate import built
from .index import decode_source, index_source

RESULT_FORMAT = 3  # 2: ScanResult carries coverage and scanned_files; 3: the manifest and the result pickled apart


def _analyzer_fingerprint() -> str:
    """Every source file of the installed analyzer: a changed rule or resolver never reads an old result."""
    h = hashlib.blake2b(digest_size=8)
    pkg = Path(__file__).resolve().parent
    for p in sorted(pkg.rglob("*.py")) + sorted(pkg.rglob("*.json")):
        try:
            h.update(str(p.relative_to(pkg)).encode() + b"\0" + p.read_bytes())
        except OSError:
            pass
    return h.hexdigest()


_FINGERPRINT: Optional[str] = None


def analyzer_fingerprint() -> str:
    global _FINGERPRINT
    if _FINGERPRINT is None:
        _FINGERPRINT = _analyzer_fingerprint()
    return _FINGERPRINT


@dataclass
class FileRecord:
    module: str
    is_package: bool
    size: int
    mtime_ns: int
    key: str  # SummaryCache.key of the content


@dataclass
class Manifest:
    files: dict = field(default_factory=dict)  # str(path) -> FileRecord (discovered + loaded from outside)
    scanned: frozenset = frozenset()  # str(path) of every discovered file
    dirs: dict = field(default_factory=dict)  # str(dir) -> mtime_ns
    # the file name of the incremental state made with this result ("" for none), beside it: each state has
    # a name of its own, written before the result that names it and removed after the next result is in
    # place, so a scan reading a result always finds its state (ResultCache.store)
    state: str = ""


class _ResultUnpickler(pickle.Unpickler):
    """Only the analyzer's own plain-data classes; anything else makes the entry corrupt (a miss)."""

    ALLOWED = frozenset({("compile_lint.findings", "Finding"), ("compile_lint.findings", "Frame"),
                         ("compile_lint.findings", "RegionRef"), ("compile_lint.regions", "Region"),
                         ("compile_lint.resultcache", "Manifest"), ("compile_lint.resultcache", "FileRecord"),
                         ("compile_lint.engine", "ScanResult"), ("compile_lint.coverage", "Coverage"),
                         ("compile_lint.coverage", "UnanalysedRegion"), ("compile_lint.coverage", "MissingLibrary"),
                         ("compile_lint.regions", "UnresolvedRegion"), ("compile_lint.findings", "Condition"),
                         ("compile_lint.incstate", "IncState"), ("compile_lint.summary", "Guard"),
                         # the steps of a walk's nodes (IncState.steps): plain frozen dataclasses
                         ("compile_lint.actions", "Node"), ("compile_lint.actions", "Action"),
                         ("compile_lint.reach_replay", "WalkLog"), ("compile_lint.hashonce", "HashedTuple")} |
                        {("compile_lint.values", n) for n in ("Func", "Class", "Instance", "Module", "External",
                                                              "ExternalInstance", "Foreign", "Op", "Const", "DictVal",
                                                              "SeqVal", "TupleVal", "Namespace", "Partial", "Super",
                                                              "Unknown")})
    SAFE_BUILTINS = frozenset({"frozenset", "set", "slice", "range", "complex", "Ellipsis"})

    def find_class(self, module, name):
        if (module, name) in self.ALLOWED or (module == "builtins" and name in self.SAFE_BUILTINS):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refused global {module}.{name}")


def _analysis_view(summary, path: str):
    """What the analysis reads of a summary, to compare by value (pickled bytes are not canonical: shared
    strings pickle as back-references).  The ``<module>`` pseudo-function's end line is the file's length:
    nothing but the fixers (which re-read the source) looks at it, and a comment appended to a file changes
    only that."""
    summary.path = path
    top = summary.functions.get("<module>")
    if top is not None:
        top.end_line = 0
    return summary


def options_key(parts: tuple) -> str:
    h = hashlib.blake2b(digest_size=12)
    h.update(repr((RESULT_FORMAT, CACHE_TAG, analyzer_fingerprint()) + tuple(parts)).encode())
    return h.hexdigest()


_HIT = object()


# why a scan found nothing to answer from (--stats), where the cache holds no entry of its options
NO_RESULT = "no result of a scan with these options and this analyzer"


def holds_no_result(summaries: SummaryCache) -> bool:
    """Whether the cache holds no result entry at all, none being written behind (waited for, as ``load``
    does) nor kept in this process to be written there: a scan then has nothing to answer from, whatever its
    options' key."""
    if summaries.root is None:
        return True
    d = summaries.root / "results"
    if any(Path(k).parent == d for k in keptstates._PENDING_RESULTS):
        return False
    with keptstates.no_writer(d):
        try:
            return not any(p.suffix == ".pkl" for p in d.iterdir())
        except FileNotFoundError:
            return True
        except OSError:
            return False


class ResultCache:
    def __init__(self, summaries: SummaryCache, key: Optional[str]):
        """``key``: the options' (engine._options_key); None until ``set_key`` where it waits for the trace
        rules (a first scan: engine)."""
        self.summaries = summaries
        self.path = None
        if key is not None:
            self.set_key(key)
        self.problems: list = []
        self.reindexed = 0  # files re-indexed to check an edit (a hit may still parse a few)
        # (previous IncState, Plan) when only some files' summaries changed: lint/incremental.py
        self.incremental = None
        # str(path) -> FileRecord of the files whose size and mtime load() found unchanged (and of those it
        # re-keyed): store() does not read and hash them again
        self._known: dict = {}
        self._changed = False  # (load: files re-keyed, their contents unchanged)
        self.miss = ""  # why load() found no result to answer from or to scan incrementally from (--stats)

    def set_key(self, key: str) -> None:
        self.path = self.summaries.root / "results" / f"{key}.pkl" if self.summaries.root else None

    # ------------------------------------------------------------------ read
    def load(self, all_paths: frozenset, incremental: bool = False, candidacy=None):
        """The cached result if nothing it depends on changed, else None.  ``all_paths``: every file this
        run discovered.  ``incremental``: when the only change is the content of some files, leave in
        ``self.incremental`` what the scan needs to walk again only what read them.  ``candidacy(bytes)``:
        (may the file hold a region, is it a likely region file): a file whose summary is unchanged (a
        comment) still makes a scan if that changes, or if a text search the last scan made (which files
        mention an identifier) answers otherwise now."""
        if self.path is None:
            return None
        with keptstates.no_writer(self.path.parent):
            return self._load(all_paths, incremental, candidacy)

    def _load(self, all_paths: frozenset, incremental: bool, candidacy):
        pending = keptstates._PENDING_RESULTS.pop(str(self.path), None)
        if pending is not None:  # (made earlier in this answer: a warm process's second scan of one entry)
            if pending[0].state and keptstates._write_kept_state(str(self.path.parent / pending[0].state)) is not None:
                pending[0].state = ""
            self._write_now(*pending)
        try:
            fh = open(self.path, "rb")
        except FileNotFoundError:
            self.miss = NO_RESULT
            return None
        except OSError as e:
            self.problems.append((str(self.path), f"cannot read result cache entry, rescanned: {e.strerror or e}"))
            self.miss = "the result cache entry could not be read"
            return None
        with fh:
            # the manifest first, the result after it: an edit's scan reads only the manifest (the pre-commit
            # hook's result, every path kept, is some 100 MB: reading it was a fifth of an edit's answer)
            manifest = self._unpickle(fh)
            if not isinstance(manifest, Manifest):
                self.miss = "a corrupt result cache entry"
                return None
            result = self._check(manifest, all_paths, incremental, candidacy)
            if result is not _HIT:
                keptstates.drop_result(str(self.path))
                return result
            signature = keptstates._signature(os.fstat(fh.fileno()))
            result = keptstates.kept_result(str(self.path), signature)
            if result is None:
                result = self._unpickle(fh)
                if result is None:
                    self.miss = "a corrupt result cache entry"
                    return None
                result = keptstates.keep_result(str(self.path), signature, result)
            if self._changed:  # remember the new stats, so the next run is a plain hit
                self._write(manifest, result)
            if keptstates._WARM and manifest.state:  # (the next edit's state: read after answering, while nobody waits)
                keptstates._PRIMED.append((self.path.parent / manifest.state, result, manifest, self.summaries))
            return result

    def _unpickle(self, fh):
        """The next object of an entry, or None (corrupt, truncated, or planted: a miss, and the entry is
        rebuilt)."""
        try:
            with _no_gc():
                return _ResultUnpickler(fh).load()
        except Exception as e:  # noqa: BLE001
            self.problems.append((str(self.path), f"corrupt result cache entry, rescanned ({type(e).__name__})"))
            return None

    def _check(self, manifest: "Manifest", all_paths: frozenset, incremental: bool, candidacy):
        """_HIT if the entry's result stands, else None (and ``self.incremental`` set when an incremental scan
        can take over)."""
        if all_paths != manifest.scanned:
            self.miss = "files were added or removed"
            return None
        for d, mtime in manifest.dirs.items():
            st = file_stat(d)
            if st is None or st[1] != mtime:
                self.miss = f"a directory the imports were resolved in changed: {d}"
                return None
        changed = False
        edited: list = []  # (path, record, old summary or None, new summary, new bytes)
        touched: list = []  # (path, record, None, None, new bytes): a new text, the same summary
        known = {}
        for path, rec in manifest.files.items():
            st = file_stat(path)
            if st == (rec.size, rec.mtime_ns):
                known[path] = rec
                continue
            new = self._unchanged_summary(path, rec, edited if incremental else None,
                                          touched if incremental else None)
            if new is None:
                self.miss = f"a changed file could not be read: {path}" if incremental else f"a file changed: {path}"
                return None
            manifest.files[path] = known[path] = new
            changed = True
        self._known = known
        if edited:
            self.incremental = self._plan(manifest, edited, touched)
            return None
        if touched and not self._touched_unchanged(manifest, touched, candidacy):
            self.incremental = self._plan(manifest, [], touched)
            return None
        self._changed = changed
        return _HIT

    def _state_path(self, manifest: Manifest) -> Optional[Path]:
        """The incremental state the result names, beside it (a name with a directory in it is planted)."""
        if not manifest.state or "/" in manifest.state or "\\" in manifest.state:
            return None
        return self.path.parent / manifest.state

    def _touched_unchanged(self, manifest: Manifest, touched: list, candidacy) -> bool:
        """Whether files whose summaries are unchanged (a comment edited) leave every answer the state's checks
        recorded (which files mention a name, which names a module's imports bind) and which files are
        candidates: then the result stands.  Asked of the state's header alone (keptstates.read_state_header);
        anything else is for the plan (_plan), which reads the state."""
        from .incstate import stale_checks

        state_path = self._state_path(manifest)
        if state_path is None:
            return False
        try:
            checks, candidates = keptstates.read_state_header(state_path)
            if stale_checks(checks, {path: (rec.module, data) for path, rec, _, _, data in touched}):
                return False
            was = dict(candidates)
        except Exception:  # noqa: BLE001 - gone, corrupt or planted: the plan finds out and says so
            return False
        return candidacy is None or all(candidacy(data) == (rec.module in was, was.get(rec.module, False))
                                        for path, rec, _, _, data in touched)

    def _plan(self, manifest: Manifest, edited: list, touched: list = ()):
        """(previous IncState, Plan) for these edits, or None (then a full scan)."""
        from .incstate import Plan, changed_items, stale_checks, stale_units

        path = self._state_path(manifest)
        if path is None:
            self.miss = "no incremental state beside the result (a scan without --incremental made it)"
            return None
        try:
            state = keptstates.read_state(path)
        except FileNotFoundError:
            self.miss = "the incremental state named by the result is gone"
            return None
        except Exception as e:  # noqa: BLE001 - corrupt or planted: a full scan, and the entry is rebuilt
            self.problems.append((str(path), f"corrupt incremental state, rescanned ({type(e).__name__})"))
            self.miss = "a corrupt incremental state"
            return None
        from .incstate import IncState

        if not isinstance(state, IncState):
            self.miss = "a corrupt incremental state"
            return None
        loaded = set(state.loaded)
        items: set = set()
        for path, rec, old, new, _ in edited:
            if rec.module in loaded:
                if old is None:  # read by the last scan, but its summary is gone: cannot tell what changed
                    self.miss = f"the previous summary of a changed file is gone from the cache: {path}"
                    return None
                items |= changed_items(old, new, rec.module)
        texts = {path: (rec.module, data) for path, rec, _, _, data in list(edited) + list(touched)}
        items |= stale_checks(state.checks, texts)
        return state, Plan(stale_units(state, items), items, self.reindexed, [e[0] for e in edited], texts)

    def _unchanged_summary(self, path: str, rec: FileRecord, edited: Optional[list] = None,
                           touched: Optional[list] = None) -> Optional[FileRecord]:
        """A FileRecord for the file as it is now, if what the analysis reads of it is unchanged; else None,
        unless ``edited`` is given: then the file's (path, record, old summary, new summary, bytes) is added to
        it and the new record returned."""
        try:
            data = Path(path).read_bytes()
            st = os.stat(path)
        except OSError:
            return None
        key = self.summaries.key(data, rec.module, rec.is_package)
        now = FileRecord(rec.module, rec.is_package, st.st_size, st.st_mtime_ns, key)
        if key == rec.key:
            return now  # touched, not changed
        old = self.summaries.get(rec.key)
        if old is None and edited is None:
            return None  # never indexed (not loaded by the scan), or evicted: cannot tell, so rescan
        new = self.summaries.get(key)
        if new is None:
            new = index_source(decode_source(data), rec.module, path, rec.is_package)
            self.reindexed += 1
            self.summaries.put(key, new, path)
        if old is not None and _analysis_view(old, path) == _analysis_view(new, path):
            if touched is not None:
                touched.append((path, rec, None, None, data))
            return now
        if edited is None:
            return None
        edited.append((path, rec, old, new, data))
        return now

    # ----------------------------------------------------------------- write
    def store(self, result, all_paths: frozenset, discovered: list, loaded: list, dirs: list,
              state=None) -> None:
        """``discovered``/``loaded``: (module, path, is_package) of the scanned files / of modules read from
        outside the scanned paths.  ``state``: the scan's IncState (lint/incstate.py), kept beside it."""
        if self.path is None:
            return
        manifest = Manifest(scanned=all_paths)
        for module, path, is_package in list(discovered) + list(loaded):
            rec = self._known.get(str(path))
            if rec is not None and rec.module == module and rec.is_package == is_package:
                # as load() found it, before the scan read it: not read and hashed again, nor stat'ed (0.06 s of
                # an edit's answer on the bench site); a file changed since then differs from its record, and
                # the next scan looks at it again
                manifest.files[str(path)] = rec
                continue
            try:
                data = Path(path).read_bytes()
                st = os.stat(path)
            except OSError:
                return  # a file vanished during the scan: do not cache a result nobody can check
            manifest.files[str(path)] = FileRecord(module, is_package, st.st_size, st.st_mtime_ns,
                                                   self.summaries.key(data, module, is_package))
        for d in sorted(set(map(str, dirs))):
            st = file_stat(d)
            if st is not None:
                manifest.dirs[d] = st[1]
        if state is not None:  # its own name, before the result that names it (Manifest.state)
            path = self.path.with_name(f"{self.path.stem}.{uuid.uuid4().hex[:16]}.inc")
            if self._write_blob(path, state):
                manifest.state = path.name
        self._write(manifest, result)

    def _write_blob(self, path: Path, obj) -> bool:
        """Whether the state ``obj`` is (or, in a warm process, will be) at ``path``."""
        if keptstates._KEPT_STATES is not None:  # a warm or deferring process: written after the answer (write_kept_states)
            keptstates._keep(str(path), None, obj)
            return True
        try:
            obj = built(obj)
            _pickle_to(path, obj.header(), obj)
        except Exception as e:  # noqa: BLE001 - only not kept: the next edit is a full scan
            self.problems.append((str(path), f"cannot write incremental state: {e}"))
            return False
        return True

    def _write(self, manifest: Manifest, result) -> None:
        if keptstates._KEPT_STATES is not None:  # a warm or deferring process: written after the answer, after its state
            keptstates._PENDING_RESULTS[str(self.path)] = (manifest, keptstates.result_copy(result))
            return
        self._write_now(manifest, result)

    def _write_now(self, manifest: Manifest, result) -> None:
        try:
            _pickle_to(self.path, manifest, result)
            prune_results(self.path, manifest.state)
        except OSError as e:
            self.problems.append((str(self.path), f"cannot write result cache entry: {e.strerror or e}"))
        except Exception as e:  # noqa: BLE001 - an unpicklable result is only not cached
            self.problems.append((str(self.path), f"cannot write result cache entry: {e}"))


def _pickle_to(path: Path, *objs) -> None:
    """Pickle ``objs``, each on its own, one after the other, straight into a temporary file renamed over
    ``path``, which is removed if anything fails: never a half-written entry.  (The incremental state is some 300 MB on a site-packages; pickling it to bytes
    first cost a copy that size: writing it took 6.1 and 5.8 s against 7.6 and 6.2 s by way of the bytes.)"""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            for obj in objs:
                pickle.dump(obj, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


MAX_RESULT_ENTRIES = 8  # per cache directory: a result and its incremental state each
STALE_TEMP_S = 24 * 3600


def prune_results(written: Path, state: str) -> None:
    """After a result was written at ``written``: its other states than ``state``, the one it names
    (Manifest.state) -- a scan that read the previous result a moment ago may find its state gone and scan in
    full; one that read it before it was replaced found its state.  And keep the newest MAX_RESULT_ENTRIES
    result entries (``.pkl``, with their ``.inc`` states) of the directory, ``written`` always: an entry is
    keyed by the analyzer's own files and the scan's options, so every upgrade and every other set of options
    leaves one behind, and a site-packages' state is some 270 MB (one session's analyzer versions left 1.8 GB
    in the bench's cache).  Also removes states without a result and temporary files a killed writer left a
    day ago.  A removed entry is only a miss for whoever scans with it next; a file another process has open
    stays readable (POSIX) or is skipped (Windows)."""
    d = written.parent
    try:
        names = os.listdir(d)
    except OSError:
        return
    now = time.time()
    results = []
    for name in names:
        p = d / name
        if name.endswith(".inc") and name != state and _owner(name) == written.stem:
            keptstates.forget_state(str(p))
            _unlink(p)
            continue
        try:
            st = p.stat()
        except OSError:
            continue
        if name.endswith(".pkl"):
            results.append((st.st_mtime, p))
        elif name.startswith(".tmp-") and now - st.st_mtime > STALE_TEMP_S:
            _unlink(p)
        elif name.endswith(".inc") and _owner(name) + ".pkl" not in names and now - st.st_mtime > STALE_TEMP_S:
            _unlink(p)  # (a day old: never the state a running scan is about to write before its result)
    results.sort(reverse=True)
    kept = 0
    for _, p in results:
        if p == written or kept < MAX_RESULT_ENTRIES - 1:
            kept += p != written
            continue
        _unlink(p)
        for name in names:
            if name.endswith(".inc") and _owner(name) == p.stem:
                _unlink(d / name)


def _owner(state_name: str) -> str:
    """The key of the result a state file belongs to (``<key>.<its own name>.inc``)."""
    return state_name.split(".", 1)[0]


def _unlink(p: Path) -> None:
    try:
        os.unlink(p)
    except OSError:
        pass


def loads_result(blob: bytes):
    """An entry's (manifest, result), through the restricted unpickler."""
    fh = io.BytesIO(blob)
    manifest = _ResultUnpickler(fh).load()
    return manifest, _ResultUnpickler(fh).load()
