"""op-boundary: put the library call behind a real op, so Dynamo records one opaque node instead of tracing it.

## What it does
Rewrites the call in your code that leads into the hazard (``fp4_quantize(x, s)``) so that it goes through a
``torch.library`` op:

(a) **The library's own op.**  When the library registers a real op for the same call - a function decorated
    with ``torch.library.custom_op("ns::name")`` next to the one you call, whose body forwards to it (flashinfer
    0.7.2.post1: ``flashinfer::fp4_quantize`` on ``_fp4_quantize_custom_op``) - the call becomes
    ``torch.ops.ns.name(...)``, arguments mapped by the op's signature.  An argument you pass that the op does
    not forward (``backend=``) refuses this form.
(b) **A generated op.**  Otherwise a ``torch.library.custom_op`` wrapper (namespace ``compile_lint``, or
    ``--op-namespace``) is written to ``_compile_lint_ops.py`` next to the call site, with a ``register_fake``,
    and the call site calls it.  The fake is generated only when the output can be derived soundly: outputs the
    wrapped function allocates from input shapes (``torch.empty*``/``new_empty``/``*_like``, copied with the
    arithmetic they need; flashinfer 0.6.3's ``fp4_quantize_sm100``), kernels writing caller-allocated ``out``
    tensors (a mutating op whose fake returns ``None``), a shape spec from the configuration
    (``"same-as:<arg>"``), or a fake you name (``"module:function"``).  Otherwise the fixer says why and the
    other fixes are offered.  It never emits a fake that raises or guesses.

## When it is legal
In every region, and it is the default under ``fullgraph=True``: it is the only fix that removes an opaque
native call (``tvm_ffi.Function``) from the trace (measured on an H200: hoisting the load or
``torch.compiler.disable`` still fail a fullgraph capture; an op boundary compiles, captures and replays).
The op's arguments must have ``torch.library`` schema types (tensors, numbers, strings, optionals, lists);
the wrapped callee must be reachable from module scope (not through ``self`` or a local variable).

## Fix safety
- **Safe** when the fake is derived from the library's own code (allocations or declared out-parameters) and,
  for (a), every argument and default maps one to one.  In eager mode the op calls the same function with the
  same arguments.  The outputs of an allocate-then-launch-a-kernel function carry no gradient, so the generated
  op registers a backward that returns no gradient either.
- **Unsafe** when the fake comes from the configuration (the shape is asserted, not checked), when an excluded
  statement writes an output with a differentiable torch op, or when (a) relies on a default the op computes
  differently (flashinfer's ``nvfp4_4over6``).

## Example
```python
# before                                           # after
from flashinfer import fp4_quantize                from flashinfer import fp4_quantize
                                                   from . import _compile_lint_ops
def apply(self, layer, x):                         def apply(self, layer, x):
    q, s = fp4_quantize(x, layer.scale)                q, s = _compile_lint_ops.fp4_quantize(x, layer.scale)
```
"""
from __future__ import annotations

import ast
import re
from typing import Optional

import libcst as cst

from . import libsrc
from .fake import CannotDerive, Deriver
from .model import (
    GENERATED_MODULE,
    OP_BOUNDARY,
    SAFE,
    UNSAFE,
    AddImport,
    FixPlan,
    GeneratedBlock,
    Refusal,
    ReplaceNode,
)
from .sites import CallRef, Context, user_frame_index

ID = OP_BOUNDARY


def site(ctx: Context, finding):
    """The call to wrap: the call in the fix scope that leads into the hazard, widened to the whole method
    chain it is part of (``get_mod("100").run(x)``)."""
    u = user_frame_index(ctx, finding)
    if u is None:
        return Refusal(ID, "no frame of the call path is in the code you may edit (see --fix-in)")
    tr = finding.trace
    fr = tr[u]
    if u + 1 < len(tr):
        ref = ctx.call_at(fr.path, fr.qualname, fr.line, into_fid=ctx.frame_fid(tr[u + 1]))
    else:
        ref = ctx.call_at(fr.path, fr.qualname, finding.line, col=max(0, finding.col - 1),
                          callee=finding.callee)
    if ref is None:
        return Refusal(ID, f"no call at {fr.path}:{fr.line} leads into the hazard (it is reached through an "
                           f"attribute read, a decorator or a `with`)", fr.path, fr.line)
    ref = ctx.outermost_chain_call(ref)
    return (ID, ref.path, ref.span), ref


