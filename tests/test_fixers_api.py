"""api-op: ``fix --public-api PKG --fix-in PKG`` makes a library's public APIs real ops.

``tests/fixers/api/apilib`` is a miniature kernel library (NOT FlashInfer) whose public APIs reach a JIT loader;
``ops.in.py`` -> ``ops.out.py`` is the TorchFix-style fixture of its API module.  The fixed package is then run on
CPU (a stand-in ``tvm_ffi`` whose kernels are small torch functions, a fake ``nvcc``): every fixed API compiles
under ``torch.compile(fullgraph=True)`` (backends ``eager`` and ``aot_eager``, the latter runs the fakes and the
declared mutations through functionalization) and gives, bit for bit, what the original package gives eagerly,
computed in a separate process from the unfixed copy.
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
from compile_lint.fixers import OP_BOUNDARY, UNSAFE, FixOptions, fix, plan_all
from compile_lint.library import verdicts

TESTS = Path(__file__).parent
API = TESTS / "fixers" / "api"
RUNTIME = TESTS / "fixers" / "runtime"
UPDATE = bool(os.environ.get("COMPILE_LINT_UPDATE_FIXTURES"))
FIXED = {"rmsnorm", "scale", "split_quantize", "scale_inplace", "scale_by", "scale_copy"}  # made ops
REFUSED = {"scale_with": "is a Python object", "Runner.run": "is a method"}


def _place(root: Path) -> Path:
    shutil.copytree(API / "apilib", root / "apilib")
    shutil.copy(API / "ops.in.py", root / "apilib" / "ops.py")
    return root / "apilib"


def _opts(pkg: Path) -> ScanOptions:
    return ScanOptions(paths=[pkg], search_path=[pkg.parent], use_environment=False, public_api=["apilib"])


# scale_copy's output is the kernel's own: its fake is configured, as a maintainer would
FIX_OPTS = dict(fix_in=("apilib",), unsafe=True, op_namespace="apilib_cl", fakes={"apilib.ops.scale_copy": "same-as:x"})


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("api_fixed")
    pkg = _place(root)
    before = {v.api: v.status for v in verdicts(scan(_opts(pkg)))}
    report = fix(_opts(pkg), FixOptions(**FIX_OPTS))
    return pkg, report, before


def test_fixture_output(fixed):
    pkg, report, _ = fixed
    got = (pkg / "ops.py").read_text()
    if UPDATE:
        (API / "ops.out.py").write_text(got)
    assert got == (API / "ops.out.py").read_text(), report.diff
    assert not (pkg / "_compile_lint_ops.py").exists()  # the ops live in the library's own module


def test_plans_are_op_boundaries_at_the_public_api(fixed):
    _pkg, report, _ = fixed
    made = {p.description.split("`apilib.ops.", 1)[1].split("`", 1)[0] for p in report.applied}
    assert made == FIXED
    for p in report.applied:
        assert p.fixer == OP_BOUNDARY and p.safety == UNSAFE
        assert p.path.endswith("apilib/ops.py")


def test_refusals_say_why(fixed):
    _pkg, report, _ = fixed
    reasons = {}
    for u in report.unfixable:
        reasons.setdefault(u.finding.region.qualname.removeprefix("apilib.ops."), []).extend(
            r.reason for r in u.refusals)
    for api, why in REFUSED.items():
        assert any(why in r for r in reasons[api]), (api, reasons.get(api))


EAGER_ONLY = {"scale_by": "generator"}  # the op covers the calls that leave this Python object None


def test_rescan_reports_the_fixed_apis_safe(fixed):
    _pkg, report, before = fixed
    table = {v.api: v for v in verdicts(report.result)}
    after = {api: v.status for api, v in table.items()}
    for api in FIXED | {"fused_scale"}:  # fused_scale calls scale: safe once scale is an op
        assert before[f"apilib.ops.{api}"] == "unsafe"
        if api in EAGER_ONLY:  # unsafe only where the caller passes the object: the original body runs
            v = table[f"apilib.ops.{api}"]
            assert v.status == "unsafe-if", api
            assert all(EAGER_ONLY[api] in c.text for c in v.first_hazard.conditions), v.first_hazard.conditions
            continue
        assert after[f"apilib.ops.{api}"] == "safe", api
    for api in REFUSED:
        assert after[f"apilib.ops.{api}"] == "unsafe"


def test_second_run_changes_nothing(fixed):
    pkg, _report, _ = fixed
    text = (pkg / "ops.py").read_text()
    again = fix(_opts(pkg), FixOptions(**FIX_OPTS))
    assert not again.written and (pkg / "ops.py").read_text() == text


def test_plain_fix_without_fix_in_does_not_touch_the_library(tmp_path):
    pkg = _place(tmp_path)
    planning = plan_all(scan(_opts(pkg)), FixOptions(unsafe=True))
    assert not any("public API" in p.description for p in planning.plans)


# ------------------------------------------------------------------------------------------------ CPU oracle
CASES = {
    "rmsnorm": ("x = torch.randn(8, 64); w = torch.randn(64)\nargs = (x, w)",
                "def f(x, w): return apilib.rmsnorm(x, w)"),
    "rmsnorm_out": ("x = torch.randn(8, 64); w = torch.randn(64); o = torch.zeros(8, 64)\nargs = (x, w, o)",
                    "def f(x, w, o):\n    r = apilib.rmsnorm(x, w, 1e-5, out=o)\n    return r, o"),
    "scale": ("args = (torch.randn(4, 16),)", "def f(x): return apilib.scale(x) * 2"),
    "split_quantize": ("args = (torch.randn(8, 32), torch.ones(1))",
                       "def f(x, g): return apilib.split_quantize(x, g, 16)"),
    "scale_inplace": ("args = (torch.randn(4, 16),)",
                      "def f(x):\n    y = x + 1\n    apilib.scale_inplace(y, 3.0)\n    return y"),
    "scale_by_number": ("args = (torch.randn(4, 16),)", "def f(x): return apilib.scale_by(x, 1.5)"),
    "scale_by_tensor": ("args = (torch.randn(4, 16), torch.tensor(0.25))",
                        "def f(x, s): return apilib.scale_by(x, s)"),
    "scale_copy": ("args = (torch.randn(4, 16),)", "def f(x): return apilib.scale_copy(x, 0.5) + 1"),
    "fused_scale": ("args = (torch.randn(4, 16),)", "def f(x): return apilib.fused_scale(x, 0.5)"),
}

CHILD = textwrap.dedent('''
    import json, sys, traceback, warnings
    warnings.simplefilter("ignore")
    import torch, apilib
    mode, store = sys.argv[1], sys.argv[2]
    cases = json.loads(sys.argv[3])
    out = {}
    def eq(a, b):
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
        return a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    def clone(a):
        return tuple(clone(x) for x in a) if isinstance(a, (tuple, list)) else a.clone()
    for name, (setup, fn) in cases.items():
        g = {"torch": torch, "apilib": apilib}
        torch.manual_seed(0)
        exec(setup + "\\n" + fn, g)
        f, args = g["f"], g["args"]
        try:
            if mode == "orig":
                torch.save(clone(f(*[a.clone() for a in args])), f"{store}/{name}.pt")
                out[name] = {"ok": True}
                continue
            want = torch.load(f"{store}/{name}.pt")
            res = {"eager_equal": eq(f(*[a.clone() for a in args]), want)}
            for backend in ("eager", "aot_eager"):
                torch._dynamo.reset()
                c = torch.compile(f, fullgraph=True, backend=backend)
                res[backend] = eq(c(*[a.clone() for a in args]), want) and eq(c(*[a.clone() for a in args]), want)
            res["ok"] = True
        except Exception as e:
            res = {"ok": False, "error": f"{type(e).__name__}: {e}"[:2000], "tb": traceback.format_exc()[-3000:]}
        out[name] = res
    print("@@RESULT@@" + json.dumps(out))
''')


def _child(mode: str, root: Path, store: Path, tmp: Path) -> dict:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    (bin_dir / "nvcc").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(root), str(RUNTIME)]), FXLIB_JIT_DIR=str(tmp / f"jit_{mode}"))
    env.pop("TORCH_LOGS", None)
    p = subprocess.run([sys.executable, "-c", CHILD, mode, str(store), json.dumps(CASES)], capture_output=True,
                       text=True, env=env, timeout=600, cwd=tmp)
    lines = [x for x in p.stdout.splitlines() if x.startswith("@@RESULT@@")]
    assert lines, p.stdout[-3000:] + p.stderr[-3000:]
    return json.loads(lines[0][len("@@RESULT@@"):])


@pytest.fixture(scope="module")
def oracle(fixed, tmp_path_factory):
    pkg, _report, _ = fixed
    tmp = tmp_path_factory.mktemp("api_oracle")
    orig = _place(tmp / "orig")
    store = tmp / "store"
    store.mkdir()
    first = _child("orig", orig.parent, store, tmp)
    assert all(r["ok"] for r in first.values()), first
    return _child("fixed", pkg.parent, store, tmp)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fixed_api_compiles_fullgraph_and_equals_the_original_eager(oracle, name):
    r = oracle[name]
    assert r["ok"], r.get("tb") or r
    assert r["eager_equal"], "the fixed package's eager result differs from the original's"
    assert r["eager"] and r["aot_eager"], r


def test_original_api_does_not_compile_fullgraph(tmp_path):
    """Before the fix Dynamo stops where the scan says (the JIT loader), on CPU too."""
    orig = _place(tmp_path / "orig")
    probe = textwrap.dedent('''
        import torch, apilib
        try:
            torch.compile(lambda x: apilib.scale(x), fullgraph=True, backend="eager")(torch.randn(4))
            print("COMPILES")
        except Exception as e:
            print("FAILS", type(e).__name__, "get_module" in str(e) or "get_cuda_version" in str(e))
    ''')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvcc").write_text("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    (bin_dir / "nvcc").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=os.pathsep.join([str(orig.parent), str(RUNTIME)]), FXLIB_JIT_DIR=str(tmp_path / "jit"))
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert p.stdout.strip().startswith("FAILS Unsupported True"), p.stdout + p.stderr[-2000:]


def test_a_withdrawn_api_is_refused_with_its_reason(tmp_path):
    pkg = _place(tmp_path)
    planning = plan_all(scan(_opts(pkg)), FixOptions(**FIX_OPTS, withdrawn={"apilib.ops.scale": "replay differs"}))
    made = {p.description.split("`apilib.ops.", 1)[1].split("`", 1)[0] for p in planning.plans
            if "public API" in p.description}
    assert made == FIXED - {"scale"}
    why = [r.reason for u in planning.unfixable if u.finding.region.qualname == "apilib.ops.scale" for r in u.refusals]
    assert any("withdrawn: replay differs" in r for r in why), why


def test_without_a_configured_fake_an_underivable_api_is_refused_with_the_hint(tmp_path):
    pkg = _place(tmp_path)
    planning = plan_all(scan(_opts(pkg)), FixOptions(fix_in=("apilib",), unsafe=True))
    assert not any("`apilib.ops.scale_copy`" in p.description for p in planning.plans)
    why = [r.reason for u in planning.unfixable if u.finding.region.qualname == "apilib.ops.scale_copy"
           for r in u.refusals]
    assert any("no sound fake" in r and "[tool.compile-lint.fix.fakes]" in r for r in why), why
