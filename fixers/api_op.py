"""api-op: inside a library (``--fix-in PKG`` with ``--public-api PKG``), make the public API itself a real op.

## What it does
The fix point is the outermost function on the path at which a boundary is legal: the public API the user
calls (``flashinfer.norm.rmsnorm``), not the hazard line deep inside it.  The function's body moves, with its
decorators (``@flashinfer_api``'s logging wrapper included), to ``_<name>_unwrapped``; a
``torch.library.custom_op("<namespace>::<name>")`` calls it, a ``register_fake`` says what it returns, and the
public name keeps its signature, defaults and docstring and calls the op.  Dynamo records one opaque node; the
JIT load, the subprocesses and the opaque native call stay inside the op, at the first call, as before::

    def _rmsnorm_unwrapped(input, weight, eps=1e-6, out=None, enable_pdl=None): <the original body>

    @torch.library.custom_op("flashinfer_cl::rmsnorm", mutates_args=("out",))
    def _rmsnorm_op(input: torch.Tensor, weight: torch.Tensor, eps: float, out: torch.Tensor,
                    enable_pdl: Optional[bool]) -> None:
        _rmsnorm_unwrapped(input, weight, eps, out, enable_pdl)

    @_rmsnorm_op.register_fake
    def _rmsnorm_op_fake(input, weight, eps, out, enable_pdl):
        return None

    def rmsnorm(input, weight, eps=1e-6, out=None, enable_pdl=None) -> torch.Tensor:
        if out is None:
            out = torch.empty_like(input)
        _rmsnorm_op(input, weight, eps, out, enable_pdl)
        return out

Three shapes of API, read from the code (``fixers/fake.py``):

- **returns fresh allocations** (``torch.empty*``/``*_like``/``new_empty`` filled by a kernel): the op returns
  them; the fake is the function's own allocation code, sliced (the loader and the launch left out).
- **out-parameter** (``if out is None: out = <allocation>`` ... ``return out``): an op must not return one of its
  inputs, so the allocation stays in the public function, where Dynamo traces it, and the op writes ``out``
  (declared in ``mutates_args``) and returns nothing.
- **in place** (returns nothing): the op declares what the function writes - what the library declares on its
  own (even identity) registration decorators, else every tensor handed to an opaque call.

## When it is legal
Only where an op can be: a module-level function whose parameters all have ``torch.library`` schema types
(tensors, optional tensors, numbers, bools, strings, dtypes, devices, lists of those), without ``*args`` /
``**kwargs``, not a method (``self`` is a Python object), not already a real op, and whose output is one of the
three shapes above.  Otherwise the fixer says why, and the other fixers are tried.

## Fix safety
Unsafe: every caller of the library sees the change.  The op checks its arguments against the schema (a value
of another type than the annotation raises), cuts autograd through the body (FlashInfer's kernels carry none),
and the fake asserts shapes that only the library's own code determined.  Each plan is imported in a fresh
process without a GPU before it is written (``fixers/verify.py``) and withdrawn when the package no longer
imports as it did.

## Example
``compile-lint fix site/ --public-api flashinfer --fix-in flashinfer --op-namespace flashinfer_cl --unsafe-fixes``
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Optional

from . import libsrc
from .fake import ALLOC_FUNCS, ALLOC_METHODS, CannotDerive, Deriver, _walk_no_defs
from .model import OP_BOUNDARY, UNSAFE, AddImport, FixPlan, Refusal, WrapDefInOp

ID = "api-op"  # the planner's key; the plans it makes are op-boundary plans
FIXER = OP_BOUNDARY


def site(ctx, finding):
    """The public APIs reaching the finding that are module-level functions of a --fix-in package: a list of
    (key, payload), the finding's own region first (a Refusal there when it is not such an API, with the others
    after it), or a Refusal when none is.  A hazard shared by several APIs (one JIT loader) is reported once,
    for one region; each API reaching it is made an op of its own."""
    if not ctx.options.fix_in:
        return Refusal(ID, "fixing a public API needs --fix-in PKG")
    if not finding.trace:
        return Refusal(ID, "the finding has no call path")
    own = _api_site(ctx, finding.region)
    others = [x for x in (_api_site(ctx, r) for r in getattr(finding, "other_regions", ()) or ())
              if not isinstance(x, Refusal)]
    if isinstance(own, Refusal):
        return [own] + others if others else own
    return [own] + others


def _api_site(ctx, r):
    if getattr(r, "kind", "") != "public-api":
        return Refusal(ID, "the region is not a public API (library mode, --public-api)")
    if not ctx.in_fix_scope(r.path):
        return Refusal(ID, f"the public API `{r.qualname}` is outside the --fix-in packages")
    mod = ctx.module_of_path(r.path)
    why = (ctx.options.withdrawn or {}).get(r.qualname)
    if why is not None:
        return Refusal(ID, f"the op fix of `{r.qualname}` was withdrawn: {why}", r.path, r.line)
    qual = r.qualname[len(mod) + 1:] if mod and r.qualname.startswith(mod + ".") else None
    if not qual:
        return Refusal(ID, f"`{r.qualname}` is not defined in {mod} (a partial or an alias): the op boundary is made "
                           f"at its target's own API", r.path, r.line)
    if "." in qual:
        return Refusal(ID, f"`{r.qualname}` is a method or a nested function: its `self`/closure is a Python "
                           f"object, which an op cannot take", r.path, r.line)
    fs = ctx.function_summary(mod, qual)
    if fs is None:
        return Refusal(ID, f"`{r.qualname}` is not a function of {mod} (a partial or an alias): the op boundary is "
                           f"made at its target's own API", r.path, r.line)
    return (ID, r.path, qual), (r.path, mod, qual)


# ------------------------------------------------------------------------------------------------ types
def op_type(p: libsrc.Param) -> Optional[str]:
    t = _schema(p.annotation)
    if t is None or "tuple[" in t.lower():  # a tuple is an op's output type only (infer_schema rejects it as input)
        return None
    if isinstance(p.default, ast.Constant) and p.default.value is None and not t.startswith("Optional["):
        t = f"Optional[{t}]"  # `enable_pdl: bool = None`: the op must accept the default
    return t


def _schema(ann) -> Optional[str]:
    t = libsrc.schema_type(ann)
    if t is not None or ann is None:
        return t
    if isinstance(ann, ast.Subscript):  # Literal["a", "b"] -> str; Optional[Literal[...]] -> Optional[str]
        head = libsrc._dotted(ann.value).rsplit(".", 1)[-1]
        args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if head == "Literal" and args and all(isinstance(a, ast.Constant) for a in args):
            kinds = {type(a.value) for a in args}
            return {frozenset({str}): "str", frozenset({int}): "int", frozenset({bool}): "bool"}.get(frozenset(kinds))
        if head == "Optional" and len(args) == 1:
            inner = _schema(args[0])
            return f"Optional[{inner}]" if inner and not inner.startswith("Optional[") else None
        if head == "Union" and len(args) == 2 and any(isinstance(a, ast.Constant) and a.value is None for a in args):
            other = next(a for a in args if not (isinstance(a, ast.Constant) and a.value is None))
            inner = _schema(other)
            return f"Optional[{inner}]" if inner and not inner.startswith("Optional[") else None
    return None


# ------------------------------------------------------------------------------------------------ build
def _union(ann) -> Optional[tuple]:
    """``Union[Tensor, X]`` / ``Optional[Union[X, Tensor]]`` / ``Tensor | X`` (X a number or bool) -> (X, optional)."""
    if ann is None:
        return None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    members, optional = [], False

    def collect(a):
        nonlocal optional
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            return collect(a.left) and collect(a.right)
        if isinstance(a, ast.Subscript):
            head = libsrc._dotted(a.value).rsplit(".", 1)[-1]
            args = a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]
            if head in ("Union", "Optional"):
                if head == "Optional":
                    optional = True
                return all(collect(x) for x in args)
        if isinstance(a, ast.Constant) and a.value is None:
            optional = True
            return True
        members.append(libsrc.schema_type(a))
        return True

    if not collect(ann) or len(members) != 2 or "torch.Tensor" not in members:
        return None
    other = next(m for m in members if m != "torch.Tensor")
    return (other, optional) if other in ("int", "float", "bool") else None


def _tensor_tuple(p: libsrc.Param) -> Optional[tuple]:
    """A fixed-size tuple of tensors -> ("optional", n) for ``Optional[Tuple[Tensor, ...]] = None`` (FlashInfer's
    ``kv_cache_sf``), ("union", n) for ``Union[Tensor, Tuple[Tensor, ...]]`` (``paged_kv_cache``: one tensor or the
    (k, v) pair); None otherwise.  No schema takes a tuple; n optional tensors carry it across the op."""
    ann = p.annotation
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    members: list = []

    def collect(a):
        if isinstance(a, ast.BinOp) and isinstance(a.op, ast.BitOr):
            return collect(a.left) and collect(a.right)
        if isinstance(a, ast.Subscript) and libsrc._dotted(a.value).rsplit(".", 1)[-1] in ("Union", "Optional"):
            if libsrc._dotted(a.value).rsplit(".", 1)[-1] == "Optional":
                members.append(ast.Constant(None))
            return all(collect(x) for x in (a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]))
        members.append(a)
        return True

    def tensor_tuple(a) -> int:
        if not (isinstance(a, ast.Subscript) and libsrc._dotted(a.value).rsplit(".", 1)[-1] in ("Tuple", "tuple")):
            return 0
        elts = a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]
        if len(elts) < 2 or any(libsrc.schema_type(e) != "torch.Tensor" for e in elts):
            return 0  # Tuple[Tensor, ...] has no fixed size
        return len(elts)

    if ann is None or not collect(ann):
        return None
    none = [m for m in members if isinstance(m, ast.Constant) and m.value is None]
    tensors = [m for m in members if libsrc.schema_type(m) == "torch.Tensor"]
    tuples = [tensor_tuple(m) for m in members if tensor_tuple(m)]
    if len(tuples) != 1 or len(members) != len(none) + len(tensors) + 1:
        return None
    if none and not tensors and isinstance(p.default, ast.Constant) and p.default.value is None and len(none) == 1:
        return ("optional", tuples[0])
    if tensors and not none and len(tensors) == 1 and p.default is None:
        return ("union", tuples[0])
    return None


def _int_enum(ctx, mod: str, ann) -> Optional[str]:
    """``sfLayout: SfLayout``, an ``enum.IntEnum`` bound unconditionally at the module's top level -> its name
    there: the op schema takes the member's int, the op (and the fake) turn it back into the member."""
    from compile_lint.values import Class

    if not isinstance(ann, ast.Name):
        return None
    m = ctx.program.module(mod)
    bindings = m.bindings.get(ann.id, ()) if m is not None else ()
    if not bindings or any(b.guards for b in bindings):
        return None  # absent at run time (`if TYPE_CHECKING:`) or bound only under a condition
    vals = ctx.program.resolve_global(mod, ann.id)
    if len(vals) != 1 or not isinstance(next(iter(vals)), Class):
        return None
    mro = ctx.program.mro(next(iter(vals)).id)
    return ann.id if any(x in ("enum.IntEnum", "enum.IntFlag") for x in mro) else None


