"""Library mode's three verdicts (unsafe / unsafe if / safe), and a decorator that installs its wrapper on one
path only (flashinfer's ``flashinfer_api``: the function itself unless FLASHINFER_LOGLEVEL was set at import)."""
from __future__ import annotations

import json
import textwrap

from click.testing import CliRunner

from compile_lint.cli import main
from compile_lint.engine import ScanOptions, scan
from compile_lint.library import verdicts

LOG = '''
import functools, os, subprocess
LEVEL = int(os.environ.get("PKG_LOGLEVEL", "0"))

def api(func):
    if LEVEL == 0:
        return func
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        subprocess.check_output(["date"])
        return func(*args, **kwargs)
    return wrapper

def always(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        subprocess.check_output(["date"])
        return func(*args, **kwargs)
    return wrapper
'''

OPS = '''
import os
from .log import api, always

@api
def scale(x):
    return x * 2

@always
def shift(x):
    return x + 1

def pure(x):
    return x - 1

def maybe(x, debug=False):
    if debug:
        os.system("nvidia-smi")
    return x
'''


def _package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('from .ops import scale, shift, pure, maybe\n'
                                     '__all__ = ["scale", "shift", "pure", "maybe"]\n')
    (pkg / "log.py").write_text(textwrap.dedent(LOG))
    (pkg / "ops.py").write_text(textwrap.dedent(OPS))
    return pkg


def test_three_verdicts(tmp_path):
    pkg = _package(tmp_path)
    result = scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                              public_api=["pkg"]))
    table = {v.api.rsplit(".", 1)[1]: v for v in verdicts(result)}
    assert {k: v.status for k, v in table.items()} == {
        "shift": "unsafe", "scale": "unsafe-if", "maybe": "unsafe-if", "pure": "safe"}
    assert table["shift"].first_hazard.severity == "error" and not table["shift"].first_hazard.conditions
    assert [c.text for c in table["maybe"].first_hazard.conditions] == ["debug"]
    (wrapped,) = table["scale"].first_hazard.conditions
    assert wrapped.text == "@api installs its wrapper (decided at import)"
    assert wrapped.path.endswith("ops.py")


def test_library_table_text_and_json(tmp_path):
    pkg = _package(tmp_path)
    args = ["scan", str(pkg), "--public-api", "pkg", "--search-path", str(tmp_path), "--no-environment", "--no-cache"]
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 1, text.output
    assert "UNSAFE IF" in text.output and "only if: debug" in text.output
    assert "1 of 4 public APIs are compile-safe; 1 reach a hazard on every call, 2 only under the conditions" \
        in text.output
    doc = json.loads(CliRunner().invoke(main, args + ["--format", "json"]).output)
    rows = {r["api"].rsplit(".", 1)[1]: r for r in doc["public_api"]}
    assert rows["maybe"]["status"] == "unsafe-if" and rows["maybe"]["first_hazard"]["conditions"][0]["text"] == "debug"
    assert rows["pure"] == {"api": "pkg.ops.pure", "safe": True, "status": "safe", "first_hazard": None}


def test_a_wrapper_installed_on_one_path_is_a_condition_of_what_it_reaches(tmp_path):
    _package(tmp_path)
    (tmp_path / "model.py").write_text(textwrap.dedent('''
        import torch
        from pkg.ops import scale, shift

        def f(x):
            return scale(x) + shift(x)

        g = torch.compile(f, fullgraph=True)
    '''))
    result = scan(ScanOptions(paths=[tmp_path / "model.py"], search_path=[tmp_path], use_environment=False,
                              cache_dir=None))
    by_wrapper = {f.trace[-1].qualname: f for f in result.findings if f.callee == "subprocess.check_output"}
    assert by_wrapper["always.<locals>.wrapper"].severity == "error"
    conditional = by_wrapper["api.<locals>.wrapper"]
    assert conditional.severity == "warning"
    assert [c.text for c in conditional.conditions] == ["@api installs its wrapper (decided at import)"]


