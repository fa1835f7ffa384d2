"""What a process that answers more than one scan keeps between them, and writes after answering.

The incremental state is some 280 MB pickled on a site-packages: reading it took 3-4.5 s of an edit's scan
and writing it 6-7 s.  A process that answers scan after scan (the daemon: ``keep_states_in_memory``) keeps the
last state it read or made in memory, with the signature of its file: the next edit's plan takes it from there
unless another process wrote the file since; and it writes a new state, and the result that names it, after
answering (``write_kept_states``), not before.  A command's own process (``defer_writes``) writes them in a child
after it has answered (lint/cli.py), holding the results directory locked (``hold_for_writing``) so that the
next scan waits for its entries (``no_writer``) rather than read the ones before them.  Either builds a full
scan's state there, at the write (incstate.PendingState).  lint/resultcache.py reads and writes the entries
through here.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Optional

from . import resultcache
from .cache import _no_gc
from .incstate import built

_KEPT_STATES: Optional[dict] = None  # str(path) -> (the file's signature, or None while not written; IncState)
_WARM = False  # a process that answers scan after scan (the daemon), not one that writes behind (defer_writes)
# the states of the results a warm process answered a scan from (a hit), each with that result: read after
# answering, with what the next edit's plan, merge and report ask of them, so that the first edit after a
# daemon started does not read them
_PRIMED: list = []  # [(state path, the result, its Manifest, the SummaryCache it was read with)]


def keep_states_in_memory() -> None:
    global _KEPT_STATES, _WARM
    if _KEPT_STATES is None:
        _KEPT_STATES = {}
    _WARM = True


def defer_writes() -> None:
    """A command's own process: its states and results are written by write_kept_states, which the command
    runs in a child after it has answered (cli.entry: write-behind), not while the user waits."""
    global _KEPT_STATES
    if _KEPT_STATES is None:
        _KEPT_STATES = {}


def pending_dirs() -> set:
    """The directories where states or results wait to be written."""
    dirs = {str(Path(k).parent) for k, (signature, _) in (_KEPT_STATES or {}).items() if signature is None}
    return dirs | {str(Path(k).parent) for k in _PENDING_RESULTS}


def hold_for_writing(dirs) -> list:
    """Exclusive locks on ``dirs`` (open descriptors; closing them, in every process that holds a copy,
    releases them): a scan's load() waits until the process writing behind has written its entries there,
    rather than read the entry before them (whose state the writer then removes)."""
    fds = []
    for d in sorted(dirs):
        try:
            os.makedirs(d, exist_ok=True)  # (a first scan's: made by its first write, after the lock is taken)
        except OSError:
            continue
        fd = _lock(d, shared=False)
        if fd is not None:
            fds.append(fd)
    return fds


@contextlib.contextmanager
def no_writer(d: Path):
    """Hold off a process writing behind into ``d`` (hold_for_writing) while an entry is read there; wait for
    one that is writing."""
    fd = _lock(str(d), shared=True)
    try:
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _lock(d: str, shared: bool) -> Optional[int]:
    """A descriptor of directory ``d`` holding a flock on it; None where there is no directory or no flock
    (the result cache still stands: without the lock, a scan reads the entry before the one being written)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return None
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


KEPT_STATES_MAX = 2  # a state of a site-packages holds ~1.5 GB: a scan and a pre-commit hook's, say


def _keep(key: str, signature, state) -> None:
    owner = Path(key).parent / resultcache._owner(Path(key).name)
    for other in [k for k in _KEPT_STATES if Path(k).parent / resultcache._owner(Path(k).name) == owner]:
        retire(_KEPT_STATES.pop(other))  # (one state per result: the others are the results' before it)
    _KEPT_STATES[key] = (signature, state)
    for old in list(_KEPT_STATES)[:-KEPT_STATES_MAX]:
        if _KEPT_STATES[old][0] is not None:  # (one not written yet stays until it is)
            retire(_KEPT_STATES.pop(old))


def _signature(st) -> tuple:
    return st.st_ino, st.st_size, st.st_mtime_ns


def read_state(path: Path):
    """The incremental state at ``path``: unpickled, or the one this process kept of it (the file unchanged)."""
    kept = _kept_state(path)
    if kept is not None:
        return kept
    with open(path, "rb") as fh, _no_gc():
        signature = _signature(os.fstat(fh.fileno()))
        resultcache._ResultUnpickler(fh).load()  # (its header: read_state_header)
        state = resultcache._ResultUnpickler(fh).load()
    if _KEPT_STATES is not None:
        _keep(str(path), signature, state)
    return state


