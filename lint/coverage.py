"""What a scan analysed, and what it could not: part of the result, so that "no findings" is never said of a
scan that saw nothing.

- **Regions**: every compile call found, whether its target was resolved (and walked) or not; each unresolved
  one with the reason (``pipe.unet`` comes from ``diffusers``, which is not on the search path; a parameter;
  a value made at run time).
- **Libraries**: top-level packages that the indexed modules import and that are nowhere on the search path,
  with the places that import them.  Calls into them are not followed: whatever they do is not reported.
- **Calls**: the share of call sites on the walked paths whose callee could not be resolved.

Computed after the walk from the regions, the summaries already loaded and the locator; nothing is parsed.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from .program import STDLIB

# How many importing places to keep per missing library (the count is kept in full).
MAX_IMPORTERS = 3


@dataclass
class MissingLibrary:
    name: str  # top-level package
    importers: list = field(default_factory=list)  # "path:line" of the first few imports
    count: int = 0  # imports of it in the indexed modules
    needed_by_regions: int = 0  # unresolved regions it would explain
    from_scanned: bool = False  # imported by a scanned file (the user's code), not only by a library

    def to_dict(self, rel) -> dict:
        return {"name": self.name, "imported_by": [rel(x) for x in self.importers], "imports": self.count,
                "regions": self.needed_by_regions, "from_scanned_files": self.from_scanned}


@dataclass
class UnanalysedRegion:
    path: str
    line: int
    kind: str
    what: str  # the compiled expression as written
    reason: str
    library: Optional[str] = None  # the missing library that explains it, if one does

    def to_dict(self, rel) -> dict:
        return {"path": rel(self.path), "line": self.line, "kind": self.kind, "target": self.what,
                "reason": self.reason, "library": self.library}


@dataclass
class Coverage:
    interpreter: str
    regions_found: int = 0
    regions_resolved: int = 0
    unresolved: list = field(default_factory=list)  # UnanalysedRegion
    missing_libraries: list = field(default_factory=list)  # MissingLibrary, most relevant first
    call_sites: int = 0
    unresolved_calls: int = 0

    @property
    def complete(self) -> bool:
        """Every region found was analysed."""
        return not self.unresolved

    @property
    def unresolved_ratio(self) -> float:
        return round(self.unresolved_calls / self.call_sites, 4) if self.call_sites else 0.0

    def to_dict(self, rel) -> dict:
        return {"complete": self.complete, "interpreter": self.interpreter,
                "regions_found": self.regions_found, "regions_resolved": self.regions_resolved,
                "regions_unresolved": [u.to_dict(rel) for u in self.unresolved],
                "missing_libraries": [m.to_dict(rel) for m in self.missing_libraries],
                "call_sites": self.call_sites, "unresolved_calls": self.unresolved_calls,
                "unresolved_ratio": self.unresolved_ratio}


class _Importable:
    """Can a top-level module be imported from the search path?  Source packages and modules through the
    program's locator; compiled extensions (``_C.cpython-311-x86_64-linux-gnu.so``) and ``.pth``-less
    namespace directories by a look at each root."""

    def __init__(self, locator, search_path: list, opaque: frozenset):
        self.locator = locator
        self.roots = [Path(p) for p in search_path if p and os.path.isdir(p)]
        self.opaque = opaque
        self._memo: dict = {}

    def __call__(self, top: str) -> bool:
        hit = self._memo.get(top)
        if hit is None:
            hit = self._memo[top] = self._check(top)
        return hit

    def _check(self, top: str) -> bool:
        if not top or top in STDLIB or top in self.opaque or top in sys.builtin_module_names:
            return True
        if self.locator.find(top) is not None:
            return True
        for root in self.roots:
            try:
                names = os.listdir(root)
            except OSError:
                continue
            if any(n == top or (n.startswith(top + ".") and n.endswith((".so", ".pyd", ".pyc"))) for n in names):
                return True
        return False


def _import_sites(summary):
    """(top-level module, line) of every import a module summary records (module level and in functions)."""
    kept = getattr(summary, "import_sites", None)  # a module an incremental scan did not load (ModuleStub)
    if kept is not None:
        yield from kept
        return
    for bindings in summary.bindings.values():
        for b in bindings:
            if b.kind == "import" and b.value and isinstance(b.value[0], str):
                yield b.value[0].split(".")[0], b.line
    for module, _guards in summary.star_imports:
        yield module.split(".")[0], 0
    for f in summary.functions.values():
        for e in f.effects:
            if e.kind == "import" and isinstance(e.detail, str):
                yield e.detail.split(".")[0], e.line


def _head(expr):
    while expr and expr[0] in ("attr", "call", "sub"):
        expr = expr[1]
    return expr


def _origin(expr, program, module: str, function: Optional[str], depth: int = 0):
    """Where the head name of ``expr`` comes from: ("import", module), ("param", name), ("local", name) or
    None.  Follows local assignments (``pipe = Pipeline.from_pretrained(...)``) a few steps."""
    head = _head(expr)
    if not head or head[0] != "name" or depth > 4:
        if head and head[0] in ("modref",):
            return ("import", head[1])
        if head and head[0] == "importfrom":
            return ("import", head[1])
        return None
    name = head[1]
    m = program.module(module) if module else None
    if m is None:
        return None
    f = m.functions.get(function) if function else None
    if f is not None:
        if name in f.params or name in f.kwonly or name in (f.vararg, f.kwarg):
            return ("param", name)
        for e in f.locals.get(name, ()):
            o = _origin(e, program, module, function, depth + 1)
            if o is not None:
                return o
        if name in f.locals:
            return ("local", name)
    top = m.functions.get("<module>")
    for b in m.bindings.get(name, ()):
        if b.kind == "import":
            return ("import", b.value[0] if len(b.value) < 3 else b.value[2])
        if b.kind == "assign" and top is not None:
            o = _origin(b.value, program, module, None, depth + 1)
            if o is not None:
                return o
    return None


def explain(u, program, importable, interpreter: str) -> UnanalysedRegion:
    """Why a compile call's target could not be resolved, in words a user can act on."""
    what = u.text
    lead = f"`{what}` is not resolvable"
    if u.registry:
        top = u.registry.split(".")[0]
        if not importable(top):
            return UnanalysedRegion(u.path, u.line, u.kind, what,
                                    f"{u.kind}() compiles a model chosen at run time from `{u.registry}`'s registry, "
                                    f"and `{top}` is not importable from {interpreter}; pass --python or "
                                    f"--search-path", top)
        return UnanalysedRegion(u.path, u.line, u.kind, what,
                                f"{u.kind}() compiles a model chosen at run time, and `{u.registry}`'s registry "
                                f"names none that resolves (--model CLASS picks one)")
    origin = _origin(u.expr, program, u.module, u.function)
    if origin is not None and origin[0] == "import":
        top = origin[1].split(".")[0]
        if not importable(top):
            return UnanalysedRegion(u.path, u.line, u.kind, what,
                                    f"{lead}: `{top}` is not importable from {interpreter}; pass --python or "
                                    f"--search-path", top)
        return UnanalysedRegion(u.path, u.line, u.kind, what,
                                f"{lead}: it comes from `{origin[1]}`, but what it refers to there could not be "
                                f"worked out; name the function with --entry MODULE:QUALNAME")
    if origin is not None and origin[0] == "param":
        return UnanalysedRegion(u.path, u.line, u.kind, what,
                                f"{lead}: `{origin[1]}` is a parameter of `{u.function}`, known only at run time; "
                                f"name the compiled function with --entry MODULE:QUALNAME")
    return UnanalysedRegion(u.path, u.line, u.kind, what,
                            f"{lead}: its value is made at run time; name the compiled function with "
                            f"--entry MODULE:QUALNAME")


