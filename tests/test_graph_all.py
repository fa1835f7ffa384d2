"""`compile-lint graph --all`: the whole-program call graph, and its accuracy on PyCG's micro-benchmark."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

import callgraph_microbench as bench  # noqa: E402


def cli(*args):
    return subprocess.run([sys.executable, "-m", "compile_lint.cli", *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONWARNINGS="ignore"))


def test_all_has_module_top_levels_methods_closures_and_lambdas(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(textwrap.dedent("""
        def make_adder(n):
            def add(x):
                return x + n
            return add

        class Greeter:
            def __init__(self, name):
                self.name = name

            def greet(self):
                return self.shout(self.name)

            def shout(self, s):
                return s.upper()
    """))
    (pkg / "app.py").write_text(textwrap.dedent("""
        from pkg.helpers import Greeter, make_adder

        def run(fn):
            return fn(1)

        add2 = make_adder(2)
        add2(3)
        Greeter("x").greet()
        run(lambda v: v + 1)
        print(len([1]))
    """))
    r = cli("graph", "--all", "--no-cache", "-q", "--no-environment", str(pkg))
    assert r.returncode == 0, r.stderr
    g = json.loads(r.stdout)
    # each module's top-level code is a node named by the module
    assert {"pkg.app", "pkg.helpers"} <= set(g)
    assert set(g["pkg.app"]) >= {"pkg.helpers.make_adder", "pkg.helpers.make_adder.add", "pkg.helpers.Greeter.__init__",
                                 "pkg.helpers.Greeter.greet", "pkg.app.run", "builtins.print", "builtins.len"}
    # a method calling a method of its class; the closure returned by a factory; a lambda passed as an argument
    assert g["pkg.helpers.Greeter.greet"] == ["pkg.helpers.Greeter.shout"]
    assert "pkg.helpers.make_adder.add" in g
    assert g["pkg.app.run"] == ["pkg.app.<lambda1>"]
    # without --all only the compiled regions' graph: there is none here
    r = cli("graph", "--no-cache", "-q", "--no-environment", str(pkg))
    assert r.returncode == 0 and json.loads(r.stdout) == {}


def test_all_bad_path_is_a_clear_error(tmp_path):
    r = cli("graph", "--all", str(tmp_path / "missing"))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_micro_benchmark_precision_and_recall():
    """compile-lint's edges over PyCG's 119 cases, summed: precision >= 98 %, recall >= 95 %."""
    misses: list = []
    tallies = bench.measure_compile_lint(bench.cases(), misses)
    t = bench.total(tallies)
    print(f"\ncompile-lint on PyCG's micro-benchmark: precision {100 * t.precision:.1f}% ({t.correct}/{t.reported}), "
          f"recall {100 * t.recall:.1f}% ({t.correct}/{t.expected}), exact cases {t.exact}/{t.cases}")
    assert t.cases == 119 and t.expected == 264  # the vendored benchmark, whole
    assert t.precision >= 0.98 and t.recall >= 0.95, misses
