"""Deriving a fake (meta) function for an op boundary from the wrapped library code, or refusing to.

A fake must say, without running the kernel, what the op returns (shapes, dtypes, devices) and which inputs it
writes.  We derive one only when the library's own code says so:

- **allocations**: the outputs are tensors the function allocates from input metadata (``torch.empty*``,
  ``*_like``, ``x.new_empty``...), possibly reshaped/transposed afterwards, and filled by an opaque kernel.  The
  fake is the function's *backward slice* from its ``return``: the statements the returned values depend on,
  with everything else (the loader, the kernel launch, validation, logging) left out.  Calls inside the slice
  to other library functions are sliced the same way (``fp4_quantize`` -> the ``fp4_quantize_sm100`` closure
  -> ``_compute_swizzled_layout_sf_size``); a call the slice needs that is not pure metadata arithmetic or a
  torch factory stops the derivation.
- **out-parameters**: the function returns nothing and hands tensor arguments to a kernel: a mutating op whose
  fake returns ``None``.  Which arguments are written comes from a ``mutates_args=`` the library declares (even
  on an identity decorator), else every tensor argument passed to an opaque call (over-approximating is sound).

We never emit a fake that raises or guesses: a returned value that may alias an input, depend on a closure
variable, on ``self``, or on a call we cannot see through, refuses the derivation with the reason.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from typing import Optional

from . import libsrc

ALLOC_FUNCS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_strided"})
ALLOC_METHODS = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_empty_strided"})
VIEW_METHODS = frozenset({"reshape", "view", "transpose", "permute", "t", "contiguous", "unsqueeze", "squeeze",
                          "flatten", "unflatten", "narrow", "expand", "view_as", "reshape_as", "movedim",
                          "swapaxes", "split", "chunk", "select", "to", "__getitem__",
                          # dtype conversions: a copy, or the tensor itself when the dtype already matches
                          "float", "half", "bfloat16", "double", "int", "long", "short", "bool", "byte",
                          "type_as"})
META_METHODS = frozenset({"size", "stride", "dim", "numel", "nelement", "element_size", "is_contiguous",
                          "ndimension", "storage_offset", "get_device", "is_floating_point", "is_complex"})
META_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "itemsize", "T", "mT"})
PURE_BUILTINS = frozenset({"len", "int", "float", "bool", "max", "min", "abs", "round", "divmod", "tuple", "list",
                           "range", "sum", "isinstance", "str", "pow", "all", "any", "zip", "enumerate", "reversed",
                           "sorted", "slice", "NotImplementedError", "ValueError", "RuntimeError", "TypeError"})
BANNED_TORCH = ("torch.cuda", "torch.distributed", "torch.ops", "torch.library", "torch.compiler", "torch._dynamo",
                "torch.save", "torch.load", "torch.manual_seed", "torch.set_", "torch.backends", "torch.utils",
                "torch.hub", "torch.jit", "torch.autograd", "torch.profiler", "torch.rand", "torch.normal",
                "torch.bernoulli", "torch.multinomial", "torch.poisson")
MAX_DEPTH = 5


class CannotDerive(Exception):
    pass


# torch's dtype attributes (torch 2.13): a default `torch.bfloat16` is as constant as `1e-6`
TORCH_DTYPES = frozenset({
    "float32", "float", "float64", "double", "float16", "half", "bfloat16", "complex32", "chalf", "complex64",
    "cfloat", "complex128", "cdouble", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "short", "int32",
    "int", "int64", "long", "bool", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
    "float8_e8m0fnu", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits8", "bits16",
})


def int_enum_member(prog, mod: str, node) -> Optional[int]:
    """``SfLayout.layout_128x4`` of a global ``enum.IntEnum`` -> its int: an IntEnum member equals its int, so the
    fake compares and indexes the same without importing the class into the op's module."""
    from compile_lint.program.scope import Scope
    from compile_lint.values import Class, Const

    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
        return None
    vals = prog.resolve_global(mod, node.value.id)
    if len(vals) != 1 or not isinstance(next(iter(vals)), Class):
        return None
    cid = next(iter(vals)).id
    if not any(x in ("enum.IntEnum", "enum.IntFlag") for x in prog.mro(cid)):
        return None
    c = prog.klass(cid)
    exprs = c.class_attrs.get(node.attr, ()) if c is not None else ()
    if len(exprs) != 1:
        return None
    got = prog.eval(exprs[0], Scope(cid.split(":", 1)[0]))
    if len(got) == 1 and isinstance(next(iter(got)), Const) and type(next(iter(got)).value) is int:
        return next(iter(got)).value
    return None


