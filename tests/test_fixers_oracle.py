"""Oracle: the fixed code compiles under ``torch.compile(fullgraph=True, backend="eager")`` on CPU and gives the
eager result of the original code.

1. Every corpus case a fixer claims (tests/corpus/cases; a plan exists when the case is scanned alone, with
   ``helpers_pkg`` as a library) is copied to a temp dir, fixed, and run in a subprocess.  The set of claimed
   cases is pinned (``CLAIMED``) so that a fixer that starts or stops claiming a case is noticed.
2. The fixer fixtures that can run on CPU (``fxlib`` with a stand-in ``tvm_ffi`` whose kernels are small torch
   functions) are fixed and run the same way; for generated ops the fake's output metadata is also compared
   with the real output (under ``FakeTensorMode``).

A fake ``nvcc`` on PATH prints a version, so loaders that run it at import work on any machine.
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

from test_fixers import FIX, LIB, RUNTIME, options_for, place

pytestmark = pytest.mark.oracle

CASES = Path(__file__).parent / "corpus" / "cases"
EXPECTED = json.loads((Path(__file__).parent / "corpus" / "expected.json").read_text())["cases"]

# corpus cases the fixers claim (default options), and the op-boundary variant configured with a fake
CLAIMED = {
    "c053_cache_subprocess_loader_cold": "hoist-load",
    "c054_cache_subprocess_loader_warm": "hoist-load",
    "c056_cache_loader_compiler_disable": "hoist-load",
    "c058_cache_python_side_effect_counter": "hoist-load",
    "c060_cache_returns_torch_randn": "hoist-load",
    "c064_cache_on_instance_method_warm": "hoist-load",
    "c065_flashinfer_like_cold": "hoist-load",
    "c066_flashinfer_like_warm": "hoist-load",
}
CONFIGURED = {  # case -> (fixer, fakes)
    "c065_flashinfer_like_cold": ("op-boundary", {"helpers_pkg.flashinfer_like.fp4_quantize": "same-as:x"}),
}
NONDETERMINISTIC = {"c060_cache_returns_torch_randn"}  # each import draws its own cached noise

FAKE_NVCC = "#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n"


def _env(tmp: Path, pythonpath: list) -> dict:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    nvcc = bin_dir / "nvcc"
    nvcc.write_text(FAKE_NVCC)
    nvcc.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env["CASE_TMP"] = str(tmp / "case_tmp")
    env["FXLIB_JIT_DIR"] = str(tmp / "jit")
    env.pop("TORCH_LOGS", None)
    return env


def _case_dir(root: Path, stem: str, label: str = None) -> Path:
    if not (root / "helpers_pkg").exists():
        shutil.copytree(CASES / "helpers_pkg", root / "helpers_pkg")
    pkg = root / ("oracle_" + (label or stem).replace("-", "_"))
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    shutil.copy(CASES / f"{stem}.py", pkg / f"{stem}.py")
    return pkg


def _scan(pkg: Path, root: Path):
    return scan(ScanOptions(paths=[pkg], search_path=[root], use_environment=False))


RUNNER = textwrap.dedent('''
    import importlib, importlib.util, json, sys, traceback, warnings
    warnings.simplefilter("ignore")
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    jobs = json.loads(sys.argv[1])
    out = {}

    def load_orig(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(spec)
        sys.modules[name] = m
        spec.loader.exec_module(m)
        return m

    def same(a, b):
        if isinstance(a, (tuple, list)):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, torch.Tensor):
            return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a.float(), b.float(), atol=1e-5)
        return a == b

    def meta(a):
        if isinstance(a, (tuple, list)):
            return [meta(x) for x in a]
        if isinstance(a, torch.Tensor):
            return [list(a.shape), str(a.dtype), list(a.stride())]
        return repr(type(a))

    def make_args(spec):
        g = torch.Generator().manual_seed(0)
        args = []
        for a in spec:
            if a[0] == "randn":
                args.append(torch.randn(*a[1], generator=g))
            elif a[0] == "ones":
                args.append(torch.ones(*a[1]))
            elif a[0] == "zeros":
                args.append(torch.zeros(*a[1]))
        return args

    for job in jobs:
        name = job["name"]
        res = {"ok": False}
        try:
            torch.manual_seed(0)  # module-level parameters (nn.Linear) start equal in both copies
            fixed = importlib.import_module(job["fixed"])
            torch.manual_seed(0)
            orig = load_orig(job["orig_path"], "orig_" + job["fixed"].replace(".", "_"))
            for m in (orig, fixed):
                if hasattr(m, "setup"):
                    m.setup()
            fn_f, fn_o = getattr(fixed, job["fn"]), getattr(orig, job["fn"])
            expected = fn_o(*make_args(job["args"]))
            eager_fixed = fn_f(*make_args(job["args"]))
            torch._dynamo.reset()
            compiled = torch.compile(fn_f, fullgraph=job["fullgraph"], backend="eager")
            got = compiled(*make_args(job["args"]))
            got2 = compiled(*make_args(job["args"]))
            res["compiled_matches_eager_fixed"] = same(got, eager_fixed) and same(got2, eager_fixed)
            res["compiled_matches_eager_orig"] = same(got, expected)
            if job.get("fake_check"):
                with FakeTensorMode(allow_non_fake_inputs=True) as mode:
                    fargs = [mode.from_tensor(a) for a in make_args(job["args"])]
                    fake_out = fn_f(*fargs)
                res["fake_meta"] = meta(fake_out)
                res["real_meta"] = meta(eager_fixed)
            if hasattr(fixed, "observe") and hasattr(orig, "observe"):
                ob_f, ob_o = fixed.observe(), orig.observe()
                res["observe_calls"] = [ob_o.get("calls"), ob_f.get("calls")]
            res["ok"] = True
        except Exception as e:
            res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            res["trace"] = traceback.format_exc()[-3000:]
        out[name] = res
    print("@@RESULT@@" + json.dumps(out))
''')


def _run(jobs: list, env: dict, tmp: Path) -> dict:
    script = tmp / "oracle_runner.py"
    script.write_text(RUNNER)
    proc = subprocess.run([sys.executable, str(script), json.dumps(jobs)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp)
    marker = [l for l in proc.stdout.splitlines() if l.startswith("@@RESULT@@")]
    assert marker, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(marker[0][len("@@RESULT@@"):])


# --------------------------------------------------------------------------------------------- corpus
@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle_corpus")
    root, orig_root = tmp / "fixed", tmp / "orig"
    claimed, jobs, plans = {}, [], {}
    for case in sorted(CASES.glob("c*.py")):
        stem = case.stem
        pkg = _case_dir(root, stem)
        planning = plan_all(_scan(pkg, root), FixOptions(unsafe=True))
        if planning.plans:
            claimed[stem] = planning.plans[0].fixer
    variants = [(stem, FixOptions(unsafe=True), stem) for stem in claimed]
    variants += [(stem, FixOptions(unsafe=True, fakes=fakes, only=(fixer,)), f"{stem}__{fixer}")
                 for stem, (fixer, fakes) in CONFIGURED.items()]
    for stem, fo, label in variants:
        pkg = _case_dir(root, stem, label)
        rep = fix(ScanOptions(paths=[pkg], search_path=[root], use_environment=False), fo)
        plans[label] = rep
        opkg = _case_dir(orig_root, stem, label)
        jobs.append({"name": label, "fixed": f"{pkg.name}.{stem}", "orig_path": str(opkg / f"{stem}.py"),
                     "fn": "f", "args": [["randn", [4, 4]]], "fullgraph": True})
    results = _run(jobs, _env(tmp, [root]), tmp)
    return claimed, plans, results


def test_claimed_corpus_cases_are_pinned(corpus_run):
    claimed, _plans, _results = corpus_run
    assert claimed == CLAIMED


@pytest.mark.parametrize("label", sorted(CLAIMED) + [f"{s}__{f}" for s, (f, _) in CONFIGURED.items()])
def test_fixed_corpus_case_compiles_fullgraph_and_matches_eager(corpus_run, label):
    _claimed, plans, results = corpus_run
    rep = plans[label]
    assert rep.applied, f"{label}: no fix applied"
    stem = label.split("__")[0]
    if EXPECTED[stem]["lint"] == "error":
        left = [f for f in rep.remaining if f.severity == "error"]
        assert not left, [(f.rule, f.path, f.line) for f in left]
    r = results[label]
    assert r["ok"], r.get("trace") or r
    assert r["compiled_matches_eager_fixed"]
    if stem not in NONDETERMINISTIC:
        assert r["compiled_matches_eager_orig"]
    if "observe_calls" in r and r["observe_calls"][0] is not None:
        assert r["observe_calls"][0] == r["observe_calls"][1]  # c058: the counter moves once, as in eager


# ------------------------------------------------------------------ the loader in the scanned code
# Issue [E]: a tree whose own code holds the loader -- a corpus case scanned together with its helper package,
# so that every frame down to the hazard is code the fixer may edit.  The fix point is then the outermost call
# at which a fix is legal, not the hazard line (`self.lib_path.exists()` resolves to nothing an op can wrap).
SCANNED_LOADER_CLAIMED = {
    "c064_cache_on_instance_method_warm": "hoist-load",
    "c065_flashinfer_like_cold": "hoist-load",
    "c066_flashinfer_like_warm": "hoist-load",
}


def _uses_helpers(case: Path) -> bool:
    return "helpers_pkg" in case.read_text()


@pytest.fixture(scope="module")
def scanned_loader_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle_scanned_loader")
    claimed, reports, results = {}, {}, {}
    for case in sorted(CASES.glob("c*.py")):
        if not _uses_helpers(case):
            continue
        stem = case.stem
        root, orig = tmp / stem / "fixed", tmp / stem / "orig"
        for r in (root, orig):
            shutil.copytree(CASES / "helpers_pkg", r / "helpers_pkg")
            shutil.copy(case, r / case.name)
        opts = ScanOptions(paths=[root / case.name, root / "helpers_pkg"], search_path=[root], use_environment=False)
        planning = plan_all(scan(opts), FixOptions(unsafe=True))
        if not planning.plans:
            continue
        claimed[stem] = planning.plans[0].fixer
        reports[stem] = fix(opts, FixOptions(unsafe=True))
        # the original runs beside its own, unedited helper package
        job = {"name": stem, "fixed": stem, "orig_path": str(orig / case.name), "fn": "f",
               "args": [["randn", [4, 4]]], "fullgraph": True}
        results.update(_run([job], _env(tmp / stem, [root]), tmp / stem))
    return claimed, reports, results


def test_scanned_loader_claims_are_pinned(scanned_loader_run):
    claimed, _reports, _results = scanned_loader_run
    assert claimed == SCANNED_LOADER_CLAIMED


@pytest.mark.parametrize("stem", sorted(SCANNED_LOADER_CLAIMED))
def test_scanned_loader_fix_compiles_fullgraph_and_matches_eager(scanned_loader_run, stem):
    _claimed, reports, results = scanned_loader_run
    rep = reports[stem]
    assert rep.applied, f"{stem}: no fix applied"
    assert not [f for f in rep.remaining if f.severity == "error"], \
        [(f.rule, f.path, f.line) for f in rep.remaining if f.severity == "error"]
    r = results[stem]
    assert r["ok"], r.get("trace") or r
    assert r["compiled_matches_eager_fixed"] and r["compiled_matches_eager_orig"]


# --------------------------------------------------------------------------------------------- fixtures
FIXTURE_JOBS = {
    # name: (callable, args, fullgraph, check the generated fake against the real output)
    "namespace_closure": ("quantize", [["randn", [4, 64]]], True, True),
    "public_quantize": ("MODEL", [["randn", [4, 64]]], True, True),
    "out_param_kernel": ("f", [["randn", [4, 64]], ["randn", [64]]], True, True),
    "existing_op": ("f", [["randn", [4, 64]], ["ones", [1]]], True, True),
    "existing_op_backend": ("f", [["randn", [4, 64]], ["ones", [1]]], True, True),
    "configured_fake": ("f", [["randn", [4, 64]]], True, True),
    "zero_arg_loader": ("f", [["randn", [4, 8]]], True, False),
    "zero_arg_loader_init": ("MODEL", [["randn", [2, 4]]], True, False),
    "dict_dispatch": ("f", [["randn", [4, 8]]], True, False),
    "keyed_forwarder": ("f", [["randn", [4, 8]]], True, False),
    "build_chain": ("f", [["randn", [4, 64]], ["randn", [64]]], True, False),
    "keyed_loader": ("f", [["randn", [4, 8]], ["zeros", [4, 8]]], False, False),
    "compiler_disable": ("f", [["randn", [4, 8]]], False, False),
}


@pytest.fixture(scope="module")
def fixture_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle_fixtures")
    root, orig_root = tmp / "fixed", tmp / "orig"
    jobs, reports = [], {}
    for name, (fn, args, fullgraph, fake_check) in FIXTURE_JOBS.items():
        package = f"fx_{name}"
        pkg = place(name, root, package=package)
        text = (pkg / f"{name}.py").read_text()
        reports[name] = fix(ScanOptions(paths=[pkg], search_path=[LIB], use_environment=False), options_for(text))
        opkg = place(name, orig_root, package=package)
        jobs.append({"name": name, "fixed": f"{package}.{name}", "orig_path": str(opkg / f"{name}.py"), "fn": fn,
                     "args": args, "fullgraph": fullgraph, "fake_check": fake_check})
    results = _run(jobs, _env(tmp, [root, LIB, RUNTIME]), tmp)
    return reports, results


@pytest.mark.parametrize("name", sorted(FIXTURE_JOBS))
def test_fixed_fixture_compiles_and_matches_eager(fixture_run, name):
    reports, results = fixture_run
    assert reports[name].applied, name
    r = results[name]
    assert r["ok"], r.get("trace") or r
    assert r["compiled_matches_eager_fixed"], r
    assert r["compiled_matches_eager_orig"], r
    if FIXTURE_JOBS[name][3]:
        assert r["fake_meta"] == r["real_meta"], r  # the generated fake says what the kernel does


def test_every_fixture_is_exercised_by_the_oracle():
    names = {p.name[: -len(".in.py")] for p in FIX.glob("*.in.py")}
    not_runnable = {"keyed_loader_nonconst"}  # a refusal: nothing changes
    assert names - not_runnable == set(FIXTURE_JOBS)