def _eager_only(p: libsrc.Param) -> bool:
    """A Python-object parameter that defaults to None (``generator``, a config object): the op covers the calls
    that leave it None; a call that passes one runs the original body, as before the fix."""
    return isinstance(p.default, ast.Constant) and p.default.value is None and p.kind != "posonly"


def _definition(tree, qual):
    """The module-level definition of ``qual`` (the last one not decorated ``@overload``)."""
    found = None
    for st in (tree.body if tree else ()):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) and st.name == qual and not any(
                libsrc._dotted(d).rsplit(".", 1)[-1] == "overload" for d in st.decorator_list):
            found = st
    return found


def build(ctx, payload):
    path, mod, qual = payload
    tree = libsrc.tree(path)
    fn = _definition(tree, qual)
    if fn is None:
        return Refusal(FIXER, f"`{mod}.{qual}` is not defined at the top level of {path} (defined under a condition?)",
                       path)
    where = (path, fn.lineno)

    def refuse(why):
        return Refusal(FIXER, f"no op at the public API `{mod}.{qual}`: {why}", *where)

    if isinstance(fn, ast.AsyncFunctionDef) or any(isinstance(n, (ast.Yield, ast.YieldFrom))
                                                   for n in _walk_no_defs(fn.body)):
        return refuse("it is a coroutine or a generator")
    if any(d.real for d in libsrc.op_decls(fn, tree)):
        return refuse("it is already a real op")
    sig = libsrc.signature(fn)
    if sig.vararg or sig.kwarg:
        return refuse(f"it takes *{sig.vararg or ''}/**{sig.kwarg or ''}, which an op schema cannot express")
    types, unions, eager, fixed = {}, {}, [], {}
    variants: list = []  # configured fakes, one op each: the first covers the defaults
    enums: dict = {}  # IntEnum parameters: the op takes the int, the body gets the member back
    tuples: dict = {}  # tuples of tensors: n optional tensors across the op, the tuple rebuilt inside
    for p in sig.params:
        t = op_type(p)
        if t is not None:
            types[p.name] = t
            continue
        u = _union(p.annotation)
        if u is not None:
            unions[p.name] = u[0]
            continue
        tt = _tensor_tuple(p)
        if tt is not None:
            tuples[p.name] = tt
            continue
        e = _int_enum(ctx, mod, p.annotation)
        if e is not None:
            enums[p.name] = e
            continue
        if _eager_only(p):
            eager.append(p.name)
            continue
        ann = ast.unparse(p.annotation) if p.annotation is not None else "no annotation"
        return refuse(f"parameter `{p.name}` ({ann}) is a Python object an op schema cannot express, and it has no "
                      f"default None that the op could cover; the JIT load stays on the traced path (hoisting it "
                      f"to a first use outside the trace needs a caller outside the library)")
    if not any(libsrc.is_tensor_type(t) for t in types.values()) and not unions and not tuples:
        return refuse("it takes no tensor: an op needs at least one tensor argument")
    names = _top_names(tree)
    impl, op, fake = f"_{qual}_unwrapped", f"_{qual}_op", f"_{qual}_op_fake"
    taken = [n for n in (impl, op, fake) if n in names]
    if taken:
        return refuse(f"`{taken[0]}` is already defined in {mod}")
    tensor_params = [p.name for p in sig.params if p.name in types and libsrc.is_tensor_type(types[p.name])]

    d = Deriver(ctx)
    fid = f"{mod}:{qual}"
    try:
        mutated = tuple(x for x in d.mutated(fid) if x in tensor_params)
    except CannotDerive:
        mutated = tuple(tensor_params)
    outs = _out_pattern(fn, sig, {**types, **{u: "union" for u in unions}, **{e: "object" for e in eager},
                                  **{e: "int" for e in enums}, **{t: "tuple" for t in tuples}})
    helpers, fake_imports = [], set()
    if isinstance(outs, str):
        return refuse(outs)
    if outs:
        names_o = [o for o, _ in outs]
        mutates = tuple(dict.fromkeys([p.name for p in sig.params if p.name in set(mutated) | set(names_o)]))
        for o in names_o:
            types[o] = "torch.Tensor"  # the public function allocates it when the caller passes none
        ret_type, fake_body = "None", ["return None"]
        shape = (f"an out-parameter API: the allocation of {', '.join(f'`{o}`' for o in names_o)} stays in "
                 f"`{qual}` (traced), the op writes it")
    elif f"{mod}.{qual}" in (ctx.options.fakes or {}):
        entries = ctx.options.fakes[f"{mod}.{qual}"]
        entries = [entries] if isinstance(entries, str) else list(entries)
        for entry in entries:
            v = _configured_variant(sig, types, eager, fn, entry)
            if isinstance(v, str):
                return refuse(v)
            variants.append(v)
        flags = [set(v.fixed) for v in variants]
        if len(variants) > 1 and (any(f != flags[0] for f in flags) or not flags[0]):
            return refuse("the configured fakes of one API must each say `when` for the same parameters")
        if len({tuple(sorted(v.fixed.items())) for v in variants}) != len(variants):
            return refuse("two configured fakes cover the same `when`")
        if not any(all(_default_is(sig, k, x) for k, x in v.fixed.items()) for v in variants):
            return refuse("the configured fake's `when " + ", ".join(f"{k}={x!r}" for k, x in variants[0].fixed.items())
                          + "` names no parameter whose default is that constant: one fake must cover the defaults")
        # the variant that covers the defaults comes first: its op keeps the plain name
        variants.sort(key=lambda v: not all(_default_is(sig, k, x) for k, x in v.fixed.items()))
        fixed = dict(variants[0].fixed)
        for name in fixed:
            del types[name]
        mutates = mutated
        ret_type, fake_body = variants[0].ret_type, variants[0].fake_body
        shape = "the fake" + ("s " if len(variants) > 1 else " ") + ", ".join(f"`{v.conf}`" for v in variants) + \
            " come" + ("" if len(variants) > 1 else "s") + " from the configuration: the output is asserted, not derived"
        if fixed:
            shape += "; the op" + ("s cover" if len(variants) > 1 else " covers") + " the calls with " + \
                " or ".join(", ".join(f"`{k}={x!r}`" for k, x in v.fixed.items()) for v in variants)
    else:
        try:
            spec = d.derive(fid)
        except CannotDerive as e:
            return refuse(f"no sound fake: {e}; name one in [tool.compile-lint.fix.fakes] "
                          f"(\"{mod}.{qual}\" = \"same-as:<arg>\" or \"module:function\")")
        h = spec.entry
        mutates = tuple(x for x in h.mutated if x in tensor_params)
        if h.ret == "none":
            if not mutates and not tuples:
                return refuse("it returns nothing and writes none of its tensor arguments")
            ret_type, fake_body = "None", ["return None"]
            shape = f"an in-place API: the op writes {', '.join(f'`{x}`' for x in mutates)}"
        elif h.ret == "fresh" or (isinstance(h.ret, tuple) and h.ret[0] == "tuple"):
            n = 1 if h.ret == "fresh" else h.ret[1]
            ret_type = "torch.Tensor" if h.ret == "fresh" else "tuple[" + ", ".join(["torch.Tensor"] * n) + "]"
            prefix = f"_{qual}"
            rename = {x.name: prefix + x.name for x in spec.helpers}
            helpers = [_rename(x.code, rename) for x in spec.helpers]
            args = ", ".join(f"{p}={p}" for p in h.params if p in types or p in unions or p in tuples)
            fake_body = [f"return {rename[h.name]}({args})"]
            fake_imports = set(spec.imports)
            shape = ("an allocating API: the fake is its own allocation code "
                     f"({', '.join(x.fid.replace(':', '.') for x in spec.helpers)}) without the kernel")
        else:
            why = h.ret[1] if isinstance(h.ret, tuple) and h.ret[0] == "bad" else f"it returns {h.ret}"
            return refuse(f"no sound fake: {why}")

    # the tensors of a tuple argument: declared written (what the body does with the tuple is not followed;
    # over-declaring is sound, a missing one is not)
    mutates = tuple(mutates) + tuple(f"{t}_{i}" for t, (_, n) in tuples.items() for i in range(n))
    ns = ctx.options.op_namespace
    op_name = _op_name(ctx, ns, mod, qual)
    op_params, op_args, recombine = [], [], []
    for p in sig.params:
        if p.name in types:
            op_params.append(f"{p.name}: {types[p.name]}")
            op_args.append(p.name)
        elif p.name in tuples:
            kind, n = tuples[p.name]
            parts = [f"{p.name}_{i}" for i in range(n)]
            op_params += [f"{x}: Optional[torch.Tensor]" for x in parts]
            if kind == "optional":
                op_args += [f"None if {p.name} is None else {p.name}[{i}]" for i in range(n)]
                recombine.append(f"{p.name} = None if {parts[0]} is None else ({', '.join(parts)})")
            else:
                op_args += [f"{p.name} if isinstance({p.name}, torch.Tensor) else {p.name}[0]"]
                op_args += [f"None if isinstance({p.name}, torch.Tensor) else {p.name}[{i}]" for i in range(1, n)]
                recombine.append(f"{p.name} = {parts[0]} if {parts[1]} is None else ({', '.join(parts)})")
        elif p.name in enums:
            op_params.append(f"{p.name}: int")
            op_args.append(f"int({p.name})")
            recombine.append(f"{p.name} = {enums[p.name]}({p.name})")
        elif p.name in unions:
            t, v = f"{p.name}_tensor", f"{p.name}_value"
            op_params += [f"{t}: Optional[torch.Tensor]", f"{v}: Optional[{unions[p.name]}]"]
            op_args += [f"{p.name} if isinstance({p.name}, torch.Tensor) else None",
                        f"None if isinstance({p.name}, torch.Tensor) else {p.name}"]
            recombine.append(f"{p.name} = {t} if {t} is not None else {v}")
    plain_op = ", ".join(x.split(":", 1)[0] for x in op_params)
    full_call = ", ".join(p.name if p.kind != "kwonly" else f"{p.name}={p.name}" for p in sig.params)
    mut = "(" + ", ".join(f'"{x}"' for x in mutates) + ("," if len(mutates) == 1 else "") + ")"
    if not variants:
        variants = [_Variant("", ret_type, fake_body, fixed)]
    lines, public, op_calls = [], [], []
    for i, v in enumerate(variants):
        suffix = "" if i == 0 else "_" + "_".join(re.sub(r"\W", "_", f"{k}_{x}").lower() for k, x in v.fixed.items())
        v_op, v_fake = f"{op}{suffix}", f"{fake}{suffix}" if not suffix else f"{op}{suffix}_fake"

        def inner(n, v=v):
            return "None" if n in eager else repr(v.fixed[n]) if n in v.fixed else n

        call = ", ".join(inner(p.name) if p.kind != "kwonly" else f"{p.name}={inner(p.name)}" for p in sig.params)
        if lines:
            lines += ["", ""]
        lines += [f'@torch.library.custom_op("{ns}::{op_name}{suffix}", mutates_args={mut})',
                  f"def {v_op}({', '.join(op_params)}) -> {v.ret_type}:",
                  f"    # the public API `{qual}`, opaque to torch.compile (compile-lint op boundary)"]
        lines += [f"    {x}" for x in recombine]
        lines += [f"    {'return ' if v.ret_type != 'None' else ''}{impl}({call})",
                  "", "",
                  f"@{v_op}.register_fake",
                  f"def {v_fake}({plain_op}):"]
        lines += [f"    {x}" for x in (recombine if v.fake_body != ["return None"] else [])]
        lines += [f"    {x}" for x in v.fake_body]
        op_calls.append(f"{v_op}({', '.join(op_args)})")
    for hc in helpers:
        lines += ["", "", hc]
    if eager:
        public += [f"if {' or '.join(f'{e} is not None' for e in eager)}:",
                   f"    # {', '.join(f'`{e}`' for e in eager)}: no op schema type; run the original body",
                   f"    return {impl}({full_call})"]
    # a bool flag whose True and False both have an op: the flag's truth picks one, as the body's `if flag:` did,
    # and no call is left to the original body
    flag_covered = len(fixed) == 1 and len(variants) == 2 and sorted(
        (type(x) is bool, x) for v in variants for x in v.fixed.values()) == [(True, False), (True, True)]
    for v, v_call in list(zip(variants, op_calls))[1:]:
        if flag_covered:
            (k, x), = v.fixed.items()
            public += [f"if {'' if x else 'not '}{k}:", f"    return {v_call}"]
        else:
            public += [f"if {' and '.join(_is(k, x, True) for k, x in v.fixed.items())}:",
                       f"    return {v_call}"]
    if fixed and not flag_covered:
        covered = " or ".join(", ".join(f"`{k}={x!r}`" for k, x in v.fixed.items()) for v in variants)
        public += [f"if {' or '.join(_is(k, x, False) for k, x in fixed.items())}:",
                   f"    # the op{'s cover' if len(variants) > 1 else ' covers'} {covered} (the configured "
                   f"fake's `when`); run the original body",
                   f"    return {impl}({full_call})"]
    for o, alloc in outs or ():
        public += [f"if {o} is None:", f"    {o} = {alloc}"]
    op_call = op_calls[0]
    if outs:
        public += [op_call, "return " + ", ".join(o for o, _ in outs)]
    elif ret_type == "None":
        public += [op_call]
    else:
        public += [f"return {op_call}"]
    after = f"{qual}.__dict__.update({impl}.__dict__)  # what its decorators attached" if fn.decorator_list else ""
    edits = [WrapDefInOp(path, qual, impl, "\n".join(lines), "\n".join(public), after)]
    from .source import module_binds, parse_file

    module = parse_file(path, ctx.text(path)).module
    if not module_binds(module, "torch"):
        edits.append(AddImport(path, "import torch"))
    if "Optional[" in " ".join(op_params) and not module_binds(module, "Optional"):
        edits.append(AddImport(path, "from typing import Optional"))
    for imp in sorted(fake_imports):
        if imp != "torch" and not module_binds(module, imp.split(".")[0]):
            edits.append(AddImport(path, f"import {imp}"))
    desc = (f"make the public API `{mod}.{qual}` the op `{ns}::{op_name}`: its body moves to `{impl}` (decorators "
            f"included), which the op calls; Dynamo records one opaque node ({shape})")
    if unions:
        desc += "; " + ", ".join(f"`{u}`" for u in unions) + " (a tensor or a number) passed as two optional arguments"
    if enums:
        desc += "; " + ", ".join(f"`{e}`" for e in enums) + " (an IntEnum) passed as its int and rebuilt in the op"
    if tuples:
        desc += "; " + ", ".join(f"`{t}`" for t in tuples) + " (a tuple of tensors) passed as its tensors and rebuilt in the op"
    if eager:
        desc += ("; a call that passes " + " or ".join(f"`{e}`" for e in eager) +
                 " (a Python object, no schema type) runs the original body, untraced as before")
    reason = ("every caller of the library gets the op: arguments are checked against the schema, autograd through "
              "the body is cut, and the fake asserts the shapes the library's code allocates")
    return FixPlan(FIXER, UNSAFE, path, fn.lineno, desc, reason, edits, key=(ID, path, qual))


