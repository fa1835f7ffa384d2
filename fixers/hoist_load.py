"""hoist-load: run the JIT load once, outside the traced path, and let the traced code read the stored result.

## What it does
- **Cached loaders without arguments** (``@functools.cache def get_module(): ...``, a cached method on a
  module-level object): ``_GET_MODULE = get_module()`` at import time, right after what it needs is defined,
  and every ``get_module()`` inside functions of the file reads ``_GET_MODULE``.  With ``hoist-to = "init"``
  (or when the loader is reached through ``self``) the result is stored in the owning object's ``__init__``
  (``self._get_module = get_module()``) and the methods read ``self._get_module``.
- **Keyed loaders** (``get_fp4_quantization_module("100")``, a dict dispatch inside): hoisted only when every
  key is a constant at the call site, one stored result per key (``_GET_FP4_QUANTIZATION_MODULE_100``).  When
  your code calls a one-line library forwarder (``fp4_quantize(y, "100")`` whose body is
  ``return get_fp4_quantization_module(backend).fp4_quantize(x)``), the forwarder is inlined at the call site
  so the key becomes visible: ``_GET_FP4_QUANTIZATION_MODULE_100.fp4_quantize(y)``.
- **Build chains** (``gen_norm_module().build_and_load()`` with constant arguments): hoisted the same way
  (``_NORM_MODULE``).

Hoisting removes the subprocess / file-system / lock hazards of the load (``nvcc --version``, ``Path.exists``,
``FileLock``) but **not** an opaque-callable hazard: what the loaded module returns (a ``tvm_ffi.Function``)
is still called in the trace.  Under ``fullgraph=True`` combine it with op-boundary (measured on an H200: the
hoisted FlashInfer module still fails with ``Unsupported method call``).

## When it is legal
In every region.  Dynamo ignores ``functools.cache`` and traces the loader on every compile, cold or warm, so
reading a stored result is the only way a loader stays out of the trace without an op boundary.  Never at a
library's import: in a ``--fix-in`` package only the ``__init__`` form is offered (a module-level load built
CUDA code at ``import flashinfer.norm`` and closed an import cycle in flashinfer 0.7.2.post1).  When the
loader's key is a parameter of a forwarder whose caller, also in the code you may edit, passes a constant (a
tree whose own code holds the loader), the forwarder is inlined at that caller.

## Fix safety
Always **unsafe**: the load (and its subprocess, file-system and JIT-build work) moves from the first call to
import time (or ``__init__``).  Importing the module gets slower and fails early if the build fails; a loader
whose result depends on state that changes after import (an environment variable, a file written later)
now sees the import-time state.

## Example
```python
# before                                   # after
@functools.cache                           @functools.cache
def get_module():                          def get_module():
    return build_and_load_kernels()            return build_and_load_kernels()


def f(x):                                  _GET_MODULE = get_module()
    return get_module().run(x)

                                           def f(x):
                                               return _GET_MODULE.run(x)
```
"""
from __future__ import annotations

import ast
import re
from typing import Optional

import libcst as cst

from . import libsrc
from .model import (
    HOIST_LOAD,
    UNSAFE,
    AddImport,
    AppendToMethod,
    FixPlan,
    InsertTopLevel,
    Refusal,
    ReplaceNode,
)
from .sites import CallRef, Context, enclosing_function_qualname, user_frame_index
from .source import module_binds, top_level_assignment

ID = HOIST_LOAD

SAFETY_REASON = ("the load moves from the first call to import time (or __init__): import gets slower and fails "
                 "early if the build fails, and the loaded result reflects the state at that point")
CAVEAT = ("hoisting removes the subprocess / file-system hazards of the load, not an opaque-callable hazard: "
          "under fullgraph=True also put the call of the loaded function behind an op boundary")