# ------------------------------------------------------------------------------------------------- build
def build(ctx: Context, ref: CallRef) -> object:
    from compile_lint.values import Func, Op

    funcs = {v.id: v for v in ref.targets if isinstance(v, Func)}
    if any(isinstance(v, Op) for v in ref.targets):
        return Refusal(ID, f"`{ref.callee_code}` is already an op", ref.path, ref.line)
    if len(funcs) != 1:
        what = "nothing the analyzer can read" if not funcs else f"{len(funcs)} different functions"
        return Refusal(ID, f"`{ref.callee_code}` resolves to {what}; an op boundary wraps one known function",
                       ref.path, ref.line)
    fv = next(iter(funcs.values()))
    if any(a.star for a in ref.node.args):
        return Refusal(ID, f"`{ref.code}` passes *args/**kwargs", ref.path, ref.line)
    fid = fv.id
    mod, _, qual = fid.partition(":")
    m = ctx.program.module(mod)
    fn = libsrc.find_def(m.path, qual) if m is not None and m.path else None
    if fn is None:
        return Refusal(ID, f"cannot read the source of `{mod}.{qual}`", ref.path, ref.line)
    fs = m.functions.get(qual)
    is_method = fs is not None and fs.class_name is not None and libsrc.is_method_def(m.path, qual, fn)
    sig = libsrc.signature(fn, drop_self=is_method)
    n_pos = len(ref.node.args) - sum(1 for a in ref.node.args if a.keyword is not None)
    kw = [a.keyword.value for a in ref.node.args if a.keyword is not None]
    b = libsrc.bind(sig, n_pos, kw)
    if b.error:
        return Refusal(ID, f"cannot bind `{ref.code}` to `{qual}`: {b.error}", ref.path, ref.line)

    notes = []
    existing = _existing_op(ctx, ref, mod, m, fn, sig, b)
    if isinstance(existing, FixPlan):
        return existing
    if isinstance(existing, Refusal):
        notes.append(existing.reason)
    return _generated_op(ctx, ref, fid, mod, qual, fn, sig, b, notes)


# ---------------------------------------------------------------------------- (a) the library's own op
def _existing_op(ctx, ref, mod, m, fn, sig, b):
    t = libsrc.tree(m.path)
    if t is None:
        return None
    for st in libsrc._walk_defs(t.body):
        if not isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)) or st is fn:
            continue
        decls = [d for d in libsrc.op_decls(st, t) if d.real]
        if not decls:
            continue
        fwd = _forwarding_call(st, fn.name)
        if fwd is None:
            continue
        return _map_to_op(ctx, ref, decls[0].name, st, fwd, fn, sig, b)
    return None


def _forwarding_call(op_fn, name: str) -> Optional[ast.Call]:
    for n in ast.walk(op_fn):
        if isinstance(n, ast.Call):
            f = n.func
            if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                return n
    return None