@dataclass
class _Variant:
    """One configured fake: the op that covers the calls whose `when` parameters hold these constants."""
    conf: str
    ret_type: str
    fake_body: list
    fixed: dict


def _is(name: str, value, equal: bool) -> str:
    if value is None or isinstance(value, bool):
        return f"{name} is {value!r}" if equal else f"{name} is not {value!r}"
    return f"{name} == {value!r}" if equal else f"{name} != {value!r}"


def _default_is(sig, name: str, value) -> bool:
    p = sig.get(name)
    return (p is not None and isinstance(p.default, ast.Constant) and p.default.value == value
            and type(p.default.value) is type(value))


def _configured_variant(sig, types: dict, eager: list, fn, entry: str):
    """A configured fake (``TARGET [-> RET] [when NAME=CONST, ...]``) -> a _Variant, or why not."""
    conf, asserted_ret, when = _parse_fake(entry)
    if isinstance(when, str):
        return when
    for name, value in when.items():
        p = sig.get(name)
        if p is None or p.kind == "posonly" or name not in types or not isinstance(p.default, ast.Constant) \
                or type(p.default.value) is not type(value):
            return (f"the configured fake's `when {name}={value!r}` names no parameter with a constant default of "
                    f"that type")
    ret_type = asserted_ret or libsrc.schema_type(fn.returns)
    if conf.startswith("same-as:"):
        arg = conf.split(":", 1)[1].strip()
        if types.get(arg) != "torch.Tensor" or arg in when:
            return f"the configured fake `{conf}` names no tensor argument"
        return _Variant(conf, "torch.Tensor", [f"return torch.empty_like({arg})"], when)
    if ":" in conf and ret_type not in (None, "None"):
        module_, _, func = conf.partition(":")
        args = ", ".join(repr(when[p.name]) if p.name in when else p.name for p in sig.params if p.name not in eager)
        return _Variant(conf, ret_type, [f"from {module_} import {func} as _configured_fake",
                                         f"return _configured_fake({args})"], when)
    return (f"the configured fake `{conf}` needs `same-as:<arg>`, or `module:function` with a return annotation the "
            f"op schema can express")