def site(ctx: Context, finding):
    tr = finding.trace
    u = user_frame_index(ctx, finding)
    if u is None:
        return Refusal(ID, "no frame of the call path is in the code you may edit (see --fix-in)")
    cached = next((i for i in range(1, len(tr)) if ctx.is_cached(tr[i])), None)
    if cached is not None:
        caller = tr[cached - 1]
        if ctx.in_fix_scope(caller.path):
            ref = ctx.call_at(caller.path, caller.qualname, caller.line, into_fid=ctx.frame_fid(tr[cached]))
            if ref is None:
                return Refusal(ID, f"cannot find the call of the cached loader at {caller.path}:{caller.line}",
                               caller.path, caller.line)
            # the loader's key may be a parameter of a forwarder (`fp4_quantize(x, backend)`) whose own caller,
            # also in the code you may edit, passes a constant: there the forwarder is inlined instead
            outer = None
            if cached >= 2 and ctx.in_fix_scope(tr[cached - 2].path):
                fr = tr[cached - 2]
                oref = ctx.call_at(fr.path, fr.qualname, fr.line, into_fid=ctx.frame_fid(caller))
                if oref is not None:
                    outer = ("forward", oref, ctx.frame_fid(caller), ctx.frame_fid(tr[cached]))
            return (ID, "loader", ref.path, ref.span), ("loader", ref, ctx.frame_fid(tr[cached]), outer)
        if cached - 1 == u + 1:
            fr = tr[u]
            ref = ctx.call_at(fr.path, fr.qualname, fr.line, into_fid=ctx.frame_fid(tr[u + 1]))
            if ref is None:
                return Refusal(ID, f"cannot find the call at {fr.path}:{fr.line}", fr.path, fr.line)
            return (ID, "forward", ref.path, ref.span), ("forward", ref, ctx.frame_fid(tr[u + 1]),
                                                        ctx.frame_fid(tr[cached]))
        return Refusal(ID, f"the cached loader `{tr[cached].qualname}` is called deep inside the library "
                           f"({cached - u - 1} calls away from your code): hoisting it would mean editing the "
                           f"library (--fix-in) or an op boundary")
    fr = tr[u]
    if u == len(tr) - 1:
        # the hazard is the call itself (a disabled cached loader, CL116): hoist it when it is a cached loader
        ref = ctx.call_at(fr.path, fr.qualname, finding.line, col=max(0, finding.col - 1),
                          callee=finding.callee)
        cached_targets = [v for v in (ref.targets if ref is not None else ()) if "cached" in getattr(v, "flags", ())]
        if cached_targets:
            return (ID, "loader", ref.path, ref.span), ("loader", ref, cached_targets[0].id)
    if u + 1 < len(tr) and tr[u + 1].qualname.endswith("build_and_load"):
        ref = ctx.call_at(fr.path, fr.qualname, fr.line, into_fid=ctx.frame_fid(tr[u + 1]))
    elif u == len(tr) - 1 and finding.callee.endswith("build_and_load"):
        ref = ctx.call_at(fr.path, fr.qualname, finding.line, col=max(0, finding.col - 1),
                          callee=finding.callee)
    else:
        return Refusal(ID, "no cached loader and no JIT build (`*.build_and_load()`) on the call path")
    if ref is None:
        return Refusal(ID, f"cannot find the build call at {fr.path}:{fr.line}", fr.path, fr.line)
    return (ID, "chain", ref.path, ref.span), ("chain", ref)


# ------------------------------------------------------------------------------------------------- build
def build(ctx: Context, payload):
    kind = payload[0]
    if kind == "loader":
        plan = _loader(ctx, payload[1], payload[2])
        outer = payload[3] if len(payload) > 3 else None
        if isinstance(plan, Refusal) and outer is not None:
            inlined = _forward(ctx, *outer[1:])
            if not isinstance(inlined, Refusal):
                return inlined
        return plan
    if kind == "forward":
        return _forward(ctx, payload[1], payload[2], payload[3])
    return _chain(ctx, payload[1])


def _literal(node) -> Optional[object]:
    try:
        return ("ok", ast.literal_eval(cst.Module(body=[]).code_for_node(node)))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _root(node):
    cur = node
    while True:
        if isinstance(cur, cst.Attribute):
            cur = cur.value
        elif isinstance(cur, cst.Call):
            cur = cur.func
        elif isinstance(cur, cst.Subscript):
            cur = cur.value
        else:
            return cur