def _map_to_op(ctx, ref: CallRef, op_name: str, op_fn, fwd: ast.Call, fn, sig, b):
    ns, _, name = op_name.partition("::")
    op_sig = libsrc.signature(op_fn)
    op_params = set(op_sig.names())
    fb = libsrc.bind(sig, len([a for a in fwd.args if not isinstance(a, ast.Starred)]),
                     [k.arg for k in fwd.keywords if k.arg])
    if fb.error:
        return Refusal(ID, f"`{op_name}` forwards to `{fn.name}` in a way the fixer cannot follow ({fb.error})")
    forward, derived = {}, {}
    for q, how in fb.order:
        a = fwd.args[how[1]] if how[0] == "pos" else next(k.value for k in fwd.keywords if k.arg == how[1])
        if isinstance(a, ast.Name) and a.id in op_params:
            forward[q] = a.id
        else:
            derived[q] = ast.unparse(a)
    target = f"torch.ops.{ns}.{name}"
    for q, _how in b.order:
        if q not in forward:
            why = f"computed by the op as `{derived[q]}`" if q in derived else "not a parameter of the op"
            return Refusal(ID, f"`{ref.code}` passes `{q}=`, which has no counterpart in `{target}` ({why})",
                           ref.path, ref.line)
    unsafe, explicit = [], {}
    passed = {q for q, _ in b.order}
    for p in sig.params:
        if p.name in passed:
            continue
        if p.name in derived:
            unsafe.append(f"`{p.name}` (default `{ast.unparse(p.default) if p.default is not None else '-'}`) is "
                          f"computed by the op as `{derived[p.name]}`")
            continue
        if p.name not in forward:
            continue  # the op calls the function without it: the same default applies
        op_p = op_sig.get(forward[p.name])
        mine = libsrc.literal_source(p.default)
        theirs = libsrc.literal_source(op_p.default) if op_p is not None else None
        if mine is not None and theirs is not None:
            if ast.literal_eval(mine) != ast.literal_eval(theirs):
                explicit[forward[p.name]] = mine
        elif p.default is not None and op_p is not None and op_p.default is not None and \
                ast.unparse(p.default) == ast.unparse(op_p.default):
            pass
        else:
            unsafe.append(f"`{p.name}` defaults to `{ast.unparse(p.default) if p.default is not None else '-'}` "
                          f"here and to `{ast.unparse(op_p.default) if op_p is not None and op_p.default is not None else '-'}` in the op")
    covered = {forward[q] for q in passed} | set(explicit)
    for p in op_sig.params:
        if p.name not in covered and not p.has_default:
            return Refusal(ID, f"`{target}` needs `{p.name}`, which `{ref.code}` does not pass", ref.path, ref.line)
    # the new call: positional while the op's parameter sits at the same position, keywords after that
    op_pos = [p.name for p in op_sig.params if p.kind in ("posonly", "normal")]
    args_code = []
    identity = True
    kw_mode = False
    for q, how in b.order:
        node = ref.node.args[how[1]] if how[0] == "pos" else next(
            a for a in ref.node.args if a.keyword is not None and a.keyword.value == how[1])
        value = ref.parsed.code(node.value)
        p = forward[q]
        if how[0] == "pos" and not kw_mode and how[1] < len(op_pos) and op_pos[how[1]] == p:
            args_code.append(value)
        else:
            kw_mode = True
            args_code.append(f"{p}={value}")
            if how[0] == "pos" or p != q:
                identity = False
    for p, v in explicit.items():
        args_code.append(f"{p}={v}")
        identity = False
    edits = []
    if identity:
        f = ref.node.func
        edits.append(ReplaceNode(ref.path, *ref.parsed.pos(f), ref.parsed.code(f), target))
    else:
        edits.append(ReplaceNode(ref.path, *ref.span, ref.code, f"{target}({', '.join(args_code)})"))
    from .source import module_binds

    if not module_binds(ref.parsed.module, "torch"):
        edits.append(AddImport(ref.path, "import torch"))
    safety = UNSAFE if unsafe else SAFE
    desc = (f"call the library's registered op `{target}` instead of `{ref.callee_code}`: Dynamo records one "
            f"opaque node (its fake is the library's own)")
    reason = ("the op forwards every argument to the same function, with the same defaults"
              if not unsafe else "; ".join(unsafe))
    return FixPlan(ID, safety, ref.path, ref.line, desc, reason, edits, key=(ID, ref.path, ref.span))


