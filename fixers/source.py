"""libcst plumbing shared by the fixers: parse once, find nodes by position, render declarative edits in one
pass (so untouched code keeps its bytes, comments and formatting), re-parse the result, diff, write atomically.
"""
from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from .model import (
    AddDecorator,
    AddImport,
    AppendToMethod,
    GeneratedBlock,
    InsertTopLevel,
    ReplaceNode,
    WrapDefInOp,
)


class FixError(Exception):
    """A fix cannot be rendered or written (the file changed, the output does not parse...)."""


# --------------------------------------------------------------------------------------------- parsed files
@dataclass
class Parsed:
    path: str
    text: str
    wrapper: MetadataWrapper
    positions: dict
    parents: dict

    @property
    def module(self) -> cst.Module:
        return self.wrapper.module

    def code(self, node) -> str:
        return self.module.code_for_node(node)

    def pos(self, node):
        p = self.positions[node]
        return (p.start.line, p.start.column, p.end.line, p.end.column)

    def parent(self, node):
        return self.parents.get(node)

    def line_text(self, line: int) -> str:
        lines = self.text.splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def calls_on_line(self, line: int) -> list:
        return [n for n, p in self.positions.items() if isinstance(n, cst.Call) and p.start.line == line]

    def calls_between(self, line: int, end_line: int) -> list:
        return [n for n, p in self.positions.items()
                if isinstance(n, cst.Call) and line <= p.start.line <= end_line]

    def node_at(self, span: tuple, kind=cst.BaseExpression, code: Optional[str] = None):
        for n, p in self.positions.items():
            if isinstance(n, kind) and (p.start.line, p.start.column, p.end.line, p.end.column) == tuple(span):
                if code is None or self.code(n) == code:
                    return n
        return None

    def enclosing(self, node, kinds=(cst.FunctionDef, cst.ClassDef)) -> list:
        """Enclosing defs, innermost first."""
        out = []
        cur = self.parents.get(node)
        while cur is not None:
            if isinstance(cur, kinds):
                out.append(cur)
            cur = self.parents.get(cur)
        return out

    def qualname_of(self, node) -> str:
        """Python-style qualname of a FunctionDef/ClassDef (``C.m``, ``f.<locals>.g``)."""
        parts = [node.name.value]
        for enc in self.enclosing(node):
            if isinstance(enc, cst.FunctionDef):
                parts.append("<locals>")
            parts.append(enc.name.value)
        return ".".join(reversed(parts))

    def statement_of(self, node):
        """The innermost statement holding ``node``."""
        cur = node
        while cur is not None and not isinstance(cur, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            cur = self.parents.get(cur)
        return cur

    def top_statement_of(self, node):
        cur = node
        while cur is not None and self.parents.get(cur) is not self.module:
            cur = self.parents.get(cur)
        return cur


_PARSED: dict = {}


def parse_file(path: str, text: Optional[str] = None) -> Parsed:
    """Parse ``path`` (or ``text``) with position and parent metadata; memoised on (path, text)."""
    if text is None:
        text = Path(path).read_text(encoding="utf-8")
    key = (str(path), text)
    hit = _PARSED.get(key)
    if hit is not None:
        return hit
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = dict(wrapper.resolve(PositionProvider))
    parents = dict(wrapper.resolve(ParentNodeProvider))
    p = Parsed(str(path), text, wrapper, positions, parents)
    if len(_PARSED) > 256:
        _PARSED.clear()
    _PARSED[key] = p
    return p


def char_col(line_text: str, byte_col: int) -> int:
    """ast column (UTF-8 bytes) -> libcst column (characters)."""
    return len(line_text.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


# ------------------------------------------------------------------------------------------- module layout
def _is_import(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)


def _is_docstring(stmt) -> bool:
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def leading_import_end(body) -> int:
    """Index after the file's leading block of docstring / imports (where new imports go)."""
    end = 0
    for i, stmt in enumerate(body):
        if _is_docstring(stmt) and i == 0:
            end = 1
            continue
        if _is_import(stmt):
            end = i + 1
            continue
        break
    return end


def _norm(code: str) -> str:
    return " ".join(code.split())


def top_level_codes(module: cst.Module) -> set:
    return {_norm(module.code_for_node(s)) for s in module.body}


def module_binds(module: cst.Module, name: str) -> bool:
    """Whether a top-level statement binds ``name`` (def, class, assignment, import)."""
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)) and stmt.name.value == name:
            return True
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if isinstance(s, (cst.Assign, cst.AnnAssign, cst.AugAssign)):
                    targets = [t.target for t in s.targets] if isinstance(s, cst.Assign) else [s.target]
                    for t in targets:
                        for n in _names_in_target(t):
                            if n == name:
                                return True
                if isinstance(s, (cst.Import, cst.ImportFrom)) and not isinstance(s.names, cst.ImportStar):
                    for a in s.names:
                        bound = a.evaluated_alias or a.evaluated_name.split(".")[0]
                        if bound == name:
                            return True
    return False


