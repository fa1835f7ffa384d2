"""What a call's context keeps of its arguments (lint/program/widening.py ``argument_values``, applied where
``Program.bind_args`` binds them): an object an external call made, then reshaped, is that call; a tensor one of
its methods made is one value; an unknown is one unknown.  A function called with ``torch.empty(n).view(...)``
here and ``torch.empty(n).reshape(...)`` there is worked out once, not once per chain: sglang's attention
backends were worked out in hundreds of such contexts each on the bench site."""
from __future__ import annotations

import textwrap

from compile_lint.cache import SummaryCache
from compile_lint.dynamo.model import tensor_type
from compile_lint.engine import SummaryLoader
from compile_lint.program import ModuleLocator, Program, Scope
from compile_lint.program.evaluate import tensor_valued
from compile_lint.program.widening import TENSOR_MADE, argument_values, derived_name
from compile_lint.values import Const, ExternalInstance, Func, Instance, TupleVal, Unknown


def _one(type_name: str) -> str:
    (got,) = argument_values(frozenset({ExternalInstance(type_name)}))
    return got.type


def test_an_object_an_external_call_made_is_that_call():
    assert _one("torch.empty().view()") == "torch.empty()"
    assert _one("aiter.gemm_a8w8_blockscale().new_empty().to().view()") == "aiter.gemm_a8w8_blockscale()"
    assert _one("torch.Tensor.item().tolist()") == "torch.Tensor.item()"
    # already the call, or no call at all
    assert _one("torch.empty()") == "torch.empty()"
    assert _one("pathlib.Path") == "pathlib.Path" and _one("torch.Tensor") == "torch.Tensor"


def test_a_tensor_a_method_made_is_one_value_that_every_reader_takes_for_such_a_tensor():
    for name in ("torch.Tensor.abs().max()", "torch.Tensor.view()", "torch.Tensor.item().float()"):
        assert tensor_type(name) and _one(name) == TENSOR_MADE.type
    made = TENSOR_MADE.type
    # a tensor; a call's result (a name with ``()``); what its methods give is told by the method, as for any
    assert tensor_type(made) and made.endswith("()")
    assert not tensor_type(made + ".item()") and tensor_type(made + ".float()")
    assert not tensor_type(derived_name(made + ".a.b.c.item()"))
    # not one of its methods: a tensor from an annotation, and what torch's functions made, stay apart
    assert _one("torch.Tensor") == "torch.Tensor" and _one("torch.max()") == "torch.max()"


def test_what_a_model_reads_further_is_kept_whole():
    # a chain after a call whose result is a tensor is not one (model.tensor_type), its first call is
    assert not tensor_type("torch.max().view()") and _one("torch.max().view()") == "torch.max().view()"
    # not a tensor, where its first call made one
    assert not tensor_type("torch.Tensor.abs().item()") and _one("torch.Tensor.abs().item()") == \
        "torch.Tensor.abs().item()"
    # the arch decides a device's properties (``.major``) whichever module spelled the query
    assert _one("torch.cuda.get_device_properties().clone()") == "torch.cuda.get_device_properties().clone()"
    # an environment read is a Python scalar, what a method of it gave is not known to be one
    assert _one("os.environ.get().lower()") == "os.environ.get().lower()"


def test_unknowns_are_one_unknown_and_other_values_stay_the_same_object():
    got = argument_values(frozenset({Unknown("bool"), Unknown("call"), Const(None)}))
    assert got == {Unknown("argument"), Const(None)}
    kept = frozenset({Const(1), Instance("m:C"), Func("m:f"), ExternalInstance("torch.Tensor")})
    assert argument_values(kept) is kept
    # already as a context keeps them: the same object, nothing rebuilt
    widened = frozenset({Unknown("argument"), TENSOR_MADE, ExternalInstance("torch.empty()"), Const(None)})
    assert argument_values(widened) is widened


SOURCE = """
    import torch

    def pair(x, factor):
        return x, factor

    def same(x):
        return x

    def caller(n, t0: torch.Tensor):
        a = pair(torch.empty(n).view(-1), 2)
        b = pair(torch.empty(n).reshape(-1), 2)
        t = same(t0.abs().max())
        return a, b, t
    """


def _program(tmp_path) -> Program:
    (tmp_path / "m.py").write_text(textwrap.dedent(SOURCE))
    return Program(ModuleLocator({}, [str(tmp_path)]), SummaryLoader(SummaryCache(None)))


def _contexts(p: Program, fid: str) -> list:
    return [k for k in p._call_memo if isinstance(k, tuple) and getattr(k[0], "id", None) == fid]


def test_calls_that_differ_only_in_how_an_external_object_was_reshaped_share_one_context(tmp_path):
    p = _program(tmp_path)
    scope = Scope("m", p.function("m:caller"), "m:caller")
    made = TupleVal((frozenset({ExternalInstance("torch.empty()")}), frozenset({Const(2)})))
    for local in ("a", "b"):
        assert p.eval(("name", local), scope) == {made}
    (ctx,) = _contexts(p, "m:pair")
    assert dict(ctx[1])["x"] == {ExternalInstance("torch.empty()")}


def test_a_tensor_passed_on_is_still_a_tensor(tmp_path):
    """``same(t0.abs().max())`` gives back what it was given: a tensor, as the caller's tests read it."""
    p = _program(tmp_path)
    got = p.eval(("name", "t"), Scope("m", p.function("m:caller"), "m:caller"))
    assert tensor_valued(got)