def _parse_fake(value: str):
    """``TARGET [-> RET] [when NAME=CONST, ...]`` -> (TARGET, RET or None, {NAME: CONST}) or (.., .., why).

    TARGET is ``same-as:<arg>`` or ``module:function``; ``-> RET`` asserts the op's return type where the API's
    annotation is one no schema can express (``Union[Tensor, Tuple[Tensor, Tensor]]`` chosen by a flag); ``when``
    makes the op cover only the calls that leave those parameters at their (constant) defaults -- a call that passes
    another value runs the original body, as before the fix."""
    value = value.strip()
    target, _, when_s = value.partition(" when ")
    target, _, ret = target.partition("->")
    target, ret = target.strip(), ret.strip() or None
    if ret is not None:
        try:
            ret = libsrc.schema_type(ast.parse(ret, mode="eval").body)
        except SyntaxError:
            ret = None
        if ret is None or ret == "None":
            return target, None, f"the configured fake `{value}` asserts a return type no op schema can express"
    when = {}
    for part in filter(None, (x.strip() for x in when_s.split(","))):
        name, eq, const = part.partition("=")
        try:
            v = ast.literal_eval(const.strip()) if eq else None
        except (ValueError, SyntaxError):
            eq = ""
        if not eq or not name.strip().isidentifier() or not isinstance(v, (bool, int, float, str, type(None))):
            return target, ret, f"the configured fake `{value}`: `when {part}` is not NAME=CONSTANT"
        when[name.strip()] = v
    return target, ret, when


