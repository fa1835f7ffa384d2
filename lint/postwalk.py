"""After the walk: the regions' findings merged into one per hazard site and rule, then what the report holds of
them (environment reads the program itself sets dropped, CL301's notes on cached functions, the fixers that may
apply, ``--select``/``--ignore``, per-file ignores and ``noqa`` comments), and the report's relative paths."""
from __future__ import annotations

import os
from typing import Optional

from .findings import SEVERITY_ORDER, Finding
from .program import Program


class MergedFindings:
    """The walk's findings, merged as each region's arrive: one finding per hazard site and rule, with the
    shortest path, and the regions reaching it.  Merging as they come keeps memory to the distinct hazards
    (a whole site-packages: 357,090 findings from the walk, 3,280 reported).  ``paths_by_hazard`` (when asked for)
    keeps every finding by (rule, file, line), for the pre-commit hook.  In a warm process (keep_merges) the
    regions' lists are merged at the end instead, from the previous scan's merge (``_fold``)."""

    def __init__(self, keep_paths_by_hazard: bool = False):
        self.best: dict = {}
        self.regions: dict = {}
        self.paths_by_hazard: Optional[dict] = {} if keep_paths_by_hazard else None
        self._lists: Optional[list] = None  # (for_scan in a warm process: the lists, merged at the end)
        self.added = 0  # findings added (the progress line's count while the merge waits for the end)

    @classmethod
    def for_scan(cls, keep_paths_by_hazard: bool = False) -> "MergedFindings":
        """The merge of a whole scan's regions: in a warm process, made at the end from the previous scan's."""
        merged = cls(keep_paths_by_hazard)
        if _KEPT is not None and not keep_paths_by_hazard:
            merged._lists = []
        return merged

    def count(self) -> int:
        """The distinct hazards so far; in a warm process, whose merge waits for the end, the findings added."""
        return len(self.best) if self._lists is None else self.added

    def add(self, found: list) -> None:
        self.added += len(found)
        if self._lists is not None:
            self._lists.append(found)
            return
        best, regions, paths = self.best, self.regions, self.paths_by_hazard
        region = region_key = None  # (a region's findings share its RegionRef: its key made once)
        for f in found:
            if paths is not None:
                paths.setdefault((f.rule, f.path, f.line), []).append(f)
            # one report per rule, line and fix point: `with FileLock(p):` is one hazard; reached through two
            # cached loaders it is two findings, since fixing one loader leaves the other path
            key = (f.rule, f.path, f.line, f.fix_point)
            if f.region is not region:
                region = f.region
                region_key = (region.path, region.line, region.qualname)
            reaching = regions.get(key)
            if reaching is None:
                regions[key] = {region_key: region}
                best[key] = f
                continue
            if region_key not in reaching:
                reaching[region_key] = region
            cur = best[key]
            # the most certain report wins (an error; then the warning asking for the fewest conditions)
            if _rank(f) < _rank(cur):
                best[key] = f

    def findings(self) -> list:
        if self._lists is not None:
            self.best, self.regions = _fold(self._lists)
        out = []
        for key, f in self.best.items():
            f.regions_reaching = len(self.regions[key])
            f.other_regions = tuple(r for r in self.regions[key].values() if r != f.region)
            out.append(f)
        return sorted(out, key=Finding.sort_key)


def _rank(f: Finding) -> tuple:
    return SEVERITY_ORDER[f.severity], len(f.conditions), len(f.trace), f.col


# ------------------------------------------------------------------ a warm process (lint/daemon.py)
# Merging a daemon's leaf-edit answer folded the 357,000 per-region findings of the bench site again, most of
# them the very lists of the previous answer (a region reused keeps its list; a replay keeps its findings):
# 0.6 s of a 3 s answer.  A warm process keeps the previous scan's merge: per position in the scan's order,
# the region's list and its findings by hazard key, each key's positions, and each key's merge; a scan whose
# lists are as many folds again only the keys of the positions whose list is another (or holds other
# findings), each from its positions in order -- what folding every list again gives, since a key's merge
# depends only on its own findings, in order.
_KEPT: Optional[list] = None  # None: not a warm process; else [] or [the previous scan's _Fold]


def keep_merges() -> None:
    global _KEPT
    if _KEPT is None:
        _KEPT = []


class _Fold:
    __slots__ = ("lists", "maps", "index", "best", "regions")

    def __init__(self, lists: list):
        self.lists = list(lists)
        self.maps = [_by_key(found) for found in lists]  # position -> key -> [(finding, region key, region)]
        self.index: dict = {}  # key -> its positions, ascending
        for p, m in enumerate(self.maps):
            for k in m:
                self.index.setdefault(k, []).append(p)
        self.best: dict = {}
        self.regions: dict = {}


def _by_key(found: list) -> dict:
    out: dict = {}
    region = region_key = None
    for f in found:
        if f.region is not region:
            region = f.region
            region_key = (region.path, region.line, region.qualname)
        out.setdefault((f.rule, f.path, f.line, f.fix_point), []).append((f, region_key, region))
    return out


def _fold(lists: list) -> tuple:
    """(best, regions) of the scan whose regions' lists are ``lists``, as MergedFindings.add gives them."""
    import operator
    from bisect import insort

    prev = _KEPT.pop() if _KEPT else None  # (taken out while it changes: a fold interrupted leaves none)
    if prev is None or len(prev.lists) != len(lists):
        fold = _Fold(lists)
        touched = list(fold.index)
    else:
        fold, touched = prev, set()
        for p, (old, new) in enumerate(zip(prev.lists, lists)):
            if old is new or (len(old) == len(new) and all(map(operator.is_, old, new))):
                fold.lists[p] = new
                continue
            for k in fold.maps[p]:
                touched.add(k)
                fold.index[k].remove(p)
            m = fold.maps[p] = _by_key(new)
            fold.lists[p] = new
            for k in m:
                touched.add(k)
                insort(fold.index.setdefault(k, []), p)
    for k in touched:
        positions = fold.index.get(k)
        if not positions:
            del fold.index[k]
            fold.best.pop(k, None)
            fold.regions.pop(k, None)
            continue
        best, reaching = None, {}
        for p in positions:
            for f, region_key, region in fold.maps[p][k]:
                if region_key not in reaching:
                    reaching[region_key] = region
                if best is None or _rank(f) < _rank(best):
                    best = f
        fold.best[k], fold.regions[k] = best, reaching
    if touched and fold is prev:
        # the keys in the order they first come, as a fold of every list makes them (a key's first position
        # may have moved): findings on one line and column under two fix points keep that order in the
        # report (its sort is stable)
        order: dict = {}
        for m in fold.maps:
            order.update(dict.fromkeys(m))
        fold.best = {k: fold.best[k] for k in order}
        fold.regions = {k: fold.regions[k] for k in order}
    _KEPT.append(fold)
    return fold.best, fold.regions


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
