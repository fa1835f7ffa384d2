"""Context caps (lint/contexts.py): which contexts of a function are precise, and the digests that let an
incremental scan compare them with the previous scan's (lint/tracking.py TrackedContextCaps)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from compile_lint import contexts
from compile_lint.contexts import ContextCaps, digest
from compile_lint.values import Const, Func, SeqVal, Unknown

HERE = Path(__file__).parent


def test_the_first_distinct_contexts_are_precise():
    caps = ContextCaps(2)
    assert caps.admit("f", 1) and caps.admit("f", 2)
    assert not caps.admit("f", 3)  # past the cap: widened
    assert caps.admit("f", 1)  # one of the first: still precise, and counted once
    assert caps.admit("g", 3)  # per function


_VALUE = (Func("m:f", None, frozenset({"cached", "property"}), ("m:w",), (("x", frozenset({Const(1), Const("a")})),)),
          (("k", frozenset({SeqVal(frozenset({Const(2), Unknown("why")})), Const(None)})),))
_PRINT = ("import sys; sys.path[:0] = [{root!r}]\n"
          "from compile_lint.contexts import digest\n"
          "from compile_lint.values import Const, Func, SeqVal, Unknown\n"
          "print(digest({value}, {{}}))\n")


def test_a_digest_is_the_same_in_every_process():
    """``hash`` is salted per process and a frozenset's order follows it: a digest that followed either would
    differ between the scan that wrote the state and the one that reads it."""
    code = _PRINT.format(root=str(HERE.parent), value=repr(_VALUE))
    got = set()
    for seed in ("1", "2", "3"):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        got.add(int(out.stdout))
    assert got == {digest(_VALUE, {})}


def test_a_digest_tells_values_apart():
    values = [Const(1), Const(True), Const(1.0), Const("1"), (Const(1),), frozenset({Const(1)}), Unknown("1"),
              Func("m:f"), Func("m:f", "m:C"), Func("m:f", flags=frozenset({"cached"}))]
    assert len({digest(v, {}) for v in values}) == len(values)


def test_every_context_of_a_corpus_scan_is_a_known_value(tmp_path):
    """A value the digest does not know is digested by its repr, which may hold an address: the caps would
    see a new context in every run.  Every context the corpus's scan meets is of a known kind."""
    import shutil

    from compile_lint.engine import ScanOptions, scan

    root = tmp_path / "cases"
    shutil.copytree(HERE / "corpus" / "cases", root)
    contexts._FIELDS.clear()
    scan(ScanOptions(paths=[root], use_environment=False, use_installed_torch=False, cache_dir=tmp_path / "c",
                     use_result_cache=True, incremental=True))
    assert contexts._FIELDS  # the state's contexts were digested
    assert not [t.__name__ for t, names in contexts._FIELDS.items() if names is None]



def _program(tmp_path, source: str):
    import textwrap

    from compile_lint.cache import SummaryCache
    from compile_lint.engine import SummaryLoader
    from compile_lint.program import ModuleLocator, Program

    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    return Program(ModuleLocator({}, [str(tmp_path)]), SummaryLoader(SummaryCache(None)))


def test_a_call_context_holds_only_what_the_functions_value_reads(tmp_path):
    """A call's value is worked out from the parameters its returns (and their guards) read, each expression
    in a scope narrowed to them: calls that differ in another argument are one context.  Counted apart, the
    first MAX_CALL_CONTEXTS of them filled the function's cap, and a later call's tensor argument was widened
    away (Program._widened): its value fell back to the annotation where it was the tensor passed."""
    from compile_lint.program import MAX_CALL_CONTEXTS, Scope

    p = _program(tmp_path, """
        import torch

        def pick(x, scale):
            print(scale)  # read by the body, not by what it returns
            return x
        """)
    for i in range(MAX_CALL_CONTEXTS + 1):
        p.eval(("call", ("name", "pick"), (("name", "unbound"), ("const", i)), ()), Scope("m"))
    tensor = ("call", ("attr", ("name", "torch"), "ones"), (), ())
    passed = p.eval(tensor, Scope("m"))
    got = p.eval(("call", ("name", "pick"), (tensor, ("const", 99)), ()), Scope("m"))
    assert passed and got == passed
    assert [len(seen) for seen in p._call_contexts.seen.values()] == [1]  # (x unknown and x the tensor count as one)


def test_contexts_that_differ_only_in_objects_of_unseen_code_count_as_one(tmp_path):
    """Which tensors (and what was derived from them) a value set holds follows the order the resolver met its
    cycles in; counted apart, such contexts filled a function's cap first, and an edit moved which contexts
    of hundreds of functions came first (README, "Incremental rows", session 31).  They count as one context
    now, each still worked out precisely: the tenth tensor passed is not widened away."""
    from compile_lint.program import MAX_CALL_CONTEXTS, Scope

    p = _program(tmp_path, """
        import torch

        def pick(x):
            return x
        """)
    makers = ["ones", "zeros", "empty", "rand", "randn", "full", "arange", "eye", "tensor", "zeros_like", "ones_like"]
    assert len(makers) > MAX_CALL_CONTEXTS + 1
    for name in makers:
        tensor = ("call", ("attr", ("name", "torch"), name), (), ())
        passed = p.eval(tensor, Scope("m"))
        assert passed and p.eval(("call", ("name", "pick"), (tensor,), ()), Scope("m")) == passed, name
    p.eval(("call", ("name", "pick"), (("const", 1),), ()), Scope("m"))  # a constant: a context of its own
    assert [len(seen) for seen in p._call_contexts.seen.values()] == [2]