def _chain_ok(node) -> Optional[str]:
    """A receiver chain made of names, attributes and calls with constant arguments; else why not."""
    cur = node
    while True:
        if isinstance(cur, cst.Attribute):
            cur = cur.value
        elif isinstance(cur, cst.Call):
            for a in cur.args:
                if a.star or _literal(a.value) is None:
                    return f"`{cst.Module(body=[]).code_for_node(a.value)}` is not a constant at the call site"
            cur = cur.func
        elif isinstance(cur, cst.Name):
            return None
        else:
            return f"`{cst.Module(body=[]).code_for_node(cur)}` is not a name"


def _const_name(text: str) -> str:
    s = re.sub(r"[^0-9A-Za-z]+", "_", text).strip("_").upper()
    s = re.sub(r"_+", "_", s)
    return "_" + (s or "LOADED")


def _key_suffix(call: cst.Call) -> str:
    parts = []
    for a in call.args:
        lit = _literal(a.value)
        if lit is not None:
            parts.append(re.sub(r"[^0-9A-Za-z]+", "_", str(lit[1])).strip("_"))
    return "_".join(p for p in parts if p)


def _mode(ctx: Context, ref: CallRef, root_name: str):
    """("import", None) or ("init", class qualname)."""
    parsed = ref.parsed
    encl = parsed.enclosing(ref.node)
    method = next((e for e in encl if isinstance(e, cst.FunctionDef)), None)
    cls = None
    if method is not None:
        parent_encl = parsed.enclosing(method)
        cls = parent_encl[0] if parent_encl and isinstance(parent_encl[0], cst.ClassDef) else None
    has_init = cls is not None and any(isinstance(s, cst.FunctionDef) and s.name.value == "__init__"
                                       for s in cls.body.body)
    if root_name == "self":
        if not has_init:
            return Refusal(ID, "the loader is reached through `self`, and the class has no `__init__` to store it in")
        return "init", cls
    if ctx.options.hoist_to == "init" and has_init and method.name.value != "__init__":
        return "init", cls
    if ctx.options.fix_in:
        # a library's import must not build, load or probe the machine, nor call into modules that import it
        # (flashinfer 0.7.2.post1: `_GET_NORM_MODULE = get_norm_module()` JIT-built CUDA code at
        # `import flashinfer.norm`; a hoisted probe in compilation_context.py closed an import cycle)
        return Refusal(ID, f"hoisting `{ref.callee_code}` to the import of {ref.module} would run the load when the "
                           f"library is imported; a library fix is an op boundary at its public API, or a "
                           f"stored result in an `__init__` (hoist-to = \"init\")", ref.path, ref.line)
    return "import", None


def _deps_line(ctx: Context, ref: CallRef, names: list) -> int:
    """The last top-level line the hoisted statement depends on (bindings of the names it uses, and of the
    module globals a loader defined in this file reads)."""
    m = ctx.program.module(ref.module)
    last = 0
    seen = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        for b in (m.bindings.get(n, ()) if m is not None else ()):
            last = max(last, b.line)
            if b.kind == "def":
                fn = libsrc.find_def(m.path, b.value)
                if fn is not None:
                    todo += [x.id for x in ast.walk(fn) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)
                             and x.id in m.bindings]
            if b.kind == "class":
                # instances built at import run the class body and __init__: their globals too
                cls = _find_class(m.path, b.value)
                if cls is not None:
                    todo += [x.id for x in ast.walk(cls) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load)
                             and x.id in m.bindings]
            if b.kind == "assign":
                todo += _expr_names(b.value)
    return last


def _import_block_end_line(parsed) -> int:
    from .source import leading_import_end

    body = parsed.module.body
    end = leading_import_end(body)
    if end == 0:
        return 0
    return parsed.positions[body[end - 1]].end.line


def _find_class(path, qual):
    t = libsrc.tree(path)
    if t is None:
        return None
    for st in libsrc._walk_defs(t.body):
        if isinstance(st, ast.ClassDef) and st.name == qual:
            return st
    return None


