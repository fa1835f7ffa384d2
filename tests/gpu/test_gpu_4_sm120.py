"""4. SM120 armed: the paths FlashInfer and SGLang take only on compute capability 12.x.  These tests run on a
12.x device and skip everywhere else with that reason (none has run yet: no SM120 GPU was available, see
docs/gpu-results.md).  Their static halves also run on CPU in ``test_gpu_0_static.py``.

- FlashInfer's ``120f`` backend key: ``get_fp4_quantization_module`` maps backend "120"/"121" to "120f" on CUDA
  >= 12.9 and JIT-builds ``fp4_quantization_120f``; ``CompilationContext`` normalises (12, 0) to ``0f`` after an
  ``nvcc --version`` subprocess (``is_cuda_version_at_least``).  compile-lint with ``target_arch="sm120"``
  predicts the SM120 generator and the nvcc subprocess; Dynamo must fail there, and the op-boundary fix must
  capture in a CUDA graph and match eager bitwise (FP4 on SM100+ is compared bitwise).
- SGLang's ``is_arch_support_pdl`` probe (``models_pdl_probe.py``, SGLang's shape): the ``major == 12`` branch
  runs ``nvcc --version``; predicted with ``sm120`` only, and Dynamo must fail in it on a cold compile.
"""
from __future__ import annotations

import importlib
import time

import pytest

from gpu_support import (HERE, bitwise_equal, capture_and_replay, copy_model, flashinfer_site,
                         predicted_stops_through, import_file, log, names, require_capability, require_flashinfer,
                         run_fix, scan_file, through, under, user_frames)

pytestmark = pytest.mark.gpu


def _sm120():
    cap = require_capability(12)
    import torch

    return torch, cap


def test_sm120_fp4_backend_key_120f(tmp_path, scan_cache):
    torch, (major, minor) = _sm120()
    require_flashinfer()
    site = flashinfer_site()
    from compile_lint.fixers import OP_BOUNDARY, FixOptions
    from flashinfer.compilation_context import CompilationContext
    from flashinfer.utils import version_at_least

    cuda = torch.version.cuda
    family = version_at_least(cuda, "12.9")
    result, _ = scan_file(HERE / "models_fp4.py", site, scan_cache, target_arch=f"sm{major}{minor}", cuda_version=cuda)
    hops = {n for f in predicted_stops_through(result, "get_fp4_quantization_module") for n in names(f)}
    assert hops & {"gen_fp4_quantization_sm120_module", "gen_fp4_quantization_sm120f_module",
                   "gen_fp4_quantization_sm121_module"}, sorted(hops)
    assert not hops & {"gen_fp4_quantization_sm90_module", "gen_fp4_quantization_sm100_module"}, sorted(hops)

    # runtime: the family target and the 120f module
    archs = CompilationContext().TARGET_CUDA_ARCHS
    log(f"sm120: CUDA {cuda}, CompilationContext().TARGET_CUDA_ARCHS = {sorted(archs)}")
    if minor == 0:
        assert (12, "0f" if family else "0a") in archs
    original = importlib.import_module("models_fp4")
    model, compiled = original.build(backend="eager")
    model.to("cuda")
    x = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
    model.global_scale.fill_(448.0 * 6.0 / float(x.abs().max()))
    torch._dynamo.reset()
    with torch.no_grad(), pytest.raises(torch._dynamo.exc.Unsupported) as ei:
        compiled(x)
    fns = [fn for f, _, fn in user_frames(str(ei.value)) if under(f, site)]
    assert "get_fp4_quantization_module" in fns, fns
    with torch.no_grad():
        eager = model(x)
    from flashinfer.jit import env as jit_env

    built = sorted(p.name for p in jit_env.FLASHINFER_JIT_DIR.glob("fp4_quantization_*"))
    log(f"sm120: JIT modules built: {built}")
    assert ("fp4_quantization_120f" if family else f"fp4_quantization_{major}{minor}") in built

    # the fix: FlashInfer's registered op, fullgraph, CUDA graph, bitwise (SM120 is SM100+)
    path = copy_model("models_fp4", tmp_path)
    report = run_fix(path, site, FixOptions(only=(OP_BOUNDARY,), unsafe=True), scan_cache,
                     target_arch=f"sm{major}{minor}", cuda_version=cuda)
    assert report.applied and "torch.ops.flashinfer.fp4_quantize(" in path.read_text()
    fixed = import_file(path, "cl_gpu_fixed_models_fp4_sm120")
    fmodel, fcompiled = fixed.build(backend="eager")
    fmodel.to("cuda")
    fmodel.global_scale.copy_(model.global_scale)
    torch._dynamo.reset()
    new_x = torch.randn_like(x)
    with torch.no_grad():
        _, out = capture_and_replay(fcompiled, x.clone(), new_x)
        expected = model(new_x)
    assert all(bitwise_equal(o, e) for o, e in zip(out, expected))
    assert all(bitwise_equal(o, e) for o, e in zip(eager, model(x)))  # FP4 deterministic on SM120
    log("sm120: fixed fp4 captured + replayed in a CUDA graph, bitwise equal to eager")


def test_sm120_compilation_context_nvcc_probe(scan_cache):
    torch, (major, minor) = _sm120()
    require_flashinfer()
    site = flashinfer_site()
    result, _ = scan_file(HERE / "models_sm120_probe.py", site, scan_cache, target_arch=f"sm{major}{minor}",
                          cuda_version=torch.version.cuda)
    sub = [f for f in result.findings if f.rule == "CL101" and through(f, "_normalize_cuda_arch")]
    if minor == 0:
        assert sub, "compile-lint does not predict the nvcc subprocess behind _normalize_cuda_arch(12, 0)"
    mod = importlib.import_module("models_sm120_probe")
    torch._dynamo.reset()
    x = torch.ones(4, device="cuda")
    if sub:
        with pytest.raises(torch._dynamo.exc.Unsupported) as ei:
            mod.scaled_by_arch(x)
        fns = [fn for _, _, fn in user_frames(str(ei.value))]
        log(f"sm120: _normalize_cuda_arch under fullgraph: Unsupported, Dynamo frames {fns}")
        assert "_normalize_cuda_arch" in fns
    else:
        mod.scaled_by_arch(x)


def test_sm120_sglang_pdl_probe(scan_cache):
    torch, (major, minor) = _sm120()
    result, _ = scan_file(HERE / "models_pdl_probe.py", HERE, scan_cache, target_arch=f"sm{major}{minor}",
                          cuda_version=torch.version.cuda)
    sub = [f for f in result.findings if f.callee == "subprocess.check_output"]
    if minor == 0:
        assert sub and "is_arch_support_pdl" in names(sub[0]) and "_jit_cuda_version" in names(sub[0])
    mod = importlib.import_module("models_pdl_probe")
    torch._dynamo.reset()
    t = time.perf_counter()
    with pytest.raises(torch._dynamo.exc.Unsupported) as ei:  # cold: cache_once is empty
        mod.norm_with_pdl(torch.ones(4, device="cuda"))
    fns = [fn for _, _, fn in user_frames(str(ei.value))]
    log(f"sm120: is_arch_support_pdl (cold) under fullgraph: Unsupported after {time.perf_counter() - t:.1f} s, "
        f"{str(ei.value).strip().splitlines()[0]!r}, frames {fns}")
    assert "is_arch_support_pdl" in fns
