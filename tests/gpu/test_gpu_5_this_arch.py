"""The SM120 probes of ``test_gpu_4_sm120.py``, checked on the GPU at hand: compile-lint, told this device's
architecture (``target_arch``), predicts whether each probe module fails under ``fullgraph=True``; Dynamo must
agree.  On SM90 both probes' ``major == 12`` branches are pruned statically, so these are the negative
controls of the SM120 tests; on a 12.x device they are the positive ones.
"""
from __future__ import annotations

import importlib

import pytest

from gpu_support import (HERE, capability, flashinfer_site, log, names, require_cuda, require_flashinfer,
                         scan_file, user_frames)

pytestmark = pytest.mark.gpu

PROBES = {
    # module, compiled function, needs flashinfer
    "flashinfer_normalize_cuda_arch": ("models_sm120_probe", "scaled_by_arch", True),
    "sglang_is_arch_support_pdl": ("models_pdl_probe", "norm_with_pdl", False),
}


@pytest.mark.parametrize("probe", sorted(PROBES))
def test_probe_prediction_matches_dynamo_on_this_gpu(probe, scan_cache):
    torch = require_cuda()
    module_name, fn_name, needs_fi = PROBES[probe]
    site = HERE
    if needs_fi:
        require_flashinfer()
        site = flashinfer_site()
    major, minor = capability()
    arch = f"sm{major}{minor}"
    result, _ = scan_file(HERE / f"{module_name}.py", site, scan_cache, target_arch=arch,
                          cuda_version=torch.version.cuda)
    errors = [f for f in result.findings if f.severity == "error"]
    log(f"{probe} on {arch}: compile-lint predicts {len(errors)} errors "
        f"{sorted({(f.rule, f.callee) for f in errors})}; paths {sorted({' -> '.join(names(f)) for f in errors})}")
    mod = importlib.import_module(module_name)
    fn = getattr(mod, fn_name)
    torch._dynamo.reset()
    x = torch.ones(4, device="cuda")
    try:
        out = fn(x)
        outcome, detail = "compiled", f"result {out.tolist()}"
    except torch._dynamo.exc.Unsupported as e:
        outcome = "Unsupported"
        detail = f"{str(e).strip().splitlines()[0]!r}; frames {[fn for _, _, fn in user_frames(str(e))]}"
    log(f"{probe} on {arch}: Dynamo (fullgraph=True, cold): {outcome}: {detail}")
    assert (outcome == "Unsupported") == bool(errors), (
        f"compile-lint predicted {'a failure' if errors else 'no failure'} on {arch}, Dynamo: {outcome}: {detail}")
