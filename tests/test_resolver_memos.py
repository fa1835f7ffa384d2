"""Values the resolver and the walk work out once and share, because they depend on names only: an attribute
of something outside the program (``torch.float16``, a tensor's ``x.shape``: EvaluatorMixin.attr), and the
nodes a call enters (Reach._enter: one object per value, so that the walk's tables, keyed by node, find the
one they hold without comparing field by field)."""
from __future__ import annotations

import textwrap

from compile_lint.arch import ArchFacts
from compile_lint.cache import SummaryCache
from compile_lint.engine import SummaryLoader
from compile_lint.program import ModuleLocator, Program
from compile_lint.program.scope import _SCOPE_KEYS
from compile_lint.reach import Reach
from compile_lint.regions import RegionFinder
from compile_lint.values import Const, External, ExternalInstance


def _program(tmp_path, arch=None) -> Program:
    return Program(ModuleLocator({}, [str(tmp_path)]), SummaryLoader(SummaryCache(None)), arch=arch)


def test_an_external_attribute_is_worked_out_once_per_name_and_program(tmp_path):
    p = _program(tmp_path)
    dtype = p.attr(External("torch"), "float16")
    assert dtype == {External("torch.float16")} and p.attr(External("torch"), "float16") is dtype
    parent = p.attr(ExternalInstance("pathlib.Path"), "parent")
    assert parent == {ExternalInstance("pathlib.Path")}
    assert p.attr(ExternalInstance("pathlib.Path"), "parent") is parent
    # the target architecture decides some: per program, not shared with one that has none
    sm90 = _program(tmp_path, ArchFacts.parse("sm90", "12.8"))
    assert sm90.attr(External("torch.version"), "cuda") == {Const("12.8")}
    assert p.attr(External("torch.version"), "cuda") == {External("torch.version.cuda")}


def test_the_nodes_a_walk_enters_are_one_object_per_value(tmp_path):
    """``leaf`` is called from two functions: the steps of each name it by a node of its own making, and the
    walk's tables hold the first; both are that one object."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import torch

        def leaf(x):
            return x + 1

        def a(x):
            return leaf(x)

        def b(x):
            return leaf(x)

        @torch.compile(fullgraph=True)
        def f(x):
            return a(x) + b(x)
        """))
    p = _program(tmp_path)
    (region,) = RegionFinder(p).find("m")
    reach = Reach(p)
    reach.walk(region)
    children = [child for (node, _), steps in reach._steps_memo.items() if node.fid in ("m:a", "m:b")
                for kind, child, _, _ in steps if kind == "child" and child.fid == "m:leaf"]
    assert len(children) == 2 and children[0] is children[1]


def test_value_sets_are_one_object_per_writing_never_one_for_two_meanings(tmp_path):
    """The resolver's memo tables hold one value set per entry; a set with a constant or a container in it
    (`{Const(4)}`, `{TupleVal(...)}`) was kept as made -- 190 K such sets of 38 K values at the bench site's
    walks' end.  They are interned under their values' reprs, which tell apart what `==` does not (1, True,
    1.0; a constant assumed from one that is not); an empty set is the one EMPTY."""
    from compile_lint.values import EMPTY, TupleVal

    p = _program(tmp_path)

    def made(*values):  # a set made at run time, as the resolver makes them
        return frozenset(list(values))

    def in_tuple(c):
        return made(TupleVal((made(c), made(External("torch")))))

    one = p._interned(in_tuple(Const(1)))
    assert p._interned(in_tuple(Const(1))) is one
    assert in_tuple(Const(True)) == one  # equal to Python ...
    for other in (in_tuple(Const(True)), in_tuple(Const(1.0))):  # ... but another meaning: never that object
        got = p._interned(other)
        assert got is not one and p._interned(made(*other)) is got
    assumed = made(Const(("a", 2), assumed=frozenset({"x"})))
    plain = made(Const(("a", 2)))
    assert assumed == plain and p._interned(assumed) is not p._interned(plain)
    assert p._interned(made()) is EMPTY