def _expr_names(e) -> list:
    out = []
    if isinstance(e, tuple):
        if e and e[0] == "name":
            out.append(e[1])
        for x in e[1:]:
            if isinstance(x, tuple):
                out += _expr_names(x)
    return out


def _free_name(module: cst.Module, base: str, value_code: str, taken: set) -> str:
    """``base``, or ``base_2``...: reuse a top-level ``NAME = <same value>`` already there."""
    i = 1
    while True:
        name = base if i == 1 else f"{base}_{i}"
        if name in taken:
            i += 1
            continue
        existing = top_level_assignment(module, name)
        if existing is not None and " ".join(existing.split()) == " ".join(value_code.split()):
            return name
        if not module_binds(module, name):
            return name
        i += 1


def _replacements(ref: CallRef, code: str, new: str, skip_scopes: set, only_class=None) -> list:
    """Every call in the file whose code is ``code``, inside a function (not at import time, not in the loader
    itself, not in ``skip_scopes``) -> ``new``."""
    out = []
    p = ref.parsed
    norm = " ".join(code.split())
    for node in p.positions:
        if not isinstance(node, cst.Call) or " ".join(p.code(node).split()) != norm:
            continue
        scope = enclosing_function_qualname(p, node)
        if scope == "<module>" or scope in skip_scopes or any(scope.startswith(s + ".") for s in skip_scopes):
            continue
        stmt = p.parent(node)
        if node is not ref.node and isinstance(stmt, cst.Expr):
            continue  # a bare call elsewhere (a warm-up): leave it
        if only_class is not None:
            encl = [e for e in p.enclosing(node) if isinstance(e, cst.ClassDef)]
            if not encl or encl[0] is not only_class:
                continue
            fn = next((e for e in p.enclosing(node) if isinstance(e, cst.FunctionDef)), None)
            if fn is not None and fn.name.value == "__init__":
                continue
        out.append(ReplaceNode(ref.path, *p.pos(node), p.code(node), new))
    return out


def _loader(ctx: Context, ref: CallRef, loader_fid: str):
    why = _chain_ok(ref.node)
    if why:
        return Refusal(ID, f"keyed loader `{ref.callee_code}`: {why}", ref.path, ref.line)
    root = _root(ref.node)
    fs = ctx.function_summary(ref.module, ref.scope)
    if root.value != "self" and fs is not None and (root.value in fs.params or root.value in fs.locals):
        return Refusal(ID, f"the loader is reached through `{root.value}`, a local of `{ref.scope}`", ref.path, ref.line)
    mode = _mode(ctx, ref, root.value)
    if isinstance(mode, Refusal):
        return mode
    loader_scope = loader_fid.partition(":")[2] if loader_fid else ""
    key = _key_suffix(ref.node)
    return _emit(ctx, ref, ref.code, ref.callee_code + (f"_{key}" if key else ""), root.value, mode,
                 {loader_scope}, f"the cached loader `{ref.callee_code}`")


def _chain(ctx: Context, ref: CallRef):
    func = ref.node.func
    if not isinstance(func, cst.Attribute):
        return Refusal(ID, f"`{ref.code}` is not a `.build_and_load()` call", ref.path, ref.line)
    why = _chain_ok(ref.node)
    if why:
        return Refusal(ID, f"build chain `{ref.code}`: {why}", ref.path, ref.line)
    root = _root(ref.node)
    # name it after the generator: gen_norm_module().build_and_load() -> _NORM_MODULE
    inner = func.value
    base = ref.callee_code
    while isinstance(inner, (cst.Call, cst.Attribute)):
        if isinstance(inner, cst.Call):
            f = inner.func
            base = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else base
            break
        inner = inner.value
    base = re.sub(r"^gen_", "", base)
    if not base.endswith("module"):
        base += "_module"
    mode = _mode(ctx, ref, root.value)
    if isinstance(mode, Refusal):
        return mode
    return _emit(ctx, ref, ref.code, base, root.value, mode, set(), f"the JIT build `{ref.code}`")


