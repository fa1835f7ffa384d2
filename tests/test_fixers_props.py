"""Property test: every fixer, on generated variations of the loader shapes, produces output that parses, is
idempotent (a second run changes nothing), and leaves everything outside the edited nodes byte-identical.

"Outside the edited nodes" is checked exactly: splicing the replacement edits into the original text by
position must give the fixed text minus the inserted statements (imports, hoisted assignments, ``__init__``
lines), and nothing else may differ.

The default profile runs about 200 examples; ``-m fuzz`` runs 10000.
"""
from __future__ import annotations

import difflib
import keyword
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compile_lint.engine import scan
from compile_lint.fixers import FixOptions, apply_fixes, fix, plan_all
from compile_lint.fixers.model import AddImport, AppendToMethod, InsertTopLevel, ReplaceNode

from test_fixers import place, scan_opts

RESERVED = {"torch", "functools", "subprocess", "x", "y", "w", "s", "out", "q", "sf", "n", "fxlib", "self", "print",
            "len", "str", "int", "list", "dict", "type", "object", "input", "id", "sum", "max", "min", "gen_norm_module",
            "get_quant_module", "scaled_quantize", "jit_cache_ready", "lru_cache", "cache", "f", "g", "main"}
IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,9}", fullmatch=True).filter(
    lambda s: not keyword.iskeyword(s) and s not in RESERVED and not s.startswith("_") and "__" not in s)
COMMENT = st.sampled_from(["", "  # keep me", "  # get_module() in a comment", "  # noqa: E501", "  #"])
BLANKS = st.sampled_from(["\n", "\n\n", "\n\n\n"])
SP = st.sampled_from(["", " "])


@st.composite
def filler(draw):
    parts = []
    for i in range(draw(st.integers(0, 2))):
        kind = draw(st.sampled_from(["fn", "const", "comment", "string"]))
        name = draw(IDENT)
        if kind == "fn":
            parts.append(f"def {name}_{i}(a):{draw(COMMENT)}\n    return a + {i}\n")
        elif kind == "const":
            parts.append(f"{name.upper()}_{i} = {draw(st.integers(-5, 99))}{draw(COMMENT)}\n")
        elif kind == "comment":
            parts.append(f"# {name} {i}: loader() and build_and_load() mentioned in a comment\n")
        else:
            parts.append(f'DOC_{i} = """call get_module() and {name}() here"""\n')
    return draw(BLANKS).join(parts)


@st.composite
def cached_loader(draw):
    """A cached loader in the user's module: no key, or constant keys; 1-2 call sites, fullgraph or not."""
    loader = draw(IDENT)
    deco = draw(st.sampled_from(["@functools.cache", "@functools.lru_cache(maxsize=None)", "@functools.lru_cache"]))
    nkeys = draw(st.integers(0, 2))
    params = ", ".join(f"k{i}" for i in range(nkeys))
    keys = [draw(st.one_of(st.sampled_from(['"90"', '"100"', "'120'"]), st.integers(0, 300).map(str)))
            for _ in range(nkeys)]
    sp = draw(SP)
    call = f"{loader}({(',' + sp).join(keys)})"
    body_key = " + ".join(f"str(k{i})" for i in range(nkeys)) or '""'
    fn = draw(IDENT.filter(lambda s: s != loader))
    use = draw(st.sampled_from(["return", "assign", "nested", "method"]))
    if use == "return":
        site = f"    return y * len({call}){draw(COMMENT)}\n"
    elif use == "assign":
        site = f"    n = len({call}){draw(COMMENT)}\n    return y * n\n"
    elif use == "nested":
        site = f"    return (y{sp}+{sp}len( {call} )) * 2\n"
    else:
        site = f"    return y * {call}.count(\"1\")\n"
    second = draw(st.booleans())
    fullgraph = draw(st.booleans())
    collide = draw(st.booleans())
    const = "_" + loader.upper()
    src = (
        f'"""Generated: cached loader `{loader}`."""\nimport functools\nimport subprocess\n\nimport torch\n'
        + (f"\n{const} = 'taken'{draw(COMMENT)}\n" if collide else "")
        + draw(BLANKS) + draw(filler()) + "\n\n"
        + f"{deco}\ndef {loader}({params}):\n"
        + f"    return subprocess.check_output([\"nvcc\", \"--version\"], text=True) + {body_key}\n\n\n"
        + f"def {fn}(x):\n    y = x{sp}*{sp}2{draw(COMMENT)}\n" + site + "\n\n"
        + (f"def {fn}_two(x):\n    return x + len({call})\n\n\n" if second else "")
        + draw(filler()) + "\n"
        + f"{fn}_c = torch.compile({fn}{', fullgraph=True' if fullgraph else ''})\n"
        + (f"{fn}_two_c = torch.compile({fn}_two)\n" if second else "")
    )
    return "hoist-load", src, FixOptions(unsafe=True, only=("hoist-load",))


@st.composite
def namespace_closure(draw):
    """fxlib's SimpleNamespace closure, called with varied spacing, comments and argument forms."""
    alias = draw(st.sampled_from(["", " as gqm"]))
    name = "gqm" if alias else "get_quant_module"
    key = draw(st.sampled_from(['"100"', '"90"', "'120'"]))
    args = draw(st.sampled_from([
        "x", "x, None", "x, None, 16", "x, sf_vec_size=32", "x,  None ,16", "x, global_scale=None, swizzled=False",
        "\n        x,  # the input\n        None,\n    ", "x, None, 16,",
    ]))
    fn = draw(IDENT)
    sp = draw(SP)
    src = (
        f"import torch\n\nfrom fxlib.quant import get_quant_module{alias}\n" + draw(BLANKS) + draw(filler()) + "\n\n"
        + f"def {fn}(x):{draw(COMMENT)}\n    q, sf{sp}={sp}{name}({key}).quantize_sm100({args})\n"
        + f"    return q.float().sum(){sp}+{sp}sf.float().sum()\n\n\n"
        + f"{fn}_c = torch.compile({fn}, fullgraph=True)\n"
    )
    return "op-boundary", src, FixOptions(unsafe=False, only=("op-boundary",))


