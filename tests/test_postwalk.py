"""The post-walk merge (lint/postwalk.py): a warm process merges a scan's regions' lists from the previous
scan's merge, and must give what merging every list again gives."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compile_lint import postwalk
from compile_lint.findings import Finding, Frame, RegionRef

REGIONS = [RegionRef("r.py", i, f"g{i}", True) for i in range(3)]
# a pool of findings: a scan's lists hold some of the previous scan's objects again, as reused regions do
# (two of each, in other functions and regions: a tie between them is won by the first to come)
POOL = [Finding(rule=rule, severity=sev, path=path, line=line, col=col, qualname=q, message="", dynamo="",
                region=REGIONS[(line + col + len(q)) % 3], trace=(Frame(path, line, q),) * ntrace, fix_point=fix)
        for rule in ("CL101", "CL102") for path in ("a.py", "b.py") for line in (1, 2) for col in (1, 2)
        for sev in ("error", "warning") for ntrace in (1, 2) for fix in ("", "m.loader") for q in ("f", "C.f")]

a_list = st.lists(st.sampled_from(range(len(POOL))), max_size=6).map(lambda ix: [POOL[i] for i in ix])
# how each list of the next scan comes from the previous one's: the same list, a copy of it (a replay that kept
# every finding), or another list
change = st.tuples(st.sampled_from(["same", "copy", "other"]), a_list)


def _next(lists: list, changes: list, resize: list) -> list:
    out = []
    for i, found in enumerate(lists):
        how, other = changes[i % len(changes)] if changes else ("same", [])
        out.append(found if how == "same" else list(found) if how == "copy" else other)
    return out + resize if len(resize) % 3 == 1 else out


def _merged(lists: list) -> list:
    m = postwalk.MergedFindings.for_scan()
    for found in lists:
        m.add(found)
    return [(id(f), f.regions_reaching, f.other_regions) for f in m.findings()]


@given(st.lists(a_list, max_size=6), st.lists(st.tuples(st.lists(change, max_size=4), st.lists(a_list, max_size=3)),
                                               min_size=1, max_size=4))
@settings(max_examples=300, deadline=None)
def test_a_warm_merge_from_the_previous_scans_equals_merging_every_list_again(first, scans):
    """Each scan of a sequence (lists kept, copied, replaced, added) merged by a warm process from the
    previous scan's merge: the same findings, in the same order, with the same regions reaching each, as a
    merge of every list (a cold process)."""
    seq = [first]
    for changes, resize in scans:
        seq.append(_next(seq[-1], changes, resize))
    saved = postwalk._KEPT
    try:
        for lists in seq:
            postwalk._KEPT = None
            cold = _merged(lists)
            postwalk._KEPT = kept if lists is not first else []
            warm = _merged(lists)
            kept = postwalk._KEPT
            assert warm == cold
    finally:
        postwalk._KEPT = saved


def test_a_warm_merge_keeps_its_previous_fold_and_folds_again_only_the_keys_of_changed_lists(monkeypatch):
    """The second scan of the same lists but one folds again only that list's keys (the kept merge's dict
    of an untouched key is the same object), and a scan whose merge is interrupted leaves none kept."""
    monkeypatch.setattr(postwalk, "_KEPT", [])
    lists = [[POOL[0], POOL[40]], [POOL[3]], [POOL[70], POOL[0]]]
    _merged(lists)
    (fold,) = postwalk._KEPT
    untouched = (POOL[3].rule, POOL[3].path, POOL[3].line, POOL[3].fix_point)
    kept_dict = fold.regions[untouched]
    changed_key = (POOL[0].rule, POOL[0].path, POOL[0].line, POOL[0].fix_point)
    was = fold.regions[changed_key]
    _merged([lists[0], lists[1], [POOL[70]]])
    assert postwalk._KEPT[0].regions[untouched] is kept_dict and postwalk._KEPT[0].regions[changed_key] is not was

    def boom(found):
        raise KeyboardInterrupt

    monkeypatch.setattr(postwalk, "_by_key", boom)
    m = postwalk.MergedFindings.for_scan()
    m.add([POOL[5]])
    try:
        m.findings()
    except KeyboardInterrupt:
        pass
    assert postwalk._KEPT == []