def test_a_calls_argument_sets_are_one_object_per_value_in_the_memo(tmp_path):
    """A method's context binds ``self`` to a set made at each call; the call memo's keys (and the callee's
    scope, which the eval memo's keys hold) kept each -- 106 K argument sets of 13 K values at the bench
    site's walks' end.  A new entry's sets are the resolver's one object per value."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import torch

        class C:
            def m(self, k):
                return (self, k)

        @torch.compile(fullgraph=True)
        def f(x):
            c = C()
            if c.m(1)[1] == 1 and c.m(2)[1] == 2 and c.m(3)[1] == 3:  # (what each call gives: the resolver's)
                print("x")
            return x
        """))
    p = _program(tmp_path)
    (region,) = RegionFinder(p).find("m")
    Reach(p).walk(region)
    selves = [dict(bindings)["self"] for (v, bindings) in p._call_memo if getattr(v, "id", None) == "m:C.m"]
    assert len(selves) == 3 and len({id(s) for s in selves}) == 1


def test_the_memo_keys_hold_one_pair_object_per_bound_value(tmp_path):
    """An expression is evaluated in its scope narrowed to the parameters it reads, and each narrowed scope's
    key, and each call memo key, sorted its bindings into new (name, values) pairs: 1,164,993 pairs of 74,533
    values at the bench site's walks' end.  A pair of one value is one object, wherever a key holds it."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import torch

        class C:
            a = 1

            def m(self, k):
                return (self.a, k + 1, self.a + k)

        @torch.compile(fullgraph=True)
        def f(x):
            c = C()
            if c.m(1)[0] == 1 and c.m(2)[1] == 3:
                print("x")
            return x
        """))
    p = _program(tmp_path)
    (region,) = RegionFinder(p).find("m")
    Reach(p).walk(region)
    pairs = [kv for key in _SCOPE_KEYS if key[3] for kv in key[3]]  # (every scope key: the eval memo's hold them)
    pairs += [kv for key in p._call_memo for kv in key[1]]
    selves = [kv for kv in pairs if kv[0] == "self"]
    assert len(selves) >= 3  # the call's key, its scope's and the scope narrowed to `self`
    by_value = {}
    for kv in pairs:
        by_value.setdefault((kv[0], id(kv[1])), set()).add(id(kv))
    assert all(len(ids) == 1 for ids in by_value.values()), by_value
    # and the names each expression may read (what it is narrowed to): `self.a` twice, one set
    reads = [r for per in p._reads_memo.values() for _, r in per.values() if r]
    assert len(reads) > len(set(reads)) and len({id(r) for r in reads}) == len(set(reads))


def test_the_guard_memo_keys_hold_the_walks_predicates_once(tmp_path):
    """A guarded call's undecided conditions are worked out once per node, guards and predicates
    (Reach._undecided); each key sorted the walk's predicates into a new tuple of new pairs: 47,385 keys at the
    bench site's walks' end, each holding nine pairs again.  Every key of one walk holds one object."""
    (tmp_path / "m.py").write_text(textwrap.dedent("""
        import os
        import torch

        def g(x):
            if os.environ.get("A"):
                print("a")
            return x

        def h(x):
            if os.environ.get("B"):
                print("b")
            return g(x)

        @torch.compile(fullgraph=True)
        def f(x):
            if os.environ.get("C"):
                x = h(x)
            return g(x)
        """))
    p = _program(tmp_path)
    (region,) = RegionFinder(p).find("m")
    reach = Reach(p)
    reach.walk(region)
    held = [key[-1] for key in reach._guard_memo]
    assert len(held) >= 3 and len({id(x) for x in held}) == 1
    assert dict(held[0])["torch.compiler.is_compiling"] is True  # (the predicates, sorted: what the key meant)


def test_equal_values_made_apart_share_one_repr_text(tmp_path):
    """A value's repr is kept once computed (value sets are ordered by it); two equal values made apart -- a
    container of tensors' fakes worked out again in another context -- hold one text object between them,
    not a copy each (on the bench site 130 MB of a cold scan's strings were copies).  A new program starts
    a new table."""
    from compile_lint import values
    from compile_lint.values import TupleVal

    _program(tmp_path)

    def made() -> TupleVal:
        return TupleVal((frozenset({Const("fake_tensor"), Const(2)}), frozenset({External("torch.float16")})))

    a, b = made(), made()
    assert a is not b and a == b
    assert repr(a) == repr(b) and repr(a) is repr(b)
    assert repr(Const("fake_tensor")) is repr(Const("fake_tensor"))
    _program(tmp_path)
    assert not values._REPR_TEXTS  # (a finished scan's texts stay with its values, not in the table)
    c = made()
    assert repr(c) == repr(a) and repr(c) is not repr(a)
