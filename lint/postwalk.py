"""After the walk: the regions' findings merged into one per hazard site and rule, then what the report holds of
them (environment reads the program itself sets dropped, CL301's notes on cached functions, the fixers that may
apply, ``--select``/``--ignore``, per-file ignores and ``noqa`` comments), and the report's relative paths."""
from __future__ import annotations

import os
from typing import Optional

from .findings import SEVERITY_ORDER, Finding
from .program import Program


# A warm process (lint/daemon.py) keeps each scan's merge for the next one (keep_merges): after an edit most
# regions' findings are the previous scan's very lists (reused regions) or hold the previous finding objects
# (a replay keeps the findings of the hazard sites the edit did not touch), and folding the bench site's
# 357,090 region findings again was 0.6 s of each answer.
_KEEP_MERGES = False


def keep_merges() -> None:
    global _KEEP_MERGES
    _KEEP_MERGES = True


def keeps_merges() -> bool:
    return _KEEP_MERGES


class MergeMemo:
    """What a merge keeps for the next scan's (MergedFindings.memo): each region's findings list in walk order,
    the merged tables, per merged key which region (its position in walk order) gave which finding, and where
    each key was first met (its region's position, its index in that list) with the keys first met at each
    position."""
    __slots__ = ("lists", "best", "regions", "contrib", "first", "firsts_at")

    def __init__(self, lists: list, best: dict, regions: dict, contrib: dict, first: dict, firsts_at: dict):
        self.lists, self.best, self.regions, self.contrib = lists, best, regions, contrib
        self.first, self.firsts_at = first, firsts_at


def merge_key(f: Finding) -> tuple:
    # one report per rule, line and fix point: `with FileLock(p):` is one hazard; reached through two cached
    # loaders it is two findings, since fixing one loader leaves the other path
    return (f.rule, f.path, f.line, f.fix_point)


def _rank(f: Finding) -> tuple:
    """The most certain report wins (an error; then the warning asking for the fewest conditions); the first
    in walk order among equals."""
    return (SEVERITY_ORDER[f.severity], len(f.conditions), len(f.trace), f.col)


def _index_in(found: list, f: Finding) -> int:
    return next(i for i, g in enumerate(found) if g is f)


class _ListFold:
    """What folding one region's list with every path kept gives (the pre-commit hook's merge), to be folded
    into a merge as a whole: per merged key its first finding of the lowest rank and the regions reaching it,
    per hazard (rule, file, line) its findings, each in the order first met in the list.  A warm process keeps
    them per list object (``_LIST_FOLDS``): after an edit most lists are the previous scan's (reused regions),
    and folding the 343,330 findings of the hook's 238 regions again was 0.65 s of each answer."""
    __slots__ = ("found", "keys", "paths", "_files")

    def __init__(self, found: list):
        self.found = found
        self._files: Optional[dict] = None
        keys: dict = {}  # key -> [its best finding, {region key: region}, its rank]
        paths: dict = {}
        region = region_key = None
        for f in found:
            paths.setdefault((f.rule, f.path, f.line), []).append(f)
            if f.region is not region:
                region = f.region
                region_key = (region.path, region.line, region.qualname)
            key = (f.rule, f.path, f.line, f.fix_point)
            got = keys.get(key)
            rank = _rank(f)
            if got is None:
                keys[key] = [f, {region_key: region}, rank]
                continue
            if region_key not in got[1]:
                got[1][region_key] = region
            if rank < got[2]:
                got[0], got[2] = f, rank
        self.keys, self.paths = keys, paths

    def files(self) -> dict:
        """Per hazard, the files its paths in this list pass through (regions, frames): postscan.touching."""
        if self._files is None:
            self._files = {key3: frozenset(_frame_paths(found)) for key3, found in self.paths.items()}
        return self._files


def _frame_paths(found: list) -> set:
    out = {f.region.path for f in found}
    for f in found:
        out.update(frame.path for frame in f.trace)
    return out


# id(list) -> its _ListFold, for the lists of the last merge with every path kept in a warm process
_LIST_FOLDS: dict = {}


