"""Fixers: TorchFix-style fixtures (``tests/fixers/<name>.in.py`` -> ``<name>.out.py``, plus ``<name>.ops.py`` for
the generated op module), idempotency, safety/legality, the API and the command line.

Each fixture is copied into a package ``fx`` in a temp dir and scanned with ``tests/fixers/lib`` (``fxlib``, a
miniature FlashInfer) on the search path; a first line ``# compile-lint-fix: k=v ...`` sets options
(``only=``, ``hoist-to=``, ``fake=<callee>=<spec>``, ``fix-in=``, ``safe-only``).  Regenerate the expected files
with ``COMPILE_LINT_UPDATE_FIXTURES=1`` (then read the diff).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compile_lint.engine import ScanOptions, scan
from compile_lint.fixers import (
    COMPILER_DISABLE,
    HOIST_LOAD,
    OP_BOUNDARY,
    SAFE,
    UNSAFE,
    FixOptions,
    apply_fixes,
    documentation,
    fix,
    plan_all,
    plan_fixes,
)

TESTS = Path(__file__).parent
FIX = TESTS / "fixers"
LIB = FIX / "lib"
RUNTIME = FIX / "runtime"
UPDATE = bool(os.environ.get("COMPILE_LINT_UPDATE_FIXTURES"))
FIXTURES = sorted(p.name[: -len(".in.py")] for p in FIX.glob("*.in.py"))
GEN = "_compile_lint_ops.py"


# ------------------------------------------------------------------------------------------------ harness
def header(text: str) -> dict:
    first = text.splitlines()[0] if text else ""
    out: dict = {"fakes": {}}
    if not first.startswith("# compile-lint-fix:"):
        return out
    for tok in first.split(":", 1)[1].split():
        if tok.startswith("fake="):
            callee, spec = tok[len("fake="):].split("=", 1)
            out["fakes"][callee] = spec
        elif "=" in tok:
            k, v = tok.split("=", 1)
            out[k] = v
        else:
            out[tok] = True
    return out


def options_for(text: str) -> FixOptions:
    h = header(text)
    fo = FixOptions(unsafe=not h.get("safe-only"), fakes=dict(h["fakes"]))
    if "only" in h:
        fo.only = tuple(h["only"].split(","))
    if "hoist-to" in h:
        fo.hoist_to = h["hoist-to"]
    if "fix-in" in h:
        fo.fix_in = tuple(h["fix-in"].split(","))
    return fo


def place(name: str, root: Path, text: str = None, package: str = "fx") -> Path:
    pkg = root / package
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    src = text if text is not None else (FIX / f"{name}.in.py").read_text()
    (pkg / f"{name}.py").write_text(src)
    return pkg


def scan_opts(pkg: Path, **kw) -> ScanOptions:
    kw.setdefault("search_path", [LIB])
    kw.setdefault("use_environment", False)
    return ScanOptions(paths=[pkg], **kw)


def run_fixture(name: str, root: Path):
    pkg = place(name, root)
    text = (pkg / f"{name}.py").read_text()
    report = fix(scan_opts(pkg), options_for(text))
    return pkg, report


# ------------------------------------------------------------------------------------------------ fixtures
@pytest.mark.parametrize("name", FIXTURES)
def test_fixture(name, tmp_path):
    pkg, report = run_fixture(name, tmp_path)
    got = (pkg / f"{name}.py").read_text()
    gen = pkg / GEN
    exp_out, exp_ops = FIX / f"{name}.out.py", FIX / f"{name}.ops.py"
    if UPDATE:
        exp_out.write_text(got)
        if gen.exists():
            exp_ops.write_text(gen.read_text())
        elif exp_ops.exists():
            exp_ops.unlink()
    assert got == exp_out.read_text(), report.diff
    if exp_ops.exists():
        assert gen.exists(), "the generated op module is missing"
        assert gen.read_text() == exp_ops.read_text()
    else:
        assert not gen.exists(), gen.read_text()
    # idempotent: a second run changes nothing
    before = {p: p.read_text() for p in pkg.glob("*.py")}
    again = fix(scan_opts(pkg), options_for(got))
    assert not again.written, again.diff
    assert {p: p.read_text() for p in pkg.glob("*.py")} == before


def test_every_fixture_has_an_expected_output():
    for name in FIXTURES:
        assert (FIX / f"{name}.out.py").exists(), name


def _plans(name: str, tmp_path, **opts):
    pkg = place(name, tmp_path)
    text = (pkg / f"{name}.py").read_text()
    fo = options_for(text)
    for k, v in opts.items():
        setattr(fo, k, v)
    return plan_all(scan(scan_opts(pkg)), fo), pkg


# ------------------------------------------------------------------------------------------------ behaviour
def test_fix_removes_the_findings_it_claims(tmp_path):
    for name in ("zero_arg_loader", "namespace_closure", "public_quantize", "out_param_kernel", "existing_op",
                 "configured_fake", "dict_dispatch", "compiler_disable", "zero_arg_loader_init"):
        root = tmp_path / name
        pkg, report = run_fixture(name, root)
        assert report.applied, name
        left = [f for f in report.remaining if f.severity == "error"]
        assert not left, (name, [(f.rule, f.path, f.line) for f in left])


@pytest.mark.parametrize("name", ["build_chain", "keyed_forwarder"])
def test_hoist_leaves_the_opaque_kernel_call(name, tmp_path):
    pkg, report = run_fixture(name, tmp_path)
    plan = report.applied[0]
    assert plan.fixer == HOIST_LOAD
    assert "not an opaque-callable hazard" in plan.description
    assert {f.rule for f in report.remaining} == {"CL114"}


def test_op_boundary_is_preferred_and_safe_when_the_fake_is_derived(tmp_path):
    planning, _ = _plans("public_quantize", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == OP_BOUNDARY and plan.safety == SAFE
    assert "allocation" in plan.safety_reason
    gen = next(t for p, t in plan.files.items() if p.endswith(GEN))
    assert "torch.empty(" in gen and "fp4_quantize(" in gen and "module." not in gen


def test_existing_op_plan_is_safe_and_uses_torch_ops(tmp_path):
    planning, _ = _plans("existing_op", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == OP_BOUNDARY and plan.safety == SAFE
    assert "torch.ops.fxlib.scaled_quantize(x, s)" in plan.diff


def test_existing_op_refused_for_backend_argument(tmp_path):
    planning, _ = _plans("existing_op_backend", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == OP_BOUNDARY
    assert "`backend=`" in plan.description and "no counterpart" in plan.description
    assert "torch.ops.fxlib" not in plan.diff


def test_configured_fake_is_unsafe(tmp_path):
    planning, _ = _plans("configured_fake", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == OP_BOUNDARY and plan.safety == UNSAFE
    assert "configuration" in plan.safety_reason


def test_no_fake_means_refusal_with_reason_and_other_fixes(tmp_path):
    planning, _ = _plans("keyed_forwarder", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == HOIST_LOAD
    ob = [r for r in plan.refusals if r.fixer == OP_BOUNDARY]
    assert ob and "no sound fake" in ob[0].reason and "same-as:" in ob[0].reason


def test_out_param_op_declares_what_the_library_declares(tmp_path):
    planning, _ = _plans("out_param_kernel", tmp_path)
    gens = [t for p in planning.plans for path, t in p.files.items() if path.endswith(GEN)]
    text = "\n".join(gens)
    assert 'mutates_args=("out",)' in text  # rmsnorm_out: declared by the library
    assert 'mutates_args=("out", "input")' in text  # scale_out: every tensor handed to the kernel
    assert "return None" in text and "register_autograd" not in text


def test_hoist_is_unsafe_and_says_so(tmp_path):
    planning, _ = _plans("zero_arg_loader", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == HOIST_LOAD and plan.safety == UNSAFE
    assert "import time" in plan.safety_reason


def test_safe_only_run_skips_unsafe_fixes(tmp_path):
    pkg = place("zero_arg_loader", tmp_path)
    before = (pkg / "zero_arg_loader.py").read_text()
    report = fix(scan_opts(pkg), FixOptions(unsafe=False))
    assert not report.written
    assert (pkg / "zero_arg_loader.py").read_text() == before
    assert any("unsafe" in why for _p, why in report.skipped)


def test_compiler_disable_only_without_fullgraph(tmp_path):
    planning, _ = _plans("compiler_disable", tmp_path)
    [plan] = planning.plans
    assert plan.fixer == COMPILER_DISABLE and plan.safety == SAFE
    # the same call under fullgraph=True: compiler-disable is never offered
    text = (FIX / "compiler_disable.in.py").read_text().replace("torch.compile(f)", "torch.compile(f, fullgraph=True)")
    pkg = place("compiler_disable", tmp_path / "fg", text)
    planning = plan_all(scan(scan_opts(pkg)), FixOptions(unsafe=True))
    assert not any(p.fixer == COMPILER_DISABLE for p in planning.plans)
    refusals = [r for u in planning.unfixable for r in u.refusals] + [r for p in planning.plans for r in p.refusals]
    assert any(r.fixer == COMPILER_DISABLE and "fullgraph" in r.reason for r in refusals)


def test_compiler_disable_legality_checks_other_regions():
    from compile_lint.findings import Finding, RegionRef
    from compile_lint.fixers.compiler_disable import legal

    r0 = RegionRef("a.py", 1, "f", False)
    f = Finding("CL101", "warning", "a.py", 2, 1, "f", "m", "d", r0, ())
    assert legal(f)
    f.other_regions = (RegionRef("b.py", 1, "g", None), RegionRef("c.py", 1, "h", True))
    assert not legal(f)


def test_fix_in_library_decorates_outermost_library_function(tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(LIB, lib)
    pkg = place("compiler_disable", tmp_path)
    report = fix(scan_opts(pkg, search_path=[lib]), FixOptions(fix_in=("fxlib",), only=(COMPILER_DISABLE,)))
    assert report.written == [str(lib / "fxlib" / "jit.py")]
    jit = (lib / "fxlib" / "jit.py").read_text()
    assert "\n\n@torch.compiler.disable\ndef jit_cache_ready(name: str) -> bool:" in jit
    assert "\nimport torch\n" in jit
    assert (pkg / "compiler_disable.py").read_text() == (FIX / "compiler_disable.in.py").read_text()


def test_a_library_fix_never_hoists_a_load_to_the_librarys_import(tmp_path):
    """Issue [E]: fixed inside flashinfer 0.7.2.post1 (`--fix-in flashinfer`), `_GET_NORM_MODULE =
    get_norm_module()` at the top of norm/__init__.py JIT-built CUDA code at `import flashinfer.norm`.  In a
    --fix-in package hoist-load refuses the import-time form and says why; the library is left as it was."""
    lib = tmp_path / "lib"
    shutil.copytree(LIB, lib)
    before = {p: p.read_text() for p in lib.rglob("*.py")}
    reasons = []
    for name in ("public_quantize", "keyed_forwarder", "build_chain"):
        pkg = place(name, tmp_path / name)
        result = scan(scan_opts(pkg, search_path=[lib]))
        planning = plan_all(result, FixOptions(unsafe=True, fix_in=("fxlib",), only=(HOIST_LOAD,)))
        assert not [p for p in planning.plans if any(str(lib) in e.path for e in p.edits)], name
        reasons += [r.reason for u in planning.unfixable for r in u.refusals if r.fixer == HOIST_LOAD]
        fix(scan_opts(pkg, search_path=[lib]), FixOptions(unsafe=True, fix_in=("fxlib",), only=(HOIST_LOAD,)))
    assert any("when the library is imported" in r for r in reasons), reasons
    assert {p: p.read_text() for p in lib.rglob("*.py")} == before


def test_user_code_only_by_default(tmp_path):
    lib = tmp_path / "lib"
    shutil.copytree(LIB, lib)
    before = {p: p.read_text() for p in lib.rglob("*.py")}
    for name in ("public_quantize", "keyed_forwarder", "out_param_kernel"):
        pkg = place(name, tmp_path / name)
        fix(scan_opts(pkg, search_path=[lib]), FixOptions(unsafe=True))
    assert {p: p.read_text() for p in lib.rglob("*.py")} == before


def test_plans_carry_diff_files_and_description(tmp_path):
    pkg = place("namespace_closure", tmp_path)
    result = scan(scan_opts(pkg))
    plans = plan_fixes(result, FixOptions())
    [p] = plans
    assert p.diff.startswith("--- ")
    assert set(p.files) == {str(pkg / "namespace_closure.py"), str(pkg / GEN)}
    assert p.originals[str(pkg / GEN)] is None
    assert p.findings and all(f in result.findings for f in p.findings)
    # planning changes nothing on disk
    assert not (pkg / GEN).exists()
    report = apply_fixes(plans)
    assert sorted(report.written) == sorted(p.files)


def test_apply_refuses_a_file_changed_since_the_scan(tmp_path):
    pkg = place("zero_arg_loader", tmp_path)
    plans = plan_fixes(scan(scan_opts(pkg)), FixOptions(unsafe=True))
    target = pkg / "zero_arg_loader.py"
    target.write_text(target.read_text() + "\n# edited meanwhile\n")
    report = apply_fixes(plans, unsafe=True)
    assert not report.written and "changed since" in report.skipped[0][1]


def test_output_is_reparsed_before_writing(tmp_path, monkeypatch):
    from compile_lint.fixers import planner, source

    pkg = place("zero_arg_loader", tmp_path)
    plans = plan_fixes(scan(scan_opts(pkg)), FixOptions(unsafe=True))
    target = pkg / "zero_arg_loader.py"
    before = target.read_text()
    real = source.render

    def broken(path, original, edits):
        return real(path, original, edits) + "\ndef broken(:\n"

    monkeypatch.setattr(planner, "render", lambda p, o, e: source.check_parses(p, broken(p, o, e)) or "")
    report = apply_fixes(plans, unsafe=True)
    assert not report.written and "does not parse" in report.skipped[0][1]
    assert target.read_text() == before


def test_atomic_write_leaves_no_temp_files_and_keeps_mode(tmp_path):
    from compile_lint.fixers.source import atomic_write

    p = tmp_path / "m.py"
    p.write_text("x = 1\n")
    os.chmod(p, 0o640)
    atomic_write(str(p), "x = 2\n")
    assert p.read_text() == "x = 2\n" and (p.stat().st_mode & 0o777) == 0o640
    assert sorted(q.name for q in tmp_path.iterdir()) == ["m.py"]


def test_atomic_write_failure_keeps_the_old_file(tmp_path, monkeypatch):
    from compile_lint.fixers import source

    p = tmp_path / "m.py"
    p.write_text("x = 1\n")

    def boom(a, b):
        raise OSError("disk full")

    monkeypatch.setattr(source.os, "replace", boom)
    with pytest.raises(OSError):
        source.atomic_write(str(p), "x = 2\n")
    assert p.read_text() == "x = 1\n"
    assert sorted(q.name for q in tmp_path.iterdir()) == ["m.py"]


def test_generated_module_is_extended_not_rewritten(tmp_path):
    pkg = place("namespace_closure", tmp_path)
    fix(scan_opts(pkg), FixOptions())
    gen = pkg / GEN
    first = gen.read_text()
    (pkg / "other.py").write_text((FIX / "out_param_kernel.in.py").read_text())
    fix(scan_opts(pkg), FixOptions())
    second = gen.read_text()
    head, body = first.split("\n\n\n", 1)  # imports | the ops
    assert body.rstrip("\n") in second
    assert all(line in second.splitlines() for line in head.splitlines())
    assert "def rmsnorm_out(" in second and second.count("def quantize_sm100(") == 1


def test_fixer_docs_follow_the_rule_doc_layout():
    for fid in (OP_BOUNDARY, HOIST_LOAD, COMPILER_DISABLE):
        doc = documentation(fid)
        for section in ("## What it does", "## When it is legal", "## Fix safety", "## Example"):
            assert section in doc, (fid, section)
    doc = (TESTS.parent / "docs" / "fixers.md").read_text()
    for fid in (OP_BOUNDARY, HOIST_LOAD, COMPILER_DISABLE):
        assert fid in doc


def test_config_from_pyproject(tmp_path):
    from compile_lint.fixers import options_from_config

    (tmp_path / "pyproject.toml").write_text(
        '[tool.compile-lint.fix]\nop-namespace = "myproj"\nhoist-to = "init"\n'
        '[tool.compile-lint.fix.fakes]\n"fxlib.quant.scale_by" = "same-as:x"\n')
    fo = options_from_config(tmp_path)
    assert fo.op_namespace == "myproj" and fo.hoist_to == "init"
    assert fo.fakes == {"fxlib.quant.scale_by": "same-as:x"}
    fo = options_from_config(tmp_path, FixOptions(op_namespace="cli"))
    assert fo.op_namespace == "cli"


def test_op_namespace_option(tmp_path):
    planning, _ = _plans("namespace_closure", tmp_path, op_namespace="myproj")
    gen = next(t for p in planning.plans for path, t in p.files.items() if path.endswith(GEN))
    assert 'custom_op("myproj::fx_quantize_sm100"' in gen


# ------------------------------------------------------------------------------------------------ CLI
def _cli(*args, cwd):
    env = dict(os.environ, PYTHONPATH="")
    return subprocess.run([sys.executable, "-m", "compile_lint.cli", *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=120)


def test_cli_diff_fix_and_fix_command(tmp_path):
    pkg = place("namespace_closure", tmp_path)
    common = ["--search-path", str(LIB), "--no-environment", "--no-cache", "-q"]
    before = (pkg / "namespace_closure.py").read_text()
    r = _cli("scan", str(pkg), "--diff", *common, cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "+++ b/fx/_compile_lint_ops.py" in r.stdout and "would apply 1 fix (op-boundary)" in r.stderr
    assert (pkg / "namespace_closure.py").read_text() == before and not (pkg / GEN).exists()
    r = _cli("fix", str(pkg), *common, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "applied 1 fix (op-boundary)" in r.stderr and "0 findings remain" in r.stderr
    assert (pkg / "namespace_closure.py").read_text() == (FIX / "namespace_closure.out.py").read_text()
    r = _cli("scan", str(pkg), "--fix", *common, cwd=tmp_path)
    assert r.returncode == 0 and "no fix applied" in r.stderr


def test_cli_unsafe_fixes_flag(tmp_path):
    pkg = place("zero_arg_loader", tmp_path)
    common = ["--search-path", str(LIB), "--no-environment", "--no-cache", "-q"]
    r = _cli("scan", str(pkg), "--fix", *common, cwd=tmp_path)
    assert r.returncode == 1 and "unsafe fix available with --unsafe-fixes" in r.stderr
    r = _cli("scan", str(pkg), "--fix", "--unsafe-fixes", *common, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (pkg / "zero_arg_loader.py").read_text() == (FIX / "zero_arg_loader.out.py").read_text()


def test_a_library_fix_that_breaks_the_librarys_import_is_withdrawn(tmp_path):
    """Issue [E]: each --fix-in plan is checked by importing the fixed package in a fresh interpreter beside
    the original; a plan under which a module no longer imports (an import cycle), or whose import starts
    work the original's does not (a subprocess), is withdrawn with the reason; the others stand."""
    from compile_lint.fixers.model import FixPlan
    from compile_lint.fixers.verify import ImportCheck, withdraw_breaking

    pkg = tmp_path / "lib" / "pkgx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .core import run\nfrom .util import helper\n")
    core = "import os\n\n\ndef run(x):\n    return os.path.exists('/dev/null')\n"
    (pkg / "core.py").write_text(core)
    (pkg / "util.py").write_text("def helper():\n    return 1\n")

    def plan(name, path, text):
        p = FixPlan(COMPILER_DISABLE, "safe", str(path), 1, name, "", [], key=(name,))
        p.files = {str(path): text}
        return p

    cycle = plan("cycle", pkg / "util.py", "from pkgx import run as _run\nfrom pkgx.core import nothing\n\n\n"
                                            "def helper():\n    return 1\n")
    work = plan("work", pkg / "core.py", "import subprocess\n\nsubprocess.run(['true'])\n" + core)
    fine = plan("fine", pkg / "core.py", "# compile-lint: a comment changes nothing\n" + core)
    outside = plan("outside", tmp_path / "user.py", "raise SystemExit\n")  # not in a --fix-in package
    check = ImportCheck(sys.executable, ("pkgx",))
    kept, withdrawn = withdraw_breaking([cycle, work, fine, outside], check)
    assert [p.description for p in kept] == ["fine", "outside"]
    reasons = {p.description: why for p, why in withdrawn}
    assert set(reasons) == {"cycle", "work"}
    assert "no longer imports" in reasons["cycle"] and "ImportError" in reasons["cycle"], reasons
    assert "subprocess.Popen" in reasons["work"], reasons
    assert (pkg / "core.py").read_text() == core  # checking writes nothing
