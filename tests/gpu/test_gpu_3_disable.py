"""3. The non-fullgraph fix: in a region compiled WITHOUT fullgraph, compile-lint's ``compiler-disable`` fixer
(asked for explicitly with ``FixOptions(only=("compiler-disable",))``) binds
``torch.compiler.disable(flashinfer.norm.rmsnorm)`` once and calls it.  The fixed model compiles, equals eager
bitwise, and no graph break is located inside FlashInfer's files any more.

Graph breaks are counted with ``torch._dynamo.utils.counters["graph_break"]`` (not ``explain()``), and located
with Dynamo's ``graph_breaks`` log ("Graph break in user code at FILE:LINE").  Before and after are both reported.
"""
from __future__ import annotations

import importlib

import pytest

from gpu_support import (GraphBreaks, bitwise_equal, copy_model, flashinfer_site, import_file, log,
                         require_cuda, require_flashinfer, run_fix)

pytestmark = pytest.mark.gpu


def _run(module, torch, steps=3):
    """Compile module.build()'s model (fullgraph=False, backend="eager"), run it on `steps` inputs; return
    (GraphBreaks of the first call, outputs, inputs)."""
    torch._dynamo.reset()
    torch.manual_seed(0)
    w = torch.randn(256, device="cuda", dtype=torch.bfloat16)
    model, compiled = module.build(256, backend="eager")
    model.to(device="cuda", dtype=torch.bfloat16).requires_grad_(False)
    with torch.no_grad():
        model.weight.copy_(w)
    xs = [torch.randn(128, 256, device="cuda", dtype=torch.bfloat16) for _ in range(steps)]
    breaks = GraphBreaks()
    with torch.no_grad():
        with breaks.capture():
            outs = [compiled(xs[0])]
        outs += [compiled(x) for x in xs[1:]]
    torch.cuda.synchronize()
    return breaks, outs, xs, w


def test_compiler_disable_fix_in_non_fullgraph_region(tmp_path, scan_cache):
    torch = require_cuda()
    require_flashinfer()
    site = flashinfer_site()
    fi_pkg = site / "flashinfer"
    from compile_lint.fixers import COMPILER_DISABLE, FixOptions

    original = importlib.import_module("models_rmsnorm_partial")
    eager_model = original.PartialRMSNormBlock(256).to(device="cuda", dtype=torch.bfloat16).requires_grad_(False)

    before, outs, xs, w = _run(original, torch)
    with torch.no_grad():
        eager_model.weight.copy_(w)
        eager = [eager_model(x) for x in xs]
    log(f"rmsnorm, fullgraph=False, BEFORE the fix: {before.summary(fi_pkg)}")
    assert all(bitwise_equal(o, e) for o, e in zip(outs, eager))
    assert before.count > 0 and before.inside(fi_pkg), "expected graph breaks inside FlashInfer before the fix"

    path = copy_model("models_rmsnorm_partial", tmp_path)
    report = run_fix(path, site, FixOptions(only=(COMPILER_DISABLE,)), scan_cache)
    assert [p.fixer for p in report.applied] == [COMPILER_DISABLE], report.skipped
    text = path.read_text()
    assert "torch.compiler.disable(flashinfer.norm.rmsnorm)" in text and "flashinfer.norm.rmsnorm(h" not in text
    fixed = import_file(path, "cl_gpu_fixed_models_rmsnorm_partial")

    after, outs, xs2, w2 = _run(fixed, torch)
    assert torch.equal(w, w2)
    with torch.no_grad():
        eager = [eager_model(x) for x in xs2]
    log(f"rmsnorm, fullgraph=False, AFTER the compiler-disable fix: {after.summary(fi_pkg)}")
    assert all(bitwise_equal(o, e) for o, e in zip(outs, eager)), "fixed compiled model differs from eager"
    inside = after.inside(fi_pkg)
    assert not inside, f"graph breaks still located inside FlashInfer: {inside}"
    assert not [r for r in after.reasons if str(fi_pkg) in r], "a graph-break reason names a FlashInfer file"
    assert after.locations, "the disabled call should still cost a graph break at the call site"
    assert after.count <= before.count
    log(f"first call: before the fix {before.count} graph breaks (counters) + {before.skipped_frames} frames skipped "
        f"to eager, {len(before.inside(fi_pkg))} logged events located in or reached through FlashInfer; after "
        f"{after.count} graph breaks + {after.skipped_frames} skipped frames, {len(inside)} in FlashInfer")
