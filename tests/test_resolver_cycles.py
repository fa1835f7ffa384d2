"""The resolver's cycles (lint/program/fixpoint.py): a value that depends on itself through calls, module
globals or classes is solved to the least fixpoint of its cycle, so that it does not depend on which member
of the cycle was asked first -- a full scan and an incremental one (which walks some regions again in a fresh
program) meet them in different orders.  An expression's or a local's own cycle (``x = f(x)``) is cut as
before."""
import textwrap

import pytest

from compile_lint.cache import SummaryCache
from compile_lint.engine import SummaryLoader
from compile_lint.program import ModuleLocator, Program, Scope
from compile_lint.program.fixpoint import MAX_ROUNDS
from compile_lint.values import Const, SeqVal


def _program(tmp_path, source: str) -> Program:
    (tmp_path / "m.py").write_text(textwrap.dedent(source))
    return Program(ModuleLocator({}, [str(tmp_path)]), SummaryLoader(SummaryCache(None)))


def _returns(p: Program, name: str, arg: str = "x") -> set:
    """What ``name(arg)`` gives at m's top level (``arg`` an unbound name: unknown)."""
    return p.eval(("call", ("name", name), (("name", arg),), ()), Scope("m"))


MUTUAL = """
    def f(k):
        if k:
            return 1
        return g(k)

    def g(k):
        if k:
            return 2
        return f(k)
    """


@pytest.mark.parametrize("first", ["f", "g"])
def test_a_cycle_of_two_functions_gives_each_the_same_value_whichever_is_asked_first(tmp_path, first):
    """Cut where it was entered, the cycle gave f {1, 2} and g {2} when f was asked first, f {1} and g {1, 2}
    when g was: now both {1, 2} either way."""
    p = _program(tmp_path, MUTUAL)
    second = "g" if first == "f" else "f"
    got = {first: _returns(p, first), second: _returns(p, second)}
    assert got == {"f": {Const(1), Const(2)}, "g": {Const(1), Const(2)}}
    assert p.stats.fixpoint_rounds >= 2 and p.stats.fixpoint_unsettled == 0


def test_a_value_worked_out_inside_a_cycle_is_not_kept_from_a_round_before_the_last(tmp_path):
    """f -> g -> h -> f, f asked first: in the first round g and h are worked out with f empty (g {2}, h
    empty); kept, g would say {2} for ever.  They are provisional until f settles, and final from its last
    round; a fresh program asked h first gives the same."""
    three = MUTUAL.replace("return f(k)", "return h(k)") + """
    def h(k):
        return f(k)
    """
    p = _program(tmp_path, three)
    assert _returns(p, "f") == {Const(1), Const(2)}
    assert _returns(p, "g") == _returns(p, "h") == {Const(1), Const(2)}
    fresh = _program(tmp_path, three)
    assert _returns(fresh, "h") == _returns(fresh, "g") == _returns(fresh, "f") == {Const(1), Const(2)}


def test_a_cycle_whose_value_grows_every_round_stops_after_max_rounds(tmp_path):
    """``[nest(k)]``: each round nests the list once more, without end.  After MAX_ROUNDS rounds the resolver
    stops and keeps what the last round gave (lists MAX_ROUNDS deep, the innermost empty), counting the cycle
    as unsettled."""
    p = _program(tmp_path, """
    def nest(k):
        if k:
            return 0
        return [nest(k)]
    """)
    got = _returns(p, "nest")
    depth = 0
    while got:
        assert Const(0) in got
        inner = [v for v in got if isinstance(v, SeqVal)]
        if not inner:
            break
        (got,) = [v.elems for v in inner]
        depth += 1
    assert depth == MAX_ROUNDS
    assert p.stats.fixpoint_unsettled == 1 and p.stats.fixpoint_rounds == MAX_ROUNDS


def test_a_value_outside_every_cycle_takes_no_round(tmp_path):
    p = _program(tmp_path, """
    def a(k):
        return b(k)

    def b(k):
        return 3
    """)
    assert _returns(p, "a") == {Const(3)}
    assert p.stats.fixpoint_rounds == 0


def test_a_local_rebound_from_itself_is_cut_without_rounds(tmp_path):
    """``x = wrap(x)`` (a local rebound from itself, the most common cycle of model code: ``hidden_states =
    layer(hidden_states)``) is cut where it is met, as before: solving the 13,526 such cycles of the real-code
    suite to their fixpoint cost it a third more time and 2,604 of them never settled."""
    p = _program(tmp_path, """
    def wrap(v):
        return [v]

    def f(x):
        x = wrap(x)
        return x
    """)
    got = _returns(p, "f")
    lists = [v for v in got if isinstance(v, SeqVal)]
    assert len(lists) == 1 and not any(isinstance(e, SeqVal) for e in lists[0].elems)  # [x], never [[x]]
    assert p.stats.fixpoint_rounds == 0


def test_a_scan_counts_the_cycles_it_worked_out_again_and_those_that_did_not_settle(run_scan, tmp_path):
    """The stats say how much of the resolver's work was cycles, and how many values a cycle left unsettled
    (which member was asked first may still change those)."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import torch

        def nest(k):
            if k:
                return 0
            return [nest(k)]

        @torch.compile(fullgraph=True)
        def r(x):
            nest(x).append(x)  # a method of what it returns: the walk works the value out
            return x
        """))
    stats = run_scan(tmp_path / "m.py").stats
    assert stats["cycle_rounds"] == MAX_ROUNDS and stats["cycles_unsettled"] == 1


def test_a_binding_under_a_guard_that_tests_its_own_name_is_no_cycle(tmp_path):
    """FlashInfer's norm: ``_USE_CUDA = env == "1"`` then ``if not _USE_CUDA: _USE_CUDA = True`` (its import
    fallback).  Asking whether the guard may hold read the name's own value, a cycle whose second round saw
    ``_USE_CUDA`` True, skipped the binding and undid it (True or False for ever, unsettled); the guard is the
    rebinding's own test (``_guarded_rebinding``): True either way, in no round."""
    p = _program(tmp_path, """
    import os

    _USE_CUDA = os.environ.get("USE_CUDA", "0") == "1"

    if not _USE_CUDA:
        _USE_CUDA = True
    """)
    assert p.resolve_global("m", "_USE_CUDA") == {Const(True)}
    assert p.stats.fixpoint_rounds == 0
