"""Issue [D] item 5: a rule's fix advice is a fact of the installed torch too.  Each advice below is applied to
the rule's own hazard in a fresh process under ``torch.compile(fullgraph=True, backend="eager")``; the advice
must make it compile, and the advice the rule no longer gives must still fail (so the test notices when a torch
release changes either)."""
import subprocess
import sys
import textwrap

import pytest

from compile_lint.ruledef import BREAK
from compile_lint.rules import ALL_RULES

pytestmark = pytest.mark.oracle

PROGRAM = '''
import logging, torch
log = logging.getLogger("compile_lint_advice")
{advice}
def f(x):
    {hazard}
    return x + 1
try:
    torch.compile(f, fullgraph=True, backend="eager")(torch.ones(2))
    print("COMPILES")
except Exception as e:
    print("STOPS", type(e).__name__, str(e).splitlines()[0])
'''

CASES = [
    # rule, the advice as code, the hazard, whether it compiles with the advice
    ("CL107", "torch._dynamo.config.ignore_logger_methods.add(logging.Logger.warning)", 'log.warning("w")', True),
    ("CL107", "torch._dynamo.config.reorderable_logging_functions.add(log.warning)", 'log.warning("w")', False),
    ("CL108", "torch._dynamo.config.reorderable_logging_functions.add(print)", 'print("p")', True),
]


def _run(advice: str, hazard: str) -> str:
    src = PROGRAM.format(advice=advice, hazard=hazard)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("code,advice,hazard,compiles", CASES)
def test_fix_advice_measured_on_the_installed_torch(code, advice, hazard, compiles):
    pytest.importorskip("torch")
    key = advice.split("(")[0].split(".")[-2]  # ignore_logger_methods / reorderable_logging_functions
    fix = ALL_RULES[code].fix
    # the rule advises what works and says so of what does not
    assert key in fix and (f"`{key}` does not help" in fix) != compiles, f"{code}'s fix advice on {key}: {fix}"
    assert _run("", hazard).startswith("STOPS"), "the hazard itself no longer stops Dynamo"
    got = _run(advice, hazard)
    assert got.startswith("COMPILES") == compiles, got


# --- every rule's examples on the installed torch: `invalid` stops Dynamo, `fixed` (the advice applied) compiles ---
# One program (tests/advice_runner.py) imports torch once and forks a fresh child per example (~0.3 s each).

EXAMPLES = [(code, kind, i, src) for code, r in ALL_RULES.items() for kind in ("invalid", "fixed")
            for i, src in enumerate(getattr(r, kind))]

# What the advice says beyond the `fixed` examples, measured the same way: an alternative it names compiles, or
# what it says does not help still stops Dynamo.  (rule, words of its `fix`, the program, compiles)
ADVICE_CLAIMS = [
    ("CL101", "`torch.compiler.disable` only helps when the region is not fullgraph", '''
import subprocess, torch
@torch.compiler.disable
def run():
    return len(subprocess.run(["true"]).args)
def f(x):
    return x + run()
''', False),
    ("CL111", "call its functions from an op", '''
import ctypes, torch
LIBC = ctypes.CDLL(None)  # hoisted, but called in the region
def f(x):
    return x + LIBC.abs(-3)
''', False),
    ("CL113", "hoisting alone still leaves an opaque foreign callable", '''
import ctypes, torch
from torch.utils.cpp_extension import load_inline
SO = load_inline(name="compile_lint_example_k", cpp_sources=['extern "C" int k() { return 3; }'],
                 is_python_module=False, no_implicit_headers=True)
LIB = ctypes.CDLL(SO)  # hoisted, but called in the region
def f(x):
    return x + LIB.k()
''', False),
    ("CL112", "a Python `if` on that tensor is a data-dependent branch", '''
import torch
def f(x):
    if torch.rand(()) < 0.5:
        return x * 2
    return x
''', False),
    ("CL115", "read it once before compiling", '''
import functools, torch
class C:
    @functools.cached_property
    def v(self):
        return 2.0
C0 = C()
C0.v  # read once: the value is in the instance's __dict__, __get__ (and its lock) is not called again
def f(x):
    return x * C0.v
''', True),
]