# ----------------------------------------------------------------------------------- (b) a generated op
def _generated_op(ctx, ref: CallRef, fid, mod, qual, fn, sig, b, notes):
    params = [(q, how) for q, how in b.order]
    ordered = [p for p in sig.params if p.name in {q for q, _ in params}]
    types = {}
    for p in ordered:
        t = libsrc.schema_type(p.annotation)
        if t is None:
            ann = ast.unparse(p.annotation) if p.annotation is not None else "no annotation"
            return _refuse(ref, notes, f"parameter `{p.name}` of `{qual}` ({ann}) has no torch.library schema type")
        types[p.name] = t
    if not any(libsrc.is_tensor_type(t) for t in types.values()):
        return _refuse(ref, notes, f"`{ref.code}` passes no tensor: an op needs at least one tensor argument")
    # where the callee comes from, as seen from the generated module
    callee = _callee_source(ctx, ref)
    if isinstance(callee, Refusal):
        return _refuse(ref, notes, callee.reason)
    callee_expr, imports, lazy = callee

    # the fake
    fake = _fake_for(ctx, ref, fid, mod, qual, fn, sig, ordered, types)
    if isinstance(fake, Refusal):
        return _refuse(ref, notes, fake.reason)
    ret_type, mutates, fake_code, helpers_code, fake_imports, safety, safety_reason = fake
    # a derived fake means fresh buffers written by an opaque kernel: no gradient, as in the original
    no_grad = safety == SAFE
    others = _other_bindings(ctx, ref, fid)
    if others:
        arch = (getattr(ctx.program, "arch", None) or getattr(ctx.program, "arch_eval", None)) is not None
        note = (f"`{ref.callee_code}` is bound conditionally in {ref.module} (also to {', '.join(others)}); the fake "
                f"describes `{mod}.{qual}`, the binding ")
        if arch and safety == SAFE:
            safety_reason += "; " + note + "the scan's --target-arch selects (other targets are not covered)"
        else:
            safety = UNSAFE
            safety_reason = note + "this scan resolved: pass --target-arch to fix it for one target"

    gen_path, gen_mod, import_stmt, alias = _generated_location(ctx, ref)
    ns = ctx.options.op_namespace
    prefix = re.sub(r"\W", "_", gen_mod.rpartition(".")[0]) if "." in gen_mod else ""
    base = re.sub(r"\W", "_", fn.name).strip("_") or "op"
    call_args = []
    for q, how in b.order:
        call_args.append(q if how[0] == "pos" else f"{q}={q}")
    sig_code = ", ".join(f"{p.name}: {types[p.name]}" for p in ordered)
    plain_params = ", ".join(p.name for p in ordered)
    name = _unique_name(ctx, gen_path, base, lambda n: _op_block(
        n, ns, (prefix + "_" if prefix else "") + n, mutates, sig_code, ret_type, lazy, callee_expr, call_args,
        plain_params, fake_code, ordered, f"{mod}.{qual}", no_grad))
    block = _op_block(name, ns, (prefix + "_" if prefix else "") + name, mutates, sig_code, ret_type, lazy,
                      callee_expr, call_args, plain_params, fake_code, ordered, f"{mod}.{qual}", no_grad)
    code = block + ("\n\n\n" + "\n\n\n".join(helpers_code) if helpers_code else "")
    imps = ["import torch"]
    if "Optional[" in sig_code:
        imps.append("from typing import Optional")
    imps += sorted(f"import {m}" for m in fake_imports if m != "torch")
    imps += imports
    edits = [GeneratedBlock(gen_path, name, code, tuple(imps))]
    edits.append(ReplaceNode(ref.path, *ref.parsed.pos(ref.node.func), ref.callee_code, f"{alias}.{name}"))
    edits.append(AddImport(ref.path, import_stmt))
    # the same callee, called the same way, elsewhere in the file
    for other in _same_calls(ctx, ref, sig):
        edits.append(ReplaceNode(ref.path, *other.parsed.pos(other.node.func), other.callee_code, f"{alias}.{name}"))
    op_full = f"{ns}::{(prefix + '_' if prefix else '') + name}"
    desc = (f"wrap `{ref.callee_code}` ({mod}.{qual}) in the generated op `{op_full}` "
            f"({gen_path.rsplit('/', 1)[-1]}) and call it here: Dynamo records one opaque node instead of tracing "
            f"the JIT load / host calls behind it")
    if notes:
        desc += "\n  (the library's own op could not be used: " + "; ".join(notes) + ")"
    return FixPlan(ID, safety, ref.path, ref.line, desc, safety_reason, edits, key=(ID, ref.path, ref.span))


def _other_bindings(ctx, ref: CallRef, fid: str) -> list:
    """What else the callee's root name may be bound to in the user's module, guards ignored (a conditional
    import picks a different function on another GPU)."""
    from compile_lint.values import Const, External, Func

    func = ref.node.func
    if not isinstance(func, cst.Name):
        return []
    m = ctx.program.module(ref.module)
    out = []
    for b in (m.bindings.get(func.value, ()) if m is not None else ()):
        vals = frozenset()
        try:
            if b.kind == "import":
                vals = (ctx.program.module_value(b.value[0]) if b.value[1] is None
                        else ctx.program.import_from(b.value[0], b.value[1]))
            elif b.kind == "assign":
                vals = ctx.eval(b.value, ref.module, "<module>")
        except Exception:
            vals = frozenset()
        for v in vals:
            if isinstance(v, Func) and v.id != fid:
                out.append(v.id.replace(":", "."))
            elif isinstance(v, External):
                out.append(v.name)
            elif isinstance(v, Const) and v.value is None:
                continue
    return sorted(set(out))


