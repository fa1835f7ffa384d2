"""api-op: a hazard shared by several public APIs (one JIT loader) is one finding, owned by one API's region; every
other API reaching it is planned too.  An API the fixer refuses there must say why: FlashInfer 0.7.2.post1's
``flashinfer.rope.rope_quantize_fp8`` (unsafe-if, reached its JIT loader as another API's finding) was neither made
an op nor named among the refusals of the round-4 fix run, whose refusal of ``mla_rope_quantize_fp8`` alone was
reported."""
from __future__ import annotations

import textwrap

from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import FixOptions, plan_all

OPS = '''
import os
import torch

def _load():
    os.path.exists("/aot/kernels.so")  # the shared JIT loader's probe
    return None

def wrapper(x: torch.Tensor, *rest) -> torch.Tensor:
    return quant(x)

def quant(x: torch.Tensor, **options) -> torch.Tensor:
    _load()
    return x

def plain(x: torch.Tensor) -> torch.Tensor:
    _load()
    return torch.empty_like(x)
'''


def _scan(tmp_path):
    pkg = tmp_path / "shlib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .ops import wrapper, quant, plain\n__all__ = ['wrapper', 'quant', 'plain']\n")
    (pkg / "ops.py").write_text(textwrap.dedent(OPS))
    return scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                            public_api=["shlib"]))


def test_each_api_reaching_a_shared_hazard_is_made_an_op_or_named_with_its_refusal(tmp_path):
    result = _scan(tmp_path)
    (f,) = [f for f in result.findings if f.callee.endswith("exists")]
    regions = {f.region.qualname} | {r.qualname for r in f.other_regions}
    assert regions == {"shlib.ops.wrapper", "shlib.ops.quant", "shlib.ops.plain"}, regions
    planning = plan_all(result, FixOptions(fix_in=("shlib",), unsafe=True, only=("api-op",)))
    made = {p.description.split("`")[1] for p in planning.plans}
    assert made == {"shlib.ops.plain"}, made
    told = [r.reason for p in planning.plans for r in p.refusals] + \
        [r.reason for u in planning.unfixable for r in u.refusals]
    for api in ("wrapper", "quant"):
        assert any(r.startswith(f"no op at the public API `shlib.ops.{api}`: it takes *") for r in told), (api, told)