@st.composite
def build_chain(draw):
    eps = draw(st.sampled_from(["1e-6", "1e-5", "0.0001"]))
    fn = draw(IDENT)
    init = draw(st.booleans())
    sp = draw(SP)
    if init:
        body = (f"class {fn.capitalize()}Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                f"        self.w = torch.nn.Parameter(torch.ones(8)){draw(COMMENT)}\n\n"
                f"    def forward(self, x):\n        out = torch.empty_like(x)\n"
                f"        gen_norm_module().build_and_load().rmsnorm(out,{sp}x, self.w, {eps})\n        return out\n\n\n"
                f"NET = {fn.capitalize()}Net()\nnet_c = torch.compile(NET, fullgraph=True)\n")
        fo = FixOptions(unsafe=True, only=("hoist-load",), hoist_to="init")
    else:
        body = (f"def {fn}(x, w):\n    out = torch.empty_like(x){draw(COMMENT)}\n"
                f"    gen_norm_module().build_and_load().rmsnorm(out,{sp}x, w, {eps})\n    return out\n\n\n"
                f"{fn}_c = torch.compile({fn}, fullgraph=True)\n")
        fo = FixOptions(unsafe=True, only=("hoist-load",))
    src = "import torch\n\nfrom fxlib.norm import gen_norm_module\n" + draw(BLANKS) + draw(filler()) + "\n\n" + body
    return "hoist-load", src, fo


@st.composite
def disable_or_existing_op(draw):
    fn = draw(IDENT)
    sp = draw(SP)
    if draw(st.booleans()):
        name = draw(st.sampled_from(['"norm"', "'quant_100'"]))
        src = ("import torch\n\nfrom fxlib.jit import jit_cache_ready\n" + draw(BLANKS) + draw(filler()) + "\n\n"
               f"def {fn}(x):\n    if jit_cache_ready({name}):{draw(COMMENT)}\n        return x{sp}*{sp}2\n"
               f"    return x\n\n\n{fn}_c = torch.compile({fn})\n")
        return "compiler-disable", src, FixOptions(unsafe=False, only=("compiler-disable",))
    extra = draw(st.sampled_from(["", ", block=32", ", 16", ", scale=s"]))
    first = "x, s" if "scale=" not in extra else "x"
    src = ("import torch\n\nfrom fxlib import scaled_quantize\n" + draw(BLANKS) + draw(filler()) + "\n\n"
           f"def {fn}(x, s):\n    q, sf = scaled_quantize({first}{extra}){draw(COMMENT)}\n"
           f"    return q.float().sum(){sp}+{sp}sf.float().sum()\n\n\n{fn}_c = torch.compile({fn}, fullgraph=True)\n")
    return "op-boundary", src, FixOptions(unsafe=False, only=("op-boundary",))


SHAPES = st.one_of(cached_loader(), namespace_closure(), build_chain(), disable_or_existing_op())


# ------------------------------------------------------------------------------------------------ checks
def _offsets(text: str) -> list:
    starts, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        starts.append(pos)
    return starts


def splice(text: str, edits: list) -> str:
    starts = _offsets(text)
    out = text
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a = starts[e.line - 1] + e.col
        b = starts[e.end_line - 1] + e.end_col
        assert out[a:b] == e.old, (out[a:b], e.old)
        out = out[:a] + e.new + out[b:]
    return out


def check_example(expected_fixer: str, src: str, fo: FixOptions) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        pkg = place("gen", root, text=src)
        target = pkg / "gen.py"
        planning = plan_all(scan(scan_opts(pkg)), fo)
        assert planning.plans, ("no fix planned", [(u.finding.rule, [r.reason for r in u.refusals])
                                                     for u in planning.unfixable], src)
        assert {p.fixer for p in planning.plans} == {expected_fixer}
        report = apply_fixes(planning.plans, unsafe=True)
        assert report.applied and not report.skipped, report.skipped
        new = target.read_text()
        compile(new, "gen.py", "exec")  # parses
        gen = pkg / "_compile_lint_ops.py"
        if gen.exists():
            compile(gen.read_text(), "_compile_lint_ops.py", "exec")
        edits = [e for p in planning.plans for e in p.edits if e.path == str(target)]
        spliced = splice(src, [e for e in edits if isinstance(e, ReplaceNode)])
        inserted = {line.strip() for e in edits if isinstance(e, (AddImport, InsertTopLevel, AppendToMethod))
                    for line in e.code.splitlines()}
        a, b = spliced.splitlines(), new.splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            assert tag == "insert", ("outside the edits", tag, a[i1:i2], b[j1:j2], src, new)
            for line in b[j1:j2]:
                assert not line.strip() or line.strip() in inserted, (line, src, new)
        # idempotent: a second run changes nothing
        again = fix(scan_opts(pkg), fo)
        assert not again.written, again.diff
        assert target.read_text() == new


COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                    HealthCheck.filter_too_much])


@settings(max_examples=200, **COMMON)
@given(SHAPES)
def test_fixers_on_generated_shapes(example):
    check_example(*example)


@pytest.mark.fuzz
@settings(max_examples=10000, **COMMON)
@given(SHAPES)
def test_fixers_on_generated_shapes_fuzz(example):
    check_example(*example)
