"""Property tests (hypothesis): no exception escapes the indexer, the resolver or the fixers' planner.

- ``index_source`` on generated programs -- hypothesmith's grammar-derived source, programs assembled from
  the shapes real model code uses, and arbitrary bytes through ``decode_source`` -- never raises, never
  reports an internal error, and its summary round-trips through pickle unchanged (the on-disk cache);
- ``scan()`` on generated small packages (2-4 modules: cross-module and circular imports, star imports,
  classes and ``nn.Module`` forwards, closures, lambdas, partials, dispatch tables, caches, every kind of
  region, hazards behind ``is_compiling()`` guards, recursion, shadowed builtins, ``match``, ``async``...)
  never raises, is deterministic, and the fixers' planner (``plan_all`` + ``apply_fixes(write=False)``) on
  its findings never raises.  (The fixers' own output properties are in ``test_fixers_props.py``.)

Profiles: the default run is a few hundred examples (~20 s); ``pytest -m fuzz tests/test_fuzz_index.py``
runs more than 10,000.  ``hypothesmith`` is in the ``test`` extra; without it the grammar-derived tests are skipped.
"""
from __future__ import annotations

import ast
import atexit
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from compile_lint.engine import ScanOptions, scan
from compile_lint.index import decode_source, index_source

COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=False)
FUZZ = pytest.mark.fuzz

try:
    import hypothesmith
except ImportError:  # pragma: no cover - optional
    hypothesmith = None