def read_state_header(path: Path) -> tuple:
    """What an edit that changed no summary asks of the state at ``path`` (IncState.header): the state this
    process keeps, or the small pickle at the head of its file, not the state (some 270 MB on the bench site,
    3.6 s of a comment edit's 5 s)."""
    kept = _kept_state(path)
    if kept is not None:
        return kept.header()
    with open(path, "rb") as fh, _no_gc():
        header = resultcache._ResultUnpickler(fh).load()
    if not (isinstance(header, tuple) and len(header) == 2 and isinstance(header[0], dict)):
        raise ValueError("not a state header")
    return header


def _kept_state(path: Path):
    """The state this process keeps of the file at ``path`` if it is still that file's: made by this process and
    not written yet, or the file unchanged since.  One that is not is let go: its tables became a later scan's
    (IncState.spent), or another process wrote the file since."""
    key = str(path)
    kept = _KEPT_STATES.get(key) if _KEPT_STATES is not None else None
    if kept is None:
        return None
    signature, state = kept
    if state.spent:  # a scan that made its state of this one failed after: read again
        del _KEPT_STATES[key]
        return None
    if signature is None:
        return built(state)  # made by this process, not written yet
    with contextlib.suppress(OSError):
        if _signature(os.stat(path)) == signature:
            return state
    retire(_KEPT_STATES.pop(key))
    return None


def forget_state(path: Path) -> None:
    if _KEPT_STATES is not None:
        _KEPT_STATES.pop(str(path), None)


_RETIRED: list = []


def retire(obj) -> None:
    """In a warm process, hold ``obj`` (a scan's program, a replaced state) until the answer is sent: freeing
    the millions of objects of a site-packages' scan one by one took seconds (a command's own process exits
    without freeing them)."""
    if _WARM:
        _RETIRED.append(obj)


# the result cache entries a warm process made, written after the answer (writing the pre-commit hook's, every
# path kept, was a seventh of an edit's answer): its cache's entries are its own while it answers
_PENDING_RESULTS: dict = {}  # str(path) -> (Manifest, result)

# the results of the entries a warm process last read or wrote, with their file's signature: a hit on an entry
# no other process wrote since takes its result from here, not from the file (unpickling the pre-commit hook's,
# every path kept, was 0.76 s of its 2 s hit through the daemon).  A scan of the entry's key that is not a hit
# drops it (its merge may change the findings it shares with the walk's state: postwalk.MergedFindings).
_KEPT_RESULTS: dict = {}  # str(path) -> (the file's signature, result)
MAX_KEPT_RESULTS = 2  # (entries of other options: a site-packages' result is some 300 MB in memory)


def keep_result(key: str, signature: tuple, result):
    """``result`` is what the entry at ``key`` (its file's ``signature``) holds: kept in a warm process.  What
    the caller may go on with: a copy of it where it is kept, else ``result``."""
    if not _WARM:
        return result
    _KEPT_RESULTS.pop(key, None)
    while len(_KEPT_RESULTS) >= MAX_KEPT_RESULTS:
        del _KEPT_RESULTS[next(iter(_KEPT_RESULTS))]  # (the one read or written longest ago)
    _KEPT_RESULTS[key] = (signature, result)
    return result_copy(result)


def kept_result(key: str, signature: tuple):
    """A copy of the result this process keeps of the entry at ``key`` if the file is the one it read or wrote
    (``signature``), else None."""
    kept = _KEPT_RESULTS.get(key)
    return None if kept is None or kept[0] != signature else result_copy(kept[1])


def result_copy(result):
    """A result as it is now, apart from what the command goes on to do with its own (filter the findings
    it reports, count them in its stats)."""
    import copy

    out = copy.copy(result)
    out.stats = dict(result.stats)
    return out


def drop_result(key: str) -> None:
    _KEPT_RESULTS.pop(key, None)


def _write_kept_state(key: str) -> Optional[str]:
    """Write the state this process keeps for the file ``key`` if it is not written yet: None where it is there
    now, else why not."""
    kept = (_KEPT_STATES or {}).get(key)
    if kept is None:
        return None if os.path.exists(key) else "not found"
    if kept[0] is not None:
        return None
    try:
        state = built(kept[1])  # (a full scan's: built now, after the answer)
        resultcache._pickle_to(Path(key), state.header(), state)
        _KEPT_STATES[key] = (_signature(os.stat(key)), state)
    except Exception as e:  # noqa: BLE001 - only not kept: the next edit is a full scan
        del _KEPT_STATES[key]
        return f"cannot write incremental state: {e}"
    return None


