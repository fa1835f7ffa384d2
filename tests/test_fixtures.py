"""TorchFix-style fixtures: each folder's scan must produce exactly the findings in its expected.txt."""
from pathlib import Path

import pytest

from compile_lint.engine import relpath

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted(p.name for p in FIXTURES.iterdir() if (p / "expected.txt").exists())


@pytest.mark.parametrize("name", CASES)
def test_fixture(name, run_scan):
    root = FIXTURES / name
    result = run_scan(root)
    got = sorted(f"{f.rule} {f.severity} {relpath(f.path, [str(root)])}:{f.line}" for f in result.findings)
    want = sorted(line.strip() for line in (root / "expected.txt").read_text().splitlines() if line.strip())
    assert got == want


def test_flashinfer_shape_path_runs_through_the_loader(run_scan):
    result = run_scan(FIXTURES / "flashinfer_shape")
    sub = next(f for f in result.findings if f.rule == "CL101")
    names = [fr.qualname for fr in sub.trace]
    # fp4_quantize's default backend "100" selects gen_sm100_module from the dispatch dict
    assert names == ["Dense.forward", "fp4_quantize", "get_quant_module", "gen_sm100_module", "gen_quant_module",
                     "is_cuda_version_at_least", "get_cuda_version"]
    assert sub.region.fullgraph is True
    assert sub.fix_point == "get_quant_module"  # the cached loader owns the hazard


def test_disable_behind_alias_is_error_only_under_fullgraph(run_scan):
    result = run_scan(FIXTURES / "disable_modes")
    by_region = {(f.region.qualname, f.rule): f.severity for f in result.findings}
    assert by_region[("strict", "CL116")] == "error"
    assert by_region[("relaxed", "CL116")] == "note"