class MergedFindings:
    """The walk's findings, merged as each region's arrive: one finding per hazard site and rule, with the
    shortest path, and the regions reaching it.  Merging as they come keeps memory to the distinct hazards
    (a whole site-packages: 357,090 findings from the walk, 3,280 reported).  ``paths_by_hazard`` (when asked for)
    keeps every finding by (rule, file, line), for the pre-commit hook.  The merged findings are in report
    order (Finding.sort_key), two of one site and rule (two fix points) in the order they were first met.

    Each region's list holds one finding per key (engine.walk_one merges it first).  With ``remember`` (a warm
    process: keep_merges) the merge also keeps which region gave which finding of each key, and where each key
    was first met (``MergeMemo``); given the previous scan's (``previous``), it folds at the end only what
    changed: a region's list that is the previous one is skipped, and in one that is not, the findings that are
    not the previous objects are taken in or out, and only their keys are worked out again, from their regions'
    findings in walk order -- what folding every list again gives (tests/test_postwalk_merge.py)."""

    def __init__(self, keep_paths_by_hazard: bool = False, remember: bool = False,
                 previous: Optional[MergeMemo] = None):
        self.best: dict = {}
        self.regions: dict = {}
        self.paths_by_hazard: Optional[dict] = {} if keep_paths_by_hazard else None
        remember = remember and not keep_paths_by_hazard
        self._lists: Optional[list] = [] if remember else None
        self._contrib: Optional[dict] = {} if remember else None  # key -> {region position: finding}
        self._first: dict = {}  # key -> (region position, index in its list) where first met (remember)
        self._firsts_at: dict = {}  # region position -> the keys first met there (remember)
        self._previous = previous if remember else None
        # keys whose finding or regions changed since the previous merge (their regions are set again); None: all
        self._touched: Optional[set] = None
        # every path kept in a warm process: each list folded once (_ListFold), and then as a whole
        self._folds: Optional[dict] = {} if keep_paths_by_hazard and _KEEP_MERGES else None
        self._ranks: dict = {}  # key -> its best finding's rank (_fold_whole)

    @property
    def count(self) -> int:
        """Hazards merged so far (progress); against a previous merge, that merge's until the end."""
        return len(self._previous.best if self._previous is not None else self.best)

    def add(self, found: list) -> None:
        if self._folds is not None:
            fold = _LIST_FOLDS.get(id(found))
            if fold is None or fold.found is not found:
                fold = _ListFold(found)
            self._folds[id(found)] = fold
            self._fold_whole(fold)
            return
        if self._lists is not None:
            self._lists.append(found)
            if self._previous is not None:
                return  # folded at the end (_merge_changes)
        self._fold(found, len(self._lists) - 1 if self._lists is not None else -1)

    def _fold(self, found: list, pos: int) -> None:
        best, regions, paths, contrib = self.best, self.regions, self.paths_by_hazard, self._contrib
        first = self._first if contrib is not None else None
        region = region_key = None  # (a region's findings share its RegionRef: its key made once)
        for idx, f in enumerate(found):
            if paths is not None:
                paths.setdefault((f.rule, f.path, f.line), []).append(f)
            key = (f.rule, f.path, f.line, f.fix_point)  # merge_key, inlined: 357,090 findings on the bench site
            if contrib is not None:
                given = contrib.get(key)
                if given is None:
                    contrib[key] = {pos: f}
                else:
                    given[pos] = f
            if f.region is not region:
                region = f.region
                region_key = (region.path, region.line, region.qualname)
            reaching = regions.get(key)
            if reaching is None:
                regions[key] = {region_key: region}
                best[key] = f
                if first is not None:
                    first[key] = (pos, idx)
                    self._firsts_at.setdefault(pos, set()).add(key)
                continue
            if region_key not in reaching:
                reaching[region_key] = region
            cur = best[key]
            if (SEVERITY_ORDER[f.severity], len(f.conditions), len(f.trace), f.col) < (
                    SEVERITY_ORDER[cur.severity], len(cur.conditions), len(cur.trace), cur.col):
                best[key] = f

    def _fold_whole(self, fold: _ListFold) -> None:
        """What ``_fold`` of the list behind ``fold`` gives, from what folding that list alone gave: the same
        findings chosen (the first of the lowest rank), regions, paths, and keys in the order first met."""
        best, regions, paths, ranks = self.best, self.regions, self.paths_by_hazard, self._ranks
        for key3, found in fold.paths.items():
            got = paths.get(key3)
            if got is None:
                paths[key3] = list(found)
            else:
                got.extend(found)
        for key, (f, reaching_here, rank) in fold.keys.items():
            reaching = regions.get(key)
            if reaching is None:
                regions[key] = dict(reaching_here)
                best[key] = f
                ranks[key] = rank
                continue
            for region_key, region in reaching_here.items():
                if region_key not in reaching:
                    reaching[region_key] = region
            if rank < ranks[key]:
                best[key] = f
                ranks[key] = rank

    def hazard_files(self) -> Optional[dict]:
        """(rule, file, line) -> the files its kept paths pass through, from the lists' folds (a warm process's
        merge with every path kept; else None): what postscan.touching would gather from 4.85 million frames
        of the pre-commit hook's paths (0.25 s of each answer), the lists' own worked out once."""
        if self._folds is None:
            return None
        out: dict = {}
        for fold in self._folds.values():
            for key3, names in fold.files().items():
                got = out.get(key3)
                if got is None:
                    out[key3] = set(names)
                else:
                    got |= names
        return out

    def _merge_changes(self) -> None:
        """Fold this scan's lists against the previous merge (taken over: it is the previous scan's, spent)."""
        prev, self._previous = self._previous, None
        lists = self._lists
        if len(prev.lists) != len(lists):  # a region more or fewer: the positions moved
            for pos, found in enumerate(lists):
                self._fold(found, pos)
            return
        best, regions, contrib = self.best, self.regions, self._contrib = prev.best, prev.regions, prev.contrib
        first, firsts_at = self._first, self._firsts_at = prev.first, prev.firsts_at
        touched: set = set()
        changed: dict = {}  # position -> {id(finding): its index} of the lists that are not the previous ones
        for pos, (old, new) in enumerate(zip(prev.lists, lists)):
            if old is new:
                continue
            changed[pos] = {id(f): i for i, f in enumerate(new)}
            gone = {id(f): f for f in old}
            for f in new:
                if gone.pop(id(f), None) is None:
                    key = merge_key(f)
                    given = contrib.get(key)
                    if given is None:
                        contrib[key] = {pos: f}
                    else:
                        given[pos] = f
                    touched.add(key)
            for f in gone.values():
                key = merge_key(f)
                given = contrib[key]
                if given.get(pos) is f:  # (not replaced by this list's finding of the key)
                    del given[pos]
                touched.add(key)
        # where each key is first met: the keys first met in a changed list moved in it, or left it; a key met in
        # a changed list may be met there before where it was first met
        moved = set(touched)
        for pos in changed:
            moved.update(firsts_at.pop(pos, ()))
        for key in moved:
            given = contrib.get(key)
            at = first.get(key)
            pos = min(given) if given else None
            if at is not None and at[0] == pos and pos not in changed:
                continue  # still first met in a list that is the previous one
            if at is not None:
                del first[key]
                if at[0] not in changed:
                    firsts_at[at[0]].discard(key)
            if pos is None:
                continue
            found = changed.get(pos)
            first[key] = (pos, found[id(given[pos])] if found is not None else _index_in(lists[pos], given[pos]))
            firsts_at.setdefault(pos, set()).add(key)
        for key in touched:
            given = contrib.get(key)
            if not given:
                contrib.pop(key, None)
                best.pop(key, None)
                regions.pop(key, None)
                continue
            cur, reaching = None, {}
            for pos in sorted(given):
                f = given[pos]
                reaching.setdefault((f.region.path, f.region.line, f.region.qualname), f.region)
                if cur is None or _rank(f) < _rank(cur):
                    cur = f
            best[key] = cur
            regions[key] = reaching
        self._touched = touched

    def findings(self) -> list:
        if self._previous is not None:
            self._merge_changes()
        if self._folds is not None:  # the next merge's to take: this one's lists only
            _LIST_FOLDS.clear()
            _LIST_FOLDS.update(self._folds)
        best, regions = self.best, self.regions
        for key in (best if self._touched is None else self._touched):
            f = best.get(key)
            if f is not None:
                f.regions_reaching = len(regions[key])
                f.other_regions = tuple(r for r in regions[key].values() if r != f.region)
        if self._lists is None:
            return sorted(best.values(), key=Finding.sort_key)  # (two of one sort key: in the order first met)
        first = self._first
        return [f for _, f in sorted(((f.sort_key(), first[key]), f) for key, f in best.items())]

    def memo(self) -> Optional[MergeMemo]:
        """What the next scan's merge folds against (after ``findings``), if this process keeps merges."""
        if self._lists is None or self._previous is not None:
            return None
        return MergeMemo(self._lists, self.best, self.regions, self._contrib, self._first, self._firsts_at)