def _files_on_paths(findings: list, manifest) -> list:
    """(path, FileRecord) of each file a finding of ``findings`` is in or passes through, in the result's
    manifest: what any edit's report reads again -- the suppressions along each path, the cached functions
    on it (CL301), the regions' files.  (On the bench site each daemon edit read 395 summaries in common, 266
    of them such files, and the first edit after a hit unpickled them while the user waited: 0.7 s.)"""
    files = manifest.files
    out: dict = {}
    for f in findings:
        for path in (f.path, f.region.path, *(fr.path for fr in f.trace)):
            if path not in out:
                rec = files.get(path)
                if rec is not None:
                    out[path] = rec
    return list(out.items())


def _files_loaded(state, manifest) -> list:
    """(path, FileRecord) of each file of a module ``state``'s scan loaded, in the result's manifest."""
    loaded = set(state.loaded)
    return [(path, rec) for path, rec in manifest.files.items() if rec.module in loaded]


def write_kept_states() -> list:
    """Free what was retired and write the states and results made since the last call (a warm process, after
    answering; a command's child writing behind it); [(path, problem)].  Each state before the result that
    names it (Manifest.state); a result whose state could not be written names none.  A warm process then
    reads the states of the results it answered from (_PRIMED), which of their scanned files spell a
    suppression comment (the report's unused ones: suppressions.warm_scanned_sources), the summaries of the
    files on their findings' paths and of the modules they loaded (_files_on_paths, _files_loaded:
    cache.warm_loaded_summaries) and, after a JSON report, the texts of the findings of their merge
    (report.warm_encoded_findings), and works out each of those states and each written state's users,
    readers and merge (or its lists' folds), the search-path packages' mention indexes the scan asked and the
    package directories it listed,
    what the next edit asks first (it keeps the state)."""
    _RETIRED.clear()
    problems = []
    written = []
    for key, (signature, _) in list((_KEPT_STATES or {}).items()):
        if signature is not None:
            continue
        problem = _write_kept_state(key)
        if problem is None:
            written.append(_KEPT_STATES[key][1])
        else:
            problems.append((key, problem))
    from .report import texts_of

    for key, (manifest, result) in list(_PENDING_RESULTS.items()):
        del _PENDING_RESULTS[key]
        if manifest.state and _write_kept_state(str(Path(key).parent / manifest.state)) is not None:
            manifest.state = ""
        texts = texts_of(result.findings)  # (its JSON report was written by now: its texts go with it)
        if texts is not None:
            result.json_texts = texts
        try:
            resultcache._pickle_to(Path(key), manifest, result)
            keep_result(key, _signature(os.stat(key)), result)
            resultcache.prune_results(Path(key), manifest.state)
        except Exception as e:  # noqa: BLE001 - an unpicklable result is only not cached
            problems.append((key, f"cannot write result cache entry: {e}"))
    if _WARM and _PRIMED:
        from .cache import warm_loaded_summaries
        from .postwalk import keep_list_folds, keeps_merges, merge_of_state
        from .program.locator import warm_package_index, warm_package_listing
        from .report import warm_encoded_findings
        from .suppressions import warm_scanned_sources

        for path, result, manifest, summaries in _PRIMED:
            warm_scanned_sources(result.scanned_files)
            try:
                state = read_state(path)
            except Exception:  # noqa: BLE001 - gone or corrupt: the next edit's scan finds out and says so
                state = None
            loaded = _files_loaded(state, manifest) if state is not None else []
            warm_loaded_summaries(summaries, _files_on_paths(result.findings, manifest) + loaded)
            if state is None:
                continue
            if keeps_merges():
                if not state.merged_per_key:
                    keep_list_folds(state)
                elif state.__dict__.get("_merge") is None:
                    state.keep_merge(merge_of_state(state))
                merge = state.__dict__.get("_merge")
                texts = texts_of(result.findings)  # (its report was JSON)
                if merge is not None and texts is not None:
                    warm_encoded_findings(list(merge.best.values()), texts[0])
            for use in state.package_mentions.values():
                warm_package_index(use)
            for pkg_dir in state.package_dirs:
                warm_package_listing(pkg_dir)
            written.append(state)
    _PRIMED.clear()
    if _WARM:
        from .reach_replay_indexed import index_walk_logs

        for state in written:
            state.users()  # (what the next edit's plan asks first: worked out now, while nobody waits)
            state.module_readers()  # (and what its stand-ins follow from)
            state.readers()  # (and which units read each item: the plan's stale units)
            index_walk_logs(state.walks)  # (and where each log's visits are: its replays)
    return problems