def _op_name(ctx, ns, mod, qual) -> str:
    """The op's name in ``ns``: the API's own name, qualified by its module when another API took it."""
    reg = ctx.__dict__.setdefault("_api_op_names", {})
    name = re.sub(r"\W", "_", qual)
    fid = f"{mod}:{qual}"
    if reg.get(name, fid) != fid:
        name = re.sub(r"\W", "_", mod.partition(".")[2] or mod) + "__" + name
    reg[name] = fid
    return name


def _top_names(tree) -> set:
    out = set()
    for st in libsrc._walk_defs(tree.body if tree else []):
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, (ast.Assign, ast.AnnAssign)):
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                out |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in st.names}
    return out


def _rename(code: str, rename: dict) -> str:
    for old, new in sorted(rename.items(), key=lambda kv: -len(kv[0])):
        code = re.sub(rf"\b{re.escape(old)}\b", new, code)
    return code


def _out_pattern(fn, sig, types):
    """[(param, allocation code)] when every return returns optional out-tensors that the function allocates with
    ``if p is None: p = <allocation>`` when the caller passes none; [] when the function returns no parameter;
    a reason (str) when it returns a parameter some other way."""
    params = {p.name: p for p in sig.params}
    rets = [n for n in _walk_no_defs(fn.body) if isinstance(n, ast.Return)]

    def ret_names(r):
        v = r.value
        if isinstance(v, ast.Name):
            return [v.id]
        if isinstance(v, ast.Tuple) and all(isinstance(e, ast.Name) for e in v.elts):
            return [e.id for e in v.elts]
        return None

    returned = set()
    for r in rets:
        ns = ret_names(r)
        if ns:
            returned |= {n for n in ns if n in params}
    if not returned:
        return []
    for r in rets:
        ns = ret_names(r)
        if ns is None or not all(n in params for n in ns):
            return (f"it returns its argument {', '.join(f'`{x}`' for x in sorted(returned))} on some paths and "
                    f"something else on others: an op must not return one of its inputs")
    outs = []
    body = libsrc.docstring_free_body(fn)
    assigned = {}
    for n in _walk_no_defs(fn.body):
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, (ast.AugAssign, ast.AnnAssign))
                  else [n.target] if isinstance(n, (ast.For, ast.NamedExpr)) else []):
            for x in ast.walk(t):
                if isinstance(x, ast.Name):
                    assigned[x.id] = assigned.get(x.id, 0) + 1
    for name in sorted(returned, key=lambda x: list(params).index(x)):
        p = params[name]
        if not (types[name] == "Optional[torch.Tensor]" and isinstance(p.default, ast.Constant)
                and p.default.value is None):
            return f"it returns its argument `{name}`, which is not an optional out-tensor: an op must not return it"
        alloc = None
        for st in body:
            if not isinstance(st, ast.If):
                continue
            # `if p is None: p = <alloc>`, or `if p is not None: <checks> else: p = <alloc>`
            branch = (st.body if not st.orelse and _is_none_test(st.test, name) else
                      st.orelse if _is_none_test(st.test, name, negated=True) else None)
            if (branch and len(branch) == 1 and isinstance(branch[0], ast.Assign) and len(branch[0].targets) == 1
                    and isinstance(branch[0].targets[0], ast.Name) and branch[0].targets[0].id == name):
                alloc = branch[0].value
                break
        if alloc is None or assigned.get(name, 0) != 1:
            return (f"it returns its argument `{name}` without allocating it once with `if {name} is None: "
                    f"{name} = <allocation>`")
        if not _is_allocation(alloc):
            return f"`{name}` is allocated by `{ast.unparse(alloc)}`, not a torch allocation the trace can run"
        free = {x.id for x in ast.walk(alloc) if isinstance(x, ast.Name)} - {"torch"}
        bad = [x for x in free if x not in params or assigned.get(x)]
        if bad:
            return f"the allocation of `{name}` reads `{bad[0]}`, computed in the body"
        outs.append((name, ast.unparse(alloc)))
    return outs


def _is_none_test(test, name, negated: bool = False) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == name
            and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot if negated else ast.Is)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None)


def _is_allocation(e) -> bool:
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    if isinstance(f, ast.Attribute) and f.attr in ALLOC_METHODS:
        return True
    d = libsrc._dotted(f)
    return d in ALLOC_FUNCS
