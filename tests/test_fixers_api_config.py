"""api-op on a second miniature library (``tests/fixers/api2/apilib2``, NOT FlashInfer):

- a public API whose helper returns its own arguments (FlashInfer's ``_validate_and_convert_seed_offset``) is made
  an op; the fixer used to stop on it with an internal ``TypeError`` (``range('...')`` on a helper's ``("bad", why)``
  return), reported as a refusal (FlashInfer's ``sampling_from_probs``, ``silu_and_mul_mxfp8_quantize``);
- a configured fake ``module:function -> RET when FLAG=CONST``: an API whose annotation is
  ``Union[Tensor, Tuple[Tensor, Tensor]]`` chosen by a flag is made an op for the flag's default; a call that
  passes another value runs the original body;
- an ``Optional[Tuple[Tensor, Tensor]] = None`` parameter is no op input (torch's ``infer_schema`` rejects tuples;
  FlashInfer's ``single_prefill_with_kv_cache(kv_cache_sf=...)`` was planned with it, and withdrawn by the import
  check): the op covers ``None``, a call that passes a pair runs the original body.
Both fixed APIs are then run on the CPU (the stand-in ``tvm_ffi`` of ``tests/fixers/runtime``).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import FixOptions, fix, plan_all
from compile_lint.fixers.api_op import _parse_fake

TESTS = Path(__file__).parent
LIB = TESTS / "fixers" / "api2" / "apilib2"
RUNTIME = TESTS / "fixers" / "runtime"
FAKE = "apilib2.fakes:pick_fake -> torch.Tensor when return_valid=False"


def _place(root: Path) -> Path:
    shutil.copytree(LIB, root / "apilib2")
    return root / "apilib2"


def _opts(pkg: Path) -> ScanOptions:
    return ScanOptions(paths=[pkg], search_path=[pkg.parent], use_environment=False, public_api=["apilib2"])


def _made(planning) -> set:
    return {p.description.split("`apilib2.sample.", 1)[1].split("`", 1)[0] for p in planning.plans
            if "public API" in p.description}


def _why(planning, qual) -> list:
    return [r.reason for u in planning.unfixable if u.finding.region.qualname == qual for r in u.refusals]


def test_a_helper_returning_its_arguments_is_no_internal_error(tmp_path):
    planning = plan_all(scan(_opts(_place(tmp_path))), FixOptions(fix_in=("apilib2",), unsafe=True))
    assert "count" in _made(planning), _why(planning, "apilib2.sample.count")
    assert not any("internal error" in r for u in planning.unfixable for r in (x.reason for x in u.refusals))


def test_a_flag_chosen_return_needs_the_configured_when(tmp_path):
    pkg = _place(tmp_path)
    result = scan(_opts(pkg))
    plain = plan_all(result, FixOptions(fix_in=("apilib2",), unsafe=True,
                                        fakes={"apilib2.sample.pick": "apilib2.fakes:pick_fake"}))
    assert "pick" not in _made(plain)
    assert any("return annotation the op schema can express" in r for r in _why(plain, "apilib2.sample.pick"))
    wrong = plan_all(result, FixOptions(fix_in=("apilib2",), unsafe=True, fakes={
        "apilib2.sample.pick": "apilib2.fakes:pick_fake -> torch.Tensor when return_valid=True"}))
    assert any("names no parameter whose default is that constant" in r for r in _why(wrong, "apilib2.sample.pick"))


def test_a_torch_dtype_default_is_a_constant_for_the_fake(tmp_path):
    """FlashInfer's `top_k` was refused: `the default of out_dtype (torch.int32) is not a constant`."""
    planning = plan_all(scan(_opts(_place(tmp_path))), FixOptions(fix_in=("apilib2",), unsafe=True))
    assert "ranks" in _made(planning), _why(planning, "apilib2.sample.ranks")
    plan = next(p for p in planning.plans if "apilib2.sample.ranks`" in p.description)
    assert "out_dtype=torch.int32" in "".join(str(getattr(e, "op_code", "")) + str(e) for e in plan.edits)


def test_an_int_enum_parameter_crosses_the_op_as_its_int(tmp_path):
    """FlashInfer's `mxfp4_quantize` was refused: `sfLayout (SfLayout) is a Python object an op schema cannot
    express`."""
    planning = plan_all(scan(_opts(_place(tmp_path))), FixOptions(fix_in=("apilib2",), unsafe=True))
    assert "arrange" in _made(planning), _why(planning, "apilib2.sample.arrange")


def test_a_tuple_of_tensors_crosses_the_op_as_its_tensors(tmp_path):
    """FlashInfer's `append_paged_kv_cache(paged_kv_cache: Union[Tensor, Tuple[Tensor, Tensor]])` was refused, and
    `single_prefill_with_kv_cache(kv_cache_sf: Optional[Tuple[Tensor, Tensor]] = None)` left a call with one to the
    original body."""
    planning = plan_all(scan(_opts(_place(tmp_path))), FixOptions(fix_in=("apilib2",), unsafe=True))
    assert "append" in _made(planning), _why(planning, "apilib2.sample.append")
    plan = next(p for p in planning.plans if "apilib2.sample.append`" in p.description)
    assert "(a tuple of tensors)" in plan.description