def _names_in_target(t) -> list:
    if isinstance(t, cst.Name):
        return [t.value]
    if isinstance(t, (cst.Tuple, cst.List)):
        out = []
        for e in t.elements:
            out += _names_in_target(e.value)
        return out
    return []


def top_level_assignment(module: cst.Module, name: str) -> Optional[str]:
    """Code of the value of a top-level ``name = <value>``, if exactly one such statement exists."""
    found = []
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for s in stmt.body:
                if isinstance(s, cst.Assign) and len(s.targets) == 1 and isinstance(s.targets[0].target, cst.Name) \
                        and s.targets[0].target.value == name:
                    found.append(module.code_for_node(s.value))
    return found[0] if len(found) == 1 else None


# ------------------------------------------------------------------------------------------------- render
def _statements(code: str) -> list:
    return list(cst.parse_module(code).body)


def _with_blank(stmt, n: int):
    return stmt.with_changes(leading_lines=[cst.EmptyLine()] * n)


class _Renderer(cst.CSTTransformer):
    def __init__(self, parsed: Parsed, edits: list):
        super().__init__()
        self.p = parsed
        self.replace: dict = {}
        self.decorators: dict = {}
        self.appends: dict = {}
        self.imports: list = []
        self.inserts: list = []
        self.wraps: dict = {}
        self.stack: list = []
        self.unmatched: list = []
        for e in edits:
            if isinstance(e, ReplaceNode):
                node = parsed.node_at(e.span(), code=e.old)
                if node is None:
                    self.unmatched.append(e)
                    continue
                self.replace[node] = e.new
            elif isinstance(e, AddDecorator):
                self.decorators.setdefault(e.func_qualname, [])
                if e.code not in self.decorators[e.func_qualname]:
                    self.decorators[e.func_qualname].append(e.code)
            elif isinstance(e, AppendToMethod):
                key = f"{e.class_qualname}.{e.method}"
                self.appends.setdefault(key, [])
                if e.code not in self.appends[key]:
                    self.appends[key].append(e.code)
            elif isinstance(e, AddImport):
                if e.code not in self.imports:
                    self.imports.append(e.code)
            elif isinstance(e, InsertTopLevel):
                if (e.after_line, e.code) not in self.inserts:
                    self.inserts.append((e.after_line, e.code))
            elif isinstance(e, WrapDefInOp):
                self.wraps.setdefault(e.name, e)

    # qualname tracking
    def visit_ClassDef(self, node):
        self.stack.append(node.name.value)

    def leave_ClassDef(self, original, updated):
        self.stack.pop()
        return updated

    def visit_FunctionDef(self, node):
        self.stack.append(node.name.value)

    def _qual(self) -> str:
        return ".".join(self.stack)

    def leave_FunctionDef(self, original, updated):
        plain = self._qual()
        self.stack.pop()
        # Frame qualnames spell closures with "<locals>" segments
        loc_qual = self.p.qualname_of(original) if original in self.p.positions else plain
        for q in dict.fromkeys((plain, loc_qual)):
            for code in reversed(self.decorators.get(q, [])):
                have = [_norm(self.p.code(d.decorator)) for d in original.decorators]
                if _norm(code) in have:
                    continue
                deco = cst.Decorator(decorator=cst.parse_expression(code))
                updated = updated.with_changes(decorators=[deco, *updated.decorators])
            for code in self.appends.get(q, []):
                body = updated.body
                if not isinstance(body, cst.IndentedBlock):
                    continue
                have = {_norm(cst.Module(body=[]).code_for_node(s)) for s in body.body}
                new = [s for s in _statements(code) if _norm(cst.Module(body=[]).code_for_node(s)) not in have]
                if new:
                    updated = updated.with_changes(body=body.with_changes(body=[*body.body, *new]))
        if not self.stack and plain in self.wraps and not any(
                _norm(self.p.code(d.decorator)).rsplit(".", 1)[-1] == "overload" for d in original.decorators):
            return self._wrap(updated, self.wraps.pop(plain))
        return updated

    @staticmethod
    def _wrap(fn, w):
        """A module-level def -> its renamed body, the op code, and the public def calling the op."""
        impl = fn.with_changes(name=cst.Name(w.impl))
        body = fn.body
        doc = []
        if isinstance(body, cst.IndentedBlock) and body.body and _is_docstring(body.body[0]):
            doc = [body.body[0]]
        new_body = doc + _statements(w.public_body)
        public = fn.with_changes(decorators=[], leading_lines=[cst.EmptyLine()] * 2,
                                 body=cst.IndentedBlock(body=new_body))
        out = [impl] + [_with_blank(s, 2) for s in _statements(w.op_code)] + [public]
        if w.after:
            out += [_with_blank(s, 2) for s in _statements(w.after)]
        return cst.FlattenSentinel(out)

    def on_leave(self, original, updated):
        if original in self.replace:
            new = cst.parse_expression(self.replace[original])
            if getattr(updated, "lpar", None) and hasattr(new, "lpar"):
                new = new.with_changes(lpar=updated.lpar, rpar=updated.rpar)
            return new
        return super().on_leave(original, updated)

    def leave_Module(self, original, updated):
        body = list(updated.body)
        existing = {_norm(updated.code_for_node(s)) for s in body}
        # where each original top-level statement sits, to place "after line N" inserts
        spans = []
        for s in original.body:
            p = self.p.positions.get(s)
            spans.append((p.start.line, p.end.line) if p else (0, 0))
        after: dict = {}
        for line, code in self.inserts:
            stmts = [s for s in _statements(code) if _norm(cst.Module(body=[]).code_for_node(s)) not in existing]
            if not stmts:
                continue
            if line == -1:
                after.setdefault("imports", []).extend(stmts)
                continue
            idx = None
            for i, (a, b) in enumerate(spans):
                if a <= line <= b:
                    idx = i
            if idx is None:
                idx = len(body) - 1
            after.setdefault(idx, []).extend(stmts)
        new_body = []
        imp_end = leading_import_end(body)
        new_imports = []
        for code in self.imports:
            for s in _statements(code):
                if _norm(cst.Module(body=[]).code_for_node(s)) not in existing:
                    new_imports.append(s.with_changes(leading_lines=[]))
                    existing.add(_norm(cst.Module(body=[]).code_for_node(s)))
        for i, s in enumerate(body):
            if i == imp_end:
                new_body += new_imports + self._spaced(after.get("imports", []), new_body + new_imports)
            new_body.append(s)
            if i in after:
                new_body += self._spaced(after[i], new_body)
        if imp_end >= len(body):
            new_body += new_imports + self._spaced(after.get("imports", []), new_body + new_imports)
        return updated.with_changes(body=new_body)

    @staticmethod
    def _spaced(stmts: list, before: list) -> list:
        out = []
        prev = before[-1] if before else None
        for s in stmts:
            if prev is None:
                n = 0
            elif isinstance(prev, cst.BaseCompoundStatement) or isinstance(s, cst.BaseCompoundStatement):
                n = 2
            elif _is_import(prev) and not _is_import(s):
                n = 1
            else:
                n = 0
            out.append(_with_blank(s, n))
            prev = s
        return out