def _is_torch_dtype(expr, module) -> bool:
    """``torch.<dtype>`` where ``torch`` is the module's own ``import torch`` (not a local rebinding)."""
    if not (isinstance(expr, ast.Attribute) and expr.attr in TORCH_DTYPES and isinstance(expr.value, ast.Name)):
        return False
    bindings = module.bindings.get(expr.value.id, ()) if module is not None else ()
    return bool(bindings) and all(b.kind == "import" and tuple(b.value) == ("torch", None) for b in bindings)


@dataclass
class Helper:
    fid: str
    name: str  # the generated helper's name
    params: list  # parameter names, in order (the library function's, self excluded)
    used: set  # parameters the slice reads
    ret: object  # "fresh" | ("tuple", n) | "none" | "scalar" | "other"
    mutated: tuple  # parameter names the function writes
    risk: bool  # an excluded statement writes an allocation with a differentiable torch op
    code: str = ""


@dataclass
class FakeSpec:
    entry: Helper
    helpers: list  # Helper, dependencies first
    imports: set = field(default_factory=set)


class Deriver:
    """Slices library functions into fake helpers.  One per op boundary plan; memoises per function."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.memo: dict = {}
        self.mut_memo: dict = {}
        self.order: list = []
        self.names: dict = {}
        self.imports: set = set()
        self.active: set = set()

    # ------------------------------------------------------------------ public
    def derive(self, fid: str) -> FakeSpec:
        h = self._helper(fid, 0)
        return FakeSpec(h, [x for x in self.order], set(self.imports))

    def mutated(self, fid: str) -> tuple:
        return self._mutated(fid, 0)

    # ------------------------------------------------------------------ plumbing
    def _fn(self, fid: str):
        from compile_lint.program import split_id

        mod, qual = split_id(fid)
        m = self.ctx.program.module(mod)
        if m is None or not m.path:
            raise CannotDerive(f"no source for `{fid.replace(':', '.')}`")
        fn = libsrc.find_def(m.path, qual)
        if fn is None:
            raise CannotDerive(f"cannot find the definition of `{qual}` in {m.path}")
        fs = m.functions.get(qual)
        return mod, qual, m, fn, fs

    def _is_method(self, fs, qual, fn) -> bool:
        if fs is not None and fs.class_name is not None:
            deco = {libsrc._dotted(d) for d in fn.decorator_list}
            return not ({"staticmethod", "builtins.staticmethod"} & deco)
        return False

    def _resolve(self, mod, qual, fs, call: ast.Call) -> frozenset:
        """What the engine says an ast Call's callee is (matched to the summary by position)."""
        if fs is None:
            return frozenset()
        for site in fs.calls:
            if site.line == call.lineno and site.col == call.col_offset and site.end_col == call.end_col_offset \
                    and site.end_line == call.end_lineno:
                return self.ctx.eval(site.func, mod, qual)
        return frozenset()

    def _classify_call(self, mod, qual, fs, call: ast.Call):
        """("alloc"|"view"|"meta"|"pure"|"inplace", None) or ("helper", fid) or ("opaque", description)."""
        from compile_lint.values import External, ExternalInstance, Func, Op

        f = call.func
        method = f.attr if isinstance(f, ast.Attribute) else None
        vals = self._resolve(mod, qual, fs, call)
        funcs = {v.id for v in vals if isinstance(v, Func)}
        ext = {v.name for v in vals if isinstance(v, External)}
        if funcs and len(funcs) == 1 and not ext and not any(isinstance(v, Op) for v in vals):
            return "helper", next(iter(funcs))
        if len(ext) == 1 and not funcs:
            name = next(iter(ext))
            if name in ALLOC_FUNCS:
                return "alloc", name
            if name.startswith("torch.Tensor.") or ("()." in name and method is not None):
                return self._method_kind(name.rsplit(".", 1)[1], call)
            if name.startswith("torch.") and not name.startswith(BANNED_TORCH):
                if name.rsplit(".", 1)[-1].endswith("_") or any(k.arg == "out" for k in call.keywords):
                    return "inplace", name
                return "pure", name
            if name.startswith("builtins.") and name.split(".", 1)[1] in PURE_BUILTINS:
                return "pure", name
            if re.match(r"builtins\.(int|float|bool|str|tuple)\.\w+$", name) and not name.endswith("__"):
                return "pure", name
            if name.startswith(("math.", "operator.")):
                return "pure", name
            return "opaque", name
        if method is not None and not funcs:
            if any(isinstance(v, ExternalInstance) and v.type.startswith("torch") for v in vals) or not vals or all(
                    type(v).__name__ in ("Unknown", "External") for v in vals):
                kind = self._method_kind(method, call)
                if kind[0] != "opaque":
                    return kind
        if isinstance(f, ast.Name) and f.id in PURE_BUILTINS and not funcs:
            return "pure", f.id
        desc = ast.unparse(f)
        return "opaque", desc

    @staticmethod
    def _method_kind(method: str, call):
        if method in ALLOC_METHODS:
            return "alloc", method
        if method in VIEW_METHODS:
            return "view", method
        if method in META_METHODS:
            return "meta", method
        if method.endswith("_") and not method.startswith("_"):
            return "inplace", method
        return "opaque", method

    # ------------------------------------------------------------------ helper derivation
    def _helper(self, fid: str, depth: int) -> Helper:
        if fid in self.memo:
            return self.memo[fid]
        if depth > MAX_DEPTH:
            raise CannotDerive(f"the output is computed too many calls deep (at `{fid.replace(':', '.')}`)")
        if fid in self.active:
            raise CannotDerive(f"`{fid.replace(':', '.')}` is recursive")
        self.active.add(fid)
        try:
            h = self._derive_helper(fid, depth)
        except CannotDerive as e:
            if str(e).startswith("in `"):
                raise
            raise CannotDerive(f"in `{fid.partition(':')[2]}`: {e}") from None
        finally:
            self.active.discard(fid)
        self.memo[fid] = h
        self.order.append(h)
        return h

    def _derive_helper(self, fid: str, depth: int) -> Helper:
        mod, qual, m, fn, fs = self._fn(fid)
        sig = libsrc.signature(fn, drop_self=self._is_method(fs, qual, fn))
        if sig.vararg or sig.kwarg:
            # allowed only when the slice does not read them (checked below)
            pass
        params = sig.names()
        body = libsrc.docstring_free_body(fn)
        st = _SliceState(self, mod, qual, fs, fn, set(params), sig, depth)
        kept = st.slice_block(body)
        if not any(isinstance(n, ast.Return) for s in kept for n in ast.walk(s)):
            # no value returned: an out-parameter function
            ret = "none"
            kept = []
        else:
            ret = st.return_kind(kept)
        if sig.is_method and "self" in st.read_names:
            raise CannotDerive(f"the output of `{qual}` depends on `self`")
        for extra in (sig.vararg, sig.kwarg):
            if extra and extra in st.read_names:
                raise CannotDerive(f"the output of `{qual}` depends on `*{extra}`")
        name = self._name_for(fid, qual)
        used = {p for p in params if p in st.read_names}
        mutated = self._mutated(fid, depth)
        h = Helper(fid, name, params, used, ret, mutated, st.risk)
        h.code = self._emit(name, sig, used, kept, mod)
        return h

    def _name_for(self, fid: str, qual: str) -> str:
        base = "_fake_" + re.sub(r"\W+", "_", qual.replace(".<locals>.", "__")).strip("_")
        name = base
        i = 2
        while name in self.names and self.names[name] != fid:
            name = f"{base}_{i}"
            i += 1
        self.names[name] = fid
        return name

    def _emit(self, name: str, sig, used: set, kept: list, mod: str) -> str:
        args = []
        for p in sig.params:
            d = None
            if p.has_default:
                d = libsrc.literal_source(p.default)
                if d is None and p.name in used:
                    const = self._module_const(mod, p.default)
                    if const is None:
                        raise CannotDerive(f"the default of `{p.name}` ({ast.unparse(p.default)}) is not a constant")
                    d = const
                if d is None:
                    d = "None"
            args.append((p.name, d, p.kind))
        parts = []
        star_done = False
        pos_only = [a for a in args if a[2] == "posonly"]
        for a in args:
            if a[2] == "kwonly" and not star_done:
                parts.append("*")
                star_done = True
            parts.append(a[0] if a[1] is None else f"{a[0]}={a[1]}")
            if a[2] == "posonly" and a is pos_only[-1]:
                parts.append("/")
        body = kept or [ast.Return(value=ast.Constant(None))]
        fn = ast.parse(f"def {name}({', '.join(parts)}):\n    pass\n").body[0]
        fn.body = body
        ast.fix_missing_locations(fn)
        return ast.unparse(fn)

    def _module_const(self, mod: str, expr) -> Optional[str]:
        from compile_lint.values import Const

        if _is_torch_dtype(expr, self.ctx.program.module(mod)):
            return ast.unparse(expr)  # `out_dtype=torch.int32`: a constant the fake's module can spell
        member = int_enum_member(self.ctx.program, mod, expr)
        if member is not None:
            return repr(member)  # `layout=Layout.ROW`: the op hands the fake the member's int
        if isinstance(expr, ast.Name):
            vals = self.ctx.program.resolve_global(mod, expr.id)
            if len(vals) == 1 and isinstance(next(iter(vals)), Const):
                v = next(iter(vals)).value
                if isinstance(v, (int, float, bool, str, type(None))):
                    return repr(v)
        return None

    # ------------------------------------------------------------------ mutation
    def _mutated(self, fid: str, depth: int) -> tuple:
        if fid in self.mut_memo:
            return self.mut_memo[fid]
        self.mut_memo[fid] = ()  # recursion guard
        try:
            mod, qual, m, fn, fs = self._fn(fid)
        except CannotDerive:
            return ()
        sig = libsrc.signature(fn, drop_self=self._is_method(fs, qual, fn))
        tree = libsrc.tree(m.path)
        for decl in libsrc.op_decls(fn, tree):
            if decl.mutates is not None:
                out = tuple(p for p in decl.mutates if sig.get(p) is not None)
                self.mut_memo[fid] = out
                return out
        tensorish = {p.name for p in sig.params
                     if p.annotation is None or libsrc.is_tensor_type(libsrc.schema_type(p.annotation))}
        out: set = set()
        for node in _walk_no_defs(fn.body):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in tensorish:
                        out.add(t.value.id)
                    if isinstance(node, ast.AugAssign) and isinstance(t, ast.Name) and t.id in tensorish:
                        out.add(t.id)
            if not isinstance(node, ast.Call):
                continue
            # a tensor argument, or a view of one (`query.view(n, -1, d)`): the kernel writes the argument
            passed = [r for a in list(node.args) + [k.value for k in node.keywords]
                      if (r := _view_root(a)) is not None and r in tensorish]
            recv = node.func.value.id if isinstance(node.func, ast.Attribute) and isinstance(
                node.func.value, ast.Name) and node.func.value.id in tensorish else None
            if not passed and recv is None:
                continue
            kind, what = self._classify_call(mod, qual, fs, node)
            if kind == "helper" and depth < MAX_DEPTH:
                inner = self._mutated(what, depth + 1)
                if inner:
                    try:
                        _, iq, _, ifn, ifs = self._fn(what)
                        isig = libsrc.signature(ifn, drop_self=self._is_method(ifs, iq, ifn))
                        b = libsrc.bind(isig, len([a for a in node.args if not isinstance(a, ast.Starred)]),
                                        [k.arg for k in node.keywords if k.arg])
                        for pname, how in b.order:
                            if pname in inner:
                                a = node.args[how[1]] if how[0] == "pos" else next(
                                    k.value for k in node.keywords if k.arg == how[1])
                                if _view_root(a) in tensorish:
                                    out.add(_view_root(a))
                    except (CannotDerive, StopIteration, IndexError):
                        out.update(passed)
            elif kind == "inplace":
                if recv is not None:
                    out.add(recv)
                for k in node.keywords:
                    if k.arg == "out" and isinstance(k.value, ast.Name) and k.value.id in tensorish:
                        out.add(k.value.id)
            elif kind in ("alloc", "view", "meta", "pure"):
                continue
            else:
                out.update(passed)
        res = tuple(p for p in sig.names() if p in out)
        self.mut_memo[fid] = res
        return res