def test_a_constant_imported_inside_the_function_is_a_constant_for_the_fake(tmp_path):
    """FlashInfer's `mxfp4_quantize` was refused: `the output depends on the global SF_LAYOUT_128x4`."""
    planning = plan_all(scan(_opts(_place(tmp_path))), FixOptions(fix_in=("apilib2",), unsafe=True))
    assert "padded" in _made(planning), _why(planning, "apilib2.sample.padded")


def test_parse_fake():
    assert _parse_fake(FAKE) == ("apilib2.fakes:pick_fake", "torch.Tensor", {"return_valid": False})
    assert _parse_fake("same-as:x") == ("same-as:x", None, {})
    assert _parse_fake("m:f -> tuple[torch.Tensor, torch.Tensor]")[1] == "tuple[torch.Tensor, torch.Tensor]"
    assert isinstance(_parse_fake("m:f when flag")[2], str)
    assert isinstance(_parse_fake("m:f -> Config")[2], str)


PROBE = textwrap.dedent('''
    import json, sys, torch
    from apilib2 import Layout, append, arrange, count, padded, pick, ranks
    torch.manual_seed(0)
    x = torch.randn(6, 8)
    rec = {"count": count(x, 2, 3).tolist(), "pick": pick(x, 2.0).tolist(), "ranks": ranks(x, 3).tolist(),
           "arrange": [arrange(x).tolist(), arrange(x, Layout.COL).tolist()], "padded": padded(x).tolist()}
    v = pick(x, 2.0, return_valid=True)
    rec["pick_valid"] = [t.tolist() for t in v]
    rec["pick_extra"] = pick(x, 2.0, extra=(x, x)).tolist()
    k1, k2, v2 = torch.zeros(6, 8), torch.zeros(6, 8), torch.zeros(6, 8)
    append(x, k1); append(x, (k2, v2), 0.5)
    rec["append"] = [k1.tolist(), k2.tolist(), v2.tolist()]
    if sys.argv[1] == "fixed":
        graphs = []
        def backend(gm, inputs):
            graphs.append(str(gm.graph))
            return gm.forward
        for be in ("aot_eager", backend):
            torch._dynamo.reset()
            rec[f"count_c_{be if isinstance(be, str) else 'graph'}"] = torch.compile(
                lambda x: count(x, 2, 3), fullgraph=True, backend=be)(x).tolist()
            torch._dynamo.reset()
            rec[f"pick_c_{be if isinstance(be, str) else 'graph'}"] = torch.compile(
                lambda x: pick(x, 2.0), fullgraph=True, backend=be)(x).tolist()
        rec["graphs"] = graphs
        torch._dynamo.reset()
        rec["ranks_c"] = torch.compile(lambda x: ranks(x, 3), fullgraph=True, backend="aot_eager")(x).tolist()
        torch._dynamo.reset()
        k1, k2, v2 = torch.zeros(6, 8), torch.zeros(6, 8), torch.zeros(6, 8)
        def app(x, k1, k2, v2):
            append(x, k1); append(x, (k2, v2), 0.5)
            return k1, k2, v2
        torch._dynamo.reset()
        rec["append_c"] = [t.tolist() for t in torch.compile(app, fullgraph=True, backend="aot_eager")(x, k1, k2, v2)]
        torch._dynamo.reset()
        rec["pick_extra_c"] = torch.compile(lambda x: pick(x, 2.0, extra=(x, x)), fullgraph=True,
                                            backend="aot_eager")(x).tolist()
        torch._dynamo.reset()
        rec["padded_c"] = torch.compile(padded, fullgraph=True, backend="aot_eager")(x).tolist()
        rec["arrange_c"] = [torch.compile(lambda x: arrange(x, lay), fullgraph=True, backend="aot_eager")(x).tolist()
                            for lay in (Layout.ROW, Layout.COL)]
    if sys.argv[1] == "variants":  # pick(return_valid=True) is an op of its own
        ops = []
        def backend(gm, inputs):
            ops.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
            return gm.forward
        torch._dynamo.reset()
        out = torch.compile(lambda x: pick(x, 2.0, return_valid=True), fullgraph=True, backend=backend)(x)
        rec["pick_valid_c"] = [t.tolist() for t in out]
        rec["ops"] = ops
    print(json.dumps(rec))
''')


