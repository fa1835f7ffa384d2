"""A warm process's merge of the regions' findings against the previous scan's (postwalk.MergedFindings with
``remember`` and ``previous``) gives what folding every region's list again gives: the same finding objects
chosen, the same regions reaching each, in the same order (two fix points of one site and rule in the order
they were first met)."""
from __future__ import annotations

import pickle
import random

from compile_lint.findings import Finding, Frame, RegionRef
from compile_lint.incstate import IncState
from compile_lint.postwalk import MergedFindings

RULES = ("CL101", "CL108")
FILES = ("/s/a.py", "/s/b.py")


def _regions(rng: random.Random, n: int) -> list:
    # a few regions share a (path, line, qualname): one entry in a finding's reaching regions
    return [RegionRef(f"/s/r{i % (n - 2)}.py", 1 + i % (n - 2), f"M{i % (n - 2)}.forward", rng.choice((True, None)))
            for i in range(n)]


def _finding(rng: random.Random, region: RegionRef, key: tuple) -> Finding:
    rule, path, line, fix_point = key
    severity = rng.choice(("error", "warning", "warning"))
    depth = rng.randint(1, 3)  # few values: ties in rank, the first in walk order wins
    return Finding(rule=rule, severity=severity, path=path, line=line, col=rng.choice((1, 5)), qualname="f",
                   message="m", dynamo="d", region=region,
                   trace=tuple(Frame(path, line, "f") for _ in range(depth)), fix_point=fix_point,
                   conditions=() if severity == "error" or rng.random() < 0.5 else ("c",) * rng.randint(1, 2))


def _keys(rng: random.Random) -> list:
    # two fix points of one hazard sort alike on (path, line, col, rule): the report orders them as first met
    return [(rng.choice(RULES), rng.choice(FILES), rng.randint(1, 12), rng.choice(("", "g", "h")))
            for _ in range(rng.randint(0, 14))]


def _region_list(rng: random.Random, region: RegionRef) -> list:
    """One region's findings: one per key (engine.walk_one merges them first), in some order."""
    return [_finding(rng, region, k) for k in dict.fromkeys(_keys(rng))]


def _edited(rng: random.Random, old: list, region: RegionRef) -> list:
    """A region's list after an edit: the same list (reused), or a new one keeping some of the previous finding
    objects (a replay keeping the untouched hazards), some dropped, some new (a key found again or a new key)."""
    roll = rng.random()
    if roll < 0.4:
        return old
    kept = [f for f in old if rng.random() < 0.7]
    keys = {(f.rule, f.path, f.line, f.fix_point) for f in kept}
    new = [f for f in _region_list(rng, region) if (f.rule, f.path, f.line, f.fix_point) not in keys]
    out = kept + new[:rng.randint(0, len(new))]
    rng.shuffle(out)
    return out


def _merged(lists: list, **kw) -> tuple:
    m = MergedFindings(**kw)
    for found in lists:
        m.add(found)
    got = m.findings()
    # what the report reads of each: the object chosen, and the regions set on it now
    return m, [(id(f), f.regions_reaching, f.other_regions) for f in got]


def test_a_merge_against_the_previous_one_equals_folding_every_list_again():
    for seed in range(300):
        rng = random.Random(seed)
        regions = _regions(rng, rng.randint(3, 9))
        lists = [_region_list(rng, r) for r in regions]
        m, _ = _merged(lists, remember=True)
        for _ in range(4):  # a chain of edits, each merged against the one before
            if rng.random() < 0.15:  # a region more or fewer: every position may have moved
                regions = regions + _regions(rng, 3)[:1] if rng.random() < 0.5 else regions[:-1]
                lists = [lists[i] if i < len(lists) else _region_list(rng, r) for i, r in enumerate(regions)]
            else:
                lists = [_edited(rng, old, r) for old, r in zip(lists, regions)]
            m, incremental = _merged(lists, remember=True, previous=m.memo())
            _, again = _merged(lists)
            assert incremental == again, seed


def test_the_same_lists_again_touch_no_key():
    rng = random.Random(7)
    regions = _regions(rng, 6)
    lists = [_region_list(rng, r) for r in regions]
    m, first = _merged(lists, remember=True)
    m2, second = _merged(lists, remember=True, previous=m.memo())
    assert second == first and m2._touched == set()


def test_without_remember_or_with_every_path_kept_no_merge_is_kept():
    rng = random.Random(3)
    lists = [_region_list(rng, r) for r in _regions(rng, 4)]
    assert _merged(lists)[0].memo() is None
    assert _merged(lists, keep_paths_by_hazard=True, remember=True)[0].memo() is None


