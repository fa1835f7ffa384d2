"""compiler-disable: let the call run eagerly, with ``torch.compiler.disable`` - the fix of last resort.

## What it does
At the call site in your code (the default), binds a disabled alias once at module level and calls it::

    _fp4_quantize_eager = torch.compiler.disable(fp4_quantize)
    ...
    q = _fp4_quantize_eager(x, "100")

(one graph break at the call; writing ``torch.compiler.disable(f)(...)`` inline costs a second break on
``disable`` itself, measured on torch 2.13).  With ``--fix-in PKG`` it decorates the outermost function of that
package on the hazard path with ``@torch.compiler.disable`` instead.

## When it is legal
Only when every compiled region reaching the hazard is *not* ``fullgraph=True`` (``region.fullgraph is not
True`` for the finding's region and all its other regions): under fullgraph a disabled function is itself an
error (GB0098; measured: FlashInfer's loader wrapped in ``disable`` still fails a fullgraph capture).  Even
where it is legal it costs a graph break per call (5 were counted for one FlashInfer ``rmsnorm`` call), so
op-boundary and hoist-load are tried first.

## Fix safety
**Safe**: eager behaviour is unchanged, and under compile the call runs eagerly - exactly what an un-compiled
run does (a silent hazard, such as an environment read baked into the graph, goes back to eager semantics).
It changes performance (graph breaks), not results.  Decorating a library function (``--fix-in``) is safe in
the same sense but affects every caller of that function.

## Example
```python
# before                                  # after
from lib import load_and_run              import torch
                                          from lib import load_and_run
def f(x):
    return load_and_run(x) * 2            _load_and_run_eager = torch.compiler.disable(load_and_run)

f_c = torch.compile(f)                    def f(x):
                                              return _load_and_run_eager(x) * 2
```
"""
from __future__ import annotations

import re

import libcst as cst

from .model import COMPILER_DISABLE, SAFE, AddDecorator, AddImport, FixPlan, InsertTopLevel, Refusal, ReplaceNode
from .sites import CallRef, Context, user_frame_index
from .source import leading_import_end, module_binds, top_level_assignment

ID = COMPILER_DISABLE
SAFETY_REASON = ("eager behaviour is unchanged and the compiled code runs the call eagerly: results are those of "
                 "an un-compiled run; only performance changes (a graph break per call)")


def legal(finding) -> bool:
    regions = [finding.region] + list(getattr(finding, "other_regions", ()) or ())
    return all(r.fullgraph is not True for r in regions)


def site(ctx: Context, finding):
    if not legal(finding):
        return Refusal(ID, "a fullgraph=True region reaches this hazard: torch.compiler.disable is an error there")
    tr = finding.trace
    u = user_frame_index(ctx, finding)
    if u is None:
        return Refusal(ID, "no frame of the call path is in the code you may edit (see --fix-in)")
    if ctx.options.fix_in:
        fr = tr[u]
        if fr.qualname == "<module>" or "<lambda>" in fr.qualname:
            return Refusal(ID, f"`{fr.qualname}` cannot be decorated", fr.path, fr.line)
        return (ID, "decorate", fr.path, fr.qualname), ("decorate", fr)
    fr = tr[u]
    if u + 1 < len(tr):
        ref = ctx.call_at(fr.path, fr.qualname, fr.line, into_fid=ctx.frame_fid(tr[u + 1]))
    else:
        ref = ctx.call_at(fr.path, fr.qualname, finding.line, col=max(0, finding.col - 1),
                          callee=finding.callee)
    if ref is None:
        return Refusal(ID, f"no call at {fr.path}:{fr.line} leads into the hazard", fr.path, fr.line)
    return (ID, "call", ref.path, ref.span), ("call", ref)


def build(ctx: Context, payload):
    if payload[0] == "decorate":
        fr = payload[1]
        parsed = ctx.parsed(fr.path)
        edits = [AddDecorator(fr.path, fr.qualname, "torch.compiler.disable")]
        if not module_binds(parsed.module, "torch"):
            edits.append(AddImport(fr.path, "import torch"))
        desc = (f"decorate `{fr.qualname}` with @torch.compiler.disable: it runs eagerly (one graph break per "
                f"call, for every caller of this library function)")
        return FixPlan(ID, SAFE, fr.path, fr.line, desc, SAFETY_REASON, edits, key=(ID, fr.path, fr.qualname))
    ref: CallRef = payload[1]
    root = ref.node.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name):
        return Refusal(ID, f"`{ref.callee_code}` is not a module-level name or attribute", ref.path, ref.line)
    fs = ctx.function_summary(ref.module, ref.scope)
    if fs is not None and (root.value in fs.params or root.value in fs.locals):
        return Refusal(ID, f"`{ref.callee_code}` depends on `{root.value}`, a local of `{ref.scope}`: there is no "
                           f"module-level function to disable (use --fix-in to decorate the library function)",
                       ref.path, ref.line)
    parsed = ref.parsed
    value = f"torch.compiler.disable({ref.callee_code})"
    base = "_" + re.sub(r"\W+", "_", ref.callee_code).strip("_").lower() + "_eager"
    name = base
    i = 2
    while True:
        existing = top_level_assignment(parsed.module, name)
        if existing is not None and " ".join(existing.split()) == value:
            break
        if not module_binds(parsed.module, name):
            break
        name = f"{base}_{i}"
        i += 1
    m = ctx.program.module(ref.module)
    deps = max((b.line for b in (m.bindings.get(root.value, ()) if m is not None else ())), default=0)
    body = parsed.module.body
    end = leading_import_end(body)
    if end and deps <= parsed.positions[body[end - 1]].end.line:
        deps = -1
    edits = [InsertTopLevel(ref.path, deps or -1, f"{name} = {value}\n")]
    if not module_binds(parsed.module, "torch"):
        edits.append(AddImport(ref.path, "import torch"))
    norm = " ".join(ref.callee_code.split())
    from .sites import enclosing_function_qualname

    for node in parsed.positions:
        if isinstance(node, cst.Call) and " ".join(parsed.code(node.func).split()) == norm and \
                enclosing_function_qualname(parsed, node) != "<module>":
            edits.append(ReplaceNode(ref.path, *parsed.pos(node.func), parsed.code(node.func), name))
    desc = (f"call `{ref.callee_code}` through `{name} = torch.compiler.disable({ref.callee_code})`: it runs "
            f"eagerly, at the price of a graph break per call (fix of last resort; legal because no fullgraph "
            f"region reaches it)")
    return FixPlan(ID, SAFE, ref.path, ref.line, desc, SAFETY_REASON, edits, key=(ID, ref.path, ref.span))