def _example_name(code, kind, i):
    return f"{code}-{kind}-{i}"


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """{name: result} for every example and advice claim, from one run of tests/advice_runner.py."""
    pytest.importorskip("torch")
    import json
    import os
    import time
    from pathlib import Path

    programs = [[_example_name(c, k, i), textwrap.dedent(src)] for c, k, i, src in EXAMPLES]
    programs += [[f"{c}-claim-{i}", textwrap.dedent(src)] for i, (c, _, src, _) in enumerate(ADVICE_CLAIMS)]
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=str(tmp_path_factory.mktemp("torch_extensions")))
    runner = Path(__file__).with_name("advice_runner.py")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(runner)], input=json.dumps(programs), capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0 and proc.stdout, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    print(f"\n{len(programs)} examples in {time.monotonic() - t0:.1f} s")
    assert sorted(results) == sorted(name for name, _ in programs)
    return results


def _described(res):
    if res.get("stops"):
        return f"stops: {res['exception']}: {res['message']}"
    return f"compiles; equal to eager: {res.get('equal')}" + (
        f", after change(): {res['equal_after']}" if "equal_after" in res else "")


def _skip_without_toolchain(src: str) -> None:
    """A program that builds C++ (``load_inline``) needs ninja and a compiler on PATH, as torch does."""
    import shutil

    if "load_inline" in src and not (shutil.which("ninja") and (shutil.which("c++") or shutil.which("g++"))):
        pytest.skip("load_inline needs ninja and a C++ compiler on PATH")


@pytest.mark.parametrize("code,kind,i,src", EXAMPLES, ids=[_example_name(c, k, i) for c, k, i, _ in EXAMPLES])
def test_rule_example_on_the_installed_torch(code, kind, i, src, measured):
    rule, where = ALL_RULES[code], f"{code} {kind}[{i}]"
    _skip_without_toolchain(src)
    res = measured[_example_name(code, kind, i)]
    assert "error" not in res, f"{where}: {res['error']}"
    if kind == "fixed":
        assert not res["stops"], f"{where}: the fix advice applied does not compile under fullgraph: " \
                                 f"{_described(res)} (advice: {rule.fix})"
        assert res["equal"] and res.get("equal_after", True), f"{where}: compiled differs from eager: " \
                                                              f"{_described(res)}"
    elif rule.kind == BREAK:
        assert res["stops"], f"{where}: the hazard no longer stops Dynamo: {_described(res)}"
        assert res["exception"] == rule.dynamo.exception, f"{where}: {_described(res)}"
    else:  # a silent hazard compiles; where the example changes the state it reads, compiled then differs
        assert not res["stops"], f"{where}: the silent hazard stops Dynamo: {_described(res)}"
        if "equal_after" in res:
            assert res["equal"] and not res["equal_after"], f"{where}: the hazard is not seen: {_described(res)}"


@pytest.mark.parametrize("n", range(len(ADVICE_CLAIMS)), ids=[f"{c}-claim-{i}" for i, (c, *_) in
                                                             enumerate(ADVICE_CLAIMS)])
def test_fix_advice_claim_on_the_installed_torch(n, measured):
    code, words, src, compiles = ADVICE_CLAIMS[n]
    _skip_without_toolchain(src)
    assert words in ALL_RULES[code].fix, f"{code}'s fix advice no longer says {words!r}: {ALL_RULES[code].fix}"
    res = measured[f"{code}-claim-{n}"]
    assert "error" not in res, f"{code} claim {n}: {res['error']}"
    if compiles:
        assert not res["stops"] and res["equal"], f"{code} claim {n} ({words!r}): {_described(res)}"
    else:
        assert res["stops"] and res["exception"] == "torch._dynamo.exc.Unsupported", \
            f"{code} claim {n} ({words!r}): {_described(res)}"