def test_a_state_keeps_its_merge_in_memory_only():
    rng = random.Random(5)
    lists = [_region_list(rng, r) for r in _regions(rng, 4)]
    memo = _merged(lists, remember=True)[0].memo()
    st = IncState(reads={}, uses={}, checks={}, finds={}, walks=[], loaded=[], candidates=())
    st.keep_merge(memo)
    assert pickle.loads(pickle.dumps(st)).take_merge() is None
    assert st.take_merge() is memo and st.take_merge() is None


def _every_path_list(rng: random.Random, regions: list) -> list:
    """A region's list with every path kept (the pre-commit hook's): several findings per key, from the
    walk's region and now and then another (a list is folded region by region, whatever it holds)."""
    keys = _keys(rng)
    return [_finding(rng, rng.choice(regions) if rng.random() < 0.1 else regions[0], rng.choice(keys))
            for _ in range(rng.randint(0, 20))] if keys else []


def _every_path_merge(lists: list) -> tuple:
    m = MergedFindings(keep_paths_by_hazard=True)
    for found in lists:
        m.add(found)
    got = m.findings()
    return ([(id(f), f.regions_reaching, f.other_regions) for f in got],
            [(k, [id(f) for f in v]) for k, v in m.paths_by_hazard.items()], m)


def test_a_warm_process_folds_each_list_with_every_path_once_and_merges_what_folding_every_finding_gives(
        monkeypatch):
    """With every path kept (the pre-commit hook's), a warm process folds each region's list once and keeps
    it (postwalk._ListFold, by list object): the next merge takes the lists it has already folded whole.
    Chains of edits (some lists the previous objects, some new) give the findings chosen, their regions, and
    every hazard's paths, in the same order as folding every finding one by one."""
    from compile_lint import postwalk

    monkeypatch.setattr(postwalk, "_LIST_FOLDS", {})
    for seed in range(200):
        rng = random.Random(seed)
        regions = _regions(rng, rng.randint(3, 9))
        lists = [_every_path_list(rng, regions[i:] + regions[:i]) for i in range(len(regions))]
        for step in range(4):
            if step:
                lists = [old if rng.random() < 0.5 else _every_path_list(rng, regions) for old in lists]
                if rng.random() < 0.2:
                    rng.shuffle(lists)  # (the walk order moved: the folds are kept by list, not by place)
            monkeypatch.setattr(postwalk, "_KEEP_MERGES", False)
            plain, plain_paths, _ = _every_path_merge(lists)
            monkeypatch.setattr(postwalk, "_KEEP_MERGES", True)
            kept_before = dict(postwalk._LIST_FOLDS)
            warm, warm_paths, m = _every_path_merge(lists)
            assert (warm, warm_paths) == (plain, plain_paths), seed
            # and the files each hazard's paths pass through (what postscan.touching gathers from the frames)
            assert m.hazard_files() == {k: {g.region.path for g in v} | {fr.path for g in v for fr in g.trace}
                                        for k, v in m.paths_by_hazard.items()}, seed
            # the lists it had folded before were taken whole, not folded again
            assert all(m._folds[k] is f for k, f in kept_before.items() if k in m._folds and f.found is m._folds[k].found)
    assert postwalk._LIST_FOLDS  # (kept for the next merge)


def test_the_files_a_warm_merge_gives_select_what_the_frames_select(monkeypatch):
    """postscan.touching with the merge's files of each hazard (ScanResult.files_by_hazard) reports what it
    reports gathering them from every kept path's frames: the same findings, with the same paths."""
    from compile_lint import postwalk
    from compile_lint.postscan import touching

    monkeypatch.setattr(postwalk, "_KEEP_MERGES", True)
    monkeypatch.setattr(postwalk, "_LIST_FOLDS", {})
    selected = 0
    for seed in range(100):
        rng = random.Random(seed)
        regions = _regions(rng, rng.randint(3, 7))
        lists = [_every_path_list(rng, regions[i:] + regions[:i]) for i in range(len(regions))]
        _, _, m = _every_path_merge(lists)
        findings = sorted(m.best.values(), key=Finding.sort_key)
        for wanted in (["/s/a.py"], ["/s/r1.py"], ["/s/none.py"]):
            plain = touching(findings, wanted, m.paths_by_hazard)
            given = touching(findings, wanted, m.paths_by_hazard, m.hazard_files())
            assert [(f.rule, f.path, f.line, f.region, f.trace) for f in given] == \
                [(f.rule, f.path, f.line, f.region, f.trace) for f in plain], seed
            selected += len(given)
    assert selected  # (the files do select findings)
