"""The resolver's cycles (lint/program/fixpoint.py): a value that depends on itself through calls, module
globals, classes or expressions is solved to the least fixpoint of its cycle, so that it does not depend on
which member of the cycle was asked first -- a full scan and an incremental one (which walks some regions
again in a fresh program) meet them in different orders.  The values a cycle feeds back are bounded
(lint/program/widening.py), so that its rounds settle.  A local's own cycle (``x = f(x)``) is cut as before."""
import textwrap

import pytest

from compile_lint.cache import SummaryCache
from compile_lint.engine import SummaryLoader
from compile_lint.program import ModuleLocator, Program, Scope
from compile_lint.dynamo.model import tensor_type
from compile_lint.program.fixpoint import MAX_ROUNDS
from compile_lint.program import widening
from compile_lint.program.widening import MAX_DERIVED_TAIL, MAX_NESTING, bounded_nesting, derived_name
from compile_lint.values import Const, External, ExternalInstance, Instance, SeqVal, Unknown


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


NEST = """
    def nest(k):
        if k:
            return 0
        return [nest(k)]
    """


def test_a_cycle_whose_value_nests_every_round_settles_at_the_nesting_bound(tmp_path):
    """``[nest(k)]``: each round nests the list once more, without end.  Past MAX_NESTING lists the innermost
    is an unknown (widening.py), and the next round gives what this one did: settled."""
    p = _program(tmp_path, NEST)
    got = _returns(p, "nest")
    depth = 0
    while True:
        assert Const(0) in got
        inner = [v for v in got if isinstance(v, SeqVal)]
        if not inner:
            break
        (got,) = [v.elems for v in inner]
        depth += 1
    assert depth == MAX_NESTING and Unknown("nested") in got
    assert p.stats.fixpoint_unsettled == 0 and p.stats.fixpoint_rounds >= 1


def test_a_cycle_whose_value_grows_past_the_rounds_keeps_its_last_round(tmp_path, monkeypatch):
    """A value that still changes after MAX_ROUNDS rounds (here the nesting bound lifted, so that ``[nest(k)]``
    grows without end): the resolver stops and keeps what the last round gave, counting the cycle as
    unsettled."""
    monkeypatch.setattr(widening, "MAX_NESTING", 100)
    p = _program(tmp_path, NEST)
    got = _returns(p, "nest")
    depth = 0
    while any(isinstance(v, SeqVal) for v in got):
        (got,) = [v.elems for v in got if isinstance(v, SeqVal)]
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


def test_a_scan_counts_the_cycles_it_worked_out_again_and_those_that_did_not_settle(run_scan, tmp_path,
                                                                                 monkeypatch):
    """The stats say how much of the resolver's work was cycles, and how many values a cycle left unsettled
    (which member was asked first may still change those)."""
    monkeypatch.setattr(widening, "MAX_NESTING", 100)  # a value that grows past the rounds
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


# sglang's ModelConfig (configs/model_config.py), cut down: each attribute is stored from the other
MODEL_CONFIG = """
    import copy
    from transformers import PretrainedConfig, get_config

    def get_text_config(config):
        if hasattr(config, "thinker_config"):
            return config.thinker_config.text_config
        if hasattr(config, "llm_config"):
            return config.llm_config
        return config

    def draft_config(config) -> PretrainedConfig:
        return copy.deepcopy(getattr(config, "text_config", config))

    class ModelConfig:
        def __init__(self, path):
            self.hf_config = copy.deepcopy(get_config(path))
            self.hf_text_config = get_text_config(self.hf_config)

        def _draft(self):
            self.hf_config = draft_config(self.hf_config)
            self.hf_config = self.hf_text_config
            self.hf_text_config = get_text_config(self.hf_config)
    """


def _attrs(tmp_path, order: list) -> dict:
    p = _program(tmp_path, MODEL_CONFIG)
    got = {name: p.attr(Instance("m:ModelConfig"), name) for name in order}
    assert p.stats.fixpoint_unsettled == 0
    return got


def test_attributes_stored_from_each_other_have_the_same_values_whichever_is_asked_first(tmp_path):
    """The expression ``self.hf_config`` read while its own value was worked out was cut with no value, and
    the fallbacks taken on that no-value stayed for good (``draft_config``'s annotation, an attribute's "no
    attribute"): ``hf_config`` had 4 values asked first and 2 asked after ``hf_text_config``, and on the
    bench site 3 or 88, which moved the context caps of 35 functions after a leaf edit (session 29)."""
    a = _attrs(tmp_path, ["hf_config", "hf_text_config"])
    b = _attrs(tmp_path, ["hf_text_config", "hf_config"])
    assert a == b
    assert External("copy.deepcopy().llm_config") in a["hf_config"]
    assert External("copy.deepcopy().thinker_config.text_config") in a["hf_text_config"]


def test_an_attribute_rebound_from_its_own_attribute_settles_at_the_derived_names_bound(tmp_path):
    """``self.cfg = self.cfg.text_config``: one attribute more each round, without end; the name keeps its
    last MAX_DERIVED_TAIL steps, so the rounds settle."""
    p = _program(tmp_path, """
    from transformers import get_config

    class C:
        def __init__(self):
            self.cfg = get_config()

        def text(self):
            self.cfg = self.cfg.text_config
    """)
    got = p.attr(Instance("m:C"), "cfg")
    chains = {"get_config()" + ".text_config" * n for n in range(1, MAX_DERIVED_TAIL + 1)}
    assert got == {ExternalInstance("transformers.get_config()")} | {External(f"transformers.{c}") for c in chains}
    assert p.stats.fixpoint_unsettled == 0 and p.stats.fixpoint_rounds >= MAX_DERIVED_TAIL


def test_a_derived_name_keeps_its_type_and_its_last_steps():
    assert derived_name("copy.deepcopy().a.b.c.d") == "copy.deepcopy().b.c.d"
    assert derived_name("transformers.PretrainedConfig.a.b.c.d.e") == "transformers.PretrainedConfig.c.d.e"
    assert derived_name("copy.deepcopy().a.b.c") == "copy.deepcopy().a.b.c"
    # a module path is never cut, however long
    long_path = "torch._C._dynamo.eval_frame.guards.checks.deep.module.fn"
    assert derived_name(long_path) == long_path
    # a tensor method chain keeps the method it ends with: what tensor_type reads
    chain = derived_name("torch.Tensor.abs().max().to().float()")
    assert chain == "torch.Tensor.max().to().float()" and tensor_type(chain)
    assert not tensor_type(derived_name("torch.Tensor.abs().max().to().item()"))


def test_what_lies_deeper_in_containers_than_the_bound_is_unknown():
    v = Const(1)
    for _ in range(MAX_NESTING):
        v = SeqVal(frozenset({v}))
    assert bounded_nesting(frozenset({v, Const(2)})) == {v, Const(2)}
    deeper = SeqVal(frozenset({SeqVal(frozenset({v}))}))
    cut = Unknown("nested")
    for _ in range(MAX_NESTING):
        cut = SeqVal(frozenset({cut}))
    assert bounded_nesting(frozenset({deeper, Const(2)})) == {cut, Const(2)}
    assert bounded_nesting(frozenset({SeqVal(frozenset({cut}))})) == {cut}  # cut again, the same value
