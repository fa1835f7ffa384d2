"""The static side of the real-code suite: what compile-lint says about each model's ``forward``.

One scan of the models' files with every model's ``forward`` as an entry point (``--entry``), the pinned
environment on the search path.  Per model: its findings (rule, severity, hazard line, the lines of its path)
and the functions the walk entered from its entry (``Reach.walk(visited=...)``), as (module, qualname).
This imports compile-lint only: the analyzer never imports the code it scans.
"""
from __future__ import annotations

from pathlib import Path

from compile_lint.dynamo.trace_rules import load_trace_rules
from compile_lint.engine import ScanOptions, scan
from compile_lint.program import split_id
from compile_lint.reach import Reach


def module_file(env_root: Path, module: str) -> Path:
    base = env_root.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _rel(path: str, root: str) -> str:
    p = str(Path(path).resolve())
    return p[len(root):] if p.startswith(root) else p


def analyse(cases: list, env_root: Path, cache_dir: Path | None = None, **options) -> dict:
    """{case name: {"findings": [...], "reached": {(module, qualname)}, "region": bool}} plus "_stats"."""
    env_root = Path(env_root).resolve()
    root = str(env_root) + "/"
    opts = ScanOptions(paths=sorted({module_file(env_root, c.module) for c in cases}), search_path=[env_root],
                       entries=[c.entry for c in cases], cache_dir=cache_dir, **options)
    result = scan(opts)
    entry_regions = [r for r in result.regions if r.kind == "entry-point"]
    by_case: dict = {}
    trace_rules = load_trace_rules(cache_dir=cache_dir)
    reach = Reach(result.program, trace_rules, import_roots=[env_root])
    refs = {}
    for case, region in zip(cases, entry_regions):
        visited: set = set()
        reach.walk(region, visited=visited)
        reached = {split_id(fid) for fid in visited}
        by_case[case.name] = {"findings": [], "reached": reached}
        refs[(_rel(region.path, root), region.line, region.qualname)] = case.name
    for f in result.findings:
        names = {refs.get((_rel(r.path, root), r.line, r.qualname)) for r in (f.region,) + tuple(f.other_regions)}
        row = {"rule": f.rule, "severity": f.severity, "path": _rel(f.path, root), "line": f.line,
               "callee": f.callee, "message": f.message,
               "conditions": [c.text for c in getattr(f, "conditions", ())],
               "trace": [(_rel(fr.path, root), fr.line) for fr in f.trace]}
        for name in names - {None}:
            by_case[name]["findings"].append(row)
    by_case["_stats"] = dict(result.stats)
    return by_case


__all__ = ["analyse", "module_file"]