def check_index(src: str, module: str = "gp.m", is_package: bool = False):
    s = index_source(src, module, "/x/gp/m.py", is_package)
    assert s.error is None or not s.error.startswith("internal error"), s.error
    assert s.error is None or "\n" not in s.error
    back = pickle.loads(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == s, "summary changed through pickle"
    from compile_lint.cache import _SummaryUnpickler
    import io

    assert _SummaryUnpickler(io.BytesIO(pickle.dumps(s, protocol=pickle.HIGHEST_PROTOCOL))).load() == s
    return s


# ------------------------------------------------------------------------------------------- programs
IDENT = st.sampled_from(["a", "b", "x", "y", "self", "cfg", "mod", "key", "out", "lib", "torch", "os", "np"])
CALLEE = st.sampled_from([
    "subprocess.check_output(['nvcc', '--version'])", "subprocess.run(['ls'])", "os.environ.get('K', '0')",
    "os.environ['K']", "os.getenv('K')", "open('/tmp/x').read()", "Path('/tmp/x').exists()", "time.time()",
    "time.perf_counter()", "logging.info('x')", "print(x)", "importlib.import_module('json')",
    "threading.Lock()", "random.random()", "torch.ops.ns.op(x)", "torch.cuda.get_device_capability()",
    "torch.cuda.synchronize()", "x.item()", "x.tolist()", "np.array([1])", "warnings.warn('w')",
    "functools.reduce(lambda a, b: a + b, [1, 2])", "getattr(lib, 'name')(x)", "lib.load()", "fn(x)",
    "self.layer(x)", "super().forward(x)", "ctypes.CDLL('x')", "torch._C._cuda_getDevice()", "sys.exit(0)",
])
HEAD = ("import os\nimport sys\nimport time\nimport random\nimport logging\nimport threading\nimport warnings\n"
        "import functools\nimport importlib\nimport subprocess\nimport ctypes\nfrom pathlib import Path\n"
        "import numpy as np\nimport torch\nimport torch.nn as nn\n")


@st.composite
def statement(draw, names, depth=0):
    """One statement of a function body, calling generated functions or hazards."""
    target = draw(st.sampled_from(names)) if names else "len"
    kind = draw(st.sampled_from(["call"] * 4 + ["hazard"] * 3 + ["if_compiling", "for", "with", "try", "dispatch", "partial",
                                 "lambda", "assign", "return", "walrus", "match", "comp", "fstr", "global",
                                 "star", "nested", "yield", "del", "assert", "raise", "while"]))
    if depth > 1 and kind in ("if_compiling", "for", "with", "try", "nested", "while", "match"):
        kind = "call"
    body = lambda: draw(statement(names, depth + 1))  # noqa: E731
    ind = lambda s: "\n".join("    " + ln for ln in s.splitlines())  # noqa: E731
    if kind == "call":
        return f"x = {target}(x)"
    if kind == "hazard":
        return f"y = {draw(CALLEE)}"
    if kind == "if_compiling":
        cond = draw(st.sampled_from(["torch.compiler.is_compiling()", "not torch._dynamo.is_compiling()",
                                     "torch.cuda.is_available()", "os.environ.get('FLAG')", "DEBUG",
                                     "torch.cuda.get_device_capability()[0] >= 9", "x is None", "TYPE_CHECKING"]))
        return f"if {cond}:\n{ind(body())}\nelse:\n{ind(body())}"
    if kind == "for":
        return f"for i in range(3):\n{ind(body())}"
    if kind == "while":
        return f"while x is None:\n{ind(body())}\n    break"
    if kind == "with":
        cm = draw(st.sampled_from(["LOCK", "torch.no_grad()", "open('f')", "contextlib.nullcontext()", "ctx(x)"]))
        return f"with {cm} as c:\n{ind(body())}"
    if kind == "try":
        return f"try:\n{ind(body())}\nexcept Exception as e:\n{ind(body())}\nfinally:\n    pass"
    if kind == "dispatch":
        return f"x = TABLE.get(key, {target})(x)"
    if kind == "partial":
        return f"x = functools.partial({target})(x)"
    if kind == "lambda":
        return f"h = lambda v: {target}(v)\nx = h(x)"
    if kind == "assign":
        return f"{draw(IDENT)} = {target}"
    if kind == "return":
        return f"return {target}(x)"
    if kind == "walrus":
        return f"if (z := {target}(x)) is not None:\n    x = z"
    if kind == "match":
        return f"match key:\n    case 'a':\n{ind(ind(body()))}\n    case {{'k': v}}:\n        x = v\n    case _:\n        pass"
    if kind == "comp":
        return f"x = [{target}(v) for v in (x, x) if v]"
    if kind == "fstr":
        return f"s = f'{{{target}(x)!r:>10}}'"
    if kind == "global":
        return f"global STATE\nSTATE = {target}(x)"
    if kind == "star":
        return f"x = {target}(*[x], **{{}})"
    if kind == "nested":
        return f"def inner(v):\n{ind(body())}\n    return v\nx = inner(x)"
    if kind == "yield":
        return "yield x"
    if kind == "del":
        return "z = x\ndel z"
    if kind == "assert":
        return f"assert {target}(x)"
    if kind == "raise":
        return "raise RuntimeError('x')" if draw(st.booleans()) else "raise"
    return "pass"


@st.composite
def function(draw, name, names, in_class=False):
    deco = draw(st.sampled_from(["", "@functools.cache\n", "@functools.lru_cache(maxsize=None)\n",
                                 "@torch.compile\n", "@torch.compile(fullgraph=True)\n",
                                 "@torch.compile(fullgraph=False, dynamic=True)\n", "@torch.compiler.disable\n",
                                 "@torch._dynamo.disable\n", "@deco\n", "@staticmethod\n", "@property\n",
                                 "@torch.library.custom_op('ns::op', mutates_args=())\n", "@contextlib.contextmanager\n",
                                 "@torch.compiler.allow_in_graph\n", "@unknown.decorator(1)\n"]))
    if not in_class and deco in ("@staticmethod\n", "@property\n"):
        deco = ""
    params = "self, x" if in_class and deco not in ("@staticmethod\n",) else "x"
    params += draw(st.sampled_from(["", ", key='a'", ", *args, **kwargs", ", fn=None", ", /, k=1"]))
    asyn = draw(st.sampled_from(["", "", "", "async "]))
    first = draw(st.sampled_from([f"x = {n}(x)" for n in names] or ["x = len(x)"]) | CALLEE.map(lambda c: f"y = {c}"))
    stmts = [first] + draw(st.lists(statement(names), max_size=3))
    body = "\n".join(stmts) + "\nreturn x"
    body = "\n".join("    " + ln for ln in body.splitlines())
    return f"{deco}{asyn}def {name}({params}):\n{body}\n"


@st.composite
def module_source(draw, idx, n_modules, names_by_module):
    here = names_by_module[idx]
    others = [f"m{j}.{f}" for j in range(n_modules) if j != idx for f in names_by_module[j]]
    callable_names = here + others * 2 + ["fn", "lib.load", "self.layer", "TABLE['a']", "Model()", "cls"]
    parts = [HEAD, "import contextlib\nfrom typing import TYPE_CHECKING\n"]
    imports = draw(st.lists(st.sampled_from(
        [f"from gp import m{j}" for j in range(n_modules)] +
        [f"from gp.m{j} import *" for j in range(n_modules)] +
        [f"from .m{j} import {f}" for j in range(n_modules) for f in names_by_module[j][:1]] +
        [f"import gp.m{j} as m{j}" for j in range(n_modules)] +
        ["from . import nosuch", "from .. import beyond", "import gp", "from gp import *",
         "from lib_outside import thing as lib", "if TYPE_CHECKING:\n    from gp.m0 import f0"]),
        max_size=4))
    parts += imports + [f"from gp import m{j}" for j in range(n_modules) if j != idx]
    parts.append(draw(st.sampled_from(["", "__all__ = ['f0']", "__all__ = [n for n in dir()]", "DEBUG = False",
                                       "DEBUG = os.environ.get('D') == '1'", "STATE = None\nSTATE = STATE",
                                       "A = B = None", "subprocess = None", "def open(*a):\n    return None"])))
    parts.append("LOCK = threading.Lock()\ndef deco(f):\n    return f\ndef ctx(x):\n    return contextlib.nullcontext()")
    for name in here:
        parts.append(draw(function(name, callable_names)))
    if here:
        parts.append("TABLE = {" + ", ".join(f"'{k}': {f}" for k, f in zip("abc", here)) + "}")
    if draw(st.booleans()):
        base = draw(st.sampled_from(["nn.Module", "object", "Model", f"m{(idx + 1) % n_modules}.Model"
                                     if n_modules > 1 else "object", "torch.autograd.Function"]))
        base = "object" if base == "Model" else base
        methods = [draw(function(m, callable_names, in_class=True)) for m in ("forward", "helper")]
        init = (f"    def __init__(self, fn=None):\n        super().__init__()\n"
                f"        self.layer = {here[0] if here else 'fn'}\n        self.sub = Model() if fn else None\n")
        body = init + "".join("\n".join("    " + ln for ln in m.splitlines()) + "\n" for m in methods)
        parts.append(f"class Model({base}):\n    attr = {here[0] if here else 'None'}\n{body}")
    regions = draw(st.lists(st.sampled_from(
        [f"C{k} = torch.compile({f}, fullgraph=True)" for k, f in enumerate(here)] +
        [f"D{k} = torch._dynamo.optimize('eager')({f})" for k, f in enumerate(here)] +
        ["M = torch.compile(Model())" if "class Model" in "\n".join(parts) else "M = None",
         "torch.compile(lambda x: x)", "R = torch.compile(backend='eager')(lambda x: fn(x))",
         "torch.compile(m0)", "E = torch.compile(nosuch.thing, mode='max-autotune')"]), max_size=3))
    parts += regions
    src = "\n\n".join(p for p in parts if p) + "\n"
    return src


@st.composite
def package(draw):
    n = draw(st.integers(1, 4))
    names = [[f"f{i}_{k}" for k in range(draw(st.integers(0, 3)))] for i in range(n)]
    mods = {f"m{i}.py": draw(module_source(i, n, names)) for i in range(n)}
    mods["__init__.py"] = draw(st.sampled_from(["", "from .m0 import *\n", "from . import m0\n",
                                                "import gp.m0\nfrom gp.m0 import *\n"]))
    return mods


def _parses(mods: dict) -> bool:
    try:
        for src in mods.values():
            ast.parse(src)
        return True
    except SyntaxError:
        return False


# ------------------------------------------------------------------------------------------- the indexer
def _index_generated(mods):
    assume(_parses(mods))
    for name, src in mods.items():
        check_index(src, "gp" if name == "__init__.py" else f"gp.{name[:-3]}", name == "__init__.py")


@settings(max_examples=100, **COMMON)
@given(package())
def test_index_generated_modules(mods):
    _index_generated(mods)


@FUZZ
@settings(max_examples=3000, **COMMON)
@given(package())
def test_index_generated_modules_fuzz(mods):
    _index_generated(mods)


def _index_bytes(data: bytes):
    s = check_index(decode_source(data))
    assert s.name == "gp.m"


@settings(max_examples=100, **COMMON)
@given(st.one_of(st.binary(max_size=400), st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
                 st.sampled_from([b"\xef\xbb\xbfx = 1\n", b"# coding: latin-1\nx = '\xe9'\n",
                                  b"# coding: nosuch\nx = 1\n", b"\x00\x00", b"x = '\\N{nosuch}'\n",
                                  b"# coding: utf-16\nx = 1\n", b"def f(:\n", b"\t\n  \tx = 1\n"])))
def test_index_arbitrary_bytes(data):
    _index_bytes(data)


@FUZZ
@settings(max_examples=2000, **COMMON)
@given(st.binary(max_size=2000))
def test_index_arbitrary_bytes_fuzz(data):
    _index_bytes(data)


@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith is not installed (pip install hypothesmith)")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles its own draws
@settings(max_examples=50, **COMMON)
@given(hypothesmith.from_grammar() if hypothesmith else st.just(""))
def test_index_grammar_programs(src):
    check_index(src)


@FUZZ
@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith is not installed (pip install hypothesmith)")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles its own draws
@settings(max_examples=2500, **COMMON)
@given(hypothesmith.from_grammar() if hypothesmith else st.just(""))
def test_index_grammar_programs_fuzz(src):
    check_index(src)


@FUZZ
@pytest.mark.skipif(hypothesmith is None, reason="hypothesmith is not installed (pip install hypothesmith)")
@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles its own draws
@settings(max_examples=500, **COMMON)
@given(hypothesmith.from_node() if hypothesmith else st.just(""))
def test_index_libcst_programs_fuzz(src):
    check_index(src)


# ------------------------------------------------------------------------------------------- scan + fixers
_TMP = {}


def _scan_package(mods: dict, with_fixers: bool = True):
    assume(_parses(mods))
    if "root" not in _TMP:
        _TMP["root"] = tempfile.mkdtemp(prefix="cl-fuzz-")
        atexit.register(shutil.rmtree, _TMP["root"], True)
    root = Path(_TMP["root"])
    pkg = root / "gp"
    if pkg.exists():
        shutil.rmtree(pkg)
    pkg.mkdir()
    for name, src in mods.items():
        (pkg / name).write_text(src)
    opts = dict(cache_dir=None, use_environment=False, use_installed_torch=False, jobs=1)
    opts = {k: v for k, v in opts.items() if k in ScanOptions.__dataclass_fields__}
    r = scan(ScanOptions(paths=[pkg], **opts))
    again = scan(ScanOptions(paths=[pkg], **opts))
    key = lambda res: [(f.rule, f.path, f.line, f.col, f.callee, f.region.qualname) for f in res.findings]  # noqa
    assert key(r) == key(again), "two scans of the same code disagree"
    assert r.stats["findings"] == len(r.findings)
    for p, why in r.problems:
        assert why and "\n" not in why and "internal error" not in why, (p, why)
    if with_fixers and r.findings:
        from compile_lint.fixers import FixOptions, apply_fixes, plan_all

        planning = plan_all(r, FixOptions(unsafe=True))
        rep = apply_fixes(planning.plans, unsafe=True, write=False)
        assert not rep.written or all(Path(w).is_relative_to(pkg) for w in rep.written), rep.written
        # nothing was written
        for name, src in mods.items():
            assert (pkg / name).read_text() == src
    return r


@settings(max_examples=40, **COMMON)
@given(package())
def test_scan_generated_packages(mods):
    _scan_package(mods)


@FUZZ
@settings(max_examples=4000, **COMMON)
@given(package())
def test_scan_generated_packages_fuzz(mods):
    _scan_package(mods)


def teardown_module(module):
    root = _TMP.pop("root", None)
    if root:
        shutil.rmtree(root, ignore_errors=True)


def test_generator_produces_regions_and_findings():
    """The package strategy is not vacuous: among a few random draws, scans find regions and report errors
    (measured over 150 draws: 74% have a region, 28% an error, 11% an error whose hazard lies in another
    module than its region)."""
    from hypothesis import Phase

    seen = []

    @settings(max_examples=40, database=None, phases=[Phase.generate], **COMMON)
    @given(package())
    def draw_and_scan(mods):
        if _parses(mods):
            r = _scan_package(mods, with_fixers=False)
            seen.append((r.stats["regions"], sum(f.severity == "error" for f in r.findings)))

    draw_and_scan()
    assert sum(1 for regions, _ in seen if regions) >= len(seen) // 3, seen
    assert any(errors for _, errors in seen), seen
