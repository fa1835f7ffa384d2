"""Fixers on the real code: sglang 0.5.9 + flashinfer-python 0.6.3 (the seed bug) and flashinfer 0.7.2.post1.

The sources come from PyPI through ``tests/realworld/pypi_fixtures.py`` (skipped when they cannot be fetched).
Nothing is imported or executed; the cached sources are never modified: the sglang tree is mirrored as a farm of
symlinks, and a fix replaces the link it writes (``os.replace``), not the cached file behind it.

``test_seed_chain_fix_with_target_arch`` scans all of sglang (about 2 minutes) and runs only when selected
(``-m realworld``, or ``COMPILE_LINT_REALWORLD=1``); the others take seconds.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import OP_BOUNDARY, SAFE, UNSAFE, FixOptions, fix, plan_all

pytestmark = pytest.mark.realworld

CALL_SITE = "sglang/srt/layers/quantization/modelopt_quant.py"
GENERATED = "sglang/srt/layers/quantization/_compile_lint_ops.py"


def _site(name: str) -> Path:
    try:
        from realworld.pypi_fixtures import FixtureUnavailable, site_root
    except ImportError as e:  # pragma: no cover
        pytest.skip(f"tests/realworld/pypi_fixtures.py not importable: {e}")
    try:
        return site_root(name)
    except FixtureUnavailable as e:
        pytest.skip(f"fixture set {name!r} unavailable: {e}")


def _farm(src: Path, dst: Path, real: str) -> Path:
    """``dst`` looks like ``src``; the package ``real`` is made of real directories holding symlinked files."""
    dst.mkdir(parents=True)
    for entry in src.iterdir():
        if entry.name == real:
            top = entry.resolve()
            for dirpath, _dirs, files in os.walk(top):
                rel = Path(dirpath).relative_to(top)
                (dst / real / rel).mkdir(parents=True, exist_ok=True)
                for f in files:
                    os.symlink(Path(dirpath) / f, dst / real / rel / f)
        elif not entry.name.startswith("."):
            os.symlink(entry.resolve(), dst / entry.name)
    return dst


def _is_seed(f) -> bool:
    """The seed chain: ModelOptFp4LinearMethod.apply (sglang) -> flashinfer's fp4_quantize."""
    tr = list(f.trace)
    for i, fr in enumerate(tr):
        if fr.path.replace("\\", "/").endswith(CALL_SITE) and fr.qualname == "ModelOptFp4LinearMethod.apply":
            nxt = tr[i + 1] if i + 1 < len(tr) else None
            if nxt is not None and "flashinfer" in nxt.path and nxt.qualname == "fp4_quantize":
                return True
            if nxt is None and "fp4_quantize" in f.callee:
                return True
    return False


def _selected(request) -> bool:
    expr = request.config.getoption("-m") or ""
    return "realworld" in expr and "not realworld" not in expr or bool(os.environ.get("COMPILE_LINT_REALWORLD"))


def _rel(path: str, root: Path) -> str:
    return os.path.relpath(path, root).replace("\\", "/")


def test_seed_chain_fix_with_target_arch(tmp_path, request, capsys):
    if not _selected(request):
        pytest.skip("scans all of sglang 0.5.9 (about 2 minutes): run with -m realworld or COMPILE_LINT_REALWORLD=1")
    site = _farm(_site("seed"), tmp_path / "site", "sglang")
    opts = ScanOptions(paths=[site / "sglang"], search_path=[site], use_environment=False, target_arch="sm120",
                       models=["DeepseekV2ForCausalLM"], cache_dir=tmp_path / "cache")
    before = scan(opts)
    seed = [f for f in before.findings if _is_seed(f)]
    if not seed:
        pytest.skip("the engine does not report the seed chain yet (no finding on the path "
                    "ModelOptFp4LinearMethod.apply -> flashinfer.fp4_quantize with --target-arch sm120): it needs "
                    "the real-chain resolution (docs/realworld-chain.md section 1) and lint/arch.py")
    report = fix(opts, FixOptions(), result=before)  # what `compile-lint scan --fix --target-arch sm120` does

    seed_plans = [p for p in report.applied if any(_is_seed(f) for f in p.findings)]
    assert seed_plans, [(p.fixer, p.path) for p in report.applied]
    assert {p.fixer for p in seed_plans} == {OP_BOUNDARY} and {p.safety for p in seed_plans} == {SAFE}
    touched = {_rel(x, site) for p in seed_plans for x in p.files}
    assert touched == {CALL_SITE, GENERATED}, touched
    # the call site changes by one call and one import; nothing else in that file
    import difflib

    old_text = (_site("seed") / CALL_SITE).read_text().splitlines()
    new_text = (site / CALL_SITE).read_text().splitlines()
    changed = [l for l in difflib.unified_diff(old_text, new_text, lineterm="", n=0) if l[:1] in "+-"
               and l[:3] not in ("+++", "---")]
    assert changed == ["+from . import _compile_lint_ops",
                       "-        x_fp4, x_scale_interleaved = fp4_quantize(x, layer.input_scale_inv)",
                       "+        x_fp4, x_scale_interleaved = _compile_lint_ops.fp4_quantize(x, layer.input_scale_inv)"], changed
    diff = next(p.diff for p in seed_plans)
    # every file written is sglang's (never flashinfer's); the cached sources are untouched
    written = sorted(_rel(w, site) for w in report.written)
    assert all(w.startswith("sglang/") for w in written), written
    assert all(os.path.islink(site / "sglang" / Path(w).relative_to("sglang")) is False for w in written)
    assert (site / "flashinfer").is_symlink()
    cached = _site("seed") / CALL_SITE
    assert "_compile_lint_ops" not in cached.read_text()

    after = report.remaining
    assert not [f for f in after if _is_seed(f)], "the seed chain is still reported after --fix"
    with capsys.disabled():
        n_seed = sum(1 for l in diff.splitlines() if l[:1] in "+-" and l[:3] not in ("+++", "---"))
        n_all = sum(1 for l in report.diff.splitlines() if l[:1] in "+-" and l[:3] not in ("+++", "---"))
        print(f"\n[seed fix] {len(seed)} seed-chain findings -> 0; seed diff: {n_seed} changed lines in "
              f"{sorted(touched)}; all fixes: {len(report.applied)} plans, {n_all} changed lines in {written}; "
              f"findings {len(before.findings)} -> {len(after)}")