MODULES = '''
import functools, os

class Spec:
    def build_and_load(self):
        if os.path.exists("/aot/mod.so"):  # the loader's probe: after the generator, on every call
            return self
        return self

def gen_decode_module():
    with open("/csrc/decode.jinja") as f:  # the generator reads its template first
        f.read()
    return Spec()

def gen_prefill_module():
    with open("/csrc/prefill.jinja") as f:
        f.read()
    return Spec()

@functools.cache
def get_decode_module():
    return gen_decode_module().build_and_load()

@functools.cache
def get_prefill_module():
    return gen_prefill_module().build_and_load()

def single_decode(q, use_tensor_cores=False):
    if use_tensor_cores:
        get_prefill_module()
    else:
        get_decode_module()
    os.path.exists("/tmp/flag")  # an error of every call, met after the module is built
    return q
'''


def test_the_hazard_shown_is_the_first_on_the_call_with_the_defaults(tmp_path):
    """FlashInfer 0.7.2.post1's ``single_decode_with_kv_cache``: on the H200 Dynamo stopped at the decode
    generator's template ``open`` (the default ``use_tensor_cores=False``), not at the loader's ``Path.exists``
    that every branch reaches, and not in the prefill branch that comes first in the file.  Of two calls on one
    line (``gen_decode_module().build_and_load()``) the generator runs first."""
    pkg = tmp_path / "attn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .ops import single_decode\n__all__ = ['single_decode']\n")
    (pkg / "ops.py").write_text(textwrap.dedent(MODULES))
    result = scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                              public_api=["attn"]))
    v = next(v for v in verdicts(result) if v.api == "attn.ops.single_decode")
    assert v.status == "unsafe"  # the last line's probe is on every call
    f = v.first_hazard
    assert (f.callee, f.line) == ("builtins.open", 11), (f.callee, f.line)
    assert [fr.qualname for fr in f.trace][-2:] == ["get_decode_module", "gen_decode_module"]


PREFILL = '''
import os

class Spec:
    def build_and_load(self):
        os.path.exists("/aot/prefill.so")  # the loader's probe: certain, on every call
        return self

def gen_module(backend):
    if backend == "auto":
        raise ValueError("backend should not be auto here")
    elif backend == "fa2":
        with open("/csrc/fa2.jinja") as f:  # what Dynamo meets first where backend is fa2
            f.read()
    elif backend == "fa3":
        with open("/csrc/fa3.jinja") as f:
            f.read()
    else:
        raise ValueError(backend)
    return Spec()

def single_prefill(q, backend):
    gen_module(backend).build_and_load()
    return q
'''


def test_a_certain_error_behind_a_hazard_on_every_branch_is_not_shown_first(tmp_path):
    """FlashInfer 0.7.2.post1's ``single_prefill_with_kv_cache``: on the H200 Dynamo stopped at the fa2
    generator's template ``open``, not at the loader's ``Path.exists`` that is certain -- each branch the
    generator can take meets an ``open`` first or raises.  The verdict stays unsafe (on every call); the
    hazard shown is the one met first, with its branch."""
    pkg = tmp_path / "attn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .ops import single_prefill\n__all__ = ['single_prefill']\n")
    (pkg / "ops.py").write_text(textwrap.dedent(PREFILL))
    result = scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                              public_api=["attn"]))
    v = next(v for v in verdicts(result) if v.api == "attn.ops.single_prefill")
    assert v.status == "unsafe"
    f = v.first_hazard
    assert (f.callee, f.line) == ("builtins.open", 13), (f.callee, f.line)
    assert [c.text for c in f.conditions] == ["backend == 'fa2'"]
    # the fa3 branch's open is no more conditional than that: `else: raise` validates its test
    fa3 = [h for h in result.findings if h.line == 16]
    assert fa3 and all([c.text for c in h.conditions] == ["backend != 'fa2'"] for h in fa3), \
        [(h.line, [c.text for c in h.conditions]) for h in fa3]