def merge_of_state(state) -> Optional[MergeMemo]:
    """The merge of the walks an incremental state keeps, as the scan that made it merged them (its walks are
    in the order the scan merged them): what a warm process that read the state from disk keeps for the next
    edit's merge (resultcache: after answering from the result the state belongs to).  None for the pre-commit
    hook's, whose walks keep every path."""
    if not state.merged_per_key:
        return None
    merged = MergedFindings(remember=True)
    for _, _, _, result, _ in state.walks:
        merged.add(result[0])
    merged.findings()
    return merged.memo()


def keep_list_folds(state) -> None:
    """The folds of the lists of a state whose walks keep every path (the pre-commit hook's), with the files of
    their hazards, as the next merge takes them (_LIST_FOLDS): what a warm process that read the state from
    disk works out after answering from its result, so that the next edit does not (1.2 s of the hook's first
    edit answered after a hit; 0.1 s of the next ones)."""
    folds = {}
    for _, _, _, result, _ in state.walks:
        fold = _ListFold(result[0])
        fold.files()
        folds[id(result[0])] = fold
    _LIST_FOLDS.clear()
    _LIST_FOLDS.update(folds)


def drop_set_env_keys(findings: list, program: Program) -> list:
    """Reads of an os.environ key that the program itself sets (and never removes) are not reported: the key
    is present, and Dynamo guards ``.get``/``in`` of a present key.  Decided once the walk is over, from
    every module the scan indexed, so the answer does not depend on the order modules were loaded in."""
    return [f for f in findings
            if not (f.env_key and f.env_key in program.env_set and f.env_key not in program.env_removed)]