def _refuse(ref, notes, reason):
    if notes:
        reason = reason + "; the library's own op: " + "; ".join(notes)
    return Refusal(ID, reason, ref.path, ref.line)


def _op_block(name, ns, opname, mutates, sig_code, ret_type, lazy, callee_expr, call_args, plain_params, fake_code,
              ordered, wrapped, no_grad):
    mut = "()" if not mutates else "(" + ", ".join(f'"{m}"' for m in mutates) + ("," if len(mutates) == 1 else "") + ")"
    lines = [f"# wraps `{wrapped}` (compile-lint op-boundary)",
             f'@torch.library.custom_op("{ns}::{opname}", mutates_args={mut})',
             f"def {name}({sig_code}) -> {ret_type}:"]
    lines += [f"    {x}" for x in lazy]
    call = f"{callee_expr}({', '.join(call_args)})"
    lines.append(f"    return {call}" if ret_type != "None" else f"    {call}")
    lines += ["", "", f"@{name}.register_fake", f"def _{name}_fake({plain_params}):"]
    lines += [f"    {x}" for x in fake_code]
    if no_grad and ret_type != "None" and not mutates:
        n = len(ordered)
        lines += ["", "",
                  f"def _{name}_backward(ctx, *grads):",
                  "    # the wrapped call fills fresh buffers with an opaque kernel: no gradient flows through it",
                  f"    return {'None' if n == 1 else '(' + ', '.join(['None'] * n) + ')'}",
                  "", "",
                  f"{name}.register_autograd(_{name}_backward)"]
    return "\n".join(lines)


def _unique_name(ctx, gen_path, base, make) -> str:
    """A function name in the generated module: reuse one whose code is identical, else the first free one."""
    from .source import module_binds

    reg = ctx.__dict__.setdefault("_gen_names", {})
    existing = None
    try:
        existing = cst.parse_module(ctx.text(gen_path)) if _exists(gen_path) else None
    except (OSError, cst.ParserSyntaxError):
        existing = None
    i = 1
    while True:
        name = base if i == 1 else f"{base}_{i}"
        code = make(name)
        key = (gen_path, name)
        if key in reg:
            if reg[key] == code:
                return name
        elif existing is not None and module_binds(existing, name):
            if _defined_code(existing, name) == _norm_def(code, name):
                reg[key] = code
                return name
        else:
            reg[key] = code
            return name
        i += 1


def _exists(p) -> bool:
    from pathlib import Path

    return Path(p).is_file()


def _defined_code(module, name):
    for st in module.body:
        if isinstance(st, cst.FunctionDef) and st.name.value == name:
            return " ".join(module.code_for_node(st).split())
    return None


def _norm_def(code, name):
    m = cst.parse_module(code)
    return _defined_code(m, name)


def _generated_location(ctx, ref: CallRef):
    from pathlib import Path

    d = Path(ref.path).parent
    gen_path = str(d / f"{GENERATED_MODULE}.py")
    mod = ref.module
    pkg = mod.rpartition(".")[0] if not ctx.is_package(mod) else mod
    if pkg:
        return gen_path, f"{pkg}.{GENERATED_MODULE}", f"from . import {GENERATED_MODULE}", GENERATED_MODULE
    return gen_path, GENERATED_MODULE, f"import {GENERATED_MODULE}", GENERATED_MODULE


