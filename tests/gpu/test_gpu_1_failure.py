"""1. The failure is real: FlashInfer calls under ``torch.compile(fullgraph=True)`` make Dynamo raise
``Unsupported``, and compile-lint's static scan of the same file (FlashInfer on the search path, never imported)
predicts it, with the path into FlashInfer's JIT loader.

Dynamo's "from user code" stack is compared with compile-lint's predicted paths, frame by frame (file, line),
from the library function the model calls down to the loader.  The scan is told the device's architecture
(``target_arch``) and CUDA version, so its paths follow the branches this GPU takes.
"""
from __future__ import annotations

import importlib
import time

import pytest

from gpu_support import (HERE, capability, flashinfer_site, predicted_stops_through, log, names, rel_to,
                         require_cuda, require_flashinfer, scan_file, under, user_frames)

pytestmark = pytest.mark.gpu

CASES = {
    # model file, the library function the model calls, FlashInfer's cached JIT loader behind it
    "rmsnorm": ("models_rmsnorm", "rmsnorm", "get_norm_module"),
    "fp4": ("models_fp4", "fp4_quantize", "get_fp4_quantization_module"),
}


def _inputs(case, mod, torch):
    torch.manual_seed(0)
    x = torch.randn(128, 256, device="cuda", dtype=torch.bfloat16)
    model, compiled = mod.build(backend="eager")
    if case == "rmsnorm":
        model.to(device="cuda", dtype=torch.bfloat16)
        with torch.no_grad():
            model.weight.copy_(torch.randn(256, device="cuda", dtype=torch.bfloat16))
    else:
        model.to(device="cuda")
        model.global_scale.fill_(448.0 * 6.0 / float(x.abs().max()))
    model.requires_grad_(False)
    return model, compiled, x


@pytest.mark.parametrize("case", sorted(CASES))
def test_fullgraph_fails_as_predicted(case, scan_cache):
    torch = require_cuda()
    require_flashinfer()
    site = flashinfer_site()
    module_name, entry, loader = CASES[case]
    major, minor = capability()

    # static: the prediction, before anything of the model runs
    result, _ = scan_file(HERE / f"{module_name}.py", site, scan_cache, target_arch=f"sm{major}{minor}",
                          cuda_version=torch.version.cuda)
    predicted = predicted_stops_through(result, loader)
    assert predicted, f"compile-lint predicts no error through {loader} for {module_name}.py"
    first = min(predicted, key=lambda f: len(f.trace))
    log(f"{case}: compile-lint predicts {len(predicted)} errors through {loader}; e.g. {first.rule} "
        f"{first.callee} at {rel_to(first.path, site)}:{first.line} via {' -> '.join(names(first))}")
    predicted_frames = {(rel_to(fr.path, site), fr.line) for f in result.findings for fr in f.trace
                        if under(fr.path, site)}

    # dynamic: cold (nothing of FlashInfer's JIT loaded in this process yet), then warm
    mod = importlib.import_module(module_name)
    for state in ("cold", "warm"):
        torch._dynamo.reset()
        model, compiled, x = _inputs(case, mod, torch)
        if state == "warm":
            t = time.perf_counter()
            with torch.no_grad():
                model(x)  # eager: JIT-builds / loads the module, fills every functools.cache
            torch.cuda.synchronize()
            log(f"{case}: eager call (JIT build or load) {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        with torch.no_grad(), pytest.raises(torch._dynamo.exc.Unsupported) as ei:
            compiled(x)
        msg = str(ei.value)
        frames = [(rel_to(f, site), n, fn) for f, n, fn in user_frames(msg) if under(f, site)]
        log(f"{case} ({state}): torch.compile(fullgraph=True) raised {type(ei.value).__name__} after "
            f"{time.perf_counter() - t:.1f} s: {msg.strip().splitlines()[0]!r}")
        log(f"{case} ({state}): Dynamo's FlashInfer frames: {[f'{fn}@{f}:{n}' for f, n, fn in frames]}")
        fns = [fn for _, _, fn in frames]
        assert loader in fns, f"Dynamo's stack does not pass through {loader}: {fns}"
        # the line Dynamo stopped at (its innermost FlashInfer frame) is itself a hazard compile-lint reported
        stop_file, stop_line, stop_fn = frames[-1]
        at_stop = sorted({f"{f.rule} {f.callee}" for f in result.findings
                          if rel_to(f.path, site) == stop_file and f.line == stop_line})
        context = [ln.strip() for ln in msg.splitlines() if "Developer debug context" in ln]
        log(f"{case} ({state}): Dynamo stopped at {stop_fn}@{stop_file}:{stop_line} ({context[:1]}); compile-lint's "
            f"findings at that line: {at_stop}")
        assert at_stop, f"no compile-lint finding at the line Dynamo stopped at: {stop_file}:{stop_line}"
        start = fns.index(entry) if entry in fns else 0
        chain = frames[start: fns.index(loader) + 1]
        missing = [f"{fn}@{f}:{n}" for f, n, fn in chain if (f, n) not in predicted_frames]
        assert not missing, f"frames Dynamo went through that compile-lint did not predict: {missing}"
        deeper = frames[fns.index(loader) + 1:]
        log(f"{case} ({state}): {len(chain)} of Dynamo's frames {entry} .. {loader} are on compile-lint's paths; "
            f"beyond the loader {sum((f, n) in predicted_frames for f, n, _ in deeper)} of {len(deeper)}")