def _user(tmp_path: Path, body: str) -> Path:
    d = tmp_path / "user"
    d.mkdir()
    (d / "user.py").write_text(body)
    return d


def test_flashinfer_063_fake_is_sliced_from_the_library(tmp_path):
    """sglang's call, against the real flashinfer 0.6.3: a safe generated op whose fake is flashinfer's own
    allocation code (fp4_quantize -> the fp4_quantize_sm100 closure -> _compute_swizzled_layout_sf_size), and that
    fake computes the shapes flashinfer documents."""
    import torch

    site = _site("seed")
    d = _user(tmp_path, "import torch\nfrom flashinfer import fp4_quantize\n\n\ndef apply(x, scale):\n"
                        "    x_fp4, x_sf = fp4_quantize(x, scale)\n    return x_fp4, x_sf\n\n\n"
                        "apply_c = torch.compile(apply, fullgraph=True)\n")
    planning = plan_all(scan(ScanOptions(paths=[d], search_path=[site], use_environment=False)), FixOptions())
    [plan] = planning.plans
    assert plan.fixer == OP_BOUNDARY and plan.safety == SAFE
    gen = next(t for p, t in plan.files.items() if p.endswith("_compile_lint_ops.py"))
    assert "def _fake_get_fp4_quantization_module__fp4_quantize_sm100(" in gen
    assert "def _fake_compute_swizzled_layout_sf_size(" in gen and "module.fp4_quantize" not in gen
    # run the derived fake helpers on meta tensors (the op itself needs flashinfer, which we never import)
    helpers = gen[gen.index("def _fake_compute_swizzled_layout_sf_size("):]
    ns = {"torch": torch}
    exec(compile(helpers, "fake_helpers", "exec"), ns)
    x_q, sf = ns["_fake_fp4_quantize"](torch.empty(100, 256, dtype=torch.bfloat16, device="meta"))
    assert (tuple(x_q.shape), x_q.dtype) == ((100, 128), torch.uint8)  # [M, K/2], two fp4 per byte
    assert (tuple(sf.shape), sf.dtype) == ((128, 16), torch.uint8)  # rows padded to 128, K/16 scale columns


def test_flashinfer_072_registered_op_is_used_and_backend_refused(tmp_path):
    """flashinfer 0.7.2.post1 registers flashinfer::fp4_quantize on _fp4_quantize_custom_op: the call becomes
    torch.ops.flashinfer.fp4_quantize (unsafe: the op computes nvfp4_4over6 from an env-derived code), and a call
    passing backend= cannot use it."""
    site = _site("current")
    d = _user(tmp_path, "import torch\nfrom flashinfer import fp4_quantize\n\n\ndef f(x, s):\n"
                        "    return fp4_quantize(x, s)\n\n\ndef g(x, s):\n"
                        "    return fp4_quantize(x, s, backend=\"cute-dsl\")\n\n\n"
                        "f_c = torch.compile(f, fullgraph=True)\ng_c = torch.compile(g, fullgraph=True)\n")
    report = fix(ScanOptions(paths=[d], search_path=[site], use_environment=False), FixOptions(unsafe=True))
    text = (d / "user.py").read_text()
    assert "return torch.ops.flashinfer.fp4_quantize(x, s)\n" in text
    [p] = [p for p in report.applied if p.fixer == OP_BOUNDARY]
    assert p.safety == UNSAFE and "nvfp4_4over6" in p.safety_reason
    assert 'fp4_quantize(x, s, backend="cute-dsl")' in text  # no counterpart for backend=, no sound fake either
    reasons = [r.reason for u in report.unfixable for r in u.refusals if r.fixer == OP_BOUNDARY]
    assert any("`backend=`" in r and "no counterpart" in r for r in reasons), reasons