def attach_fix_candidates(findings: list) -> None:
    """Which fixers may apply, by what is legal in the regions reaching the hazard (``--diff`` shows the
    actual edits; the planner may still refuse one, e.g. when no fake can be derived)."""
    from compile_lint.rules import ALL_RULES

    for f in findings:
        rule = ALL_RULES.get(f.rule)
        if rule is None or f.severity == "note":
            continue
        fullgraph = any(r.fullgraph is True for r in (f.region,) + tuple(f.other_regions))
        out = []
        for fixer in rule.fixes:
            if fixer == "compiler-disable" and fullgraph:
                continue  # a disable is itself an error under fullgraph=True
            out.append({"fixer": fixer, "fix_point": f.fix_point})
        f.fixes = out


def add_cache_notes(findings: list, program: Program) -> list:
    """CL301: one note per cache-wrapped function on the path to a real hazard."""
    from compile_lint.rules import ALL_RULES

    rule = ALL_RULES["CL301"]
    notes: dict = {}
    by_path: dict = {}  # module path -> [(name, summary)], in program.modules order; rebuilt when it grows
    # (path, qualname) -> its decorated_def_at: the findings' paths share most frames (the sglang checkout's
    # 3,091 findings: 34,113 frames of 1,558 functions); a function found stays the first found (modules are
    # only added, at the end), one not found is asked again once modules were loaded since
    found: dict = {}
    for f in findings:
        if f.severity == "note":
            continue
        for i, fr in enumerate(f.trace[1:], start=1):
            key = (fr.path, fr.qualname)
            got = found.get(key)
            if got is not None and (got[0] is not None or got[1] == len(program.modules)):
                mod_fn = got[0]
            else:
                mod_fn = decorated_def_at(program, fr, by_path)
                found[key] = (mod_fn, len(program.modules))
            if mod_fn is None or "cached" not in mod_fn[1].flags:
                continue
            caller = f.trace[i - 1]
            if key in notes:
                continue
            notes[key] = Finding(
                rule=rule.code, severity="note", path=caller.path, line=caller.line, col=1,
                qualname=caller.qualname, message=rule.message.format(callee=fr.qualname),
                dynamo=rule.dynamo.describe(), region=f.region, trace=f.trace[:i], callee=fr.qualname,
                fix_point=fr.qualname,
            )
    return sorted(findings + list(notes.values()), key=Finding.sort_key)