def test_every_case_is_consensus_to_the_empty_conjunction():
    from compile_lint.findings import ALTERNATIVE, Condition
    from compile_lint.firsthazard import every_case

    def c(name, polarity=True, expr=None):
        return Condition("m.py", {"a": 1, "b": 2}.get(name, 3), name, expr or ("name", name), polarity)

    a, na, b, nb = c("a"), c("a", False), c("b"), c("b", False)
    assert every_case([[a], [na]])
    assert every_case([[a, b], [a, nb], [na]])
    assert every_case([[]])
    assert not every_case([[a, b], [na]])  # a and not b meets neither
    assert not every_case([[a], [nb]])
    assert not every_case([])
    one_of = c("x", expr=(ALTERNATIVE, "x"))
    assert not every_case([[one_of], [c("x", False, (ALTERNATIVE, "x"))]])  # one of several callees: no opposite


def test_the_api_as_users_call_it_methods_properties_and_partials(tmp_path):
    """Issue [E]: an exported class's public methods and properties (its package bases' included, `self` the
    exported class's instance) and a `functools.partial` export (its target, with the constants it binds) are
    APIs too; private methods are not."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .ops import Wrapper, fast_run\n__all__ = ['Wrapper', 'fast_run']\n")
    (pkg / "ops.py").write_text(textwrap.dedent('''
        import functools, os, subprocess

        class Base:
            def plan(self, x):
                return self._probe(x)

            def _probe(self, x):
                return os.path.exists("/dev/nvidia0")

        class Wrapper(Base):
            def __init__(self, backend="auto"):
                self.backend = backend

            def run(self, x):
                return x * 2

            @property
            def version(self):
                return subprocess.check_output(["nvcc", "--version"])

            @staticmethod
            def pure(x):
                return x + 1

        def run_with(x, debug=True):
            if debug:
                os.system("nvidia-smi")
            return x

        fast_run = functools.partial(run_with, debug=False)
        '''))
    result = scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                              public_api=["pkg"]))
    table = {v.api: v for v in verdicts(result)}
    # ops is where __init__ imports from: its own public names are APIs too (run_with, Base.plan)
    assert set(table) == {"pkg.ops.Wrapper.plan", "pkg.ops.Wrapper.run", "pkg.ops.Wrapper.version",
                          "pkg.ops.Wrapper.pure", "pkg.ops.fast_run", "pkg.ops.run_with", "pkg.ops.Base.plan"}
    assert table["pkg.ops.run_with"].status == "unsafe-if"
    assert table["pkg.ops.Wrapper.plan"].status == "unsafe"  # inherited, through a private helper
    assert [fr.qualname for fr in table["pkg.ops.Wrapper.plan"].first_hazard.trace] == ["Base.plan", "Base._probe"]
    assert table["pkg.ops.Wrapper.version"].first_hazard.callee == "subprocess.check_output"
    assert table["pkg.ops.Wrapper.run"].safe and table["pkg.ops.Wrapper.pure"].safe
    # the partial binds debug=False: the branch that runs nvidia-smi is dead on every call of fast_run
    assert table["pkg.ops.fast_run"].safe


ROPE = '''
import functools, os
from .log import api_with
from .traces import quant_trace, wrapper_trace

@api_with(trace=wrapper_trace)
def mla_quant(q, k, is_neox=True):
    """A thin wrapper: forwards to quant with the MLA layout."""
    return quant(q, k, is_neox, backend="cuda")

@api_with(trace=quant_trace)
def quant(q, k, is_neox=True, backend="cuda"):
    if backend == "cutile":
        os.system("nvidia-smi")  # only on the other backend
    return q, k

def apply(q):
    return q
'''


def test_public_functions_of_a_surfaced_submodule_are_listed_though_the_package_does_not_export_them(tmp_path):
    """FlashInfer 0.7.2.post1 ``flashinfer/rope.py``: ``__init__`` exports ``apply_rope`` & co. from ``.rope`` but
    not ``rope_quantize_fp8`` / ``mla_rope_quantize_fp8`` (users call ``flashinfer.rope.rope_quantize_fp8``); both
    are decorated by a decorator factory (``@flashinfer_api(trace=...)``) and one forwards to the other.  Each gets
    its own verdict (none is silently left out)."""
    pkg = tmp_path / "fi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .rope import apply as apply\n")
    (pkg / "log.py").write_text(textwrap.dedent('''
        def api_with(func=None, *, trace=None):
            def decorator(f):
                return f
            return decorator if func is None else decorator(func)
    '''))
    (pkg / "traces.py").write_text("quant_trace = object()\nwrapper_trace = object()\n")
    (pkg / "rope.py").write_text(textwrap.dedent(ROPE))
    result = scan(ScanOptions(paths=[pkg], search_path=[tmp_path], use_environment=False, cache_dir=None,
                              public_api=["fi"]))
    rows = {v.api: v for v in verdicts(result)}
    table = {api: v.status for api, v in rows.items()}
    # the wrapper binds backend="cuda": the branch that stops Dynamo is not taken through it
    assert table == {"fi.rope.apply": "safe", "fi.rope.quant": "unsafe-if", "fi.rope.mla_quant": "safe"}, table
    f = rows["fi.rope.quant"].first_hazard
    assert (f.callee, f.line) == ("os.system", 14) and [c.text for c in f.conditions] == ["backend == 'cutile'"]


def test_flashinfer_rope_quantize_fp8_is_a_public_api():
    """The real source (PyPI flashinfer-python 0.7.2.post1): library mode lists ``flashinfer.rope.rope_quantize_fp8``
    and ``mla_rope_quantize_fp8`` (the H200 oracle has a truth for the latter; docs/gpu-results.md round 4 thought
    both unlisted: they are listed, and absent only from the fix report's per-API table, which holds the APIs made
    ops)."""
    import pytest

    from compile_lint.cache import SummaryCache
    from compile_lint.engine import SummaryLoader
    from compile_lint.program import ModuleLocator, Program
    from compile_lint.publicapi import public_api
    from realworld.pypi_fixtures import FixtureUnavailable, site_root

    try:
        site = site_root("current")
    except FixtureUnavailable as e:
        pytest.skip(f"flashinfer 0.7.2.post1 unavailable: {e}")
    program = Program(ModuleLocator({}, [str(site)]), SummaryLoader(SummaryCache(None)))
    apis = {r.qualname: r for r in public_api(program, "flashinfer")}
    for name in ("rope_quantize_fp8", "mla_rope_quantize_fp8", "apply_rope"):
        r = apis[f"flashinfer.rope.{name}"]
        assert r.entries == [(f"flashinfer.rope:{name}", None)] and r.path.endswith("flashinfer/rope.py")
    assert "flashinfer.rope_quantize_fp8" not in apis  # not exported by the package: named where it is defined


def test_the_first_by_rank_is_min_by_the_whole_rank_ties_to_the_first():
    """_first_by_rank ranks one part at a time; it must pick what ``min(key=_rank)`` picks, ties included
    (the first of the findings that tie on every part)."""
    import itertools

    from compile_lint.findings import CONDITIONAL_WRAPPER, Condition, Finding, Frame, RegionRef
    from compile_lint.firsthazard import _first_by_rank, _rank

    region = RegionRef("m.py", 1, "f", True)
    plain = Condition("m.py", 2, "debug", ("name", "debug"), True)
    lazy = Condition("m.py", 3, "cls._x is None", ("cmp", ("attr", "cls", "_x"), (("Is", ("const", None)),)), True)
    wrapper = Condition("m.py", 4, "wrapped", (CONDITIONAL_WRAPPER, "w"), True)

    def finding(n, severity, conds, *lines):
        trace = tuple(Frame("m.py", ln, "f") for ln in lines)
        return Finding("CL101", severity, "m.py", lines[-1], 0, f"h{n}", "", "", region, trace, conditions=conds)

    pool = [finding(0, "error", (), 5, 9), finding(1, "warning", (plain,), 5, 7), finding(2, "warning", (plain,), 5, 7),
            finding(3, "warning", (lazy,), 5, 3), finding(4, "warning", (wrapper,), 4, 2),
            finding(5, "error", (), 5, 8), finding(6, "warning", (plain, plain), 5, 6), finding(7, "error", (), 5, 8)]
    for n in range(1, 4):
        for picked in itertools.permutations(pool, n):
            assert _first_by_rank(list(picked)) is min(picked, key=_rank)
    assert _first_by_rank(pool).qualname == "h5"  # an error, the earliest line; h7 ties with it and comes later