def compute(regions: list, unresolved: list, program, locator, search_path: list, interpreter: str,
            scanned: frozenset, reach_stats, opaque: frozenset) -> Coverage:
    importable = _Importable(locator, search_path, opaque)
    cov = Coverage(interpreter=interpreter)
    cov.regions_resolved = sum(1 for r in regions if r.entries)
    cov.unresolved = [explain(u, program, importable, interpreter) for u in unresolved]
    # a region without entries that the finder did not record (an entry point's class without forward)
    recorded = {(u.path, u.line) for u in unresolved}
    for r in regions:
        if not r.entries and (r.path, r.line) not in recorded:
            cov.unresolved.append(UnanalysedRegion(r.path, r.line, r.kind, r.qualname,
                                                   f"`{r.qualname}` has no function to walk"))
    cov.regions_found = cov.regions_resolved + len(cov.unresolved)
    missing: dict = {}
    for name, m in list(program.modules.items()):
        if m is None or not m.path:
            continue
        for top, line in _import_sites(m):
            if importable(top):
                continue
            lib = missing.get(top)
            if lib is None:
                lib = missing[top] = MissingLibrary(top)
            lib.count += 1
            in_scanned = str(m.path) in scanned
            if in_scanned and not lib.from_scanned:
                lib.from_scanned = True
                lib.importers = []  # the user's own imports first
            if len(lib.importers) < MAX_IMPORTERS and (in_scanned or not lib.from_scanned):
                lib.importers.append(f"{m.path}:{line}")
    for u in cov.unresolved:
        if u.library and u.library in missing:
            missing[u.library].needed_by_regions += 1
        elif u.library:
            missing[u.library] = MissingLibrary(u.library, [f"{u.path}:{u.line}"], 1, 1, True)
    cov.missing_libraries = sorted(missing.values(),
                                   key=lambda x: (-x.needed_by_regions, not x.from_scanned, -x.count, x.name))
    cov.call_sites = reach_stats.call_sites
    cov.unresolved_calls = reach_stats.unresolved_calls
    return cov


def text_lines(cov: Coverage, rel) -> list:
    """The report's closing section: what was analysed."""
    if cov.unresolved:
        lines = [f"Coverage: {cov.regions_found} compiled region(s) found, {cov.regions_resolved} analysed, "
                 f"{len(cov.unresolved)} could not be analysed:"]
    else:
        lines = [f"Coverage: {cov.regions_found} compiled region(s) found, all analysed."]
    for u in cov.unresolved:
        lines.append(f"  {rel(u.path)}:{u.line}: {u.kind}: {u.reason}")
    libs = cov.missing_libraries
    if libs:
        lines.append(f"Libraries not found on the search path ({len(libs)}; calls into them are not followed, "
                     f"their hazards are not reported):")
        yours = [m for m in libs if m.from_scanned or m.needed_by_regions]
        for m in yours[:10]:
            where = ", ".join(rel(x) for x in m.importers)
            more = f" and {m.count - len(m.importers)} more" if m.count > len(m.importers) else ""
            lines.append(f"  {m.name} (imported at {where}{more})")
        rest = [m.name for m in libs if m not in yours[:10]]
        if rest:
            names = ", ".join(rest[:8]) + (f" and {len(rest) - 8} more" if len(rest) > 8 else "")
            lines.append(f"  imported by libraries: {names} (--format json lists where)")
    if cov.call_sites:
        lines.append(f"Unresolved calls on the walked paths: {cov.unresolved_calls} of {cov.call_sites} "
                     f"({100 * cov.unresolved_ratio:.1f} %).")
    return lines