def _callee_source(ctx, ref: CallRef):
    """How the generated module reaches the callee: (expression, top-level imports, lazy import lines)."""
    func = ref.node.func
    names = []
    ok = _collect_names(func, names)
    if not ok:
        return Refusal(ID, f"`{ref.callee_code}` is not a plain name, attribute chain or call of constants")
    fs = ctx.function_summary(ref.module, ref.scope)
    msum = ctx.program.module(ref.module)
    imports, lazy, rename = [], [], {}
    for n in dict.fromkeys(names):
        if fs is not None and (n in fs.params or n in fs.kwonly or n in fs.locals or n == fs.vararg):
            return Refusal(ID, f"the callee `{ref.callee_code}` depends on `{n}`, a local of `{ref.scope}`: the op "
                               f"cannot reach it (hoist it first, or wrap a module-level function)")
        binds = msum.bindings.get(n, ()) if msum is not None else ()
        alias = f"_impl_{n}"
        rename[n] = alias
        if len(binds) == 1 and binds[0].kind == "import" and not binds[0].guards:
            module, name = binds[0].value
            imports.append(f"import {module} as {alias}" if name is None else f"from {module} import {name} as {alias}")
        elif binds:
            lazy.append(f"from {ref.module} import {n} as {alias}  # bound conditionally there: use its binding")
        elif n in ("torch",):
            rename[n] = n
        else:
            return Refusal(ID, f"cannot tell where `{n}` in `{ref.callee_code}` comes from")
    expr = _rename(ref.parsed.module, func, rename)
    return expr, imports, lazy


def _collect_names(node, out: list) -> bool:
    if isinstance(node, cst.Name):
        out.append(node.value)
        return True
    if isinstance(node, cst.Attribute):
        return _collect_names(node.value, out)
    if isinstance(node, cst.Call):
        for a in node.args:
            if a.star or not _is_literal(a.value):
                return False
        return _collect_names(node.func, out)
    if isinstance(node, cst.Subscript):
        for el in node.slice:
            if not isinstance(el.slice, cst.Index) or not _is_literal(el.slice.value):
                return False
        return _collect_names(node.value, out)
    return False


def _is_literal(node) -> bool:
    try:
        ast.literal_eval(cst.Module(body=[]).code_for_node(node))
        return True
    except (ValueError, SyntaxError, TypeError):
        return False


def _rename(module, node, rename: dict) -> str:
    """The code of ``node`` with its root name (``a`` in ``a.b(1).c``) renamed."""
    root = node
    while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
        root = root.value if isinstance(root, (cst.Attribute, cst.Subscript)) else root.func
    if isinstance(root, cst.Name) and root.value in rename and rename[root.value] != root.value:
        node = node.deep_replace(root, root.with_changes(value=rename[root.value]))
    return module.code_for_node(node)


