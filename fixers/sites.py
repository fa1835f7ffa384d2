"""From a finding to the place a fixer edits.

A finding's trace runs from the compiled function down to the hazard's function; each frame's line is the call
that leads on.  The fix point is in *your* code by default: the last frame inside the scanned files (the call
that leaves them), or, with ``--fix-in PKG``, the frames inside that package.  This module finds that call in
the summary (for what it resolves to) and in the libcst tree (for where to edit), and answers the questions
the fixers share: which module a file is, how a name is bound there, what a call resolves to.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import libcst as cst

from .source import Parsed, char_col, parse_file


@dataclass
class CallRef:
    """One call expression in a file, with what the engine says it calls."""

    path: str
    module: str  # dotted module name of the file
    scope: str  # qualname of the enclosing function ("<module>" at top level)
    node: cst.Call
    parsed: Parsed
    summary_site: object  # lint.summary.CallSite or None
    targets: frozenset  # abstract values of the callee (lint.values)

    @property
    def span(self):
        return self.parsed.pos(self.node)

    @property
    def line(self) -> int:
        return self.span[0]

    @property
    def code(self) -> str:
        return self.parsed.code(self.node)

    @property
    def callee_code(self) -> str:
        return self.parsed.code(self.node.func)


class Context:
    """Shared, memoised view of one scan for the planners."""

    def __init__(self, result, options):
        self.result = result
        self.options = options
        self.program = result.program
        self._path_module: dict = {}
        self._texts: dict = {}
        scanned = {}
        loc = getattr(self.program, "locator", None)
        for mod, (path, _pkg) in (getattr(loc, "scanned", None) or {}).items():
            scanned[_norm_path(path)] = mod
        self.scanned = scanned  # normalised path -> module

    # ---------------------------------------------------------------- files and modules
    def text(self, path: str) -> str:
        p = _norm_path(path)
        if p not in self._texts:
            self._texts[p] = Path(path).read_text(encoding="utf-8")
        return self._texts[p]

    def parsed(self, path: str) -> Parsed:
        return parse_file(path, self.text(path))

    def module_of_path(self, path: str) -> Optional[str]:
        p = _norm_path(path)
        if p in self.scanned:
            return self.scanned[p]
        if p in self._path_module:
            return self._path_module[p]
        found = None
        for name, m in list(self.program.modules.items()):
            if m is not None and m.path and _norm_path(m.path) == p:
                found = name
                break
        self._path_module[p] = found
        return found

    def is_package(self, module: str) -> bool:
        m = self.program.modules.get(module)
        return bool(m is not None and m.is_package)

    def editable(self, path: str) -> bool:
        """May a fixer edit this file?  The scanned files, and the packages named with --fix-in."""
        if _norm_path(path) in self.scanned:
            return True
        mod = self.module_of_path(path)
        if mod is None:
            return False
        return any(mod == pkg or mod.startswith(pkg + ".") for pkg in self.options.fix_in)

    def in_fix_scope(self, path: str) -> bool:
        """The fix point's file: scanned code by default; only the --fix-in packages when given."""
        if self.options.fix_in:
            mod = self.module_of_path(path)
            return bool(mod) and any(mod == pkg or mod.startswith(pkg + ".") for pkg in self.options.fix_in)
        return _norm_path(path) in self.scanned

    # ---------------------------------------------------------------- engine queries
    def function_summary(self, module: str, qualname: str):
        m = self.program.module(module)
        return m.functions.get(qualname) if m is not None else None

    def scope(self, module: str, qualname: str):
        from compile_lint.program import Scope

        fs = self.function_summary(module, qualname)
        return Scope(module, fs, f"{module}:{qualname}" if fs is not None else None)

    def eval(self, expr, module: str, qualname: str) -> frozenset:
        try:
            return self.program.eval(expr, self.scope(module, qualname))
        except Exception:  # the resolver is best-effort; a fixer then refuses
            return frozenset()

    def function_value(self, fid: str):
        from compile_lint.program import Scope, split_id

        try:
            return self.program.function_value(fid, Scope(split_id(fid)[0]))
        except Exception:
            return None

    def frame_fid(self, frame) -> Optional[str]:
        mod = self.module_of_path(frame.path)
        return f"{mod}:{frame.qualname}" if mod else None

    def is_cached(self, frame) -> bool:
        fid = self.frame_fid(frame)
        if fid is None:
            return False
        fv = self.function_value(fid)
        return fv is not None and "cached" in getattr(fv, "flags", ())

    # ---------------------------------------------------------------- call sites
    def call_at(self, path: str, scope_qual: str, line: int, into_fid: Optional[str] = None,
                col: Optional[int] = None, callee: Optional[str] = None) -> Optional[CallRef]:
        """The call on ``line`` of function ``scope_qual`` in ``path`` that leads into ``into_fid`` (or starts at
        ``col``, an ast byte column)."""
        module = self.module_of_path(path)
        if module is None:
            return None
        fs = self.function_summary(module, scope_qual)
        sites = [c for c in (fs.calls if fs is not None else ()) if c.line == line]
        chosen = None
        if col is not None:
            at = [c for c in sites if c.col == col]
            if callee:
                named = [c for c in at if any(_dotted_value(v) == callee for v in self.eval(c.func, module, scope_qual))]
                at = named or at
            if at:  # calls starting at the same column: `f()` inside `f().g()`; the innermost is the hazard's
                chosen = min(at, key=lambda c: ((c.end_line - c.line), c.end_col - c.col))
        if chosen is None and into_fid is not None:
            hits = [c for c in sites if any(_reaches(self, v, into_fid) for v in self.eval(c.func, module, scope_qual))]
            if hits:
                # the innermost call that reaches it (shortest span)
                chosen = min(hits, key=lambda c: ((c.end_line - c.line), c.end_col - c.col))
        if chosen is None and len(sites) == 1:
            chosen = sites[0]
        if chosen is None:
            return None
        parsed = self.parsed(path)
        node = _cst_call_for(parsed, chosen)
        if node is None:
            return None
        return CallRef(path, module, scope_qual, node, parsed, chosen, self.eval(chosen.func, module, scope_qual))

    def call_ref(self, path: str, node: cst.Call) -> Optional[CallRef]:
        """A CallRef for a libcst Call node (its summary site looked up by position)."""
        parsed = self.parsed(path)
        module = self.module_of_path(path)
        if module is None:
            return None
        scope = enclosing_function_qualname(parsed, node)
        fs = self.function_summary(module, scope)
        line, col, end_line, end_col = parsed.pos(node)
        site = None
        for c in (fs.calls if fs is not None else ()):
            lt = parsed.line_text(c.line)
            if c.line == line and char_col(lt, c.col) == col and c.end_line == end_line and \
                    char_col(parsed.line_text(c.end_line), c.end_col) == end_col:
                site = c
                break
        targets = self.eval(site.func, module, scope) if site is not None else frozenset()
        return CallRef(path, module, scope, node, parsed, site, targets)

    def outermost_chain_call(self, ref: CallRef) -> CallRef:
        """Climb from a call used as the receiver of a method call to the outermost call of the chain:
        ``get_mod("100")`` in ``get_mod("100").run(x)`` -> the whole expression."""
        node = ref.node
        p = ref.parsed
        while True:
            parent = p.parent(node)
            if isinstance(parent, cst.Attribute) and parent.value is node:
                gp = p.parent(parent)
                if isinstance(gp, cst.Call) and gp.func is parent:
                    node = gp
                    continue
            break
        if node is ref.node:
            return ref
        return self.call_ref(ref.path, node) or ref