def render(path: str, original: Optional[str], edits: list) -> str:
    """The new text of ``path`` after ``edits`` (all for this path), rendered on ``original``."""
    gen = [e for e in edits if isinstance(e, GeneratedBlock)]
    other = [e for e in edits if not isinstance(e, GeneratedBlock)]
    text = original
    if gen:
        text = render_generated(path, text, gen)
    if other:
        if text is None:
            raise FixError(f"{path}: cannot edit a file that does not exist")
        parsed = parse_file(path, text)
        r = _Renderer(parsed, other)
        if r.unmatched:
            e = r.unmatched[0]
            raise FixError(f"{path}:{e.line}: `{e.old}` is no longer at the position the scan saw")
        text = parsed.module.visit(r).code
        if r.wraps:
            raise FixError(f"{path}: `{next(iter(r.wraps))}` is no longer a module-level function")
    if text is None:
        raise FixError(f"{path}: nothing to render")
    check_parses(path, text)
    return text


GENERATED_HEADER = '''"""Op boundaries generated by compile-lint (`compile-lint fix`, fixer "op-boundary").

Each op wraps a library call that torch.compile cannot trace (JIT builds, subprocesses, file I/O, opaque native
functions): Dynamo records one opaque node instead of tracing into it.  A fake (meta) function is registered
only when the output could be derived soundly; see `compile-lint rule` / docs/fixers.md.  Edit with care: a
later `compile-lint fix` only adds missing ops to this file.
"""
'''


