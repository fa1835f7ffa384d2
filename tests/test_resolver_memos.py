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