def decorated_def_at(program: Program, frame, by_path: Optional[dict] = None):
    """(id, value) of the ``def`` a path's frame is in, if it is decorated (only a decorator makes it cached);
    else None, answered without reading a ModuleStub's summary."""
    from .modulestub import has_decorated_def

    if by_path is None:
        by_path = {}
    if by_path.get(None) != len(program.modules):  # first use, or modules were loaded since
        by_path.clear()
        for name, m in list(program.modules.items()):
            if m is not None:
                by_path.setdefault(m.path, []).append((name, m))
        by_path[None] = len(program.modules)
    for name, m in by_path.get(frame.path, ()):
        if has_decorated_def(m, frame.qualname):  # (one file under several names: the same defs, decorated alike)
            fid = f"{name}:{frame.qualname}"
            from .program import Scope

            return fid, program.function_value(fid, Scope(name))
    return None


def _selected(code: str, select: list, ignore: list) -> bool:
    if select and not any(code.startswith(s) for s in select):
        return False
    return not any(code.startswith(i) for i in ignore)


def select_and_suppress(findings: list, options, program: Program):
    by_path = {m.path: m for m in program.modules.values() if m is not None}
    kept, suppressed = [], []
    for f in findings:
        if not _selected(f.rule, options.select, options.ignore):
            continue
        if options.per_file_ignores and per_file_ignored(options.per_file_ignores, f.path, f.rule):
            continue
        if is_suppressed(f, by_path):
            suppressed.append(f)
            continue
        kept.append(f)
    if options.report_unused_suppressions and _selected("CL302", options.select, options.ignore):
        from .suppressions import unused_suppressions

        kept = sorted(kept + [f for f in unused_suppressions(suppressed, options, program)
                              if not per_file_ignored(options.per_file_ignores, f.path, f.rule)], key=Finding.sort_key)
    return kept, suppressed


def per_file_ignored(per_file_ignores: list, path: str, rule: str) -> bool:
    from .config import per_file_ignored as _pfi

    return bool(per_file_ignores) and _pfi(per_file_ignores, path, rule)


def _codes_match(codes, rule: str) -> bool:
    return any(c == "*" or rule.startswith(c) for c in codes)


def is_suppressed(f: Finding, by_path: dict) -> bool:
    m = by_path.get(f.path)
    if m is not None:
        if _codes_match(m.file_suppressions, f.rule):
            return True
        if _codes_match(m.suppressions.get(f.line, ()), f.rule):
            return True
    for fr in f.trace:
        mm = by_path.get(fr.path)
        if mm is not None and _codes_match(mm.suppressions.get(fr.line, ()), f.rule):
            return True
    return False


def relpath(path: str, roots: list) -> str:
    """Report paths relative to the scanned root they live under (absolute outside every root)."""
    key = (path, tuple(roots))
    hit = _RELPATH_MEMO.get(key)
    if hit is None:
        hit = _RELPATH_MEMO[key] = _relpath(path, roots)  # a report asks for the same few paths again and again
    return hit


_RELPATH_MEMO: dict = {}


def _relpath(path: str, roots: list) -> str:
    best = None
    for r in roots:
        try:
            rel = os.path.relpath(path, r)
        except ValueError:
            continue
        if not rel.startswith(".."):
            if best is None or len(rel) < len(best):
                best = rel
    return best if best is not None else path