def _fake_for(ctx, ref, fid, mod, qual, fn, sig, ordered, types):
    """(return type, mutates, fake body lines, helper defs, imports, safety, safety reason) or Refusal."""
    cfg = _configured_fake(ctx, ref, mod, qual, fn)
    plain = [p.name for p in ordered]
    if cfg is not None:
        kind, value = cfg
        if kind == "same-as":
            if value not in types or not libsrc.is_tensor_type(types[value]) or "Optional" in types[value]:
                return Refusal(ID, f"the configured fake `same-as:{value}` names no tensor argument of the call")
            return ("torch.Tensor", (), [f"return torch.empty_like({value})"], [], set(), UNSAFE,
                    f"the fake `same-as:{value}` comes from the configuration: the output shape is asserted, "
                    f"not derived")
        if kind == "function":
            module, _, func = value.partition(":")
            ret = libsrc.schema_type(fn.returns)
            if ret is None:
                return Refusal(ID, f"`{qual}` has no return annotation the op schema can express")
            try:
                muts = Deriver(ctx).mutated(fid)
            except CannotDerive:
                muts = ()
            muts = tuple(m for m in muts if m in plain)
            return (ret, muts, [f"from {module} import {func} as _user_fake", f"return _user_fake({', '.join(plain)})"],
                    [], set(), UNSAFE, f"the fake `{value}` comes from the configuration and is not checked")
    d = Deriver(ctx)
    try:
        spec = d.derive(fid)
    except CannotDerive as e:
        return Refusal(ID, f"no sound fake for `{qual}`: {e}; name one in [tool.compile-lint.fix.fakes] "
                           f"(\"{mod}.{qual}\" = \"same-as:<arg>\" or \"module:function\")")
    h = spec.entry
    ret = h.ret
    mutates = tuple(m for m in h.mutated if m in plain)
    missing = [m for m in h.mutated if m not in plain]
    if isinstance(ret, tuple) and ret[0] == "bad":
        return Refusal(ID, f"no sound fake for `{qual}`: {ret[1]}")
    if ret == "none":
        if not mutates:
            return Refusal(ID, f"`{qual}` returns nothing and writes none of the tensors `{ref.code}` passes"
                               + (f" (it writes `{', '.join(missing)}`, which the call does not pass)" if missing else ""))
        return ("None", mutates, ["return None"], [], set(), SAFE,
                f"an out-parameter kernel: the op is declared to write {', '.join(f'`{m}`' for m in mutates)} "
                f"({'declared by the library' if _declared(ctx, fid) else 'every tensor handed to the kernel'}); "
                f"the fake returns None")
    if ret == "fresh":
        rtype = "torch.Tensor"
    elif isinstance(ret, tuple) and ret[0] == "tuple":
        rtype = "tuple[" + ", ".join(["torch.Tensor"] * ret[1]) + "]"
    else:
        return Refusal(ID, f"no sound fake for `{qual}`: it does not return tensors it allocated (got {ret})")
    ann = libsrc.schema_type(fn.returns)
    if ann is not None and ann.replace("Tuple", "tuple") != rtype and not (ann == "torch.Tensor" and rtype == "torch.Tensor"):
        if not (ann.startswith("tuple[") and rtype.startswith("tuple[") and ann.count("torch.Tensor") == rtype.count(
                "torch.Tensor")):
            return Refusal(ID, f"`{qual}` is annotated `-> {ast.unparse(fn.returns)}` but returns {rtype}")
    # map the op's parameters onto the helper's (same names: the op's parameters are the callee's)
    fake_body = [f"return {h.name}({', '.join(_helper_args(h, ordered))})"]
    helpers = [x.code for x in spec.helpers]
    safety, reason = SAFE, (f"the fake is the library's own allocation code ({', '.join(x.fid.replace(':', '.') for x in spec.helpers)}) "
                            f"without the kernel; the outputs are fresh buffers, so no gradient is dropped")
    if any(x.risk for x in spec.helpers):
        safety, reason = UNSAFE, ("the wrapped code writes its outputs with a differentiable torch op, and the op "
                                  "boundary has no backward for it")
    return (rtype, mutates, fake_body, helpers, spec.imports, safety, reason)


def _helper_args(h, ordered) -> list:
    names = {p.name for p in ordered}
    out = []
    for p in h.params:
        if p in names:
            out.append(f"{p}={p}")
    return out


def _declared(ctx, fid) -> bool:
    mod, _, qual = fid.partition(":")
    m = ctx.program.module(mod)
    fn = libsrc.find_def(m.path, qual) if m is not None else None
    return fn is not None and any(d.mutates is not None for d in libsrc.op_decls(fn, libsrc.tree(m.path)))


def _configured_fake(ctx, ref, mod, qual, fn):
    fakes = ctx.options.fakes or {}
    for key in (f"{mod}.{qual}", ref.callee_code, fn.name, f"{mod}:{qual}"):
        if key in fakes:
            v = fakes[key] if isinstance(fakes[key], str) else fakes[key][0]  # a caller's op: the first fake
            v = v.strip()
            if v.startswith("same-as:"):
                return "same-as", v.split(":", 1)[1].strip()
            if ":" in v:
                return "function", v
    return None


def _same_calls(ctx, ref: CallRef, sig) -> list:
    """Other calls in the file with the same callee text that bind the same parameters."""
    out = []
    n_pos = len(ref.node.args) - sum(1 for a in ref.node.args if a.keyword is not None)
    mine = set(libsrc.bind(sig, n_pos, [a.keyword.value for a in ref.node.args if a.keyword is not None]).params())
    for node in ref.parsed.positions:
        if not isinstance(node, cst.Call) or node is ref.node:
            continue
        if ref.parsed.code(node.func) != ref.callee_code or any(a.star for a in node.args):
            continue
        np_ = len(node.args) - sum(1 for a in node.args if a.keyword is not None)
        b = libsrc.bind(sig, np_, [a.keyword.value for a in node.args if a.keyword is not None])
        if b.error or set(b.params()) != mine:
            continue
        other = ctx.call_ref(ref.path, node)
        if other is not None:
            out.append(other)
    return out