def _run(mode: str, root: Path, tmp: Path) -> dict:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    (bin_dir / "nvcc").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(root), str(RUNTIME)]), FXLIB_JIT_DIR=str(tmp / f"jit-{mode}"))
    p = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def _fixed_copy(tmp_path: Path, pick_fakes):
    """An original and a fixed copy of apilib2 (pick's fakes configured): (orig, fixed, report, fixed sample.py)."""
    orig = _place(tmp_path / "orig")
    pkg = _place(tmp_path / "fixed")
    report = fix(_opts(pkg), FixOptions(fix_in=("apilib2",), unsafe=True, op_namespace="apilib2_cl",
                                        fakes={"apilib2.sample.pick": pick_fakes}))
    return orig, pkg, report, (pkg / "sample.py").read_text()


@pytest.mark.slow
def test_fixed_apis_compile_fullgraph_and_equal_the_original(tmp_path):
    orig, pkg, report, text = _fixed_copy(tmp_path, FAKE)
    assert "_pick_unwrapped" in text and "_count_unwrapped" in text, [p.summary() for p in report.applied]
    assert "if return_valid is not False:" in text and "_pick_unwrapped(x, factor, False, extra)" in text, text
    a, b = _run("orig", orig.parent, tmp_path), _run("fixed", pkg.parent, tmp_path)
    op_sig = text.split("def _pick_op(", 1)[1].split(")", 1)[0]
    # the pair crosses the op as two optional tensors (infer_schema rejects a tuple input)
    assert "extra: Optional[tuple" not in op_sig and "extra_0: Optional[torch.Tensor]" in op_sig, text
    for k in ("count", "pick", "pick_valid", "pick_extra", "ranks", "arrange", "append", "padded"):
        assert a[k] == b[k], k
    assert b["ranks_c"] == a["ranks"]  # the fake allocates with the default dtype, torch.int32
    assert b["append_c"] == a["append"] and b["pick_extra_c"] == a["pick_extra"]  # tuples of tensors: one op
    assert b["arrange_c"] == a["arrange"]
    assert b["padded_c"] == a["padded"]  # the fake's shape reads the constant the body imports  # the IntEnum crosses the op as its int; the fake compares it as before
    assert "layout: int" in text.split("def _arrange_op(", 1)[1].split(")", 1)[0], text
    assert b["count_c_aot_eager"] == a["count"] and b["count_c_graph"] == a["count"]
    assert b["pick_c_aot_eager"] == a["pick"] and b["pick_c_graph"] == a["pick"]
    assert len(b["graphs"]) == 2 and "apilib2_cl" in b["graphs"][0] and "apilib2_cl" in b["graphs"][1], b["graphs"]


FAKES = ["apilib2.fakes:pick_fake -> torch.Tensor when return_valid=False",
         "apilib2.fakes:pick_valid_fake -> tuple[torch.Tensor, torch.Tensor] when return_valid=True"]


def test_configured_fakes_must_agree_and_cover_the_defaults(tmp_path):
    result = scan(_opts(_place(tmp_path)))
    only_true = plan_all(result, FixOptions(fix_in=("apilib2",), unsafe=True, fakes={"apilib2.sample.pick": FAKES[1:]}))
    assert "pick" not in _made(only_true)
    assert any("one fake must cover the defaults" in r for r in _why(only_true, "apilib2.sample.pick"))
    twice = plan_all(result, FixOptions(fix_in=("apilib2",), unsafe=True,
                                        fakes={"apilib2.sample.pick": [FAKES[0], FAKES[0]]}))
    assert any("cover the same `when`" in r for r in _why(twice, "apilib2.sample.pick"))


@pytest.mark.slow
def test_one_op_per_configured_when_and_every_call_compiles(tmp_path):
    """`return_valid=True` (a pair) gets its own op: before, the call ran the original body under the trace."""
    orig, pkg, report, text = _fixed_copy(tmp_path, FAKES)
    assert "def _pick_op_return_valid_true(" in text, [p.summary() for p in report.applied]
    assert 'custom_op("apilib2_cl::pick_return_valid_true"' in text, text
    # True and False both have an op: the flag's truth picks one, nothing is left to the original body
    public = text.split("\ndef pick(", 1)[1]
    assert "    if return_valid:\n        return _pick_op_return_valid_true(" in public, public
    assert "return _pick_unwrapped(x, factor, return_valid, extra)" not in public.split("if return_valid:")[1], public
    a, b = _run("orig", orig.parent, tmp_path), _run("variants", pkg.parent, tmp_path)
    for k in ("count", "pick", "pick_valid", "pick_extra"):
        assert a[k] == b[k], k
    assert b["pick_valid_c"] == a["pick_valid"]
    assert "apilib2_cl.pick_return_valid_true.default" in b["ops"], b["ops"]
    rescan = scan(_opts(pkg))
    pick = [f for f in rescan.findings if "pick" in f.region.qualname and f.severity in ("error", "warning")]
    # nothing stays on the traced path: both flag values and the `extra` pair are ops
    assert not pick, [(f.severity, f.callee, [c.text for c in f.conditions]) for f in pick]