def _emit(ctx: Context, ref: CallRef, value_code: str, base: str, root_name: str, mode, skip_scopes: set,
          what: str, extra_edits=(), replace=None):
    parsed = ref.parsed
    taken = ctx.__dict__.setdefault("_hoist_names", {}).setdefault(ref.path, {})
    if mode[0] == "import":
        name = taken.get(value_code) or _free_name(parsed.module, _const_name(base), value_code,
                                                   set(taken.values()) - {taken.get(value_code)})
        taken[value_code] = name
        deps = _deps_line(ctx, ref, [root_name])
        if deps <= _import_block_end_line(parsed):
            deps = -1  # right after the import block (and the imports this fix adds)
        edits = list(extra_edits)
        edits.append(InsertTopLevel(ref.path, deps, f"{name} = {value_code}\n"))
        reads = name
        where = f"at import, as `{name}`"
        edits += replace(name) if replace else _replacements(ref, value_code, name, skip_scopes)
    else:
        cls = mode[1]
        attr = "_" + _const_name(base).strip("_").lower()
        cls_qual = parsed.qualname_of(cls)
        edits = list(extra_edits)
        edits.append(AppendToMethod(ref.path, cls_qual, "__init__", f"self.{attr} = {value_code}\n"))
        reads = f"self.{attr}"
        where = f"in `{cls_qual}.__init__`, as `self.{attr}`"
        edits += replace(reads) if replace else _replacements(ref, value_code, reads, skip_scopes, only_class=cls)
    if not any(isinstance(e, ReplaceNode) for e in edits):
        return Refusal(ID, f"`{value_code}` is only called at import time in {ref.path}", ref.path, ref.line)
    desc = (f"hoist {what} out of the traced path: run it once {where} and read the stored result in the "
            f"traced code.\n  Note: {CAVEAT}")
    return FixPlan(ID, UNSAFE, ref.path, ref.line, desc, SAFETY_REASON, edits, key=(ID, ref.path, ref.span))