def _view_root(a) -> Optional[str]:
    """The parameter an argument is, or may be a view of (`x`, `x.view(...)`, `x[..., :d]`, `x.reshape(...).t()`)."""
    while True:
        if isinstance(a, ast.Name):
            return a.id
        if isinstance(a, ast.Subscript):
            a = a.value
        elif isinstance(a, ast.Call) and isinstance(a.func, ast.Attribute) and a.func.attr in VIEW_METHODS:
            a = a.func.value  # `.to()` / `.contiguous()` may return the tensor itself: over-approximating is sound
        else:
            return None


def _walk_no_defs(body):
    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        yield n
        stack.extend(ast.iter_child_nodes(n))


# ------------------------------------------------------------------------------------------------ slicing
class _SliceState:
    def __init__(self, d: Deriver, mod, qual, fs, fn, params: set, sig, depth: int):
        self.d = d
        self.mod = mod
        self.qual = qual
        self.fs = fs
        self.fn = fn
        self.params = params
        self.sig = sig
        self.depth = depth
        self.read_names: set = set()
        self.risk = False
        self.locals = _assigned(fn.body) | params
        self.kinds: dict = {}  # name -> set of kinds, filled forward in return_kind
        self.helper_rets: dict = {}  # id(call node in kept code) -> Helper

    # backward slice over one block; ``needed`` flows from later statements to earlier ones
    def slice_block(self, body: list, needed: Optional[set] = None) -> list:
        needed = needed if needed is not None else set()
        kept_rev = []
        for stmt in reversed(body):
            k = self._slice_stmt(stmt, needed)
            if k is not None:
                kept_rev.append(k)
        return list(reversed(kept_rev))

    def _slice_stmt(self, stmt, needed: set):
        if isinstance(stmt, ast.Return):
            new = copy.deepcopy(stmt)
            if new.value is not None:
                new.value = self._expr(new.value, needed)
            return new
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = set()
            for t in targets:
                names |= _target_names(t)
                if not isinstance(t, (ast.Name, ast.Tuple, ast.List)):
                    base = _root_name(t)
                    if base in needed:
                        raise CannotDerive(f"`{ast.unparse(t)}` is written in place, and the output depends on it")
            if not (names & needed):
                self._note_risk(stmt)
                return None
            if stmt.value is None:
                return None
            new = copy.deepcopy(stmt)
            if isinstance(stmt, ast.AnnAssign):
                new = ast.Assign(targets=[new.target], value=new.value)
            if isinstance(stmt, ast.AugAssign):
                self.read_names |= names
                needed |= names
            else:
                needed -= names  # a plain assignment kills the later uses (backward liveness)
            new.value = self._expr(new.value, needed)
            return new
        if isinstance(stmt, ast.If):
            body_needed = set(needed)
            body = self.slice_block(stmt.body, body_needed)
            else_needed = set(needed)
            orelse = self.slice_block(stmt.orelse, else_needed)
            if not body and not orelse:
                return None
            needed.clear()
            needed |= body_needed | else_needed
            new = ast.If(test=self._expr(copy.deepcopy(stmt.test), needed), body=body or [ast.Pass()], orelse=orelse)
            return new
        if isinstance(stmt, ast.Expr):
            self._note_risk(stmt)
            self._check_metadata_writes(stmt, needed)
            return None
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)
                      if hasattr(ast, "Match") else (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                                     ast.Try)):
            assigned = _assigned([stmt])
            if assigned & needed:
                raise CannotDerive(f"`{', '.join(sorted(assigned & needed))}` is computed in a "
                                   f"{type(stmt).__name__.lower()} block")
            if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
                raise CannotDerive(f"`{self.qual}` returns from inside a {type(stmt).__name__.lower()} block")
            self._note_risk(stmt)
            return None
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            bound = {(a.asname or a.name).split(".")[0] for a in stmt.names}
            if bound & needed:
                raise CannotDerive(f"the output depends on a function-local import ({ast.unparse(stmt)})")
            return None
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name in needed:
                raise CannotDerive(f"the output depends on the local definition `{stmt.name}`")
            return None
        return None  # assert, raise, pass, global, del...

    def _note_risk(self, stmt) -> None:
        """A statement left out of the fake that writes into a tensor with a torch op: the real output may carry
        autograd history the op boundary would drop."""
        for n in _walk_no_defs([stmt]):
            if isinstance(n, ast.Call):
                kind, _ = self.d._classify_call(self.mod, self.qual, self.fs, n)
                if kind == "inplace":
                    self.risk = True

    def _check_metadata_writes(self, stmt, needed: set) -> None:
        for n in _walk_no_defs([stmt]):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
                if n.func.value.id in needed and n.func.attr in ("resize_", "set_", "as_strided_", "unsqueeze_",
                                                                  "squeeze_", "t_", "transpose_", "resize_as_"):
                    raise CannotDerive(f"`{n.func.value.id}.{n.func.attr}` changes the shape of an output in place")

    # rewrite one kept expression: calls into helpers -> fake helpers; globals -> their values
    def _expr(self, e, needed: set):
        state = self

        class T(ast.NodeTransformer):
            def __init__(self):
                self.bound_stack = []

            def visit_Call(self, node):
                kind, what = state.d._classify_call(state.mod, state.qual, state.fs, node)
                if kind == "helper":
                    h = state.d._helper(what, state.depth + 1)
                    return state._helper_call(node, h, what, self)
                if kind == "opaque":
                    raise CannotDerive(f"the output depends on `{what}`, which a fake cannot run")
                if kind == "inplace":
                    raise CannotDerive(f"the output depends on the in-place `{what}`")
                self.generic_visit(node)
                return node

            def _comp(self, node):
                bound = set()
                for g in node.generators:
                    bound |= _target_names(g.target)
                self.bound_stack.append(bound)
                self.generic_visit(node)
                self.bound_stack.pop()
                return node

            visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comp

            def visit_Lambda(self, node):
                raise CannotDerive("the output depends on a lambda")

            def visit_Attribute(self, node):
                member = state._int_enum_member(node) if isinstance(node.ctx, ast.Load) else None
                if member is not None:
                    return ast.Constant(member)
                self.generic_visit(node)
                return node

            def visit_Name(self, node):
                if not isinstance(node.ctx, ast.Load):
                    return node
                if any(node.id in b for b in self.bound_stack):
                    return node
                return state._name(node, needed)

        return T().visit(e)

    def _helper_call(self, node: ast.Call, h: Helper, fid: str, visitor):
        """``lib_fn(a, b, c)`` -> ``_fake_lib_fn(a, None, c)``: arguments the helper's slice does not read are
        dropped (with whatever computed them)."""
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise CannotDerive(f"`{ast.unparse(node.func)}` is called with *args/**kwargs")
        _, iq, _, ifn, ifs = self.d._fn(fid)
        isig = libsrc.signature(ifn, drop_self=self.d._is_method(ifs, iq, ifn))
        b = libsrc.bind(isig, len(node.args), [k.arg for k in node.keywords])
        if b.error:
            raise CannotDerive(f"cannot bind the call of `{iq}`: {b.error}")
        new_args, new_kw = [], []
        for pname, how in b.order:
            a = node.args[how[1]] if how[0] == "pos" else next(k.value for k in node.keywords if k.arg == how[1])
            if pname in h.used:
                a = visitor.visit(a)
            else:
                a = ast.Constant(None)
            if how[0] == "pos":
                new_args.append(a)
            else:
                new_kw.append(ast.keyword(arg=how[1], value=a))
        call = ast.Call(func=ast.Name(id=h.name, ctx=ast.Load()), args=new_args, keywords=new_kw)
        self.helper_rets[id(call)] = h
        return call

    def _int_enum_member(self, node: ast.Attribute) -> Optional[int]:
        if isinstance(node.value, ast.Name) and node.value.id in self.locals:
            return None
        return int_enum_member(self.d.ctx.program, self.mod, node)

    def _name(self, node: ast.Name, needed: set):
        from compile_lint.values import Const, External, Module

        n = node.id
        if self.sig.is_method and n == "self" and "self" not in self.params:
            raise CannotDerive(f"the output of `{self.qual}` depends on `self`")
        if n in self.locals:
            needed.add(n)
            self.read_names.add(n)
            return node
        if self._closure_var(n):
            raise CannotDerive(f"the output depends on `{n}`, a variable of the enclosing function")
        vals = self.d.ctx.program.resolve_global(self.mod, n)
        if len(vals) == 1:
            v = next(iter(vals))
            if isinstance(v, External):
                name = v.name
                if name.startswith("builtins."):
                    return node
                top = name.split(".")[0]
                if top in ("torch", "math", "operator"):
                    self.d.imports.add(top)
                    return ast.parse(name, mode="eval").body
            if isinstance(v, Const) and isinstance(v.value, (int, float, bool, str, type(None))):
                return ast.Constant(v.value)
            if isinstance(v, Module):
                raise CannotDerive(f"the output depends on module `{v.name}`")
        if n in libsrc.SCALARS or n in PURE_BUILTINS:
            return node
        const = self._local_import_const(n)
        if const is not None:
            return ast.Constant(const)
        raise CannotDerive(f"the output depends on the global `{n}`")

    def _local_import_const(self, name: str):
        """``from .kernels.mxfp4_quantize import SF_LAYOUT_128x4`` inside the function, where that module binds the
        name once to a number or string: the constant (FlashInfer's ``mxfp4_quantize`` imports its layout codes
        so, to keep CuTe-DSL out of the package's import)."""
        from compile_lint.index import absolute_module
        from compile_lint.values import Const

        for node in _walk_no_defs(self.fn.body):
            if not isinstance(node, ast.ImportFrom) or not any((a.asname or a.name) == name for a in node.names):
                continue
            orig = next(a.name for a in node.names if (a.asname or a.name) == name)
            m = self.d.ctx.program.module(self.mod)
            target = absolute_module(self.mod, m is not None and m.is_package, node.module, node.level)
            if target is None:
                return None
            vals = self.d.ctx.program.resolve_global(target, orig)
            if len(vals) == 1 and isinstance(next(iter(vals)), Const) and \
                    isinstance(next(iter(vals)).value, (int, float, bool, str)):
                return next(iter(vals)).value
            return None
        return None

    def _closure_var(self, n: str) -> bool:
        fs = self.fs
        if fs is None or fs.parent is None:
            return False
        parent = self.d.ctx.function_summary(self.mod, fs.parent)
        while parent is not None:
            if n in parent.locals or n in parent.params or n in parent.kwonly:
                return True
            parent = self.d.ctx.function_summary(self.mod, parent.parent) if parent.parent else None
        return False

    # forward pass over the kept code: what kind of value each return gives
    def return_kind(self, kept: list):
        kinds: dict = {p: {"param"} for p in self.params}
        rets: list = []

        def kind(e):
            if isinstance(e, ast.Constant):
                return {"none"} if e.value is None else {"scalar"}
            if isinstance(e, ast.Name):
                return set(kinds.get(e.id, {"other"}))
            if isinstance(e, ast.Tuple):
                return {("tuple", tuple(frozenset(kind(x)) for x in e.elts))}
            if isinstance(e, ast.Call):
                h = self.helper_rets.get(id(e))
                if h is not None:
                    if isinstance(h.ret, tuple) and h.ret[0] == "tuple":
                        return {("tuple", tuple(frozenset({"fresh"}) for _ in range(h.ret[1])))}
                    # ("bad", why): the helper's value is not an allocation the fake can make
                    return {h.ret} if not isinstance(h.ret, tuple) else {"other"}
                k, _ = self.d._classify_call(self.mod, self.qual, self.fs, e) if hasattr(e, "lineno") else (
                    _syntactic_kind(e), None)
                if k == "alloc":
                    return {"fresh"}
                if k == "view" and isinstance(e.func, ast.Attribute):
                    base = kind(e.func.value)
                    return {"fresh"} if base == {"fresh"} else {"alias"}
                if k in ("meta", "pure"):
                    return {"scalar"}
                return {"other"}
            if isinstance(e, ast.Subscript):
                base = kind(e.value)
                if base == {"fresh"}:
                    return {"fresh"}
                tup = [b for b in base if isinstance(b, tuple)]
                if tup and isinstance(e.slice, ast.Constant) and isinstance(e.slice.value, int):
                    out = set()
                    for t in tup:
                        try:
                            out |= set(t[1][e.slice.value])
                        except IndexError:
                            out.add("other")
                    return out
                return {"scalar"} if base <= {"scalar", "param"} else {"other"}
            if isinstance(e, ast.IfExp):
                return kind(e.body) | kind(e.orelse)
            return {"scalar"}

        def assign(target, ks):
            if isinstance(target, ast.Name):
                kinds[target.id] = set(ks) if target.id not in assigned_once else kinds.get(target.id, set()) | ks
                assigned_once.add(target.id)
            elif isinstance(target, (ast.Tuple, ast.List)):
                tup = [k for k in ks if isinstance(k, tuple)]
                for i, el in enumerate(target.elts):
                    sub = set()
                    for t in tup:
                        sub |= set(t[1][i]) if i < len(t[1]) else {"other"}
                    if not tup:
                        sub = {"fresh"} if ks == {"fresh"} else {"other"}
                    assign(el, sub)

        assigned_once: set = set()

        def run(stmts, branch=False):
            for s in stmts:
                if isinstance(s, ast.Assign):
                    ks = kind(s.value)
                    for t in s.targets:
                        if branch and isinstance(t, ast.Name) and t.id in kinds:
                            kinds[t.id] = kinds[t.id] | ks
                        else:
                            assign(t, ks)
                elif isinstance(s, ast.AugAssign):
                    pass
                elif isinstance(s, ast.If):
                    run(s.body, True)
                    run(s.orelse, True)
                elif isinstance(s, ast.Return):
                    rets.append(kind(s.value) if s.value is not None else {"none"})

        run(kept)
        if not rets:
            return "none"
        shapes = set()
        for r in rets:
            if r == {"fresh"}:
                shapes.add("fresh")
            elif r == {"none"}:
                shapes.add("none")
            elif len(r) == 1 and isinstance(next(iter(r)), tuple):
                t = next(iter(r))
                if all(x == frozenset({"fresh"}) for x in t[1]):
                    shapes.add(("tuple", len(t[1])))
                else:
                    bad = [i for i, x in enumerate(t[1]) if x != frozenset({"fresh"})]
                    shapes.add(("bad", f"element {bad[0]} of the returned tuple is "
                                       f"{'an input (or a view of one)' if 'param' in t[1][bad[0]] or 'alias' in t[1][bad[0]] else 'not an allocation'}"))
            elif "param" in r or "alias" in r:
                shapes.add(("bad", "the returned tensor may be an input (or a view of one)"))
            elif r <= {"scalar"}:
                shapes.add("scalar")
            else:
                shapes.add(("bad", "the returned value is not an allocation made from input shapes"))
        if len(shapes) == 1:
            s = next(iter(shapes))
            if isinstance(s, tuple) and s[0] == "bad":
                return ("bad", s[1])
            return s
        if any(isinstance(s, tuple) and s[0] == "bad" for s in shapes):
            return next(s for s in shapes if isinstance(s, tuple) and s[0] == "bad")
        return ("bad", "different returns give different kinds of values")


def _syntactic_kind(e: ast.Call) -> str:
    f = e.func
    if isinstance(f, ast.Attribute):
        d = libsrc._dotted(f)
        if d in ALLOC_FUNCS or f.attr in ALLOC_METHODS:
            return "alloc"
        if f.attr in VIEW_METHODS:
            return "view"
        if f.attr in META_METHODS:
            return "meta"
    return "other"


def _assigned(body: list) -> set:
    out = set()
    for n in _walk_no_defs(body):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    for n in body:
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
    return out


def _target_names(t) -> set:
    if isinstance(t, ast.Name):
        return {t.id}
    if isinstance(t, (ast.Tuple, ast.List)):
        out = set()
        for e in t.elts:
            out |= _target_names(e)
        return out
    if isinstance(t, ast.Starred):
        return _target_names(t.value)
    return set()


def _root_name(t) -> Optional[str]:
    while isinstance(t, (ast.Attribute, ast.Subscript)):
        t = t.value
    return t.id if isinstance(t, ast.Name) else None