def render_generated(path: str, original: Optional[str], blocks: list) -> str:
    """Create or extend the generated op module: add the imports and blocks it lacks, keep everything else."""
    imports: list = []
    for b in blocks:
        for imp in b.imports:
            if imp not in imports:
                imports.append(imp)
    if original is None:
        parts = [GENERATED_HEADER, "\n".join(imports) + "\n"]
        seen = set()
        for b in blocks:
            if b.key in seen:
                continue
            seen.add(b.key)
            parts.append("\n\n" + b.code.strip("\n") + "\n")
        return "".join(parts)
    module = cst.parse_module(original)
    have_imports = {_norm(module.code_for_node(s)) for s in module.body if _is_import(s)}
    missing_imports = [i for i in imports if _norm(i) not in have_imports]
    text = original
    if missing_imports:
        body = list(module.body)
        end = leading_import_end(body)
        new = [s.with_changes(leading_lines=[]) for i in missing_imports for s in _statements(i)]
        if end < len(body):
            body = body[:end] + new + body[end:]
        else:
            body = body + new
        text = module.with_changes(body=body).code
        module = cst.parse_module(text)
    seen = set()
    for b in blocks:
        if b.key in seen or module_binds(module, b.key):
            continue
        seen.add(b.key)
        text = text.rstrip("\n") + "\n\n\n" + b.code.strip("\n") + "\n"
    return text


def check_parses(path: str, text: str) -> None:
    try:
        cst.parse_module(text)
        compile(text, str(path), "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as e:
        raise FixError(f"{path}: the fixed text does not parse ({e}); nothing written") from None


# ----------------------------------------------------------------------------------------------- output
def unified_diff(path: str, old: Optional[str], new: str, label: Optional[str] = None) -> str:
    label = label or str(path)
    a = (old or "").splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n"
    if b and not b[-1].endswith("\n"):
        b[-1] += "\n"
    return "".join(difflib.unified_diff(a, b, "/dev/null" if old is None else f"a/{label}", f"b/{label}"))


def atomic_write(path: str, text: str) -> None:
    """Write ``text`` (UTF-8, newlines as given) atomically: see ``compile_lint.atomic``."""
    from compile_lint.atomic import write_atomic

    Path(path).parent.mkdir(parents=True, exist_ok=True)  # a generated module may open a new folder
    write_atomic(path, text.encode("utf-8"))