def enclosing_function_qualname(parsed: Parsed, node) -> str:
    for enc in parsed.enclosing(node):
        if isinstance(enc, cst.FunctionDef):
            return parsed.qualname_of(enc)
    return "<module>"


def _cst_call_for(parsed: Parsed, site) -> Optional[cst.Call]:
    col = char_col(parsed.line_text(site.line), site.col)
    end_col = char_col(parsed.line_text(site.end_line), site.end_col)
    for n in parsed.calls_on_line(site.line):
        l0, c0, l1, c1 = parsed.pos(n)
        if (c0, l1, c1) == (col, site.end_line, end_col):
            return n
    return None


def _dotted_value(v) -> str:
    from compile_lint.values import External, Func

    if isinstance(v, Func):
        mod, _, qual = v.id.partition(":")
        return f"{mod}.{qual}" if mod else qual
    if isinstance(v, External):
        return v.name
    return ""


def _reaches(ctx: Context, v, fid: str) -> bool:
    from compile_lint.values import Class, Func, Instance, Partial

    if isinstance(v, Func):
        return v.id == fid or fid in v.wrappers
    if isinstance(v, Partial):
        return any(_reaches(ctx, t, fid) for t in v.target)
    if isinstance(v, Class):
        try:
            inits = ctx.program.member(v.id, "__init__", Instance(v.id))
        except Exception:
            return False
        return any(isinstance(i, Func) and i.id == fid for i in inits)
    if isinstance(v, Instance):
        try:
            return any(t.id == fid for t in ctx.program.callable_members(v))
        except Exception:
            return False
    return False


def _norm_path(p) -> str:
    try:
        return str(Path(p).resolve())
    except OSError:
        return str(p)


def user_frame_index(ctx: Context, finding) -> Optional[int]:
    """Index of the last trace frame in the fix scope (the frame whose call leaves it), or None."""
    idx = None
    for i, fr in enumerate(finding.trace):
        if ctx.in_fix_scope(fr.path):
            idx = i
        elif idx is not None and not ctx.options.fix_in:
            break
    if ctx.options.fix_in:
        # in the library: the outermost function of the package on the path
        for i, fr in enumerate(finding.trace):
            if ctx.in_fix_scope(fr.path):
                return i
        return None
    return idx
