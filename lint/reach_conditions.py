"""The conditions a walk (lint/reach.py) puts on a path, and how the paths to one hazard fold: a guard the walk
did not decide as a ``Condition``; a call of several callees, whose condition is no condition once every callee
led to the same node (``all_alternatives``); a path's conditions each once (``dedup``); two paths whose
conditions together leave fewer (``either``, ``either_certain``); a hazard reached on several paths of a region
reported again under what any of them needs (``fold_alternatives``); and what a method's guards say of its
``self`` (``self_fact``)."""
from __future__ import annotations

from typing import Optional

from .actions import Action
from .exprtext import condition as condition_text
from .findings import ALTERNATIVE, Condition
from .summary import Guard

MAX_FOLDED_PATHS = 16  # paths to one hazard compared for opposite branches (fold_alternatives)


def self_fact(c: Condition, me: Optional[str]) -> tuple:
    """(``self.merged`` as ``<self>.merged``, True) for a condition ``self.merged`` / ``not self.merged``
    (False) / ``self.x is None`` kept as it is; (None, None) for any other."""
    e, pol = c.expr, c.polarity
    if not me or not isinstance(e, tuple) or not e:
        return (None, None)
    while e[0] == "not":
        e, pol = e[1], not pol
    spelled = _respell_self(e, me)
    return (spelled, pol) if spelled is not None else (None, None)


def _respell_self(e, me: str):
    """``e`` with its root ``me`` (a method's first parameter) spelled ``<self>``; None unless ``e`` is an
    attribute chain on it (``self.a.b``) or a comparison of one with a constant."""
    if e[0] == "attr":
        if e[1] == ("name", me):
            return ("attr", ("name", "<self>"), e[2])
        inner = _respell_self(e[1], me)
        return ("attr", inner, e[2]) if inner is not None and inner[0] == "attr" else None
    if e[0] == "cmp" and len(e[2]) == 1 and e[2][0][1][0] == "const":
        left = _respell_self(e[1], me)
        return ("cmp", left, e[2]) if left is not None and left[0] == "attr" else None
    return None


def path_condition(path: str, g: Guard, act: Action, by_default: Optional[bool] = None,
               assumed: frozenset = frozenset()) -> Condition:
    """The Condition a guard the walk did not decide puts on the path.  A guard the configuration defaults
    decide (``assumed``) says which: ``by_default`` True -- the default configuration takes this way (``assumes
    T5Config.feed_forward_proj = 'relu'``); False -- only another configuration does."""
    c = g.cond
    if c[0] == "unknown" and len(c) == 6 and c[2] == ALTERNATIVE:
        # one of a call's callees: the site and their number are the branch, the callee is the way it goes
        return Condition(path, g.line or act.line, c[1], (ALTERNATIVE, path, c[3], c[4]), c[5])
    text = condition_text(g)
    if assumed:
        defaults = ", ".join(sorted(assumed))
        text += f" (assumes the default {defaults})" if by_default else f" (not the default {defaults})"
    return Condition(path, g.line or act.line, text, g.cond, g.polarity)


def all_alternatives(seen: dict, node, conds: tuple) -> Optional[tuple]:
    """``node`` reached under ``conds``; ``seen`` remembers, per (node, the other conditions, call site), which
    callees of a site with several led here.  When every one of them has (``get_fp4_quantization_module``'s
    ``backend_modules[backend]()``: each of the 8 generators probes ``nvcc``), the site's condition is no
    condition: the other conditions are returned, else None.

    Only a fold that leaves at most one condition can change the walk: ``walk`` takes a node again only once
    no condition is left on it (either_certain), so a path with three distinct conditions or more is not
    counted.  Counting every path -- a key of all its other conditions per alternative on it, some 30 deep
    through flashinfer's JIT loaders -- took a quarter of a scan of the benchmark site (user time 175 s -> 129 s
    side by side with the same findings)."""
    if len(conds) > 2 and three_distinct(conds):
        return None
    for c in conds:
        if not (c.expr and c.expr[0] == ALTERNATIVE):
            continue
        rest = tuple(x for x in conds if x is not c)
        got = seen.setdefault((node, rest, c.expr), set())
        got.add(c.polarity)
        if len(got) >= c.expr[3]:
            return rest
    return None


def dedup(conds: tuple) -> tuple:
    """The path's conditions, each once, in path order (a guard met twice on the way is one condition)."""
    if len(conds) < 2:
        return conds
    return tuple(dict.fromkeys(conds))


def fold_alternatives(findings: list, redo: dict) -> list:
    """One hazard reached on several paths of a region, each under its own conditions (``load("a")`` under
    ``if aot:``, ``load("b")`` under ``else:``): the hazard is met when any of them holds.  Where that is fewer
    conditions (none at all, for both branches of one ``if``), the hazard is reported again with them; the
    engine keeps the most certain report."""
    groups: dict = {}
    for f in findings:
        if f.conditions and id(f) in redo:
            groups.setdefault((f.rule, f.path, f.line, f.fix_point), []).append(f)
    extra = []
    for group in groups.values():
        if len(group) < 2:
            continue
        # one round over the pairs of the first few paths: a fold of folds could grow without end on a
        # library whose hazards are reached on hundreds of paths (flashinfer's JIT loaders)
        sets = {f.conditions: f for f in group[:MAX_FOLDED_PATHS]}
        folded = {}
        # (in the walk's order, not the set's: the report kept for a fold is the first pair's, and a set of
        # conditions iterates in an order of their strings' hashes -- another path shown in every process)
        for a in sets:
            for b in sets:
                if a != b:
                    both = either(a, b)
                    if both is not None and both not in sets:
                        folded.setdefault(both, sets[a])
        if folded:
            best = min(folded, key=len)
            if len(best) < min(len(c) for c in sets):
                extra += redo[id(folded[best])](best)
    return extra


def either_certain(old: tuple, new: tuple) -> bool:
    """Whether a node reached under ``old`` (some conditions) or under ``new`` is reached whatever holds:
    ``either(old, new) == ()`` without building sets of two long paths -- ``new`` is no condition, or each is
    one condition (however often met) and the two are one branch taken both ways."""
    if not new:
        return True
    a, b = old[0], new[0]
    # (the second element first: on a long path of distinct conditions, one comparison says no)
    return (len(old) == 1 or (old[1] == a and old.count(a) == len(old))) \
        and (len(new) == 1 or (new[1] == b and new.count(b) == len(new))) and a.opposes(b)


def three_distinct(conds: tuple) -> bool:
    """Whether ``conds`` holds three different conditions: usually its first three, so a few comparisons
    instead of hashing a whole path into a set."""
    first, second = conds[0], None
    for c in conds:
        if c is first or c == first:
            continue
        if second is None:
            second = c
        elif c is not second and c != second:
            return True
    return False


def either(old: tuple, new: tuple) -> Optional[tuple]:
    """The conditions under which a node reached under ``old`` or under ``new`` is reached, when that is
    fewer conditions than ``old`` (else None): ``new`` itself when it asks for less (a subset), or what both
    share when they differ only by one branch taken both ways."""
    so, sn = set(old), set(new)
    if sn < so:
        return dedup(new)
    only_old, only_new = so - sn, sn - so
    if len(only_old) == 1 and len(only_new) == 1 and next(iter(only_old)).opposes(next(iter(only_new))):
        return tuple(c for c in old if c in sn)
    return None
