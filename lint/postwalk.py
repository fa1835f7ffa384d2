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
    keeps every finding by (rule, file, line), for the pre-commit hook."""

    def __init__(self, keep_paths_by_hazard: bool = False):
        self.best: dict = {}
        self.regions: dict = {}
        self.paths_by_hazard: Optional[dict] = {} if keep_paths_by_hazard else None

    def add(self, found: list) -> None:
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
            if (SEVERITY_ORDER[f.severity], len(f.conditions), len(f.trace), f.col) < (
                    SEVERITY_ORDER[cur.severity], len(cur.conditions), len(cur.trace), cur.col):
                best[key] = f

    def findings(self) -> list:
        out = []
        for key, f in self.best.items():
            f.regions_reaching = len(self.regions[key])
            f.other_regions = tuple(r for r in self.regions[key].values() if r != f.region)
            out.append(f)
        return sorted(out, key=Finding.sort_key)


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
