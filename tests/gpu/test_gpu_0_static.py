"""The CPU-runnable half of the GPU proof: compile-lint's static predictions and fix plans for the model files of
``tests/gpu``, with FlashInfer's sources found on disk (``$COMPILE_LINT_FLASHINFER_SITE``, an installed
flashinfer, or the real-world fixture cache of ``tests/realworld/pypi_fixtures.py``; never downloaded, never
imported).  Skipped when FlashInfer's sources are not on disk, except the SGLang-shaped PDL probe, which needs
nothing.  ``test_environment`` (marked ``gpu``) records the device and versions for docs/gpu-results.md.
"""
from __future__ import annotations

import pytest

from gpu_support import HERE, flashinfer_site, log, names, predicted_stops_through, scan_file, through


def _site():
    site = flashinfer_site(allow_cache=True)
    if site is None:
        pytest.skip("FlashInfer's sources are not on disk (set COMPILE_LINT_FLASHINFER_SITE to a directory "
                    "holding flashinfer/)")
    return site


@pytest.mark.parametrize("module_name, entry, loader", [
    ("models_rmsnorm", "rmsnorm", "get_norm_module"),
    ("models_fp4", "fp4_quantize", "get_fp4_quantization_module"),
])
def test_predicts_the_loader_path(module_name, entry, loader, scan_cache):
    site = _site()
    result, _ = scan_file(HERE / f"{module_name}.py", site, scan_cache)
    assert [r.fullgraph for r in result.regions] == [True]
    # an error where the path is certain; a warning naming its branch where it is not (rmsnorm reaches the
    # CUDA JIT loader only if `_use_cuda_norm(input.device)`: the installed CuTe DSL and the device decide)
    hits = predicted_stops_through(result, loader)
    assert hits, f"no predicted stop through {loader}"
    f = min(hits, key=lambda g: len(g.trace))
    assert names(f)[1] == entry and f.trace[0].path.endswith(f"{module_name}.py")
    assert any(g.rule == "CL101" for g in hits), "the nvcc subprocess behind the JIT build is not reported"


def test_fix_plans(scan_cache):
    site = _site()
    from compile_lint.fixers import COMPILER_DISABLE, OP_BOUNDARY, SAFE, UNSAFE, FixOptions, plan_all

    fp4, _ = scan_file(HERE / "models_fp4.py", site, scan_cache)
    plans = plan_all(fp4).plans
    assert [p.fixer for p in plans] == [OP_BOUNDARY]
    assert "torch.ops.flashinfer.fp4_quantize(x, self.global_scale)" in plans[0].files[str(HERE / "models_fp4.py")]
    assert plans[0].safety == UNSAFE  # the op rebuilds nvfp4_4over6's default from an environment-derived code

    rms, _ = scan_file(HERE / "models_rmsnorm.py", site, scan_cache)
    plain = plan_all(rms, FixOptions(only=(OP_BOUNDARY,))).plans
    log(f"rmsnorm op-boundary without configuration: {[p.summary() for p in plain] or 'refused'}")
    configured = plan_all(rms, FixOptions(only=(OP_BOUNDARY,), fakes={"flashinfer.norm.rmsnorm": "same-as:input"}))
    assert [p.fixer for p in configured.plans] == [OP_BOUNDARY]
    assert any(path.endswith("_compile_lint_ops.py") for path in configured.plans[0].files)

    partial, _ = scan_file(HERE / "models_rmsnorm_partial.py", site, scan_cache)
    assert [r.fullgraph for r in partial.regions] == [False]
    plans = plan_all(partial, FixOptions(only=(COMPILER_DISABLE,))).plans
    assert [(p.fixer, p.safety) for p in plans] == [(COMPILER_DISABLE, SAFE)]


def test_sm120_predictions_flashinfer(scan_cache):
    site = _site()
    sm120, _ = scan_file(HERE / "models_sm120_probe.py", site, scan_cache, target_arch="sm120", cuda_version="13.0")
    sub = [f for f in sm120.findings if f.rule == "CL101" and through(f, "_normalize_cuda_arch")]
    assert sub and {"is_cuda_version_at_least", "get_cuda_version"} <= set(names(sub[0]))
    sm90, _ = scan_file(HERE / "models_sm120_probe.py", site, scan_cache, target_arch="sm90", cuda_version="13.0")
    assert not [f for f in sm90.findings if f.severity == "error"]

    fp4, _ = scan_file(HERE / "models_fp4.py", site, scan_cache, target_arch="sm120", cuda_version="13.0")
    hops = {n for f in predicted_stops_through(fp4, "get_fp4_quantization_module") for n in names(f)}
    assert hops & {"gen_fp4_quantization_sm120_module", "gen_fp4_quantization_sm120f_module"}
    assert not hops & {"gen_fp4_quantization_sm90_module", "gen_fp4_quantization_sm100_module"}


def test_sm120_predictions_sglang_pdl_probe(scan_cache):
    sm120, _ = scan_file(HERE / "models_pdl_probe.py", HERE, scan_cache, target_arch="sm120")
    sub = [f for f in sm120.findings if f.callee == "subprocess.check_output"]
    assert sub and f"{sub[0].rule} {sub[0].severity}" == "CL101 error"
    assert names(sub[0]) == ["norm_with_pdl", "is_arch_support_pdl", "get_jit_cuda_arch", "_init_jit_cuda_arch_once",
                             "_cuda_arch_suffix", "_jit_cuda_version"]
    sm90, _ = scan_file(HERE / "models_pdl_probe.py", HERE, scan_cache, target_arch="sm90")
    assert not [f for f in sm90.findings if f.severity == "error"]


@pytest.mark.gpu
def test_environment():
    """Records the device and the versions (docs/gpu-results.md quotes these lines)."""
    from gpu_support import require_cuda, require_flashinfer

    torch = require_cuda()
    fi = require_flashinfer()
    import subprocess

    props = torch.cuda.get_device_properties(0)
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        driver = f"unknown ({e})"
    try:
        import triton

        triton_version = triton.__version__
    except ImportError:
        triton_version = "not importable"
    try:
        nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        nvcc = nvcc.splitlines()[-1]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        nvcc = f"unknown ({e})"
    log(f"device: {props.name}, compute capability {props.major}.{props.minor}, {props.multi_processor_count} SMs, "
        f"{props.total_memory / 2**30:.0f} GiB; driver {driver}; torch {torch.__version__} (CUDA {torch.version.cuda}); "
        f"triton {triton_version}; flashinfer {fi.__version__}; nvcc: {nvcc}")