# ----------------------------------------------------------------- a one-line library forwarder, inlined
def _forward(ctx: Context, ref: CallRef, fwd_fid: str, loader_fid: str):
    mod, _, qual = fwd_fid.partition(":")
    m = ctx.program.module(mod)
    fn = libsrc.find_def(m.path, qual) if m is not None and m.path else None
    if fn is None:
        return Refusal(ID, f"cannot read `{mod}.{qual}`", ref.path, ref.line)
    body = libsrc.docstring_free_body(fn)
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return Refusal(ID, f"the keyed loader is called inside `{qual}`, which does more than return one expression: "
                           f"hoisting needs the library edited (--fix-in) or an op boundary", ref.path, ref.line)
    expr = body[0].value
    lmod, _, lqual = loader_fid.partition(":")
    if "." in lqual:
        return Refusal(ID, f"the loader `{lqual}` is not a module-level function", ref.path, ref.line)
    fs = m.functions.get(qual)
    loader_call = None
    for n in ast.walk(expr):
        if isinstance(n, ast.Call) and fs is not None:
            for s in fs.calls:
                if (s.line, s.col, s.end_line, s.end_col) == (n.lineno, n.col_offset, n.end_lineno, n.end_col_offset):
                    vals = ctx.eval(s.func, mod, qual)
                    if any(getattr(v, "id", None) == loader_fid for v in vals):
                        loader_call = n
    if loader_call is None:
        return Refusal(ID, f"cannot find the loader call in `{qual}`", ref.path, ref.line)
    sig = libsrc.signature(fn)
    if sig.vararg or sig.kwarg or any(a.star for a in ref.node.args):
        return Refusal(ID, f"`{qual}` or its call uses *args/**kwargs", ref.path, ref.line)
    n_pos = len([a for a in ref.node.args if a.keyword is None])
    b = libsrc.bind(sig, n_pos, [a.keyword.value for a in ref.node.args if a.keyword is not None])
    if b.error:
        return Refusal(ID, f"cannot bind `{ref.code}`: {b.error}", ref.path, ref.line)
    args = {}
    for q, how in b.order:
        node = ref.node.args[how[1]] if how[0] == "pos" else next(
            a for a in ref.node.args if a.keyword is not None and a.keyword.value == how[1])
        args[q] = ref.parsed.code(node.value)
    for p in sig.params:
        if p.name not in args:
            d = libsrc.literal_source(p.default)
            if d is None:
                if any(isinstance(x, ast.Name) and x.id == p.name for x in ast.walk(expr)):
                    return Refusal(ID, f"`{p.name}` of `{qual}` has a default that is not a constant", ref.path, ref.line)
                continue
            args[p.name] = d
    # the key: every loader argument must be a constant once the call's arguments are substituted
    key_vals = []
    new_loader_args = []
    for a in list(loader_call.args) + [k.value for k in loader_call.keywords]:
        src = args.get(a.id) if isinstance(a, ast.Name) and a.id in args else ast.unparse(a)
        try:
            key_vals.append(ast.literal_eval(src))
        except (ValueError, SyntaxError, TypeError):
            return Refusal(ID, f"keyed loader `{lqual}`: the key `{src}` is not a constant at the call site",
                           ref.path, ref.line)
        new_loader_args.append(src)
    if any(k.arg is None for k in loader_call.keywords):
        return Refusal(ID, "the loader is called with **kwargs", ref.path, ref.line)
    kw_names = [k.arg for k in loader_call.keywords]
    loader_args_code = ", ".join(new_loader_args[:len(loader_call.args)] + [
        f"{k}={v}" for k, v in zip(kw_names, new_loader_args[len(loader_call.args):])])
    # the rest of the expression may use each parameter at most once, and no other global
    counts: dict = {}
    loader_nodes = set(map(id, ast.walk(loader_call)))
    for n in ast.walk(expr):
        if id(n) in loader_nodes:
            continue
        if isinstance(n, ast.Name):
            if n.id in {p.name for p in sig.params}:
                counts[n.id] = counts.get(n.id, 0) + 1
            else:
                return Refusal(ID, f"`{qual}` also uses `{n.id}`; inlining it would need more imports than the loader",
                               ref.path, ref.line)
    if any(c > 1 for c in counts.values()):
        return Refusal(ID, f"`{qual}` uses an argument twice; inlining would evaluate it twice", ref.path, ref.line)
    # the loader name in the user's module
    umod = ctx.program.module(ref.module)
    local = lqual
    imp = f"from {lmod} import {lqual}"
    binds = umod.bindings.get(lqual, ()) if umod is not None else ()
    if binds and not (len(binds) == 1 and binds[0].kind == "import" and tuple(binds[0].value) == (lmod, lqual)):
        local = f"_{lqual}"
        imp = f"from {lmod} import {lqual} as {local}"
    value_code = f"{local}({loader_args_code})"
    base = lqual + "_" + "_".join(re.sub(r"[^0-9A-Za-z]+", "_", str(k)).strip("_") for k in key_vals)
    placeholder = "__compile_lint_loaded__"

    loader_pos = (loader_call.lineno, loader_call.col_offset, loader_call.end_lineno, loader_call.end_col_offset)

    class Sub(ast.NodeTransformer):
        def visit_Call(self, node):
            if (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset) == loader_pos:
                return ast.Name(id=placeholder, ctx=ast.Load())
            return self.generic_visit(node)

        def visit_Name(self, node):
            if node.id in args:
                return ast.Name(id=f"__compile_lint_arg_{node.id}__", ctx=ast.Load())
            return node

    import copy

    new_expr = ast.unparse(Sub().visit(copy.deepcopy(expr)))

    def replace(stored: str) -> list:
        text = new_expr.replace(placeholder, stored)
        for q, code in args.items():
            wrapped = code if re.fullmatch(r"[\w.]+|'[^']*'|\"[^\"]*\"", code) else f"({code})"
            text = text.replace(f"__compile_lint_arg_{q}__", wrapped)
        return [ReplaceNode(ref.path, *ref.span, ref.code, text)]

    extra = [AddImport(ref.path, imp)] if not (binds and local == lqual) else []
    return _emit(ctx, ref, value_code, base, local, ("import", None), set(),
                 f"the keyed loader `{lqual}({', '.join(map(repr, key_vals))})` (called by `{qual}`, inlined here)",
                 extra_edits=extra, replace=replace)
