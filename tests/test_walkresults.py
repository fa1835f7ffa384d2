"""lint/walkresults.py: a full scan's region results held as ints until its state is built."""
import dataclasses

from compile_lint.findings import Condition, Finding, Frame, RegionRef
from compile_lint.walkresults import Packed, ResultPacker


def _every_field(x) -> tuple:
    """All of a value's fields, those equality leaves out too (a Frame's end, a Condition's guard)."""
    if dataclasses.is_dataclass(x):
        return (type(x).__name__,) + tuple(_every_field(getattr(x, f.name)) for f in dataclasses.fields(x))
    if isinstance(x, tuple):
        return tuple(_every_field(e) for e in x)
    return x


def _findings(region: RegionRef) -> list:
    a = Frame("/s/a.py", 3, "f", end=(3, 10))
    a_other_end = Frame("/s/a.py", 3, "f", end=(3, 20))  # equal to ``a``: the end is not compared
    b = Frame("/s/b.py", 9, "g")
    guard = Condition("/s/a.py", 3, "x > 2", expr=("compare", "x"), polarity=True)
    opposite = Condition("/s/a.py", 3, "x > 2", expr=("compare", "x"), polarity=False)  # equal to ``guard``
    out = []
    for i, (trace, conds) in enumerate([((a, b), (guard,)), ((a_other_end, b), (opposite,)), ((a,), ()),
                                        ((a, b), (guard, opposite))]):
        out.append(Finding(rule="CL101", severity="warning" if conds else "error", path="/s/b.py", line=9 + i,
                           col=4, qualname="g", message=f"hazard {i}", dynamo="skipped", region=region,
                           trace=trace, callee="subprocess.run", fix_point="g", conditions=conds))
    return out


def test_a_result_made_objects_again_is_the_one_packed_field_for_field():
    region = RegionRef("/s/a.py", 1, "f", True)
    packer = ResultPacker()
    walks = []
    for r, first_at in ((region, 1), (RegionRef("/s/c.py", 5, "h", None, kind="public-api"), None)):
        found = _findings(r)
        first = (found[first_at], True) if first_at is not None else None
        walks.append(("key", r, len(walks) + 1, (found, first, 7), []))
    want = [_every_field(tuple(w[3][0])) for w in walks]
    walks = [w[:3] + (packer.pack(w[3]),) + w[4:] for w in walks]
    assert all(type(w[3]) is Packed for w in walks)
    packer.unpack_all(walks)
    assert [_every_field(tuple(w[3][0])) for w in walks] == want
    (found, first, n), (_, none, _) = walks[0][3], walks[1][3]
    assert first[0] is found[1] and first[1] is True and none is None and n == 7
    # one object per value of every part (by all its fields), across the walks
    frames = {id(fr) for w in walks for f in w[3][0] for fr in f.trace}
    assert len(frames) == 3  # a, the same frame ending elsewhere, b
    assert len({id(c) for w in walks for f in w[3][0] for c in f.conditions}) == 2


def test_a_hazard_shown_first_that_the_regions_merge_dropped_is_kept_as_it_is():
    region = RegionRef("/s/a.py", 1, "f", False)
    found = _findings(region)
    dropped = dataclasses.replace(found[0], line=99)
    packer = ResultPacker()
    walks = [("key", region, 1, packer.pack((found, (dropped, False), 3)), [])]
    packer.unpack_all(walks)
    assert walks[0][3][1] == (dropped, False)


def test_a_result_with_a_part_that_cannot_be_numbered_is_kept_as_it_is():
    region = RegionRef("/s/a.py", 1, "f", True)
    found = _findings(region)
    found[2].fixes = [{"fixer": "custom-op"}]  # (a list: what a fixer sets after the walks)
    result = (found, None, 1)
    packer = ResultPacker()
    assert packer.pack(result) is result
    walks = [("key", region, 1, result, [])]
    packer.unpack_all(walks)
    assert walks[0][3] is result


def test_a_walk_log_held_as_ints_is_made_again_of_the_very_objects_it_held():
    """A walk log's events (lint/reach_replay.py's WalkLog: visits, changes, the "D" and "P" markers) held as
    ints until the state is built: made lists again, each event is what it was and each part the object it
    was (the logs' parts are one object per value: Incremental._share_log_values)."""
    from array import array

    from compile_lint.actions import Action, Node
    from compile_lint.reach_replay import WalkLog
    from compile_lint.walkresults import LogPacker

    n1, n2 = Node("m:f", None), Node("m:g", "m:C", consts=(("k", (1,)),))
    link = (n1, Action("enter", 3, 4, ()))
    conds, facts = (("x", True),), frozenset({"ready"})
    events = [n1, (-1, n1, None, (), None), "P", n2, (0, n2, link, conds, facts), "D", (2, n2, link, (), None),
              n2, "P"]
    log, other = WalkLog(), WalkLog()
    log.events, other.events = list(events), [n2, (1, n2, link, conds, facts)]
    odd = WalkLog()
    odd.events = [n1, "something else"]  # (no such event: kept as it is)
    packer = LogPacker()
    packer.pack([log, other, odd])
    assert log.events.__class__ is array and other.events.__class__ is array and odd.events.__class__ is list
    walks = [("k", None, 1, None, [log, other, odd])]
    packer.unpack_all(walks)
    assert log.events == events and other.events == [n2, (1, n2, link, conds, facts)]
    assert odd.events == [n1, "something else"]
    for got, was in zip(log.events, events):
        parts = got if got.__class__ is tuple else (got,)
        assert all(a is b for a, b in zip(parts, was if was.__class__ is tuple else (was,)))
